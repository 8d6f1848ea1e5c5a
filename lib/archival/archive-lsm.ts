/**
 * The archive table service on Hudi 1.x tables (timeline layout 2, table versions 8 and 9), as
 * TimelineArchiverV2.archiveIfRequired does it in 1.0.2 and 1.1.1 (docs/hudi-1x-history.md, "Archiving"): under
 * the table lock, pick the instants (lib/archiver/plan-lsm.ts; with the metadata table on, never past its latest
 * compaction), then move them into the LSM timeline history (lib/archiver/archive-lsm.ts). Hudi's data-table
 * archiver leaves the metadata table alone: that one archives itself when a write runs its services.
 *
 * A crash leaves a timeline every reader reads: before the manifest an unnamed history file nobody opens, after it
 * instants both archived and active, midway through the deletes instants with only their completed file. The next
 * run first deletes the active files of every instant the history already holds (Hudi's archiver would write them
 * a second time, some without their plan), then plans from what is left.
 */
import { finishInterruptedArchive, moveToHistory } from '../archiver/archive-lsm.js';
import type { ArchivePlan } from '../archiver/plan.js';
import { type LsmArchiveFacts, planArchiveLsm } from '../archiver/plan-lsm.js';
import { readCleanerPlan } from '../cleaning/timeline-facts.js';
import type { LockProvider } from '../lock/port.js';
import { withLock } from '../lock/port.js';
import { keepMetadataTable, metadataTableCompaction1x } from '../metadata/index.js';
import type { HudiTable } from '../table/table.js';
import { loadTimeline, type Timeline } from '../timeline/timeline.js';
import type { ArchivalConfig } from './config.js';

/** What the layout-2 archiver needs from the caller (archive.ts's runArchive passes its options through). */
export interface LsmArchiveOptions {
  readonly config: ArchivalConfig;
  readonly cleanConfig: Parameters<typeof planArchiveLsm>[2];
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  readonly dryRun?: boolean;
  /** The job's Hudi properties: hoodie.metadata.enable=false drops the metadata table first, as a Hudi writer does. */
  readonly properties?: ReadonlyMap<string, string>;
  readonly onProgress?: (line: string) => void;
}

export interface LsmArchiveResult {
  readonly outcome: 'archived' | 'nothing-to-archive' | 'dry-run';
  readonly plan: ArchivePlan;
  /** Active timeline files moved to the history (names in the timeline folder). */
  readonly archivedFiles: readonly string[];
  /** The level-0 history file written (relative to the table), if any. */
  readonly archiveFile: string | undefined;
  readonly recordsWritten: number;
  /** History files written by the compaction after the archive. */
  readonly compacted: readonly string[];
  /** Timeline files a crashed run had archived but not yet deleted, deleted now before planning. */
  readonly finishedInterrupted: readonly string[];
}

export async function runArchiveLsm(table: HudiTable, options: LsmArchiveOptions): Promise<LsmArchiveResult> {
  const { storage, layout } = table;
  const properties = options.properties ?? new Map<string, string>();
  const folder = table.historyFolder;
  return withLock(
    options.lock,
    async () => {
      if (options.dryRun) {
        const plan = planArchiveLsm(await archiveFacts(table, await loadTimeline(storage, layout), properties), options.config, options.cleanConfig);
        return { outcome: 'dry-run' as const, plan, archivedFiles: [], archiveFile: undefined, recordsWritten: 0, compacted: [], finishedInterrupted: [] };
      }
      await keepMetadataTable(storage, properties, 'archive').prepare('an archive');
      const finishedInterrupted = await finishInterruptedArchive(storage, layout, folder, options.config);
      if (finishedInterrupted.length > 0) {
        options.onProgress?.(`finished an interrupted archive run: removed ${finishedInterrupted.length} already archived timeline file(s)`);
      }
      const plan = planArchiveLsm(await archiveFacts(table, await loadTimeline(storage, layout), properties), options.config, options.cleanConfig);
      if (plan.instants.length === 0) {
        return {
          outcome: 'nothing-to-archive' as const,
          plan,
          archivedFiles: [],
          archiveFile: undefined,
          recordsWritten: 0,
          compacted: [],
          finishedInterrupted,
        };
      }
      const moved = await moveToHistory(storage, layout, folder, plan.instants, options.config);
      options.onProgress?.(
        `archived ${plan.instants.length} instant(s) (${moved.archivedFiles.length} timeline file(s)) into ${moved.archiveFile ?? 'the history file an earlier run wrote'}`,
      );
      return { outcome: 'archived' as const, plan, ...moved, finishedInterrupted };
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}

/** What the archive would do now, from the table as opened (no lock, nothing written). */
export async function planArchiveLsmNow(table: HudiTable, config: ArchivalConfig, cleanConfig: LsmArchiveOptions['cleanConfig']): Promise<ArchivePlan> {
  return planArchiveLsm(await archiveFacts(table, table.timeline, new Map()), config, cleanConfig);
}

async function archiveFacts(table: HudiTable, timeline: Timeline, properties: ReadonlyMap<string, string>): Promise<LsmArchiveFacts> {
  const lastClean = timeline
    .completed()
    .filter((instant) => instant.action === 'clean')
    .at(-1);
  const metadataTable = await metadataTableCompaction1x(table.storage, table.config, properties);
  return {
    timeline,
    // ClusteringUtils reads the last completed clean's plan from its requested file (CleanerUtils.getCleanerPlan).
    lastClean: lastClean === undefined ? undefined : { time: lastClean.time, plan: await readCleanerPlan(table.storage, lastClean.time, timeline.layout) },
    savepointTimes: timeline
      .completed()
      .filter((instant) => instant.action === 'savepoint')
      .map((instant) => instant.time),
    timeZone: table.config.timelineTimeZone,
    tableType: table.config.type,
    ...(metadataTable === undefined ? {} : { metadataTable }),
  };
}
