/**
 * Our metadata-table compaction against real Hudi 0.15 (Spark 3.5.1): a Spark-made table with files, column_stats,
 * bloom_filters and record_index gets 15 consecutive commits of ours, so our writer compacts the metadata table
 * (HFile base files, a `<deltacommit>001` commit) and cleans it (`<deltacommit>002`) on its own. Then Hudi's
 * HoodieMetadataTableValidator passes, Spark reads the same rows with the metadata table on and off, and those equal
 * our reader's. Then Spark writes on top until it compacts the metadata table itself and cleans it, deleting slices
 * of our compactions; the validator still passes, our codec reads the plan Spark wrote, our reader and Spark agree,
 * and our next write goes on from Spark's slices.
 *
 * The metadata table's cleaner keeps 1.2 times the data table's retention and at least 20 commits (Hudi's
 * HoodieMetadataWriteUtils): one data file version retained (KEEP_LATEST_FILE_VERSIONS) keeps two metadata slices,
 * so both sides clean within a few commits.
 *
 * Hudi's record-index checks after Spark's compaction: the second test shows on a table only Spark wrote that
 * Hudi 0.15's validator fails there too (HoodieMetadataPayload casts a Spark-read bloom filter's Utf8 `type` to
 * String once a log record updates a base-file record), while Spark's record-index lookups work.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { parseLogFileName } from '../../lib/log-format/index.js';
import { METADATA_TABLE_METAFOLDER, MetadataTable } from '../../lib/metadata/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { readCompactionPlan } from '../../lib/timeline/compaction-plan.js';
import { compareInstantTimes } from '../../lib/timeline/instant.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi, type ValidationReport } from '../helpers/hudi.js';
import { ALL_CHECKS, metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, f DOUBLE, b BOOLEAN, dt STRING';
const NAME = 'mdt_compaction';
const SPARK_CHECKS = WITHOUT_RECORD_INDEX;
const RECORD_INDEX_CHECKS = ['record-index-count', 'record-index-content'];

/**
 * Hudi 0.15's validator fails its record-index checks inside Hudi: reading the whole metadata table through Spark, a
 * bloom-filter (or column-stats) log record merges with a base-file record that Spark converted to Avro, whose
 * strings are Utf8, and HoodieMetadataPayload casts them to String. Fixed in Hudi after 0.15 (apache/hudi#12109 for
 * column stats, apache/hudi#18240 for bloom filters: toString instead of the cast).
 */
function assertHudiRecordIndexBug(report: ValidationReport, step: string): void {
  for (const check of RECORD_INDEX_CHECKS) {
    assert.equal(report.checks[check]?.status, 'failed', `${step}: ${check}`);
    assert.match(report.checks[check]!.details, /ClassCastException/, `${step}: ${check} fails inside Hudi`);
  }
  assert.match(report.errors.join('\n'), /Utf8 cannot be cast to (class )?java\.lang\.String/, `${step}: Hudi's cast`);
}

type Row = { id: number; name: string; ts: number; f: number; b: boolean; dt: string };

const rows = (ids: readonly number[], version: number): Row[] =>
  ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, f: id * 1.5 + version, b: id % 2 === 0, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));

const sparkOptions: Record<string, string> = {
  'hoodie.table.name': NAME,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
  'hoodie.index.bloom.num_entries': '1000',
  'hoodie.metadata.enable': 'true',
  'hoodie.metadata.index.column.stats.enable': 'true',
  'hoodie.metadata.index.bloom.filter.enable': 'true',
  'hoodie.metadata.record.index.enable': 'true',
  'hoodie.index.type': 'RECORD_INDEX',
};

const ourProps = new Map([
  ['hoodie.table.name', NAME],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.index.bloom.num_entries', '1000'],
  // Our writer does not clean the data table; these set the metadata table's compaction and retention: 1 data
  // file version keeps ceil(1.2) = 2 slices per metadata file group.
  ['hoodie.metadata.compact.max.delta.commits', '5'],
  ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
  ['hoodie.cleaner.fileversions.retained', '1'],
]);

async function ourWrite(table: string, data: readonly object[], operation: WriteOptions['operation']) {
  const input = join(tempDir('mdt-compaction-in-'), 'batch.jsonl');
  await writeJsonLines(input, data);
  return writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties: ourProps });
}

