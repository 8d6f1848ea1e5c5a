// CloudWatch metrics in embedded metric format, as the bundled handlers print them (Powertools): a scheduled trigger
// on a table whose clustering plan has waited an hour publishes PendingPlanAgeSeconds and starts a run; the run's
// plan, execute-group and commit invocations (the real ASL under aws-local-stepfunctions, against moto S3 and
// DynamoDB Local) publish their figures, which must equal what the run's output reports. A compaction execution (its
// real ASL) publishes its pending plan's age and its totals the same way.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { schedule } from '../../lib/clustering/schedule.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { METRIC } from '../../lib/serverless/aws/metric-names.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { lambdaContext, loadBundledHandler, runStateMachineLocally, startLocalStepFunctionsEndpoint } from '../../lib/serverless/local/index.js';
import type { CommitStepOutput } from '../../lib/serverless/steps/clustering/commit.js';
import type { CompactionCommitOutput } from '../../lib/serverless/steps/compaction/steps.js';
import type { TriggerOutput } from '../../lib/serverless/steps/trigger/trigger.js';
import { pendingPlanAge } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { parseInstantTime } from '../../lib/timeline/instant.js';
import { tableWithLogs } from '../helpers/compaction-table.js';
import { capturingEmf, metric, recordsOf } from '../helpers/emf.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { createSmallFilesTable, type SmallFilesTable } from '../helpers/small-files-table.js';

// Metrics on (the local runner turns them off unless told), logs off.
process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
process.env['POWERTOOLS_LOG_LEVEL'] = 'SILENT';

let functionsDir: string;
let lockTable: string;
let base: SmallFilesTable;

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-metrics');
  base = await createSmallFilesTable({ dir: tempDir('metrics-base-'), partitions: 2, commits: 6, rowsPerFile: 30 });
});

after(async () => {
  await dropLockTable(lockTable);
});

