/**
 * Column stats of merge-on-read log files against real Hudi 0.15 (Spark 3.5.1), on a table with files, column_stats
 * and bloom_filters (`hoodie.metadata.index.column.stats.enable=true`):
 * - for each of Spark's delta commits (an upsert into log files, a delete: log files of a delete block only), the
 *   column_stats records our convertCommitMetadata builds, the log files' ranges collected by
 *   columnRangesFromRecords over the records of Spark's own data blocks, are exactly the ones Spark's metadata writer
 *   wrote, key by key;
 * - on a copy of the table taken before those commits, our upsert and delete of the same records write the same
 *   column_stats records for their log files as Spark's did for its (file names and the commit-time columns aside,
 *   which name each side's instant); HoodieMetadataTableValidator passes; Spark with
 *   `hoodie.enable.data.skipping=true` returns the same rows as without; a write of ours killed once its
 *   deltacommit (with its log files' column stats) completed is rolled back by the next, which takes that deltacommit
 *   away; Spark upserts on top and the validator still passes.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { parseLogFileName, readAvroDataBlock, readLogFile } from '../../lib/log-format/index.js';
import { convertCommitMetadata, type MetadataChange } from '../../lib/metadata/convert.js';
import { readStoredFooter } from '../../lib/metadata/footers.js';
import { type ColumnRange, columnRangesFromRecords } from '../../lib/metadata/index.js';
import type { ColumnStatsMetadata } from '../../lib/metadata/records.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { parseAvroRecordSchema } from '../../lib/table/schema.js';
import type { CommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { runKilledWrite } from '../helpers/killed-write.js';
import { normalizeChanges, sparkChanges } from '../helpers/metadata-records.js';
import { metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, price DOUBLE, amount DECIMAL(10,2), day DATE, at TIMESTAMP, n INT, ok BOOLEAN, ts BIGINT, dt STRING';
const row = (id: number, ts: number, tag: string) => ({
  id,
  name: `n${id}-${tag}`,
  price: id * 1.5 - ts,
  amount: `${id * 3}.25`,
  day: `2024-01-0${(id % 9) + 1}`,
  at: `2024-02-0${(id % 9) + 1}T10:00:00.123456Z`,
  n: id % 2 === 0 ? null : id * ts,
  ok: id % 3 === 0,
  ts,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const OPTIONS = {
  ...mergeOnReadWriteOptions(),
  'hoodie.table.name': 'mor_stats',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'true',
  'hoodie.metadata.index.column.stats.enable': 'true',
  'hoodie.metadata.index.bloom.filter.enable': 'true',
  'hoodie.index.bloom.num_entries': '1000',
};
const UPSERT = [row(1, 2, 'u'), row(2, 2, 'u'), row(3, 2, 'u'), row(6, 2, 'u')];
const DELETE = [row(4, 3, 'd'), row(5, 3, 'd')];
const COMMIT_TIME_COLUMNS = new Set(['_hoodie_commit_time', '_hoodie_commit_seqno']);

async function ourWrite(table: string, rows: readonly object[], operation: WriteOptions['operation']) {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, rows);
  return writeBatch(openStorage(table), {
    input: { file, format: 'jsonl' },
    operation,
    properties: new Map([['hoodie.index.bloom.num_entries', '1000']]),
  });
}

/** The ranges of each log file a commit wrote, collected over the records of its data blocks of that instant. */
async function logRanges(storage: Storage, instantTime: string, metadata: CommitMetadata): Promise<Map<string, ColumnRange[]>> {
  const out = new Map<string, ColumnRange[]>();
  for (const stat of Object.values(metadata.partitionToWriteStats).flat()) {
    if (stat.path === null || !stat.path.includes('.log.')) continue;
    const blocks = (await readLogFile(storage, stat.path)).filter((block) => block.header.INSTANT_TIME === instantTime);
    const data = blocks.filter((block) => block.type === 'AVRO_DATA_BLOCK');
    const schemaText = blocks[0]?.header.SCHEMA;
    assert.ok(schemaText !== undefined, `${stat.path} has blocks of ${instantTime}`);
    const records = data.flatMap((block) => readAvroDataBlock(block, { longs: 'bigint' }) as Record<string, unknown>[]);
    const fileName = stat.path.slice(stat.path.lastIndexOf('/') + 1);
    out.set(stat.path, columnRangesFromRecords(parseAvroRecordSchema(schemaText, stat.path), records, [], fileName));
  }
  return out;
}

