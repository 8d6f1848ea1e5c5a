/**
 * A long-lived table under Hudi's automatic services, written by us: upserts through our writer and clusterings
 * through our clustering job (test/helpers/services-table.ts), with a clean and an archive run after every commit
 * (hoodie.clean.automatic / hoodie.archive.automatic, in-process). At the end, what the retention policy allows is
 * worked out from the table's own history without the planner — the commits in order, and each replacecommit's
 * replaced file groups as its JSON said when it completed — and compared with the files on disk.
 * `npm run long-run:services` runs it at full size (200 commits, 20 clusterings); test/interop/ at a smaller one.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runArchive } from '../../lib/archival/archive.js';
import { type ArchivalConfig, archivalConfigFromProperties } from '../../lib/archival/config.js';
import { type CleanConfig, cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import type { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { type ServicesTable, writeServicesTable } from './services-table.js';

export interface LongRunOptions {
  readonly dir: string;
  readonly partitions: number;
  /** Write commits; a clustering of every partition comes after every `clusterEvery`-th. */
  readonly commits: number;
  readonly clusterEvery: number;
  /** The table version the writer creates (hoodie.write.table.version): 6 (default), 8 or 9. */
  readonly tableVersion?: 6 | 8 | 9;
  /** Cleaning and archiving keys (Hudi's defaults when absent). */
  readonly properties?: ReadonlyMap<string, string>;
  readonly onProgress?: (line: string) => void;
}

export interface LongRunResult {
  readonly table: ServicesTable;
  readonly clean: CleanConfig;
  readonly archival: ArchivalConfig;
  /** Completed commits and replacecommits, in order (the writes and clusterings of the run). */
  readonly commits: readonly string[];
  readonly clusterings: number;
  /** Cleans that completed, and instants the archiver moved (counted over the run). */
  readonly cleans: number;
  readonly archivedInstants: number;
  readonly elapsedMs: number;
  /** Replaced file groups per replacecommit: `partition/fileId`. */
  readonly replaced: ReadonlyMap<string, readonly string[]>;
}

/** Write the table, running a clean and an archive after every commit. */
export async function runServicesLongRun(options: LongRunOptions): Promise<LongRunResult> {
  const properties = options.properties ?? new Map<string, string>();
  const clean = cleanConfigFromProperties(properties);
  const archival = archivalConfigFromProperties(properties);
  const replaced = new Map<string, string[]>();
  let cleans = 0;
  let archivedInstants = 0;
  let step = 0;
  const started = Date.now();
  const afterCommit = async (storage: LocalStorage, instant: string, kind: 'commit' | 'replacecommit'): Promise<void> => {
    if (kind === 'replacecommit') {
      // Read here, before the archiver moves it: the replacecommit as it completed, as the table's layout encodes it.
      const { timeline, layout } = await HudiTable.open(storage);
      const completed = timeline.completed().find((entry) => entry.time === instant && entry.action === 'replacecommit');
      if (completed === undefined) throw new Error(`replacecommit ${instant} is not on the active timeline`);
      const metadata = await readCommitMetadata(storage, completed, layout);
      replaced.set(
        instant,
        Object.entries(metadata.partitionToReplaceFileIds ?? {}).flatMap(([partition, ids]) => ids.map((id) => `${partition}/${id}`)),
      );
    }
    const lock = new StorageLockProvider(storage, { waitMs: 10_000, pollMs: 20 });
    const cleaned = await runClean(await HudiTable.open(storage, { mode: 'clean' }), { config: clean, lock });
    if (cleaned.clean !== undefined) cleans += 1;
    const archived = await runArchive(await HudiTable.open(storage, { mode: 'archive' }), { config: archival, cleanConfig: clean, lock });
    archivedInstants += archived.outcome === 'archived' ? archived.plan.instants.length : 0;
    step += 1;
    if (step % 20 === 0)
      options.onProgress?.(
        `${step} commits and clusterings, ${cleans} cleans, ${archivedInstants} instants archived, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
  };
  const table = await writeServicesTable({
    dir: options.dir,
    partitions: options.partitions,
    commits: options.commits,
    clusterEvery: options.clusterEvery,
    properties: new Map([['hoodie.write.table.version', String(options.tableVersion ?? 6)]]),
    afterCommit,
  });
  return {
    table,
    clean,
    archival,
    commits: table.history.map((entry) => entry.instant),
    clusterings: table.history.filter((entry) => entry.kind === 'replacecommit').length,
    cleans,
    archivedInstants,
    elapsedMs: Date.now() - started,
    replaced,
  };
}

export interface RetentionCheck {
  /** The commit the policy retains from (KEEP_LATEST_COMMITS: the hoodie.cleaner.commits.retained-th latest). */
  readonly earliestCommitToRetain: string | undefined;
  readonly dataFiles: number;
  /** Files the policy would have deleted but are still there (should be none). */
  readonly beyondRetention: readonly string[];
}

/** Base files on disk: `partition/fileName` with their file group and instant. */
function baseFilesOnDisk(dir: string): { path: string; group: string; instant: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.parquet'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((path) => !path.startsWith('.hoodie/'))
    .map((path) => {
      const name = path.slice(path.lastIndexOf('/') + 1);
      const partition = path.slice(0, path.lastIndexOf('/'));
      const [fileId, , instantPart] = name.split('_');
      return { path, group: `${partition}/${fileId}`, instant: instantPart!.replace('.parquet', '') };
    });
}

/**
 * KEEP_LATEST_COMMITS, worked out from the run's history: with E the commitsRetained-th latest commit, a file group
 * replaced before E keeps no file, one replaced at or after E keeps all (Hudi's cleaner leaves replaced file groups to
 * the replaced-file rule); any other keeps its versions written at or after E and the newest before E (the one a
 * query at E reads). (That nothing still needed is gone, the rows the readers see show.)
 */
export function checkRetention(run: LongRunResult): RetentionCheck {
  const { commits, clean } = run;
  if (clean.policy !== 'KEEP_LATEST_COMMITS') throw new Error(`checkRetention knows KEEP_LATEST_COMMITS only, not ${clean.policy}`);
  const earliest = commits.length > clean.commitsRetained ? commits[commits.length - clean.commitsRetained] : undefined;
  const replacedAt = new Map<string, string>();
  for (const [instant, groups] of run.replaced) for (const group of groups) replacedAt.set(group, instant);
  const files = baseFilesOnDisk(run.table.dir);
  const byGroup = new Map<string, string[]>();
  for (const file of files) byGroup.set(file.group, [...(byGroup.get(file.group) ?? []), file.instant]);
  const beyondRetention: string[] = [];
  for (const file of files) {
    if (earliest === undefined) continue;
    const replacedBy = replacedAt.get(file.group);
    if (replacedBy !== undefined) {
      // Hudi's rule: a replaced file group goes whole once its replacecommit is before E, and is left alone until then.
      if (replacedBy < earliest) beyondRetention.push(`${file.path} (file group replaced by ${replacedBy}, before ${earliest})`);
      continue;
    }
    if (file.instant >= earliest) continue;
    const newestBefore = byGroup
      .get(file.group)!
      .filter((instant) => instant < earliest)
      .sort()
      .at(-1);
    if (file.instant !== newestBefore) beyondRetention.push(`${file.path} (superseded before ${earliest} by ${newestBefore})`);
  }
  return { earliestCommitToRetain: earliest, dataFiles: files.length, beyondRetention: beyondRetention.sort() };
}
