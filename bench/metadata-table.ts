/**
 * Metadata-table benchmark (not a test): the time Hudi's metadata table adds to one commit that writes N new base
 * files, with every partition on (files, column_stats, bloom_filters, record_index with `--keys` records per file).
 * A real base file (our writer's) is copied N times as the files of a commit; the metadata-table side of the commit
 * runs as the writer runs it under the lock (keepMetadataTable: open, own services, deltacommit; the data table the
 * writer read under the lock handed on), footers read from the local copies or, with `--footers storage`, from the
 * table's storage. Per file count: median and range of `--runs`, CPU, storage requests (S3: by kind), the time
 * some request was in flight and the load average meanwhile (on a shared machine, compare CPU). Then one compaction
 * after `--compaction-commits` commits of `--compaction-files` files, and the writer end to end with and without it.
 *   npm run bench:metadata -- [--files 10,1000] [--keys 100] [--runs 3] [--footers local|storage] [--s3]
 *     [--partitions files,…] [--sections commit,compaction,e2e] [--compaction-commits 15] [--compaction-files 10]
 *     [--profile <folder>]   (a .cpuprofile of each measured commit, for the profile before and after a change)
 * With --s3 the table lives on S3 (run under `node infra/with-local-stack.mjs` for the local S3 server).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateUsers, writeJsonLines } from '../lib/cli/generate.js';
import { keepMetadataTable, type MetadataPartitionType, MetadataTable } from '../lib/metadata/index.js';
import { countedStorage, deleteMany, formatRequestCounts, mapWithConcurrency, openStorage } from '../lib/storage/index.js';
import type { Storage } from '../lib/storage/port.js';
import { RequestCounter } from '../lib/storage/request-counts.js';
import { newTableOptionsFromWriteProperties } from '../lib/table/config.js';
import { createTable } from '../lib/table/init.js';
import { HudiTable } from '../lib/table/table.js';
import { type CommitMetadata, newWriteStat, type WriteStat } from '../lib/timeline/commit-metadata.js';
import { writeBatch } from '../lib/writer/write-client.js';
import { initMetadataTable } from '../test/helpers/metadata-table.js';
import { median } from './median.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10,1000' },
    keys: { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    footers: { type: 'string', default: 'local' },
    s3: { type: 'boolean', default: false },
    partitions: { type: 'string', default: 'files,column_stats,bloom_filters,record_index' },
    sections: { type: 'string', default: 'commit,compaction,e2e' },
    'compaction-commits': { type: 'string', default: '15' },
    'compaction-files': { type: 'string', default: '10' },
    /** A folder: each measured commit's CPU profile (node:inspector, only while the commit runs) is written there. */
    profile: { type: 'string' },
  },
});
const fileCounts = values.files.split(',').map(Number);
const keysPerFile = Number(values.keys);
const runs = Number(values.runs);
const sections = new Set(values.sections.split(','));
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
  const unique = `${name}-${Date.now()}-${randomUUID().slice(0, 8)}`;
  if (!values.s3) return openStorage(join(dir, unique));
  const bucket = process.env['BENCH_S3_BUCKET'] ?? 'hudi-bench';
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  await new S3Client({ forcePathStyle: true }).send(new CreateBucketCommand({ Bucket: bucket })).catch(() => undefined);
  return openStorage(`s3://${bucket}/${unique}`);
}

async function input(records: object[]): Promise<string> {
  const file = join(dir, `in-${randomUUID()}.jsonl`);
  await writeJsonLines(file, records);
  return file;
}

/**
 * Storage calls watched from outside: the wall time during which at least one call was in flight (what the commit
 * spent waiting on storage, overlapping calls counted once) and the calls by port method.
 */
class WatchedStorage {
  busyMs = 0;
  private inFlight = 0;
  private busySince = 0;
  readonly calls = new Map<string, number>();

  wrap(storage: Storage): Storage {
    const watched = Object.create(storage) as Storage;
    for (const method of ['get', 'getRange', 'head', 'put', 'putIfAbsent', 'uploadFile', 'downloadFile', 'listDir', 'listRecursive', 'delete'] as const) {
      const original = storage[method].bind(storage) as (...args: unknown[]) => Promise<unknown>;
      (watched as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
        if (this.inFlight++ === 0) this.busySince = performance.now();
        try {
          return await original(...args);
        } finally {
          if (--this.inFlight === 0) this.busyMs += performance.now() - this.busySince;
        }
      };
    }
    return watched;
  }
}