/** A log file's column_stats records without what names the instant: (partition file id, log version, column) → stats. */
function logStats(changes: readonly MetadataChange[]): Map<string, Omit<ColumnStatsMetadata, 'fileName'>> {
  const out = new Map<string, Omit<ColumnStatsMetadata, 'fileName'>>();
  for (const change of changes) {
    if (!('record' in change) || change.record.type !== 3) continue;
    const { fileName, ...stats } = change.record.columnStats;
    if (fileName === null || stats.columnName === null || !fileName.includes('.log.') || COMMIT_TIME_COLUMNS.has(stats.columnName)) continue;
    const name = parseLogFileName(fileName);
    assert.ok(name !== undefined, fileName);
    out.set(`${name.fileId} v${name.version} ${stats.columnName}`, stats);
  }
  return out;
}

describe('column stats of merge-on-read log files against Hudi 0.15', { timeout: 2_400_000 }, () => {
  let hudi: HudiHarness;
  let spark: string;
  let ours: string;
  const sparkInstants: string[] = [];
  before(async () => {
    hudi = await startHudi();
    const root = tempDir('mor-colstats-');
    spark = join(root, 'spark');
    ours = join(root, 'ours');
    await hudi.write(spark, {
      schema: SCHEMA,
      rows: [1, 2, 3, 4, 5, 6, 7, 8].map((id) => row(id, 1, 'ins')),
      options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'insert' },
    });
    cpSync(spark, ours, { recursive: true });
    await hudi.write(spark, { schema: SCHEMA, rows: UPSERT, options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'upsert' } });
    await hudi.write(spark, { schema: SCHEMA, rows: DELETE, options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'delete' } });
    sparkInstants.push(
      ...(await loadTimeline(openStorage(spark), TIMELINE_LAYOUT_1))
        .completedWrites()
        .slice(1)
        .map((instant) => instant.time),
    );
  });
  after(async () => {
    await hudi?.close();
  });
  const { validate } = metadataTableChecks(() => hudi);

  it("our records for Spark's log files are the ones Spark's metadata writer wrote", async (t) => {
    const storage = openStorage(spark);
    const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    let compared = 0;
    let deletesOnly = 0;
    for (const time of sparkInstants) {
      const instant = timeline.completedWrites().find((i) => i.time === time)!;
      const metadata = await readCommitMetadata(storage, instant, TIMELINE_LAYOUT_1);
      const mine = await convertCommitMetadata(metadata, {
        instantTime: time,
        partitions: new Set(['files', 'column_stats']),
        populateMetaFields: true,
        footer: (path, size) => readStoredFooter(storage, path, size),
        properties: new Map(Object.entries(OPTIONS)),
        logColumnRanges: await logRanges(storage, time, metadata),
      });
      const theirs = sparkChanges(spark, time).get('column_stats') ?? [];
      assert.deepEqual(normalizeChanges(mine.get('column_stats') ?? []), normalizeChanges(theirs), `${time}: column_stats`);
      compared += theirs.length;
      deletesOnly += [...logStats(theirs).values()].filter((s) => s.valueCount === 0).length;
    }
    assert.ok(compared >= 2 * 12, `${compared} records compared`);
    // Spark's delete wrote log files of a delete block only: their records are there, without values.
    assert.ok(deletesOnly > 0, 'records of deletes-only log files');
    t.diagnostic(`${compared} column_stats records of Spark's upsert and delete equal ours (${deletesOnly} of deletes-only log files)`);
  });

  it('our upsert and delete write the log-file column stats Spark writes; validator passes; data skipping reads the same rows; Spark writes on', async (t) => {
    const r1 = await ourWrite(ours, UPSERT, 'upsert');
    assert.ok(r1.stats.every((s) => s.path!.includes('.log.')));
    const r2 = await ourWrite(
      ours,
      DELETE.map((r) => ({ ...r })),
      'delete',
    );
    assert.equal(r2.deleted, 2);
    for (const [index, result] of [r1, r2].entries()) {
      const mine = sparkChanges(ours, result.instantTime).get('column_stats') ?? [];
      const theirs = sparkChanges(spark, sparkInstants[index]!).get('column_stats') ?? [];
      const expected = logStats(theirs);
      assert.ok(expected.size > 0);
      assert.deepEqual(logStats(mine), expected, `${result.instantTime}: log files' column_stats as Spark's ${sparkInstants[index]}`);
      const commitTimes = mine.filter(
        (c) => 'record' in c && c.record.type === 3 && c.record.columnStats.columnName === '_hoodie_commit_time' && (c.record.columnStats.valueCount ?? 0) > 0,
      );
      for (const change of commitTimes) {
        const stats = (change as { record: { columnStats: ColumnStatsMetadata } }).record.columnStats;
        assert.deepEqual(
          [stats.minValue, stats.maxValue],
          [
            { type: 'string', value: result.instantTime },
            { type: 'string', value: result.instantTime },
          ],
        );
      }
      t.diagnostic(`${result.instantTime}: ${expected.size} log-file column_stats records as Spark's`);
    }

    await validate(t, ours, 'after our upsert and delete', WITHOUT_RECORD_INDEX);
    await sameWithDataSkipping(t, 'after our upsert and delete');

    // Killed after its deltacommit completed: the next write rolls it back, its column_stats records go with it.
    const dir = tempDir('mor-colstats-killed-');
    const input = join(dir, 'input.jsonl');
    await writeJsonLines(input, [row(1, 4, 'killed'), row(3, 4, 'killed')]);
    const propsFile = join(dir, 'write.properties');
    writeFileSync(propsFile, 'hoodie.index.bloom.num_entries=1000\n');
    const killed = runKilledWrite(ours, input, propsFile, 'upsert', 'metadata:completed');
    assert.notEqual(killed.code, 0, killed.stderr);
    const pending = (await loadTimeline(openStorage(ours), TIMELINE_LAYOUT_1)).pending().find((i) => i.action === 'deltacommit');
    assert.ok(pending !== undefined, 'the killed write left its delta commit pending');
    assert.ok((sparkChanges(ours, pending.time).get('column_stats') ?? []).length > 0, "the killed write's deltacommit has column stats");
    await ourWrite(ours, [row(8, 4, 'after')], 'upsert');
    assert.deepEqual(sparkChanges(ours, pending.time).get('column_stats') ?? [], [], 'rolled back with its deltacommit');
    await validate(t, ours, 'after the rollback of a killed write', WITHOUT_RECORD_INDEX);
    await sameWithDataSkipping(t, 'after the rollback of a killed write');
    await hudi.write(ours, {
      schema: SCHEMA,
      rows: [row(1, 5, 's'), row(7, 5, 's'), row(9, 5, 's')],
      options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'upsert' },
    });
    await validate(t, ours, "after Spark's upsert", WITHOUT_RECORD_INDEX);
    await sameWithDataSkipping(t, "after Spark's upsert");
  });

  async function sameWithDataSkipping(t: TestContext, step: string): Promise<void> {
    const wheres = ["name = 'n1-u'", 'price > 5', 'n IS NULL', "name = 'n7-s'", "name = 'n8-after'", 'amount < 10'];
    for (const where of wheres) {
      const read = (skipping: boolean) =>
        hudi.read(ours, { meta: false, where, options: { 'hoodie.metadata.enable': 'true', 'hoodie.enable.data.skipping': String(skipping) } });
      const [on, off] = [await read(true), await read(false)];
      assert.deepEqual(canonicalRows(on.rows), canonicalRows(off.rows), `${step}: ${where}`);
    }
    t.diagnostic(`${step}: ${wheres.length} filtered reads equal with and without data skipping`);
  }
});
