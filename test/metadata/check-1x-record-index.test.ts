/**
 * `metadata check` and `doctor` compare a Hudi 1.x metadata table's `record_index` with the data, as they do on
 * version 6 (record-index-check.ts): every live key at the file group holding it, no key of a deleted record.
 * The tables: Hudi 1.0.2's (version 8) and 1.1.1's (version 9) fixture (test/fixtures/hudi-1x-metadata) as it stood
 * before its first commit completed (its metadata table's initial instants only, its data commits taken away), with
 * an empty record_index of two file groups as Hudi starts one; our writer, clustering and clean then write on it.
 * test/interop/hudi-1x-record-index.test.ts judges the upkeep of the index against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkMetadataTable } from '../../lib/metadata/check.js';
import { countFindings, doctorTable } from '../../lib/status/doctor.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { hudi1xJsonl, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';
import { clusterSortedById } from '../helpers/services-table.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-metadata');
const ODD = '2024-01-01';
const EVEN = '2024-01-02';

/** The fixture before its first commit: data timeline empty, metadata table at its initializations; a record_index added. */
function freshTable(release: string, suffix: string, withRecordIndex: boolean): string {
  const path = join(tempDir(`check-1x-rli-${release}-${suffix}-`), 'table');
  cpSync(join(FIXTURES, release), path, { recursive: true });
  rmSync(join(path, 'expected.json'));
  for (const name of readdirSync(join(path, '.hoodie/timeline'))) rmSync(join(path, '.hoodie/timeline', name));
  const mdt = join(path, '.hoodie/metadata');
  for (const name of readdirSync(join(mdt, '.hoodie/timeline'))) if (!name.startsWith('00000000000000')) rmSync(join(mdt, '.hoodie/timeline', name));
  for (const partition of readdirSync(mdt).filter((name) => name !== '.hoodie')) {
    for (const name of readdirSync(join(mdt, partition))) if (/_2\d{16}\.log\./.test(name)) rmSync(join(mdt, partition, name));
  }
  if (withRecordIndex) attachRecordIndex(path);
  return path;
}

/** Declare record_index and give it two empty file groups, as Hudi's initialization of the partition leaves them. */
function attachRecordIndex(path: string): void {
  setProperty(path, /^hoodie\.table\.metadata\.partitions=(.*)$/m, (partitions) => `hoodie.table.metadata.partitions=${partitions},record_index`);
  const folder = join(path, '.hoodie/metadata/record_index');
  mkdirSync(folder);
  writeFileSync(join(folder, '.hoodie_partition_metadata'), '');
  for (let i = 0; i < 2; i++) writeFileSync(join(folder, `.record-index-000${i}-0_00000000000000002.log.1_0-0-0`), '');
}

function setProperty(path: string, pattern: RegExp, to: (value: string) => string): void {
  const file = join(path, '.hoodie/hoodie.properties');
  const text = readFileSync(file, 'utf8');
  assert.match(text, pattern);
  writeFileSync(
    file,
    text.replace(pattern, (_, value: string) => to(value)),
  );
}