describe('our metadata-table compaction, checked by Hudi', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  const { validate, readBoth, readIds } = metadataTableChecks(() => hudi);

  /** `id:name` of every row Spark reads with the metadata table on and off, and our reader: all equal. */
  async function readAll(table: string, step: string): Promise<string[]> {
    const key = (row: Record<string, unknown>) => `${Number(row['id'])}:${String(row['name'])}`;
    const spark = (await readBoth(table, step)).map(key).sort();
    const ours = (await readSnapshot(await HudiTable.open(openStorage(table)))).rows.map(key).sort();
    assert.deepEqual(ours, spark, `${step}: our reader and Spark`);
    return spark;
  }

  /** Our reader's record index names, for every row Spark reads, the file group holding it, and nothing else. */
  async function assertRecordIndex(table: string, step: string): Promise<void> {
    const rowsRead = (await hudi.read(table, { options: { 'hoodie.metadata.enable': 'false' } })).rows;
    const expected = new Map(
      rowsRead.map((row) => [String(row['_hoodie_record_key']), `${String(row['_hoodie_partition_path'])}/${String(row['_hoodie_file_name']).split('_')[0]}`]),
    );
    const reader = await (await MetadataTable.open(openStorage(table)))!.reader();
    const keys = [...(await reader.readPartition('record_index')).keys()];
    const actual = new Map([...(await reader.recordLocations(keys))].map(([key, location]) => [key, `${location.partitionPath}/${location.fileId}`]));
    assert.deepEqual(new Map([...actual].sort()), new Map([...expected].sort()), `${step}: record index`);
  }

  it('15 commits of ours compact and clean the metadata table; Hudi validates it, reads it, then compacts it on top', async (t) => {
    const table = join(tempDir('mdt-compaction-'), NAME);
    const storage = openStorage(table);
    await hudi.write(table, { schema: SCHEMA, rows: rows([1, 2, 3, 4, 5, 6], 1), options: sparkOptions });
    const expected = new Map<number, string>([1, 2, 3, 4, 5, 6].map((id) => [id, `v1-${id}`]));

    const compactions: string[] = [];
    const cleans: string[] = [];
    for (let i = 0; i < 15; i++) {
      const version = 10 + i;
      const operation: WriteOptions['operation'] = i % 5 === 4 ? 'delete' : i % 2 === 0 ? 'insert' : 'upsert';
      const ids =
        operation === 'delete'
          ? [[...expected.keys()].sort((a, b) => a - b)[i % expected.size]!]
          : operation === 'insert'
            ? [20 + 2 * i, 21 + 2 * i]
            : [1 + (i % 6), 20 + i];
      const result = await ourWrite(table, rows(ids, version), operation);
      for (const id of ids) {
        if (operation === 'delete') expected.delete(id);
        else expected.set(id, `v${version}-${id}`);
      }
      for (const compaction of result.metadataTable.compactions) {
        compactions.push(compaction.instantTime);
        t.diagnostic(
          `commit ${i + 1} (${result.instantTime}) compacted the metadata table at ${compaction.instantTime}: ${compaction.files.length} base files, ${compaction.files.reduce((s, f) => s + f.bytes, 0)} bytes, ${compaction.millis} ms`,
        );
      }
      for (const clean of result.metadataTable.cleans) {
        cleans.push(clean.instantTime);
        t.diagnostic(`commit ${i + 1} cleaned the metadata table at ${clean.instantTime}: ${clean.filesDeleted} files deleted, ${clean.millis} ms`);
      }
    }
    assert.ok(compactions.length >= 1, 'our writes compacted the metadata table');
    assert.ok(cleans.length >= 1, 'our writes cleaned the metadata table');
    for (const time of cleans) assert.match(time, /^\d{17}002$/);
    const mdt = (await MetadataTable.open(storage))!;
    for (const time of compactions) {
      assert.match(time, /^\d{17}001$/);
      assert.ok(
        mdt.timeline.completed().some((i) => i.time === time && i.action === 'commit'),
        `${time}.commit`,
      );
    }
    // Every file group's latest slice is one of our compactions (a group without log files since one compaction is
    // not in the next plan), on its HFile base file.
    for (const group of [...mdt.fileGroups.values()].flat()) {
      const base = group.latest.baseInstant;
      assert.ok(compactions.includes(base), `${group.partition}/${group.fileId} is on a compaction of ours (${base})`);
      assert.match(group.latest.baseFile?.name ?? '', new RegExp(`^${group.fileId}_\\d+-\\d+-\\d+_${base}\\.hfile$`));
    }
    assert.ok(
      [...mdt.fileGroups.values()].flat().some((group) => group.latest.baseInstant === compactions.at(-1)),
      'our latest compaction',
    );
    await validate(t, table, 'after 15 commits of ours');
    const read = await readAll(table, 'after 15 commits of ours');
    assert.deepEqual(read, [...expected].map(([id, name]) => `${id}:${name}`).sort());

    // Spark on top, compacting after 3 deltacommits and keeping one file version (two metadata slices): it compacts
    // at its first write (our deltacommits since our last compaction), and its metadata cleaner runs once 3 instants
    // follow its compaction, deleting the slices of our compactions it superseded.
    const sparkOn = {
      ...sparkOptions,
      'hoodie.metadata.compact.max.delta.commits': '3',
      'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS',
      'hoodie.cleaner.fileversions.retained': '1',
    };
    const ourCompactions = new Set(compactions);
    const ourCleans = new Set(cleans);
    let sparkCompaction: string | undefined;
    let sparkClean: string | undefined;
    let sparkWrites = 0;
    for (let i = 0; i < 8 && (sparkCompaction === undefined || sparkClean === undefined); i++) {
      const data = rows([1 + i, 60 + i], 40 + i);
      await hudi.write(table, { schema: SCHEMA, rows: data, options: sparkOn });
      sparkWrites++;
      for (const row of data) expected.set(row.id, row.name);
      const timeline = (await MetadataTable.open(storage))!.timeline;
      sparkCompaction ??= timeline.completed().find((x) => x.action === 'commit' && !ourCompactions.has(x.time))?.time;
      if (sparkCompaction !== undefined)
        sparkClean ??= timeline
          .completed()
          .find((x) => x.action === 'clean' && !ourCleans.has(x.time) && compareInstantTimes(x.time, sparkCompaction!) > 0)?.time;
    }
    assert.ok(sparkCompaction, 'Spark compacted the metadata table');
    assert.ok(sparkClean, 'Spark cleaned the metadata table after its compaction');
    t.diagnostic(`Spark's ${sparkWrites} write(s): it compacted the metadata table at ${sparkCompaction} and cleaned it at ${sparkClean}`);
    const cleanFile = `${METADATA_TABLE_METAFOLDER}/${sparkClean}.clean`;
    const sparkCleaned = Object.values(decodeTimelineAvro('cleanMetadata', await storage.get(cleanFile), cleanFile).partitionMetadata).flatMap(
      (partition) => partition.successDeleteFiles,
    );
    const ofOurs = sparkCleaned.filter((file) => [...ourCompactions].some((time) => file.endsWith(`_${time}.hfile`) || file.includes(`_${time}.log.`)));
    t.diagnostic(`Spark's metadata clean deleted ${sparkCleaned.length} file(s), ${ofOurs.length} of them in slices of our compactions`);
    assert.ok(ofOurs.length > 0, "Spark's metadata clean deleted slices of our compactions");
    const plan = await readCompactionPlan(storage, sparkCompaction, { metaFolder: METADATA_TABLE_METAFOLDER });
    t.diagnostic(`Spark's plan: ${JSON.stringify({ ...plan, operations: plan.operations.slice(0, 2) })}`);
    assert.ok(plan.operations.length > 0);
    for (const operation of plan.operations) {
      assert.ok(['files', 'column_stats', 'bloom_filters', 'record_index'].includes(operation.partitionPath), operation.partitionPath);
      assert.ok(
        operation.deltaFilePaths.every((name) => parseLogFileName(name)?.fileId === operation.fileId),
        `${operation.fileId}: log file names`,
      );
      assert.equal(
        operation.dataFilePath === null
          ? ourCompactions.has(operation.baseInstantTime)
          : operation.dataFilePath.startsWith(`${operation.fileId}_`) && operation.dataFilePath.endsWith(`_${operation.baseInstantTime}.hfile`),
        true,
        `${operation.fileId}: base file of its slice`,
      );
    }
    assert.ok(
      plan.operations.some((op) => ourCompactions.has(op.baseInstantTime)),
      "Spark's plan compacts slices of our compaction",
    );
    // Hudi's plan has what ours has around the operations.
    assert.deepEqual([plan.version, plan.strategy, plan.preserveHoodieMetadata, plan.extraMetadata], [2, null, false, {}]);
    // Hudi's record-index checks are left out from here on: after Spark's own compaction and clean, Hudi 0.15's
    // validator fails inside HoodieMetadataPayload on a table only Spark wrote too (the next test); our reader checks
    // the record index instead, and Spark's upserts go through it.
    await validate(t, table, "after Spark's compaction on top of ours", SPARK_CHECKS);
    assertHudiRecordIndexBug(await hudi.validateMetadataTable(table, RECORD_INDEX_CHECKS), "after Spark's compaction and clean on top of ours");
    await assertRecordIndex(table, "after Spark's compaction");
    assert.deepEqual(await readAll(table, 'after Spark on top'), [...expected].map(([id, name]) => `${id}:${name}`).sort());

    // We go on from Spark's compaction.
    const result = await ourWrite(table, rows([2, 90], 60), 'upsert');
    expected.set(2, 'v60-2');
    expected.set(90, 'v60-90');
    // Each log file extends its file group's latest slice, a compacted one (a group without log files since an
    // earlier compaction is not in the later plan, so slices may differ between groups).
    const afterOurs = (await MetadataTable.open(storage))!;
    const compacted = new Set(
      afterOurs.timeline
        .completed()
        .filter((x) => x.action === 'commit')
        .map((x) => x.time),
    );
    for (const log of result.metadataTable.deltaCommit!.logFiles) {
      const group = afterOurs.fileGroups.get(log.partition)!.find((g) => g.fileId === log.fileId)!;
      assert.equal(log.baseInstant, group.latest.baseInstant, `${log.path} is in the latest slice`);
      assert.ok(compacted.has(log.baseInstant), `${log.path}: its slice starts at a compaction`);
    }
    await validate(t, table, "our write after Spark's", SPARK_CHECKS);
    await assertRecordIndex(table, "our write after Spark's");
    assert.deepEqual(await readAll(table, 'at the end'), [...expected].map(([id, name]) => `${id}:${name}`).sort());
    // Spark upserts through the record index after ours: no duplicates.
    await hudi.write(table, { schema: SCHEMA, rows: rows([2, 3, 91], 70), options: sparkOn });
    for (const id of [2, 3, 91]) expected.set(id, `v70-${id}`);
    assert.deepEqual(await readAll(table, "after Spark's last upsert"), [...expected].map(([id, name]) => `${id}:${name}`).sort());
  });

  it("on a table only Spark wrote, Hudi's record-index checks fail the same way after Spark's metadata compaction and clean (Hudi 0.15's bug); its lookups work", async (t) => {
    const name = 'mdt_spark_only';
    const table = join(tempDir('mdt-spark-only-'), name);
    const storage = openStorage(table);
    const options = {
      ...sparkOptions,
      'hoodie.table.name': name,
      'hoodie.metadata.compact.max.delta.commits': '3',
      'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS',
      'hoodie.cleaner.fileversions.retained': '1',
    };
    const expected = new Map<number, string>();
    const sparkWrite = async (ids: readonly number[], version: number) => {
      await hudi.write(table, { schema: SCHEMA, rows: rows(ids, version), options });
      for (const id of ids) expected.set(id, `v${version}-${id}`);
    };
    await sparkWrite([1, 2, 3, 4, 5, 6], 1);
    const firstCommit = (await HudiTable.open(storage)).timeline.completed().find((x) => x.action === 'commit')!.time;
    // Upserts of both partitions' file groups: each leaves an old file version, which Spark's data cleaner deletes
    // right after the commit, writing tombstones for its bloom filter and column stats into the metadata table.
    // Once that happens after a metadata compaction of data files (Spark's first one, at its initialization, has
    // none), the tombstones update records of the HFile base files.
    let compaction: string | undefined;
    let cleanAfter: string | undefined;
    for (let i = 0; i < 6 && cleanAfter === undefined; i++) {
      await sparkWrite([1 + (i % 3), 4 + (i % 3)], 2 + i);
      compaction ??= (await MetadataTable.open(storage))!.timeline
        .completed()
        .find((x) => x.action === 'commit' && compareInstantTimes(x.time, firstCommit) > 0)?.time;
      if (compaction !== undefined)
        cleanAfter = (await HudiTable.open(storage)).timeline
          .completed()
          .find((x) => x.action === 'clean' && compareInstantTimes(x.time, compaction!) > 0)?.time;
    }
    assert.ok(compaction, 'Spark compacted the metadata table');
    assert.ok(cleanAfter, "Spark's data cleaner ran after that");
    t.diagnostic(`Spark only: metadata compaction ${compaction}, data clean ${cleanAfter}`);

    const report = await hudi.validateMetadataTable(table, ALL_CHECKS);
    t.diagnostic(
      `Spark only, validator: ${Object.entries(report.checks)
        .map(([check, result]) => `${check} ${result.status}`)
        .join('; ')}; errors: ${report.errors.join(' | ').slice(0, 600)}`,
    );
    for (const check of WITHOUT_RECORD_INDEX) assert.equal(report.checks[check]?.status, 'passed', `${check}: ${report.checks[check]?.details}`);
    assertHudiRecordIndexBug(report, 'Spark only');
    // Spark's own record-index lookups (its upsert's index) are not that read path: they work, without duplicates.
    await sparkWrite([1, 5, 99], 20);
    const ids = await readIds(table, 'Spark only, after its upsert through the record index');
    assert.deepEqual(
      ids,
      [...expected.keys()].sort((a, b) => a - b),
    );
  });
});