describe('EMF metrics from the handlers', () => {
  test("the trigger publishes the pending plan's age; the run publishes files, bytes, rows, groups, data skipping and cost", async () => {
    const tablePath = await s3TablePath('metrics');
    const storage = openStorage(tablePath);
    await uploadFiles(base.dir, storage);
    const clusteringProperties = { 'hoodie.clustering.plan.strategy.sort.columns': 'birthday,createTime' };
    // A plan made an hour ago that no run took up.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const table = await HudiTable.open(storage, { mode: 'write' });
    const planned = await schedule(
      table,
      resolveClusteringConfig({ file: { location: 'test', properties: new Map(Object.entries(clusteringProperties)) } }).config,
      {
        lock: lockProviderFor(new Map(), table.config.name, storage),
        force: true,
        now: hourAgo,
      },
    );
    assert.ok(planned !== undefined, 'a plan');

    const endpoint = await startLocalStepFunctionsEndpoint({ functionsDir, retryPauseMs: 20 });
    const environment: Record<string, string> = {
      TABLE_PATH: tablePath,
      STATE_MACHINE_ARN: endpoint.stateMachineArn,
      AWS_ENDPOINT_URL_SFN: endpoint.endpoint,
      LOCK_TABLE: lockTable,
      CLUSTERING_PROPERTIES: JSON.stringify(clusteringProperties),
      POWERTOOLS_METRICS_NAMESPACE: 'HudiServerlessTest',
    };
    const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    try {
      const trigger = await loadBundledHandler('trigger', functionsDir);
      const scheduled = { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', resources: [], detail: {} };
      const { result: fired, records } = await capturingEmf(async () => {
        const output = (await trigger(scheduled, lambdaContext('trigger'))) as TriggerOutput;
        await endpoint.settled();
        return output;
      });
      assert.equal(fired.status, 'STARTED', fired.reason);
      const [execution] = endpoint.executions();
      assert.equal(execution?.status, 'SUCCEEDED', `${execution?.result?.error}: ${execution?.result?.cause}`);
      const committed = (execution!.result!.output as TableServicesOutput).clustering as CommitStepOutput;
      assert.equal(committed.instant, planned.instantTime, 'the run finished the pending plan');

      for (const record of records) {
        assert.equal(record._aws.CloudWatchMetrics[0]!.Namespace, 'HudiServerlessTest');
        assert.ok(
          record._aws.CloudWatchMetrics[0]!.Dimensions.some((dimensions) => dimensions.includes('step')),
          'the step is a dimension',
        );
        assert.equal(metric(record, METRIC.succeeded, 'Count'), 1);
        assert.ok(metric(record, METRIC.durationMs, 'Milliseconds') >= 0);
        assert.ok(metric(record, METRIC.estimatedCost) > 0, 'an invocation costs something');
      }

      const [triggerRecord] = recordsOf(records, 'trigger');
      assert.ok(triggerRecord !== undefined, 'the trigger published');
      // What template.yaml's PlanPendingTooLongAlarm and dashboard select on.
      assert.deepEqual(triggerRecord._aws.CloudWatchMetrics[0]!.Dimensions, [['service', 'step']]);
      assert.deepEqual([triggerRecord['service'], triggerRecord['step']], ['hudi-serverless', 'trigger']);
      assert.equal(triggerRecord[METRIC.pendingPlanAge], fired.pendingPlanAgeSeconds);
      assert.ok(metric(triggerRecord, METRIC.pendingPlanAge, 'Seconds') >= 3600, 'the plan waited at least the hour it was made before');
      assert.equal(metric(triggerRecord, METRIC.runsStarted), 1);

      const [planRecord] = recordsOf(records, 'plan');
      assert.equal(metric(planRecord!, METRIC.groupsPlanned), planned.groups.length);

      const groupRecords = recordsOf(records, 'execute-group');
      assert.equal(groupRecords.length, planned.groups.length, 'one record per group');
      const report = committed.report!;
      assert.equal(
        groupRecords.reduce((total, record) => total + metric(record, METRIC.groupRows), 0),
        report.totals.rowsAfter,
      );
      assert.equal(
        groupRecords.reduce((total, record) => total + metric(record, METRIC.groupOutputFiles), 0),
        report.totals.filesAfter,
      );

      const [commitRecord] = recordsOf(records, 'commit');
      assert.ok(commitRecord !== undefined, 'the commit published');
      assert.deepEqual(
        [METRIC.groups, METRIC.filesIn, METRIC.filesOut, METRIC.rowsIn, METRIC.rowsOut].map((name) => metric(commitRecord, name, 'Count')),
        [report.groups, report.totals.filesBefore, report.totals.filesAfter, report.totals.rowsBefore, report.totals.rowsAfter],
      );
      assert.deepEqual(
        [metric(commitRecord, METRIC.bytesIn, 'Bytes'), metric(commitRecord, METRIC.bytesOut, 'Bytes')],
        [report.totals.bytesBefore, report.totals.bytesAfter],
      );
      assert.equal(report.totals.filesBefore, base.files.length, 'every small file was an input');
      const skipping = report.totals.dataSkipping.filter((figure) => figure.samples > 0);
      assert.ok(skipping.length > 0, 'the report has data-skipping figures');
      const mean = (pick: (figure: (typeof skipping)[number]) => number): number =>
        (100 * skipping.reduce((total, figure) => total + pick(figure), 0)) / skipping.length;
      assert.equal(
        metric(commitRecord, METRIC.filesReadBefore, 'Percent'),
        mean((f) => f.before),
      );
      assert.equal(
        metric(commitRecord, METRIC.filesReadAfter, 'Percent'),
        mean((f) => f.after),
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await endpoint.close();
    }
  });

  test("a compaction execution publishes the pending compaction's age, its operations, files, bytes and rows in and out, and cost", async () => {
    const tablePath = await s3TablePath('metrics-compaction');
    const storage = openStorage(tablePath);
    await uploadFiles((await tableWithLogs(PAYLOAD_CLASSES.overwriteWithLatest)).root, storage);
    // A compaction planned and not run. The helper's delta commit is dated 2999, so the plan is too: its age is 0 now,
    // and an hour after it was made 3600 s.
    const table = await HudiTable.open(storage);
    const planned = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), {
      lock: lockProviderFor(new Map(), table.config.name, storage),
      force: true,
    });
    assert.ok(planned !== undefined, 'a compaction plan');
    const timeline = (await table.reload()).timeline;
    const anHourLater = new Date(parseInstantTime(planned.instantTime)!.getTime() + 3_600_000);
    assert.equal(pendingPlanAge(timeline, anHourLater, ['compaction']), 3600);
    assert.equal(pendingPlanAge(timeline, anHourLater), 0, "the trigger's age is of clustering and clean plans");
    const { result: execution, records } = await capturingEmf(() =>
      runStateMachineLocally(
        { tablePath },
        {
          definitionFile: join(REPO_ROOT, 'infra', 'compaction-state-machine.asl.json'),
          functionsDir,
          retryPauseMs: 20,
          environment: { LOCK_TABLE: lockTable, POWERTOOLS_METRICS_NAMESPACE: 'HudiServerlessTest' },
        },
      ),
    );
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const committed = execution.output as CompactionCommitOutput;
    assert.equal(committed.instant, planned.instantTime);
    for (const record of records) {
      assert.equal(record._aws.CloudWatchMetrics[0]!.Namespace, 'HudiServerlessTest');
      assert.equal(metric(record, METRIC.succeeded, 'Count'), 1);
      assert.ok(metric(record, METRIC.durationMs, 'Milliseconds') >= 0);
      assert.ok(metric(record, METRIC.estimatedCost) > 0, 'an invocation costs something');
    }
    const [scheduleRecord] = recordsOf(records, 'compaction-schedule');
    assert.ok(scheduleRecord !== undefined, 'the schedule step published');
    // What template.yaml's CompactionPendingTooLongAlarm and dashboard select on.
    assert.deepEqual(scheduleRecord._aws.CloudWatchMetrics[0]!.Dimensions, [['service', 'step']]);
    assert.equal(metric(scheduleRecord, METRIC.pendingPlanAge, 'Seconds'), pendingPlanAge(timeline, new Date(), ['compaction']));
    assert.equal(metric(scheduleRecord, METRIC.operationsPlanned, 'Count'), planned.plan.operations.length);

    const operationRecords = recordsOf(records, 'compaction-execute');
    assert.equal(operationRecords.length, planned.plan.operations.length, 'one record per operation');
    assert.equal(
      operationRecords.reduce((total, record) => total + metric(record, METRIC.operationRows, 'Count'), 0),
      committed.records,
    );
    const [commitRecord] = recordsOf(records, 'compaction-commit');
    assert.ok(commitRecord !== undefined, 'the commit published');
    assert.deepEqual(
      [METRIC.operations, METRIC.filesIn, METRIC.filesOut, METRIC.rowsOut].map((name) => metric(commitRecord, name, 'Count')),
      [
        planned.plan.operations.length,
        planned.plan.operations.reduce((total, op) => total + op.deltaFilePaths.length + (op.dataFilePath ? 1 : 0), 0),
        committed.fileGroups,
        committed.records,
      ],
    );
    const committedFiles = (await storage.listRecursive('')).filter(
      (object) => object.path.endsWith('.parquet') && object.path.includes(`_${committed.instant}.`),
    );
    assert.deepEqual(
      [metric(commitRecord, METRIC.bytesIn, 'Bytes'), metric(commitRecord, METRIC.bytesOut, 'Bytes')],
      [committed.bytesRead, committedFiles.reduce((total, object) => total + object.size, 0)],
    );
  });
});