for (const [release, tableVersion] of [
  ['1.0.2', 8],
  ['1.1.1', 9],
] as const) {
  describe(`metadata check and doctor compare record_index with the data on Hudi ${release}'s metadata table (table version ${tableVersion})`, () => {
    let batch = 0;
    const write = async (path: string, ids: number[], operation: 'upsert' | 'delete' = 'upsert', type: 'COPY_ON_WRITE' | 'MERGE_ON_READ' = 'COPY_ON_WRITE') => {
      batch += 1;
      const properties = new Map([...Object.entries(hudi1xWriteOptions('mdt', type)), ['hoodie.write.table.version', String(tableVersion)]]);
      const input = hudi1xJsonl(join(path, '..'), ids, batch);
      return writeBatch(new LocalStorage(path), { input: { file: input, format: 'jsonl' }, operation, properties });
    };
    const doctor = async (path: string) => doctorTable(await HudiTable.open(new LocalStorage(path)));
    const recordIndexFindings = (report: Awaited<ReturnType<typeof doctor>>) => report.findings.filter((f) => f.check === 'record-index');
    const groupsOf = async (path: string, partition: string) =>
      (await (await HudiTable.open(new LocalStorage(path))).fileSystemView()).latestBaseFiles(partition).map((file) => file.fileId);

    it('a copy-on-write table our writer kept checks clean; a damaged index is reported key by key, and by doctor', async () => {
      const path = freshTable(release, 'cow', true);
      const storage = new LocalStorage(path);
      await write(path, [1, 2, 3, 4]);
      const [odd1] = await groupsOf(path, ODD);
      const [even1] = await groupsOf(path, EVEN);
      await write(path, [5, 6]);
      const [odd2] = (await groupsOf(path, ODD)).filter((id) => id !== odd1);
      const [even2] = (await groupsOf(path, EVEN)).filter((id) => id !== even1);
      assert.ok(odd1 && even1 && odd2 && even2, 'each write has its own file groups');
      const clean = (await checkMetadataTable(storage))!;
      assert.deepEqual(clean.recordIndexMismatches, []);
      assert.ok(!clean.skipped.some((what) => what.startsWith('record_index')), clean.skipped.join('; '));
      assert.equal(clean.ok, true, JSON.stringify(clean));
      assert.deepEqual(recordIndexFindings(await doctor(path)), [], 'our writer keeps the record index');

      // The index as it is now; what later commits add to it is lost below (each deltacommit writes new log files).
      const folder = join(path, '.hoodie/metadata/record_index');
      const kept = new Set(readdirSync(folder));
      await write(path, [7]);
      await write(path, [3], 'delete');
      await clusterSortedById(storage, 'clustering', new Map([['hoodie.write.table.version', String(tableVersion)]]));
      const [odd, ...moreOdd] = await groupsOf(path, ODD);
      const [even, ...moreEven] = await groupsOf(path, EVEN);
      assert.deepEqual([moreOdd, moreEven], [[], []], 'the clustering made one file group per partition');
      assert.equal((await checkMetadataTable(storage))?.ok, true, 'still in step before the damage');
      for (const name of readdirSync(folder)) if (!kept.has(name)) rmSync(join(folder, name));

      const check = (await checkMetadataTable(storage))!;
      assert.deepEqual(
        check.recordIndexMismatches.map((m) => [m.kind, m.recordKey, m.inIndex?.fileId, m.inData?.fileId]),
        [
          ['deleted', '3', odd1, undefined],
          ['location', '1', odd1, odd],
          ['location', '2', even1, even],
          ['location', '4', even1, even],
          ['location', '5', odd2, odd],
          ['location', '6', even2, even],
          ['missing', '7', undefined, odd],
        ],
      );
      assert.equal(check.ok, false);
      // Only the record index is out of step.
      assert.deepEqual([check.missingFromMetadata, check.missingFromStorage, check.indexMismatches, check.problems], [[], [], [], []]);

      const report = await doctor(path);
      assert.equal(report.worst, 'error');
      const found = recordIndexFindings(report);
      assert.deepEqual(
        found.map((f) => [f.severity, f.subject, f.finding.replace(/:.*/, '')]),
        [
          ['error', '.hoodie/metadata/record_index', '1 live record(s) the record index lacks'],
          ['error', '.hoodie/metadata/record_index', '1 key(s) of no live record still in the record index'],
          ['error', '.hoodie/metadata/record_index', '5 key(s) indexed at another file group than the one holding the record'],
        ],
      );
      assert.equal(found[0]!.finding, `1 live record(s) the record index lacks: 7 (in ${ODD}/${odd})`);
      assert.equal(found[1]!.finding, `1 key(s) of no live record still in the record index: 3 (indexed at ${ODD}/${odd1})`);
      assert.match(found[2]!.finding, new RegExp(`: 1 \\(indexed at ${ODD}/${odd1}, held by ${ODD}/${odd}\\), 2 \\(.*\\), 4 \\(.*\\), and 2 more$`));
      assert.equal(countFindings(report).byCheck['record-index'], 3);
      assert.deepEqual(
        report.findings.filter((f) => f.check === 'metadata-table' && f.severity !== 'info'),
        [],
      );
    });

    it("Hudi 1.1's partitioned record index is named as not compared, and not compared", async () => {
      // Keys written before the index was attached: compared, each would be a live record the index lacks.
      const path = freshTable(release, 'partitioned', false);
      await write(path, [1, 2]);
      attachRecordIndex(path);
      const storage = new LocalStorage(path);
      assert.deepEqual(
        (await checkMetadataTable(storage))?.recordIndexMismatches.map((m) => [m.kind, m.recordKey]),
        [
          ['missing', '1'],
          ['missing', '2'],
        ],
      );
      const definitions = join(path, '.hoodie/.index_defs/index.json');
      mkdirSync(join(path, '.hoodie/.index_defs'), { recursive: true });
      const existing = existsSync(definitions) ? (JSON.parse(readFileSync(definitions, 'utf8')) as { indexDefinitions?: object }) : {};
      const recordIndex = { indexName: 'record_index', indexType: 'record_index', indexOptions: { isPartitioned: 'true' }, version: 'V1' };
      writeFileSync(definitions, JSON.stringify({ ...existing, indexDefinitions: { ...existing.indexDefinitions, record_index: recordIndex } }));
      const check = (await checkMetadataTable(storage))!;
      assert.deepEqual(check.recordIndexMismatches, []);
      assert.ok(
        check.skipped.some((what) => /^record_index: partitioned/.test(what)),
        check.skipped.join('; '),
      );
      assert.equal(check.ok, true, 'reading it is no problem; writing is refused (metadata-1x-record-index.test.ts)');
    });

    it("merge-on-read: the live keys are the merged snapshot's, a key deleted or updated in a log file as the log says", async () => {
      // Our writer does not write log files beside a record_index (their key changes are not built): the index is
      // kept while the table is copy-on-write, and undeclared while log files are written on it as merge-on-read.
      const path = freshTable(release, 'mor', true);
      await write(path, [1, 2, 3, 4]);
      const [even] = await groupsOf(path, EVEN);
      setProperty(path, /^hoodie\.table\.type=(COPY_ON_WRITE)$/m, () => 'hoodie.table.type=MERGE_ON_READ');
      setProperty(path, /^hoodie\.table\.metadata\.partitions=(.*),record_index$/m, (partitions) => `hoodie.table.metadata.partitions=${partitions}`);
      await write(path, [1], 'upsert', 'MERGE_ON_READ');
      await write(path, [2], 'delete', 'MERGE_ON_READ');
      assert.ok(
        readdirSync(join(path, ODD)).some((name) => name.includes('.log.')),
        'the update went to a log file',
      );
      assert.ok(
        readdirSync(join(path, EVEN)).some((name) => name.includes('.log.')),
        'the delete went to a log file',
      );
      setProperty(path, /^hoodie\.table\.metadata\.partitions=(.*)$/m, (partitions) => `hoodie.table.metadata.partitions=${partitions},record_index`);

      const check = (await checkMetadataTable(new LocalStorage(path)))!;
      assert.deepEqual(
        check.recordIndexMismatches.map((m) => [m.kind, m.recordKey, m.inIndex?.fileId, m.inData?.fileId]),
        [['deleted', '2', even, undefined]],
        'key 1, updated in its file group, is where the index has it',
      );
      assert.equal(check.ok, false);
      const found = recordIndexFindings(await doctor(path));
      assert.deepEqual(
        found.map((f) => f.finding),
        [`1 key(s) of no live record still in the record index: 2 (indexed at ${EVEN}/${even})`],
      );
    });
  });
}
