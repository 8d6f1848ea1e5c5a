/**
 * The clustering instant's files read and written in one place (lib/clustering/instant.ts), the plan's one encoding
 * (lib/timeline/clustering-plan.ts), and the table-level pieces the clustering steps share: HudiTable.schema() and
 * withTableLock.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLUSTERING_SUMMARY_KEY, clusteringSummaryOf, summaryMetadata } from '../../lib/clustering/instant.js';
import type { ClusteringSummary } from '../../lib/clustering/report.js';
import { HudiError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { openStorage } from '../../lib/storage/index.js';
import { createTable } from '../../lib/table/init.js';
import { HudiTable, withTableLock } from '../../lib/table/table.js';
import { decodeRequestedReplaceMetadata, decodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { decodeClusteringPlan, encodeClusteringPlan, planFileGroups, readClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { type CommitMetadata, serializeCommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { fileGroupKey } from '../../lib/timeline/file-group-key.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { committedTable, expectedOf, fixtureTable, tempDir } from '../helpers/fixtures.js';

const HUDI_PLANS = (['v6_clustering_pending', 'v5_cow_clustered_pending'] as const).map((name) => ({
  name,
  file: join(committedTable(name), '.hoodie', `${expectedOf(name).facts?.['clusteringInstant']}.replacecommit.requested`),
}));

describe('the clustering plan: one type, one encoding', () => {
  for (const { name, file } of HUDI_PLANS) {
    it(`decodes Hudi's plan (${name}) and encodes it back to the same record`, () => {
      const bytes = readFileSync(file);
      const plan = decodeClusteringPlan(bytes, file);
      assert.ok(plan, 'a CLUSTER plan');
      const hudi = decodeRequestedReplaceMetadata(bytes, file);
      const again = decodeTimelineAvro('requestedReplace', encodeClusteringPlan(plan, TIMELINE_LAYOUT_1), 'encoded');
      assert.equal(again.operationType, 'CLUSTER');
      assert.deepEqual(again.clusteringPlan, hudi.clusteringPlan, 'every plan field survives decode → encode');
      assert.deepEqual(decodeClusteringPlan(encodeClusteringPlan(plan, TIMELINE_LAYOUT_1), 'encoded'), plan);
      const slices = hudi.clusteringPlan!.inputGroups!.flatMap((group) => group.slices!);
      assert.deepEqual([...planFileGroups(plan)].sort(), slices.map((slice) => fileGroupKey(slice.partitionPath!, slice.fileId!)).sort());
    });
  }

  it('an insert_overwrite requested file (all-null record, or 0 bytes) is no clustering plan', async () => {
    const table = fixtureTable('v6_simplekeygen_nonhivestyle_overwritetable');
    const storage = openStorage(table);
    const requested = (await storage.listDir('.hoodie')).files.map((entry) => entry.path).filter((path) => path.endsWith('.replacecommit.requested'));
    assert.ok(requested.length > 0, 'the fixture has an insert_overwrite replacecommit');
    for (const path of requested) {
      const time = path.slice(path.lastIndexOf('/') + 1, path.indexOf('.replacecommit'));
      assert.equal(await readClusteringPlan(storage, time, TIMELINE_LAYOUT_1), undefined, path);
      await storage.put(path, new Uint8Array(0));
      assert.equal(await readClusteringPlan(storage, time, TIMELINE_LAYOUT_1), undefined, `${path} emptied`);
    }
  });
});

describe('the run summary in the replacecommit', () => {
  const summary: ClusteringSummary = {
    layout: 'z-order',
    sortColumns: ['a', 'b'],
    groups: 2,
    partitions: 1,
    totals: {
      filesBefore: 9,
      filesAfter: 2,
      bytesBefore: 900,
      bytesAfter: 700,
      rowsBefore: 50,
      rowsAfter: 50,
      dataSkipping: [{ column: 'a', before: 1, after: 0.5, samples: 10 }],
    },
  };
  const metadata = (extraMetadata: Record<string, string>): CommitMetadata => ({
    partitionToWriteStats: {},
    compacted: false,
    extraMetadata,
    operationType: 'CLUSTER',
  });

  it('is a JSON string under a key of ours, read back as it was written', () => {
    const extra = summaryMetadata(summary);
    assert.deepEqual(Object.keys(extra), [CLUSTERING_SUMMARY_KEY]);
    assert.equal(typeof extra[CLUSTERING_SUMMARY_KEY], 'string');
    // Through the commit file's JSON, as a retried commit or `show-clustering --history` reads it.
    const text = serializeCommitMetadata(metadata({ schema: '{}', ...extra }));
    const parsed = JSON.parse(text) as { extraMetadata: Record<string, string> };
    assert.deepEqual(clusteringSummaryOf(metadata(parsed.extraMetadata)), summary);
  });

  it('is absent from commits without one (Hudi’s) and from ones whose value is not ours', () => {
    assert.equal(clusteringSummaryOf(metadata({ schema: '{}' })), undefined);
    assert.equal(clusteringSummaryOf(metadata({ [CLUSTERING_SUMMARY_KEY]: 'not json' })), undefined);
    assert.equal(clusteringSummaryOf(metadata({ [CLUSTERING_SUMMARY_KEY]: '{"layout":"linear"}' })), undefined);
  });
});

describe('HudiTable.schema', () => {
  it('is the latest commit’s schema when a commit records one', async () => {
    const table = await HudiTable.open(openStorage(fixtureTable('v6_clustering_pending')));
    const schema = await table.schema();
    assert.equal(schema?.from, 'commit');
    assert.ok(schema.schema.fields.length > 0);
    assert.ok(
      schema.schema.fields.every((field) => !field.name.startsWith('_hoodie_')),
      'without meta fields',
    );
  });

  it('falls back to hoodie.table.create.schema, as Hudi’s TableSchemaResolver', async () => {
    const table = await HudiTable.open(openStorage(fixtureTable('v6_empty')));
    assert.equal(table.timeline.completedWrites().length, 0);
    const schema = await table.schema();
    assert.equal(schema?.from, 'create');
    assert.equal(schema.text, table.config.createSchema);
  });

  it('is undefined with neither, and requireSchema says what needs one', async () => {
    const storage = openStorage(tempDir('no-schema-'));
    await createTable(storage, { tableName: 'bare', recordKeyFields: ['id'], partitionFields: [] });
    const table = await HudiTable.open(storage, { mode: 'write' });
    assert.equal(await table.schema(), undefined);
    await assert.rejects(
      table.requireSchema('clustering it'),
      (error: unknown) => error instanceof HudiError && /write to the table .* once before clustering it/.test(error.message),
    );
  });
});

describe('withTableLock', () => {
  it('runs the work on the table as it is once the lock is held (config and timeline), and always releases', async () => {
    const dir = fixtureTable('v6_empty');
    const storage = openStorage(dir);
    const lock = new StorageLockProvider(storage, { waitMs: 1 });
    const table = await HudiTable.open(storage, { mode: 'write' });
    assert.equal(table.config.timelineTimeZone, 'LOCAL');
    // Another writer commits and changes the config after we opened the table.
    await storage.put(
      '.hoodie/20240101000000000.commit',
      serializeCommitMetadata({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'INSERT' }),
    );
    appendFileSync(join(dir, '.hoodie', 'hoodie.properties'), 'hoodie.table.timeline.timezone=UTC\n');

    const seen = await withTableLock(table, lock, async (current) => ({ zone: current.config.timelineTimeZone, times: current.timeline.allTimes() }));
    assert.deepEqual(seen, { zone: 'UTC', times: ['20240101000000000'] });
    // Released: the next holder gets it at once (waitMs 1), also after work that throws.
    await assert.rejects(
      withTableLock(table, lock, async () => {
        throw new Error('work failed');
      }),
      /work failed/,
    );
    assert.equal(await withTableLock(table, lock, async () => 'again'), 'again');
  });
});
