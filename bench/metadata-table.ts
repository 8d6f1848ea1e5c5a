/**
 * Metadata-table benchmark (not a test): the time Hudi's metadata table adds to one commit that writes N new base
 * files, with every partition on (files, column_stats, bloom_filters, record_index with `--keys` records per file).
 *
 * A real base file (our writer's, with its bloom filter and column statistics) is copied N times as the files of a
 * commit; MetadataTable.commit then writes that commit's deltacommit, reading the footers from the local copies (as
 * the writer does) or, with `--footers storage`, from the table's storage. Also the writer end to end: one write of
 * 10 file groups with and without a metadata table.
 * Then the cost of one metadata-table compaction after `--compaction-commits` (15) such commits of `--compaction-files`
 * (10) files each: the time of MetadataTable.runTableServices and the base files it writes.
 *   npm run bench:metadata -- [--files 10,1000] [--keys 100] [--footers local|storage] [--s3] [--partitions files,…]
 *     [--compaction-commits 15] [--compaction-files 10]
 * With --s3 the table lives on S3 (run under `node infra/with-local-stack.mjs` for moto).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateUsers, writeJsonLines } from '../lib/cli/generate.js';
import { type MetadataPartitionType, MetadataTable } from '../lib/metadata/index.js';
import { openStorage } from '../lib/storage/index.js';
import type { Storage } from '../lib/storage/port.js';
import { newTableOptionsFromWriteProperties } from '../lib/table/config.js';
import { createTable } from '../lib/table/init.js';
import { type CommitMetadata, newWriteStat, type WriteStat } from '../lib/timeline/commit-metadata.js';
import { writeBatch } from '../lib/writer/write-client.js';
import { initMetadataTable } from '../test/helpers/metadata-table.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10,1000' },
    keys: { type: 'string', default: '100' },
    footers: { type: 'string', default: 'local' },
    s3: { type: 'boolean', default: false },
    partitions: { type: 'string', default: 'files,column_stats,bloom_filters,record_index' },
    'compaction-commits': { type: 'string', default: '15' },
    'compaction-files': { type: 'string', default: '10' },
  },
});
const fileCounts = values.files.split(',').map(Number);
const keysPerFile = Number(values.keys);
const dir = await mkdtemp(join(tmpdir(), 'hudi-bench-mdt-'));
const props = new Map([
  ['hoodie.table.name', 'bench_mdt'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  // Each of our MDT commits counts towards Hudi's compaction threshold; the bench makes many.
  ['hoodie.metadata.compact.max.delta.commits', '1000'],
]);
const ALL = values.partitions.split(',') as MetadataPartitionType[];

async function tableStorage(name: string): Promise<Storage> {
  if (!values.s3) return openStorage(join(dir, name));
  const bucket = process.env['BENCH_S3_BUCKET'] ?? 'hudi-bench';
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  await new S3Client({ forcePathStyle: true }).send(new CreateBucketCommand({ Bucket: bucket })).catch(() => undefined);
  return openStorage(`s3://${bucket}/${name}-${Date.now()}`);
}

async function input(records: object[]): Promise<string> {
  const file = join(dir, `in-${randomUUID()}.jsonl`);
  await writeJsonLines(file, records);
  return file;
}

try {
  // A base file to copy: our writer's output for 2,000 users in one partition.
  const seed = openStorage(join(dir, 'seed'));
  await writeBatch(seed, {
    input: { file: await input([...generateUsers({ count: 2000, seed: 1, days: 1 })]), format: 'jsonl' },
    operation: 'insert',
    properties: props,
  });
  const seedPartition = (await readdir(join(dir, 'seed'))).find((name) => /^\d{4}-/.test(name))!;
  const seedFile = join(dir, 'seed', seedPartition, (await readdir(join(dir, 'seed', seedPartition))).find((name) => name.endsWith('.parquet'))!);
  const commitMetadata = (await import('node:fs')).readFileSync(
    join(dir, 'seed/.hoodie', (await readdir(join(dir, 'seed/.hoodie'))).find((n) => n.endsWith('.commit'))!),
    'utf8',
  );
  const schema = (JSON.parse(commitMetadata) as CommitMetadata).extraMetadata['schema']!;

  /** The data commit `instant` of `count` copies of the seed file, with its deltacommit (the data commit left to the caller). */
  async function commitCopies(storage: Storage, count: number, instant: string): Promise<{ openMs: number; commitMs: number; parts: string }> {
    const local = join(dir, `copies-${count}`);
    await mkdir(local, { recursive: true });
    const stats: WriteStat[] = [];
    const localFiles = new Map<string, string>();
    const updates: { recordKey: string; partitionPath: string; fileId: string }[] = [];
    for (let i = 0; i < count; i++) {
      const partition = `2024-01-${String(1 + (i % 20)).padStart(2, '0')}`;
      const fileId = `${randomUUID()}-0`;
      const path = `${partition}/${fileId}_${i}-1-0_${instant}.parquet`;
      const copy = join(local, `${i}.parquet`);
      await copyFile(seedFile, copy);
      await storage.uploadFile(path, copy);
      localFiles.set(path, copy);
      const size = (await storage.head(path))!.size;
      stats.push(
        newWriteStat({ fileId, path, partitionPath: partition, numWrites: keysPerFile, numInserts: keysPerFile, totalWriteBytes: size, fileSizeInBytes: size }),
      );
      if (ALL.includes('record_index')) for (let k = 0; k < keysPerFile; k++) updates.push({ recordKey: `${i}-${k}`, partitionPath: partition, fileId });
    }
    const metadata: CommitMetadata = { partitionToWriteStats: {}, compacted: false, extraMetadata: { schema }, operationType: 'INSERT' };
    for (const stat of stats) (metadata.partitionToWriteStats[stat.partitionPath!] ??= []).push(stat);
    await storage.put(`.hoodie/${instant}.commit.requested`, '');
    await storage.put(`.hoodie/${instant}.inflight`, '');
    const started = performance.now();
    const mdt = (await MetadataTable.open(storage))!;
    const opened = performance.now();
    const result = await mdt.commit(instant, metadata, {
      properties: props,
      recordIndex: { updates, deletes: [] },
      ...(values.footers === 'local' ? { localFiles } : {}),
    });
    const done = performance.now();
    const parts = Object.entries(result.partitions)
      .map(([p, s]) => `${p} ${s.records} records/${s.logFiles} log files`)
      .join(', ');
    await rm(local, { recursive: true, force: true });
    return { openMs: opened - started, commitMs: done - opened, parts };
  }

  for (const count of fileCounts) {
    const storage = await tableStorage(`files-${count}`);
    await createTable(storage, newTableOptionsFromWriteProperties(props, 'bench'));
    await initMetadataTable(storage, ALL);
    const { openMs, commitMs, parts } = await commitCopies(storage, count, '20240101000000000');
    console.log(
      `${String(count).padStart(5)} files (${(count * keysPerFile).toLocaleString('en-US')} keys, footers ${values.footers}${values.s3 ? ', S3' : ', local disk'}): ` +
        `open ${openMs.toFixed(0)} ms + commit ${commitMs.toFixed(0)} ms = ${(openMs + commitMs).toFixed(0)} ms  [${parts}]`,
    );
  }

  // One metadata-table compaction after many commits (each completed on the data table, so its blocks count).
  {
    const commits = Number(values['compaction-commits']);
    const files = Number(values['compaction-files']);
    const storage = await tableStorage(`compaction-${commits}x${files}`);
    await createTable(storage, newTableOptionsFromWriteProperties(props, 'bench'));
    await initMetadataTable(storage, ALL);
    for (let c = 0; c < commits; c++) {
      const instant = `2024010100${String(c).padStart(4, '0')}000`;
      await commitCopies(storage, files, instant);
      await storage.put(
        `.hoodie/${instant}.commit`,
        JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'INSERT' }),
      );
    }
    const started = performance.now();
    const mdt = (await MetadataTable.open(storage))!;
    const {
      compactions: [compaction],
    } = await mdt.runTableServices({ properties: new Map([...props, ['hoodie.metadata.compact.max.delta.commits', '10']]) });
    const millis = performance.now() - started;
    if (compaction === undefined) throw new Error('no compaction was due');
    const byPartition = new Map<string, { files: number; bytes: number; records: number }>();
    for (const file of compaction.files) {
      const entry = byPartition.get(file.partition) ?? { files: 0, bytes: 0, records: 0 };
      byPartition.set(file.partition, { files: entry.files + 1, bytes: entry.bytes + file.bytes, records: entry.records + file.records });
    }
    console.log(
      `metadata-table compaction after ${commits} commits x ${files} files${values.s3 ? ' (S3)' : ' (local disk)'}: ${millis.toFixed(0)} ms, ${compaction.files.length} HFile base files ` +
        `[${[...byPartition].map(([p, e]) => `${p} ${e.files} files/${e.records} records/${(e.bytes / 1024).toFixed(0)} KiB`).join(', ')}]`,
    );
  }

  // End to end: the same write (10 file groups) with and without the metadata table.
  for (const withMdt of [false, true]) {
    const storage = await tableStorage(withMdt ? 'e2e-mdt' : 'e2e-plain');
    await createTable(storage, newTableOptionsFromWriteProperties(props, 'bench'));
    if (withMdt) await initMetadataTable(storage, ALL);
    const users = [...generateUsers({ count: 20_000, seed: 2, days: 10 })];
    await writeBatch(storage, { input: { file: await input(users), format: 'jsonl' }, operation: 'insert', properties: props });
    const updates = users.filter((_, i) => i % 10 === 0).map((u) => ({ ...u, name: `${u.name}-v2` }));
    const file = await input(updates);
    const started = performance.now();
    const result = await writeBatch(storage, { input: { file, format: 'jsonl' }, operation: 'upsert', properties: props });
    console.log(
      `writer upsert of ${updates.length} records into ${result.stats.length} file groups, ${withMdt ? 'with' : 'without'} the metadata table: ${(performance.now() - started).toFixed(0)} ms` +
        (result.metadataTable.deltaCommit ? ` (its deltacommit ${result.metadataTable.deltaCommit.millis} ms)` : ''),
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
