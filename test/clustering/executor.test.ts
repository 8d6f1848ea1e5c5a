// Which execute-group function the plan names for each group (lib/clustering/executor.ts): a pure choice from the
// plan; the state machine's Choice and the functions it routes to are run in test/serverless/clustering.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { binaryCopyRefusal, groupExecutor } from '../../lib/clustering/executor.js';
import type { ClusteringPlan, ClusteringPlanGroup, ClusteringPlanSlice } from '../../lib/timeline/clustering-plan.js';

const MIB = 1024 * 1024;

function slice(index: number, logs: readonly string[] = [], base = `s3://b/t/p/f${index}_0-1-0_20240101000000000.parquet`): ClusteringPlanSlice {
  return { dataFilePath: base, deltaFilePaths: logs, fileId: `f${index}`, partitionPath: 'p', bootstrapFilePath: '', version: 1 };
}

function group(slices: readonly ClusteringPlanSlice[], readMb: number | undefined): ClusteringPlanGroup {
  return { slices, metrics: readMb === undefined ? {} : { TOTAL_IO_READ_MB: readMb }, numOutputFileGroups: 1, extraMetadata: null, version: 1 };
}

function plan(groups: readonly ClusteringPlanGroup[], sortColumns = '', preserveHoodieMetadata = true): ClusteringPlan {
  return {
    inputGroups: groups,
    strategy: {
      strategyClassName: 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy',
      strategyParams: sortColumns === '' ? {} : { 'hoodie.clustering.plan.strategy.sort.columns': sortColumns },
      version: 1,
    },
    extraMetadata: {},
    version: 1,
    preserveHoodieMetadata,
  };
}

const config = resolveClusteringConfig({}).config;

describe('the function a planned group runs in', () => {
  test('bin-pack of large files: execute-copy-group; otherwise execute-group', () => {
    const large = group([slice(0), slice(1)], 200);
    assert.equal(groupExecutor(plan([large]), large, config, true), 'copy');
    assert.equal(groupExecutor(plan([large], 'a,b'), large, config, true), 'rewrite', 'sorted');
    assert.equal(groupExecutor(plan([large], '', false), large, config, true), 'rewrite', 'commit metadata not preserved');
    assert.equal(groupExecutor(plan([large], '', false), large, config, false), 'copy', 'no meta fields to rewrite');
    const off = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.binary.copy.enable': 'false' } }).config;
    assert.equal(groupExecutor(plan([large]), large, off, true), 'rewrite', 'binary copy off');
    const withLogs = group([slice(0, ['s3://b/t/p/.f0_20240101000000000.log.1_0-1-0']), slice(1)], 200);
    assert.equal(groupExecutor(plan([withLogs]), withLogs, config, true), 'rewrite', 'log files are merged');
    const logsOnly = group([slice(0, ['s3://b/t/p/.f0_20240101000000000.log.1_0-1-0'], ''), slice(1)], 200);
    assert.equal(groupExecutor(plan([logsOnly]), logsOnly, config, true), 'rewrite', 'a slice without a base file');
  });

  test('small files (TOTAL_IO_READ_MB over the slices below min.row.group.bytes) or unknown sizes: execute-group', () => {
    // The default hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes is 4 MiB.
    assert.equal(config.binaryCopyMinRowGroupBytes, 4 * MIB);
    const atBar = group([slice(0), slice(1)], 8);
    assert.equal(groupExecutor(plan([atBar]), atBar, config, true), 'copy', 'an average of 4 MiB');
    const below = group([slice(0), slice(1)], 7);
    assert.equal(groupExecutor(plan([below]), below, config, true), 'rewrite', 'an average of 3.5 MiB');
    const unknown = group([slice(0), slice(1)], undefined);
    assert.equal(groupExecutor(plan([unknown]), unknown, config, true), 'rewrite', 'no TOTAL_IO_READ_MB');
  });

  test("execute-group's reasons are the same refusals, judged on the staged files", () => {
    const facts = { config, slicesWithLogs: 0, sortColumns: [], populateMetaFields: true, preserveHoodieMetadata: true, averageFileBytes: 100 * MIB };
    assert.equal(binaryCopyRefusal(facts), undefined);
    assert.match(binaryCopyRefusal({ ...facts, sortColumns: ['a'] }) ?? '', /sorted by a/);
    assert.match(binaryCopyRefusal({ ...facts, slicesWithLogs: 2 }) ?? '', /2 slice\(s\) have log files/);
    assert.match(binaryCopyRefusal({ ...facts, averageFileBytes: 1024 }) ?? '', /average 1\.0 KiB.*min\.row\.group\.bytes=4194304/);
  });
});
