/**
 * A long-lived table for the table-service tests, written by our own writer and clustering in-process: tiny upsert
 * batches over a few partitions (every one rewrites a file group, so older versions pile up) with a clustering every
 * so often, and the rows it should hold kept alongside (the model the readers are checked against).
 */
import { join } from 'node:path';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import type { Storage } from '../../lib/storage/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { TableAccessMode } from '../../lib/table/config.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from './paths.js';

export const SERVICES_TABLE_WRITE_PROPS: ReadonlyMap<string, string> = new Map([
  ['hoodie.table.name', 'services'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.table.timeline.timezone', 'UTC'],
  // Tiny files: a small bloom filter keeps them small.
  ['hoodie.index.bloom.num_entries', '100'],
]);

export interface ServicesRow {
  readonly id: number;
  readonly name: string;
  readonly ts: number;
  readonly dt: string;
}

export interface ServicesTableOptions {
  /** The table's folder (created). */
  readonly dir: string;
  readonly partitions: number;
  /** Write commits (clusterings come on top). */
  readonly commits: number;
  /** A clustering of every partition after each `clusterEvery`-th write commit (0: none). */
  readonly clusterEvery: number;
  /** Properties for the writes, over SERVICES_TABLE_WRITE_PROPS. */
  readonly properties?: ReadonlyMap<string, string>;
  /** Runs after every commit and clustering (e.g. the automatic services a writer runs). */
  readonly afterCommit?: (storage: LocalStorage, instant: string, kind: 'commit' | 'replacecommit') => Promise<void>;
}

export interface ServicesTable {
  readonly dir: string;
  readonly storage: LocalStorage;
  readonly partitions: readonly string[];
  /** Every completed write and clustering, oldest first, with what the table held right after it. */
  readonly history: readonly { readonly instant: string; readonly kind: 'commit' | 'replacecommit'; readonly rows: ReadonlyMap<number, ServicesRow> }[];
  /** The rows the table holds now, by id. */
  readonly rows: ReadonlyMap<number, ServicesRow>;
}

/** Rows as sorted JSON lines (the readers' rows are compared in this form, without meta fields). */
export function rowLines(rows: Iterable<ServicesRow | Record<string, unknown>>): string[] {
  return [...rows]
    .map((row) => {
      const { id, name, ts, dt } = row as Record<string, unknown>;
      return JSON.stringify({ id: Number(id), name, ts: Number(ts), dt });
    })
    .sort();
}

export async function writeServicesTable(options: ServicesTableOptions): Promise<ServicesTable> {
  const storage = new LocalStorage(options.dir);
  const properties = new Map([...SERVICES_TABLE_WRITE_PROPS, ...(options.properties ?? [])]);
  const partitions = Array.from({ length: options.partitions }, (_, index) => `p${index}`);
  const rows = new Map<number, ServicesRow>();
  const history: { instant: string; kind: 'commit' | 'replacecommit'; rows: ReadonlyMap<number, ServicesRow> }[] = [];
  const batchDir = tempDir('services-batch-');
  const lock = new StorageLockProvider(storage, { waitMs: 10_000, pollMs: 20 });
  const engine = options.clusterEvery > 0 ? await openParquetEngine() : undefined;
  let nextId = 1;
  try {
    for (let commit = 1; commit <= options.commits; commit++) {
      const batch: ServicesRow[] = [];
      if (commit === 1) {
        // Two rows per partition to start with.
        for (const dt of partitions) for (let k = 0; k < 2; k++) batch.push({ id: nextId++, name: `n${nextId - 1}@1`, ts: 1, dt });
      } else {
        // Update one row of one partition (its file group is rewritten), and every fifth commit a new row elsewhere.
        const dt = partitions[commit % partitions.length]!;
        const inPartition = [...rows.values()].filter((row) => row.dt === dt);
        const target = inPartition[commit % inPartition.length]!;
        batch.push({ ...target, name: `n${target.id}@${commit}`, ts: commit });
        if (commit % 5 === 0) {
          const id = nextId++;
          batch.push({ id, name: `n${id}@${commit}`, ts: commit, dt: partitions[(commit + 1) % partitions.length]! });
        }
      }
      const file = join(batchDir, `batch-${commit}.jsonl`);
      await writeJsonLines(file, batch);
      const written = await writeBatch(storage, { input: { file, format: 'jsonl' }, operation: commit === 1 ? 'insert' : 'upsert', properties });
      for (const row of batch) rows.set(row.id, row);
      history.push({ instant: written.instantTime, kind: 'commit', rows: new Map(rows) });
      await options.afterCommit?.(storage, written.instantTime, 'commit');
      if (engine !== undefined && commit % options.clusterEvery === 0) {
        const clustered = await runClusteringJob(await HudiTable.open(storage, { mode: 'clustering' }), {
          mode: 'scheduleAndExecute',
          config: resolveClusteringConfig().config,
          lock,
          engine,
          tempDir: tempDir('services-clustering-'),
        });
        const instant = clustered.instantTime;
        if (instant === undefined) throw new Error(`the clustering after commit ${commit} planned nothing`);
        history.push({ instant, kind: 'replacecommit', rows: new Map(rows) });
        await options.afterCommit?.(storage, instant, 'replacecommit');
      }
    }
  } finally {
    await engine?.close();
  }
  return { dir: options.dir, storage, partitions, history, rows };
}

/**
 * Our `cluster --mode scheduleAndExecute`, in process: every file small, sorted by `id`, forced; the replacecommit's
 * instant (a clustering that planned nothing fails the test).
 */
export async function clusterSortedById(storage: Storage, mode: TableAccessMode, properties: ReadonlyMap<string, string>): Promise<string> {
  const engine = await openParquetEngine();
  try {
    const result = await runClusteringJob(await HudiTable.open(storage, { mode }), {
      mode: 'scheduleAndExecute',
      config: resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'id', 'hoodie.parquet.small.file.limit': '0' } }).config,
      force: true,
      lock: new StorageLockProvider(storage, { waitMs: 10_000 }),
      engine,
      tempDir: tempDir(),
      properties: new Map(properties),
    });
    if (result.instantTime === undefined) throw new Error('the clustering planned nothing');
    return result.instantTime;
  } finally {
    await engine.close();
  }
}
