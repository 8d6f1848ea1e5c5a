/**
 * What the clean's steps share: their input and output, the clean settings a step resolves, opening the table or
 * just its storage (a share's step needs no lock), and the output of a clean taken up or scheduled.
 */
import { type CleanConfig, cleanConfigFromProperties } from '../../../cleaner/config.js';
import { emptyCleanerPlan } from '../../../cleaning/clean.js';
import { type CleanShareSettings, cleanShareSettingsFromProperties, startCleanExecution } from '../../../cleaning/shares.js';
import { readCleanerPlan } from '../../../cleaning/timeline-facts.js';
import { assertMetadataTableKeepable } from '../../../metadata/index.js';
import type { Storage } from '../../../storage/port.js';
import { PROPERTIES_FILE, readTableConfig } from '../../../table/config.js';
import { assertLayoutSupports, tableLayout } from '../../../table/layouts.js';
import type { HudiTable } from '../../../table/table.js';
import type { HoodieCleanerPlan } from '../../../timeline/avro-schemas.js';
import type { Instant } from '../../../timeline/instant.js';
import { cleanWorkDir } from '../../../timeline/work-folder.js';
import { fileNameOf } from '../../../util/paths.js';
import { openTableAndLock, tableStorage } from '../../aws/clients.js';
import {
  type ClusteringExecutionInput,
  ENV,
  type PropertyOverrides,
  type RunServices,
  resolveStepSettings,
  type StepSettings,
  tableServiceProperties,
} from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';

/** A Map item: which share to run. */
export interface ShareReference {
  readonly index: number;
}

/** What every clean step returns besides its own fields: the table and the run's settings, for the next states. */
export interface TableServiceBase {
  readonly tablePath: string;
  readonly properties: PropertyOverrides;
  readonly services: RunServices;
}

export type CleanStepOutput =
  | (TableServiceBase & { readonly status: 'SKIPPED' | 'NOTHING_TO_CLEAN'; readonly reason: string })
  | (TableServiceBase & {
      readonly status: 'PLAN';
      readonly planningId: string;
      readonly shares: readonly ShareReference[];
      readonly maxConcurrency: number;
      readonly partitions: number;
      readonly reason: string;
    })
  | (TableServiceBase & {
      readonly status: 'EXECUTE';
      readonly instant: string;
      /** A pending clean (an earlier run's, or another writer's) taken up rather than one planned by this run. */
      readonly resumed: boolean;
      readonly totalShares: number;
      /** The shares still without a result: all of a new clean's. */
      readonly shares: readonly ShareReference[];
      readonly maxConcurrency: number;
      readonly partitions: number;
      readonly files: number;
      readonly reason: string;
    })
  | (TableServiceBase & {
      readonly status: 'CLEANED';
      readonly instant: string;
      /** 'already-completed': a retried step (or another runner) had completed it. */
      readonly outcome: 'completed' | 'already-completed';
      readonly filesDeleted: number;
      readonly failedFiles: number;
      readonly partitions: number;
      readonly partitionsDeleted: number;
    });

export interface TableServiceInput extends ClusteringExecutionInput {
  /** The Step Functions execution (its id): names the run's planning folder. */
  readonly runId?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Settings.

export interface CleanSettings {
  readonly step: StepSettings;
  readonly config: CleanConfig;
  readonly shares: CleanShareSettings;
  readonly base: TableServiceBase;
}

export function cleanSettings(step: StepSettings, tableProperties: ReadonlyMap<string, string>, services: RunServices | undefined): CleanSettings {
  const props = tableServiceProperties(tableProperties, step);
  return {
    step,
    config: cleanConfigFromProperties(props, ENV.clusteringProperties),
    shares: cleanShareSettingsFromProperties(props, ENV.clusteringProperties),
    base: { tablePath: step.tablePath, properties: step.overrides, services: services ?? 'all' },
  };
}

export async function openForClean(input: ClusteringExecutionInput, deps: StepDependencies) {
  const step = resolveStepSettings(deps.env, input);
  for (const warning of step.warnings) deps.log.warn(warning);
  const { table, lock } = await openTableAndLock(step, deps.clients, { mode: 'clean' });
  assertLayoutSupports(tableLayout(table.config, {}), 'clean', table.storage.uriOf(PROPERTIES_FILE));
  // The clean's completion keeps the metadata table (completeClean); refuse one it could not keep before any work.
  await assertMetadataTableKeepable(table.storage, 'a clean', step.jobProperties, table.config, 'clean');
  return { table, lock, settings: cleanSettings(step, table.config.properties, input.services) };
}

/** A share worker's settings without opening the table (one read of hoodie.properties, no timeline listing). */
export async function storageForShare(input: ClusteringExecutionInput, deps: StepDependencies): Promise<{ storage: Storage; settings: CleanSettings }> {
  const step = resolveStepSettings(deps.env, input);
  const storage = tableStorage(step, deps.clients);
  const config = await readTableConfig(storage);
  return { storage, settings: cleanSettings(step, config.properties, input.services) };
}

// ---------------------------------------------------------------------------------------------------------------
// Events.

/** Take up pending clean `instant`: inflight, split into delete shares (once), and the shares still to run. */
export async function executionOf(
  table: HudiTable,
  instant: Instant,
  settings: CleanSettings,
  resumed: boolean,
  reason: string,
  now: Date,
  /** The plan `instant` was just scheduled with and its requested file's bytes (else they are read). */
  scheduled?: { readonly plan: HoodieCleanerPlan; readonly requestedBytes: Uint8Array },
): Promise<CleanStepOutput> {
  const { storage } = table;
  const plan = scheduled?.plan ?? (await readCleanerPlan(storage, instant.time, table.layout)) ?? emptyCleanerPlan(settings.config);
  const { manifest } = await startCleanExecution(storage, table.layout, instant, plan, {
    isPartitioned: table.isPartitioned,
    settings: settings.shares,
    now,
    ...(scheduled === undefined ? {} : { requestedBytes: scheduled.requestedBytes }),
  });
  const done = new Set((await storage.listDir(cleanWorkDir(instant.time))).files.map((file) => fileNameOf(file.path)));
  const shares = Array.from({ length: manifest.shares }, (_, index) => ({ index })).filter(({ index }) => !done.has(`result-${index}.json`));
  return {
    ...settings.base,
    status: 'EXECUTE',
    instant: instant.time,
    resumed,
    totalShares: manifest.shares,
    shares,
    maxConcurrency: settings.shares.maxConcurrency,
    partitions: manifest.partitions,
    files: manifest.files,
    reason,
  };
}

export interface CleanShareOutput {
  readonly shareIndex: number;
  readonly outcome: 'planned' | 'executed' | 'already-done';
}