interface CommitRun {
  /** Opening the metadata table, its own services, the deltacommit: what the writer pays under the lock. */
  readonly totalMs: number;
  readonly cpuMs: number;
  /** The machine's one-minute load average as the commit started and as it ended (the machine may be shared). */
  readonly load: readonly [number, number];
  readonly storageBusyMs: number;
  readonly requests: string;
  readonly calls: string;
  readonly parts: string;
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
  async function commitCopies(storage: Storage, count: number, instant: string): Promise<CommitRun> {
    const local = join(dir, `copies-${count}`);
    await mkdir(local, { recursive: true });
    const stats: WriteStat[] = [];
    const localFiles = new Map<string, string>();
    const updates: { recordKey: string; partitionPath: string; fileId: string }[] = [];
    const files = Array.from({ length: count }, (_, i) => {
      const partition = `2024-01-${String(1 + (i % 20)).padStart(2, '0')}`;
      const fileId = `${randomUUID()}-0`;
      return { partition, fileId, path: `${partition}/${fileId}_${i}-1-0_${instant}.parquet`, copy: join(local, `${i}.parquet`) };
    });
    const sizes = await mapWithConcurrency(files, 16, async ({ path, copy }) => {
      await copyFile(seedFile, copy);
      await storage.uploadFile(path, copy);
      return (await storage.head(path))!.size;
    });
    for (const [i, { partition, fileId, path, copy }] of files.entries()) {
      localFiles.set(path, copy);
      const size = sizes[i]!;
      stats.push(
        newWriteStat({ fileId, path, partitionPath: partition, numWrites: keysPerFile, numInserts: keysPerFile, totalWriteBytes: size, fileSizeInBytes: size }),
      );
      if (ALL.includes('record_index')) for (let k = 0; k < keysPerFile; k++) updates.push({ recordKey: `${i}-${k}`, partitionPath: partition, fileId });
    }
    const metadata: CommitMetadata = { partitionToWriteStats: {}, compacted: false, extraMetadata: { schema }, operationType: 'INSERT' };
    for (const stat of stats) (metadata.partitionToWriteStats[stat.partitionPath!] ??= []).push(stat);
    await storage.put(`.hoodie/${instant}.commit.requested`, '');
    await storage.put(`.hoodie/${instant}.inflight`, '');
    // Under its lock the writer has just read hoodie.properties and the timeline, and hands them on (dataTable).
    const dataTable = await HudiTable.open(storage);
    const counter = new RequestCounter();
    const watch = new WatchedStorage();
    const measured = watch.wrap(countedStorage(storage, counter));
    const profiler = values.profile === undefined ? undefined : new Session();
    if (profiler !== undefined) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const loadBefore = loadavg()[0]!;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await keepMetadataTable(measured, props).commit(instant, metadata, {
      dataTable,
      recordIndex: { updates, deletes: [] },
      ...(values.footers === 'local' ? { localFiles } : {}),
    });
    const totalMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const loadAfter = loadavg()[0]!;
    if (profiler !== undefined) {
      const { profile } = await profiler.post('Profiler.stop');
      await mkdir(values.profile!, { recursive: true });
      await writeFile(join(values.profile!, `commit-${count}-files-${Date.now()}.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    if (result === undefined) throw new Error('the table has no metadata table');
    const parts = Object.entries(result.partitions)
      .map(([p, s]) => `${p} ${s.records} records/${s.logFiles} log files/${(s.bytes / 1024).toFixed(0)} KiB`)
      .join(', ');
    await rm(local, { recursive: true, force: true });
    return {
      totalMs,
      cpuMs: (used.user + used.system) / 1000,
      load: [loadBefore, loadAfter],
      storageBusyMs: watch.busyMs,
      requests: values.s3 ? formatRequestCounts(counter.snapshot()) : 'none (local disk)',
      calls: [...watch.calls].map(([method, n]) => `${n} ${method}`).join(', '),
      parts,
    };
  }

  const range = (xs: readonly number[]): string => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
  if (sections.has('commit')) {
    for (const count of fileCounts) {
      const all: CommitRun[] = [];
      for (let run = 0; run < runs; run++) {
        const storage = await tableStorage(`files-${count}`);
        await createTable(storage, newTableOptionsFromWriteProperties(props, 'bench'));
        await initMetadataTable(storage, ALL);
        all.push(await commitCopies(storage, count, '20240101000000000'));
        // Each run's table goes: the local S3 server keeps objects in memory and slows down as they pile up.
        await deleteMany(
          storage,
          (await storage.listRecursive('')).map((object) => object.path),
        );
      }
      const last = all.at(-1)!;
      console.log(
        `${String(count).padStart(5)} files (${(count * keysPerFile).toLocaleString('en-US')} keys, footers ${values.footers}${values.s3 ? ', S3' : ', local disk'}), ${runs} run(s): ` +
          `${range(all.map((r) => r.totalMs))}, CPU ${range(all.map((r) => r.cpuMs))}, storage in flight ${range(all.map((r) => r.storageBusyMs))}, ` +
          `load ${Math.min(...all.flatMap((r) => r.load)).toFixed(1)}–${Math.max(...all.flatMap((r) => r.load)).toFixed(1)} on ${availableParallelism()} cores\n` +
          `      runs ${all.map((r) => r.totalMs.toFixed(0)).join(', ')} ms; requests ${last.requests}; calls ${last.calls}\n      [${last.parts}]`,
      );
    }
  }

  // One metadata-table compaction after many commits (each completed on the data table, so its blocks count).
  if (sections.has('compaction')) {
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
  for (const withMdt of sections.has('e2e') ? [false, true] : []) {
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
