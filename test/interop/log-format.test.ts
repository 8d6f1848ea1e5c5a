/**
 * The log format against real Hudi 0.15 (Spark 3.5.1): Spark writes a small merge-on-read table with the metadata
 * table on — inserts, an Avro-block upsert, a Parquet-block upsert, a delete, two more upserts, a rollback of the
 * last delta commit, and archival — and we decode every log file it wrote: data-table logs, the metadata table's
 * HFile-block logs, and both archived timelines. Then our writer appends a delta commit's blocks to a file group and
 * Spark and hudi-rs read them back.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { RowSet as EngineRowSet } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import {
  avroDataBlock,
  type DataBlockContentDecoder,
  decodeDataBlock,
  deleteBlock,
  encodeAvroDataBlockContent,
  encodeDeleteBlockContent,
  encodeLogBlock,
  HOODIE_DELETE_RECORD_LIST_SCHEMA,
  type LogBlock,
  type LogFile,
  logFilesOf,
  readAvroDataBlock,
  readCommandBlock,
  readDeleteBlock,
  readLogFile,
  writeLogFile,
} from '../../lib/log-format/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { StoredObject } from '../../lib/storage/port.js';
import { canonicalRow, canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, price DOUBLE, ts BIGINT, dt STRING';
const row = (id: number, ts: number, tag: string) => ({ id, name: `n${id}-${tag}`, price: id * 1.5, ts, dt: id % 2 === 1 ? 'a' : 'b' });
const options = (operation: string, extra: Record<string, string> = {}) => ({
  'hoodie.table.name': 'mor',
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.logfile.data.block.format': 'avro',
  'hoodie.compact.inline': 'false',
  // Archive early: at 4 completed instants keep 2 (the metadata table compacts every 2 delta commits so it allows it).
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.cleaner.commits.retained': '1',
  'hoodie.metadata.compact.max.delta.commits': '2',
  ...extra,
});

interface TableLog {
  file: LogFile;
  bytes: Uint8Array;
  blocks: LogBlock[];
}

describe('log format: real Hudi 0.15 files', () => {
  let hudi: HudiHarness;
  let table: string;
  let storage: LocalStorage;
  let logs: TableLog[];
  let rolledBackInstant: string;
  const kinds = (prefix: string) => logs.filter((log) => log.file.path.startsWith(prefix));
  const dataLogs = () => logs.filter((log) => !log.file.path.startsWith('.hoodie/'));

  before(async () => {
    hudi = await startHudi();
    table = join(tempDir('log-format-hudi-'), 'mor');
    await hudi.write(table, { schema: SCHEMA, rows: [1, 2, 3, 4, 5, 6].map((id) => row(id, 1, 'ins')), options: options('insert') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(1, 2, 'up1'), row(2, 2, 'up1')], options: options('upsert') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(3, 3, 'up2')], options: options('upsert', { 'hoodie.logfile.data.block.format': 'parquet' }) });
    await hudi.write(table, { schema: SCHEMA, rows: [row(4, 4, 'del')], options: options('delete') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(5, 5, 'up3')], options: options('upsert') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(6, 6, 'up4')], options: options('upsert') });
    await hudi.sql(`CREATE TABLE mor_logs USING hudi LOCATION '${table}'`);
    const commits = await hudi.sql(`CALL show_commits(table => 'mor_logs', limit => 1)`);
    rolledBackInstant = String(commits.rows[0]!['commit_time']);
    await hudi.sql(`CALL rollback_to_instant(table => 'mor_logs', instant_time => '${rolledBackInstant}')`);

    storage = new LocalStorage(table);
    const objects = await storage.listRecursive('');
    const byDir = new Map<string, StoredObject[]>();
    for (const object of objects) {
      const dir = object.path.slice(0, Math.max(0, object.path.lastIndexOf('/')));
      byDir.set(dir, [...(byDir.get(dir) ?? []), object]);
    }
    logs = [];
    for (const dirObjects of byDir.values()) {
      for (const file of logFilesOf(dirObjects)) logs.push({ file, bytes: await storage.get(file.path), blocks: await readLogFile(storage, file.path) });
    }
  });

  after(async () => {
    await hudi?.close();
  });

  it('decodes every log file Spark wrote, and re-encodes each block to its length and its content to the same bytes', (t) => {
    const counts: Record<string, number> = {};
    for (const log of logs) {
      const bytes = log.blocks.reduce((sum, block) => sum + block.length, 0);
      assert.equal(bytes, log.file.size, `${log.file.path}: blocks cover the whole file`);
      for (const block of log.blocks) {
        const where = logKind(log.file.path);
        counts[`${where} ${block.type}`] = (counts[`${where} ${block.type}`] ?? 0) + 1;
        assert.notEqual(block.type, 'CORRUPT_BLOCK', log.file.path);
        assert.deepEqual(block.footer, {}, 'Hudi writes no footer');
        // Same fields, our encoder: same length (Hudi's header order is a HashMap's, so bytes may differ in order).
        const again = encodeLogBlock({ type: block.type as Exclude<LogBlock['type'], 'CORRUPT_BLOCK'>, header: block.header, content: block.content });
        assert.equal(again.length, block.length, `${log.file.path} @${block.offset}`);
        if (Object.keys(block.header).length <= 1) {
          assert.deepEqual(Buffer.from(again), Buffer.from(log.bytes.subarray(block.offset, block.offset + block.length)), `${log.file.path}: byte-identical`);
        }
        if (block.type === 'AVRO_DATA_BLOCK') {
          assert.deepEqual(Buffer.from(encodeAvroDataBlockContent(readAvroDataBlock(block), block.header.SCHEMA!)), Buffer.from(block.content));
        }
        if (block.type === 'DELETE_BLOCK') {
          assert.deepEqual(Buffer.from(encodeDeleteBlockContent(readDeleteBlock(block))), Buffer.from(block.content));
        }
      }
    }
    t.diagnostic(`${logs.length} log files; blocks: ${JSON.stringify(counts)}`);
    const expected = [
      'data AVRO_DATA_BLOCK',
      'data PARQUET_DATA_BLOCK',
      'data DELETE_BLOCK',
      'data COMMAND_BLOCK',
      'mdt HFILE_DATA_BLOCK',
      'mdt COMMAND_BLOCK',
      'archive AVRO_DATA_BLOCK',
      'mdt-archive AVRO_DATA_BLOCK',
    ];
    for (const kind of expected) {
      assert.ok((counts[kind] ?? 0) > 0, `expected a ${kind}`);
    }
    // No append on the local file system: one delta commit, one new log version per file group.
    for (const log of dataLogs()) assert.equal(log.blocks.length, 1, log.file.path);
  });

  it('Avro data blocks hold the upserted rows as Spark reads them; the delete block holds the deleted key', async () => {
    const snapshot = await hudi.read(table, { options: { 'hoodie.datasource.query.type': 'snapshot' } });
    const sparkRow = (id: number) => snapshot.rows.find((r) => r['id'] === id);
    const avro = dataLogs().flatMap((log) => log.blocks.filter((block) => block.type === 'AVRO_DATA_BLOCK'));
    const records = avro.flatMap((block) => (readAvroDataBlock(block) as Row[]).map((record) => ({ block, record })));
    assert.deepEqual(records.map(({ record }) => record['name']).sort(), ['n1-up1', 'n2-up1', 'n5-up3', 'n6-up4']);
    for (const { block, record } of records) {
      assert.equal(record['_hoodie_commit_time'], block.header.INSTANT_TIME);
      if (block.header.INSTANT_TIME === rolledBackInstant) continue;
      assert.equal(canonicalRow(record), canonicalRow(sparkRow(record['id'] as number)), `key ${record['id']}`);
    }
    // The rolled-back upsert's block is still there; the rollback's command block names it, and Spark ignores it.
    const commands = dataLogs().flatMap((log) => log.blocks.filter((block) => block.type === 'COMMAND_BLOCK').map((block) => readCommandBlock(block)));
    assert.deepEqual(
      commands.map((command) => [command.command, command.targetInstantTime]),
      [['ROLLBACK_BLOCK', rolledBackInstant]],
    );
    assert.equal(sparkRow(6)?.['name'], 'n6-ins');

    const deletes = dataLogs().flatMap((log) => log.blocks.filter((block) => block.type === 'DELETE_BLOCK').flatMap((block) => readDeleteBlock(block)));
    // Deletes through the datasource carry Hudi's default ordering value, int 0.
    assert.deepEqual(deletes, [{ recordKey: '4', partitionPath: 'b', orderingValue: { type: 'int', value: 0 } }]);
    assert.equal(sparkRow(4), undefined);
  });

  it('a Parquet data block’s content is the Parquet file of the upserted row (through a content decoder)', async () => {
    const engine = await openParquetEngine();
    const staging = tempDir('log-format-parquet-');
    const parquet: DataBlockContentDecoder<Promise<EngineRowSet>> = {
      blockType: 'PARQUET_DATA_BLOCK',
      decode: async (content) => {
        const file = join(staging, 'block.parquet');
        writeFileSync(file, content);
        return engine.readRows([file]);
      },
    };
    try {
      const blocks = dataLogs().flatMap((log) => log.blocks.filter((block) => block.type === 'PARQUET_DATA_BLOCK'));
      assert.equal(blocks.length, 1);
      const rows = (await decodeDataBlock(blocks[0]!, parquet)).rows;
      const snapshot = await hudi.read(table, { where: 'id = 3' });
      assert.deepEqual(canonicalRows(rows), canonicalRows(snapshot.rows));
      assert.equal(rows[0]?.['name'], 'n3-up2');
    } finally {
      await engine.close();
    }
  });

  it('metadata-table logs hold HFile blocks of completed (or rolled-back) metadata delta commits', () => {
    const mdtLogs = kinds('.hoodie/metadata/files/');
    const archived = new Set(
      kinds('.hoodie/metadata/.hoodie/archived/')
        .flatMap((log) => log.blocks.flatMap((block) => readAvroDataBlock(block) as Row[]))
        .map((entry) => String(entry['commitTime'])),
    );
    const rolledBack = new Set(
      mdtLogs.flatMap((log) => log.blocks.filter((block) => block.type === 'COMMAND_BLOCK')).map((block) => readCommandBlock(block).targetInstantTime),
    );
    assert.ok(rolledBack.has(rolledBackInstant), 'the data rollback rolled the metadata table back too');
    const hfiles = mdtLogs.flatMap((log) => log.blocks.filter((block) => block.type === 'HFILE_DATA_BLOCK'));
    assert.ok(hfiles.length >= 3);
    for (const block of hfiles) {
      const instant = block.header.INSTANT_TIME!;
      const completed = archived.has(instant) || existsSync(join(table, `.hoodie/metadata/.hoodie/${instant}.deltacommit`));
      assert.ok(completed !== rolledBack.has(instant), `${instant} is either a completed or a rolled-back metadata delta commit`);
      assert.equal((JSON.parse(block.header.SCHEMA!) as { name: string }).name, 'HoodieMetadataRecord');
      // An HFile starts with its first data block's magic; the rest is for the HFile codec (lib/hfile).
      assert.equal(Buffer.from(block.content.subarray(0, 8)).toString('latin1'), 'DATABLK*');
      const headerBytes = 4 + Object.values(block.header).reduce((sum, value) => sum + 8 + Buffer.byteLength(value!), 0);
      assert.equal(block.content.length, block.length - (6 + 8 + 4 + 4 + headerBytes + 8 + 4 + 8));
    }
  });

  it('the archived timeline holds one HoodieArchivedMetaEntry per archived instant file', async () => {
    const readerSchema = (await hudi.avroSchema('HoodieArchivedMetaEntry')) as object;
    const archives = kinds('.hoodie/archived/');
    assert.deepEqual(
      archives.map(({ file: { name } }) => [name.fileId, name.baseInstant, name.extension, name.writeToken]),
      [['commits', '', 'archive', '1-0-1']],
    );
    const entries = archives.flatMap((log) => log.blocks.flatMap((block) => readAvroDataBlock(block, { readerSchema }) as Row[]));
    const active = (await storage.listDir('.hoodie')).files.map((file) => file.path.slice('.hoodie/'.length));
    const archivedInstants = [...new Set(entries.map((entry) => String(entry['commitTime'])))];
    assert.ok(archivedInstants.length >= 1);
    for (const instant of archivedInstants) {
      assert.deepEqual(
        active.filter((name) => name.startsWith(instant)),
        [],
        `${instant} left the active timeline`,
      );
      const states = entries.filter((entry) => entry['commitTime'] === instant);
      assert.deepEqual(
        states.map((entry) => [entry['actionType'], entry['actionState']]),
        ['REQUESTED', 'INFLIGHT', 'COMPLETED'].map((state) => ['deltacommit', state]),
      );
    }
    // The first archived instant is the insert: its completed entry's write stats name the base files.
    const insert = entries.find((entry) => entry['actionState'] === 'COMPLETED')!;
    const stats = Object.values((insert['hoodieCommitMetadata'] as { partitionToWriteStats: Record<string, { path: string }[]> }).partitionToWriteStats).flat();
    const baseFiles = (await storage.listRecursive('')).filter((object) => object.path.endsWith('.parquet')).map((object) => object.path);
    assert.deepEqual(stats.map((stat) => stat.path).sort(), baseFiles.sort());
  });

  it('our delete record schema is the one compiled into Hudi', async () => {
    assert.deepEqual(stripDocs(await hudi.avroSchema('HoodieDeleteRecordList')), stripDocs(HOODIE_DELETE_RECORD_LIST_SCHEMA));
  });

  it('Spark and hudi-rs read an Avro data block and a delete block our writer appends as the next delta commit', async () => {
    const target = dataLogs().find((log) => log.file.path.startsWith('b/') && log.blocks[0]!.type === 'AVRO_DATA_BLOCK')!;
    const schema = target.blocks[0]!.header.SCHEMA!;
    const { fileId, baseInstant } = target.file.name;
    const timeline = (await storage.listDir('.hoodie')).files.map((file) => file.path.slice('.hoodie/'.length).split('.')[0]!);
    const instant = nextInstant(timeline);
    const updated = { ...row(2, 7, 'ours'), price: 99.5 };
    const written = await writeLogFile(storage, {
      partitionPath: 'b',
      fileId,
      baseInstant,
      writeToken: '0-0-0',
      blocks: [
        avroDataBlock({
          instantTime: instant,
          schema,
          records: [
            {
              _hoodie_commit_time: instant,
              _hoodie_commit_seqno: `${instant}_0_1`,
              _hoodie_record_key: '2',
              _hoodie_partition_path: 'b',
              _hoodie_file_name: fileId,
              ...updated,
            },
          ],
        }),
        deleteBlock({
          instantTime: instant,
          records: [{ recordKey: '6', partitionPath: 'b', orderingValue: { type: 'int', value: 0 } }],
          header: { SCHEMA: schema }, // as Spark's delete blocks carry it
        }),
      ],
    });
    const previous = logs.filter((log) => log.file.path.startsWith('b/') && log.file.name.fileId === fileId);
    assert.equal(written.name.version, Math.max(...previous.map((log) => log.file.name.version)) + 1);
    await commitDeltaCommit(instant, {
      fileId,
      path: written.path,
      prevCommit: baseInstant,
      numWrites: 1,
      numDeletes: 1,
      numUpdateWrites: 1,
      numInserts: 0,
      totalWriteBytes: written.size,
      totalWriteErrors: 0,
      partitionPath: 'b',
      fileSizeInBytes: written.size,
      logVersion: written.name.version,
      logOffset: 0,
      baseFile: (await storage.listDir('b')).files.map((file) => file.path.slice(2)).find((name) => name.startsWith(fileId) && name.endsWith('.parquet')),
      logFiles: [...previous.map((log) => log.file.path), written.path].map((path) => path.slice(2)),
    });

    const spark = await hudi.read(table, { options: { 'hoodie.datasource.query.type': 'snapshot' }, meta: false });
    const expected = [row(1, 2, 'up1'), updated, row(3, 3, 'up2'), row(5, 5, 'up3')];
    assert.deepEqual(canonicalRows(spark.rows), canonicalRows(expected));
    const hudiRs = await hudi.hudiRsRead(table, { meta: false });
    assert.deepEqual(canonicalRows(hudiRs.rows), canonicalRows(expected));
  });

  /** `<instant>.deltacommit` (with requested and inflight) for one write stat, as Hudi's writer completes it. */
  async function commitDeltaCommit(instant: string, stat: Record<string, unknown>): Promise<void> {
    const spark = JSON.parse(new TextDecoder().decode(await storage.get(`.hoodie/${latestDeltaCommit()}.deltacommit`))) as {
      extraMetadata: Record<string, string>;
    };
    const metadata = {
      partitionToWriteStats: { b: [stat] },
      compacted: false,
      extraMetadata: { schema: spark.extraMetadata['schema'] },
      operationType: 'UPSERT',
    };
    await storage.put(`.hoodie/${instant}.deltacommit.requested`, '');
    const inflight = { partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' };
    await storage.put(`.hoodie/${instant}.deltacommit.inflight`, JSON.stringify(inflight));
    await storage.put(`.hoodie/${instant}.deltacommit`, JSON.stringify(metadata, null, 2));
  }

  function latestDeltaCommit(): string {
    const names = readdirSync(join(table, '.hoodie')).filter((name) => /^\d+\.deltacommit$/.test(name));
    return names.sort().at(-1)!.split('.')[0]!;
  }
});

/** An instant after every one on the timeline, from the clock Spark uses too. */
function nextInstant(timeline: readonly string[]): string {
  const now = new Date();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}${pad(now.getUTCMilliseconds(), 3)}`;
  const fromClock = `${date}${time}`;
  const latest =
    timeline
      .filter((name) => /^\d{17}$/.test(name))
      .sort()
      .at(-1) ?? '';
  assert.ok(fromClock > latest, `clock instant ${fromClock} after ${latest}`);
  return fromClock;
}

function logKind(path: string): string {
  if (path.startsWith('.hoodie/archived/')) return 'archive';
  if (path.startsWith('.hoodie/metadata/.hoodie/archived/')) return 'mdt-archive';
  return path.startsWith('.hoodie/metadata/') ? 'mdt' : 'data';
}

function stripDocs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripDocs);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== 'doc')
      .map(([key, value]) => [key, stripDocs(value)]),
  );
}
