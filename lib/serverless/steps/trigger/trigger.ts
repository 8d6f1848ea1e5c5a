/**
 * Starting table-service runs: on a schedule (EventBridge), when a commit completes (an S3 "Object Created" event for
 * `.hoodie/<17 digits>.commit` or `.replacecommit`), or after an ingest's commit. It starts a clustering run (which then
 * cleans and archives) once enough commits completed since the last clustering or a pending plan has no live run; else
 * a run straight to cleaning and archiving (`{"services": "clean-archive"}`) when a clean or archive would find work.
 * Never two runs on one table state: the execution name derives from the table and its latest completed instant
 * (executionNameFor), so every trigger that sees the same timeline asks for the same execution.
 */
import { createHash } from 'node:crypto';
import { type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { planArchiveNow } from '../../../archival/archive.js';
import { archivalConfigFromProperties } from '../../../archival/config.js';
import { cleanConfigFromProperties } from '../../../cleaner/config.js';
import { cleanOutlook } from '../../../cleaning/schedule.js';
import { cleanFingerprint, readNothingToClean, sameCleanState } from '../../../cleaning/shares.js';
import type { ClusteringConfig } from '../../../clustering/config.js';
import { clusteringServiceEnabled, hudiSchedulingThreshold, type SchedulingThreshold, shouldSchedule } from '../../../clustering/plan-strategy.js';
import { HudiError } from '../../../errors.js';
import { parseS3Uri } from '../../../storage/index.js';
import type { HudiTable } from '../../../table/table.js';
import { formatInstantTime, INSTANT_TIME_PATTERN, parseInstantTime } from '../../../timeline/instant.js';
import { commitsSinceLastClustering, pendingClusteringPlans } from '../../../timeline/queries.js';
import { openTableAndLock } from '../../aws/clients.js';
import { environmentFor, isDue, type TableRegistry, tableOfKey, tickMinutesOf } from '../../aws/registry.js';
import { type ClusteringExecutionInput, ENV, type Environment, resolveStepSettings, type StepSettings, tableServiceProperties } from '../../aws/settings.js';
import { sfnClientFromEnv } from '../../aws/sfn-client.js';
import type { StepDependencies } from '../contract.js';
import { asObject, type JsonObject, optionalBoolean } from '../events.js';
import { isAlive, readRunActivity } from '../run-claim.js';

/** What started the trigger. */
export type TriggerSource =
  | { readonly kind: 'schedule' }
  | { readonly kind: 'object-created'; readonly bucket: string; readonly key: string }
  | { readonly kind: 'direct'; readonly force: boolean }
  /** A writer's commit (ingest with hoodie.clean.automatic or hoodie.archive.automatic on). */
  | { readonly kind: 'after-write'; readonly instant: string };

export type TriggerStatus = 'STARTED' | 'ALREADY_STARTED' | 'WAITING' | 'RUNNING' | 'IGNORED' | 'FANNED_OUT';

export interface TriggerOutput {
  readonly status: TriggerStatus;
  readonly reason: string;
  readonly executionName?: string;
  readonly executionArn?: string;
  /** Age of the oldest pending clustering or clean plan (0 when none is pending); absent when the table was not read. */
  readonly pendingPlanAgeSeconds?: number;
  /** FANNED_OUT (a registry's tick): what the check came to for each registered table. */
  readonly tables?: readonly TableTriggerOutcome[];
}

export interface TableTriggerOutcome {
  readonly tablePath: string;
  /** Whether its schedule was due at this tick (a direct invocation checks every table). */
  readonly due: boolean;
  readonly outcome?: TriggerOutput;
  /** Why its check failed (the other tables are checked all the same). */
  readonly error?: string;
}

export interface StartRequest {
  /** 1–80 characters of A–Z a–z 0–9 - _ (Step Functions' rule). */
  readonly name: string;
  readonly input: ClusteringExecutionInput;
}

export interface StartOutcome {
  /** 'already-exists': an execution of that name exists (running with the same input, or finished). */
  readonly outcome: 'started' | 'already-exists';
  readonly executionArn?: string;
}

/** Starts state machine executions: StartExecution on AWS (or on the local endpoint, local/sfn-endpoint.ts). */
export interface ExecutionStarter {
  readonly description: string;
  start(request: StartRequest): Promise<StartOutcome>;
}

/**
 * A completed write on the data timeline (not .requested / .inflight): `<table>/.hoodie/<instant>.commit` or
 * `.replacecommit` in layout 1 (table version 6), `<table>/.hoodie/timeline/<instant>_<completion>.commit` or
 * `.replacecommit` in layout 2 (versions 8 and 9). Group 1 is the table's prefix; the instant is group 2 (layout 1) or 3. The prefix holds
 * no `.hoodie/`, so the metadata table's compaction commits do not match.
 */
export const COMPLETED_COMMIT_KEY = new RegExp(
  `^((?:(?!\\.hoodie/).)*)\\.hoodie/(?:(${INSTANT_TIME_PATTERN})|timeline/(${INSTANT_TIME_PATTERN})_${INSTANT_TIME_PATTERN})\\.(commit|replacecommit)$`,
);

// ---------------------------------------------------------------------------------------------------------------
// Events.

/**
 * EventBridge scheduled events, EventBridge S3 "Object Created" events, S3 event notifications (Records), or a
 * direct invocation (`{}` or `{"force": true}`).
 */
export function parseTriggerEvent(event: unknown): TriggerSource {
  const object = asObject(event ?? {}, 'trigger event');
  const detailType = object['detail-type'];
  if (detailType === 'Scheduled Event') return { kind: 'schedule' };
  if (detailType === 'Object Created') {
    const detail = asObject(object['detail'], 'Object Created event detail');
    const bucket = asObject(detail['bucket'], 'Object Created event detail.bucket')['name'];
    const key = asObject(detail['object'], 'Object Created event detail.object')['key'];
    if (typeof bucket !== 'string' || typeof key !== 'string') throw new HudiError('Object Created event without detail.bucket.name / detail.object.key');
    return { kind: 'object-created', bucket, key };
  }
  const records = object['Records'];
  if (Array.isArray(records)) {
    // S3 notifications batch records; the last commit file among them is the one that matters.
    const created = records
      .map((record) => s3RecordOf(asObject(record, 'S3 event record')))
      .filter((record): record is { bucket: string; key: string } => record !== undefined);
    const last = created.filter((record) => COMPLETED_COMMIT_KEY.test(record.key)).at(-1) ?? created.at(-1);
    if (last === undefined) throw new HudiError('S3 event without an ObjectCreated record');
    return { kind: 'object-created', ...last };
  }
  // The runs it starts carry no properties (the deployment's apply): refuse rather than ignore them.
  if (object['properties'] !== undefined) {
    throw new HudiError('a trigger event takes no properties (only {"force": true})', {
      location: 'trigger event',
      fix: 'start the state machine with {"properties": {...}} of clustering keys the deployment allows, or set them in CLUSTERING_PROPERTIES (the template\'s ClusteringProperties)',
    });
  }
  return { kind: 'direct', force: optionalBoolean(object, 'force', 'trigger event') === true };
}

function s3RecordOf(record: JsonObject): { bucket: string; key: string } | undefined {
  const eventName = record['eventName'];
  if (typeof eventName !== 'string' || !eventName.startsWith('ObjectCreated')) return undefined;
  const s3 = asObject(record['s3'], 'S3 event record.s3');
  const bucket = asObject(s3['bucket'], 'S3 event record.s3.bucket')['name'];
  const key = asObject(s3['object'], 'S3 event record.s3.object')['key'];
  if (typeof bucket !== 'string' || typeof key !== 'string') return undefined;
  // Notification keys are URL-encoded with '+' for spaces (EventBridge's are not).
  return { bucket, key: decodeURIComponent(key.replace(/\+/g, ' ')) };
}

/** Whether an object-created event is a completed commit of the table at `tablePath`. */
export function isCommitOfTable(source: { bucket: string; key: string }, tablePath: string): boolean {
  const table = parseS3Uri(tablePath);
  const match = COMPLETED_COMMIT_KEY.exec(source.key);
  if (table === undefined || match === null || source.bucket !== table.bucket) return false;
  const keyPrefix = (match[1] ?? '').replace(/\/+$/, '');
  return keyPrefix === table.prefix;
}

// ---------------------------------------------------------------------------------------------------------------
// Execution names.

function slug(text: string, max: number): string {
  const cleaned = text.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
  return (cleaned === '' ? 'table' : cleaned).slice(0, max);
}

/**
 * `hudi-clustering-<table>-<hash of path>-<latest completed instant>[-r<yyyyMMddHH>]`: the same for every trigger
 * that sees the same timeline. `resumeHour` (for a pending plan without a live run) lets a stuck plan be retried at
 * most once an hour even when no new instant completes.
 *
 * StartExecution with a running execution's name and input returns that execution, and a name already used answers
 * ExecutionAlreadyExists, which counts as success (that state of the table was handled). A trigger also skips while a
 * pending clustering heartbeats, and the plan step checks the same under the table lock.
 */
export function executionNameFor(
  tableName: string,
  tablePath: string,
  latestCompleted: string | undefined,
  resumeHour?: string,
  kind: 'clustering' | 'clean' | 'compaction' = 'clustering',
): string {
  const hash = createHash('sha256').update(tablePath).digest('hex').slice(0, 8);
  const name = `hudi-${kind}-${slug(tableName, 20)}-${hash}-${latestCompleted ?? 'empty'}${resumeHour === undefined ? '' : `-r${resumeHour}`}`;
  return name.slice(0, 80);
}

/**
 * Whether a run that only cleans and archives would find work: a clean (cleanOutlook: a pending clean, or one due
 * with files possibly past retention) or archiving (instants past hoodie.keep.max.commits the archiver may move), as
 * far as hoodie.clean.automatic / hoodie.archive.automatic (the deployment's and the table's keys) let them run.
 *
 * A clean would find something when one is pending, or one is due by hoodie.clean.max.commits past the retention
 * window (cleanOutlook); archiving when planArchiveNow finds instants; each only as far as hoodie.clean.automatic /
 * hoodie.archive.automatic let it.
 */
export async function tableServicesDue(table: HudiTable, settings: Pick<StepSettings, 'jobProperties'>, now: Date): Promise<{ due: boolean; reason: string }> {
  const props = tableServiceProperties(table.config.properties, settings);
  const clean = cleanConfigFromProperties(props, ENV.clusteringProperties);
  const archival = archivalConfigFromProperties(props, ENV.clusteringProperties);
  let cleaning: { needed: boolean; reason: string } = { needed: false, reason: 'hoodie.clean.automatic=false' };
  if (clean.automatic) {
    const outlook = await cleanOutlook(table, clean, now);
    cleaning = outlook;
    if (outlook.needed && outlook.facts !== undefined) {
      // A run that just planned this state and found nothing: planning it again would find nothing again.
      const last = await readNothingToClean(table.storage);
      if (last !== undefined && sameCleanState(last, cleanFingerprint(table.timeline, { policy: clean.policy, ...outlook.facts }))) {
        cleaning = {
          needed: false,
          reason: `the last planning found nothing to clean in this state (earliest commit to retain ${last.earliestCommitToRetain ?? 'none'})`,
        };
      }
    }
  }
  let archiving: { needed: boolean; reason: string };
  if (!archival.automatic) {
    archiving = { needed: false, reason: 'hoodie.archive.automatic=false' };
  } else {
    const plan = await planArchiveNow(table, archival, clean);
    archiving =
      plan.instants.length > 0
        ? {
            needed: true,
            reason: `${plan.instants.length} instant(s) to archive (${plan.completedCommits} completed commits active, hoodie.keep.max.commits=${plan.maxToKeep})`,
          }
        : { needed: false, reason: `nothing to archive (${plan.completedCommits} completed commits active, hoodie.keep.max.commits=${plan.maxToKeep})` };
  }
  return { due: cleaning.needed || archiving.needed, reason: `clean: ${cleaning.reason}; archive: ${archiving.reason}` };
}

// ---------------------------------------------------------------------------------------------------------------
// The decision.

/**
 * How many completed commits since the last clustering the trigger waits for before it starts a run. A deliberate
 * scheduling policy of this service, not Hudi's: Hudi waits only when inline or async clustering is switched on
 * (hudiSchedulingThreshold, which the plan step applies too), but a trigger that fires on every commit and every
 * hour would otherwise re-cluster after each commit. So:
 * - with hoodie.clustering.inline, .async.enabled or .schedule.inline on: Hudi's threshold, from the same keys;
 * - with none of them (Hudi's defaults): hoodie.clustering.async.max.commits (default 4), as the async clustering
 *   service this is.
 * A direct invocation with `{"force": true}` starts a run regardless.
 */
export function triggerSchedulingThreshold(config: ClusteringConfig): SchedulingThreshold {
  if (clusteringServiceEnabled(config)) return hudiSchedulingThreshold(config);
  return { commits: config.asyncMaxCommits, setBy: "hoodie.clustering.async.max.commits, the trigger's policy" };
}

export interface TriggerDependencies extends StepDependencies {
  readonly starter: ExecutionStarter;
}

export async function triggerStep(source: TriggerSource, deps: TriggerDependencies): Promise<TriggerOutput> {
  const now = deps.now?.() ?? new Date();
  const settings = resolveStepSettings(deps.env, {});
  if (source.kind === 'object-created' && !isCommitOfTable(source, settings.tablePath)) {
    return { status: 'IGNORED', reason: `s3://${source.bucket}/${source.key} is not a completed commit of ${settings.tablePath}` };
  }
  const { table } = await openTableAndLock(settings, deps.clients, { mode: 'read' });
  const { storage, timeline } = table;
  const latestCompleted = timeline.completed().at(-1)?.time;
  const pendingPlanAgeSeconds = pendingPlanAge(timeline, now);
  let input: ClusteringExecutionInput = { tablePath: settings.tablePath, ...(source.kind === 'direct' && source.force ? { force: true } : {}) };

  let name: string;
  const pending = (await pendingClusteringPlans(storage, timeline))[0];
  if (pending !== undefined) {
    const activity = await readRunActivity(storage, pending.instant.time, now);
    if (isAlive(activity)) {
      return {
        status: 'RUNNING',
        reason: `clustering ${pending.instant.time} is running (heartbeat ${Math.round((activity.heartbeatAgeMs ?? 0) / 1000)} s old)`,
        pendingPlanAgeSeconds,
      };
    }
    // A pending plan nobody works on: a run resumes it, whatever the commit count.
    name = executionNameFor(table.config.name, settings.tablePath, latestCompleted, formatInstantTime(now).slice(0, 10));
    deps.log.info('pending clustering without a live run; starting a run to resume it', { instant: pending.instant.time });
  } else {
    const since = await commitsSinceLastClustering(storage, timeline);
    const required = triggerSchedulingThreshold(settings.clustering);
    const force = source.kind === 'direct' && source.force;
    if (shouldSchedule({ completedCommitsSinceLastClustering: since.count, maxCommits: required.commits, force })) {
      name = executionNameFor(table.config.name, settings.tablePath, latestCompleted);
    } else {
      const waiting = `${since.count} completed commit(s) since ${since.lastClustering === undefined ? 'the table was created' : `the last clustering ${since.lastClustering}`}; clustering waits for ${required.commits} (${required.setBy})`;
      const services = await tableServicesDue(table, settings, now);
      if (!services.due) return { status: 'WAITING', reason: `${waiting}; ${services.reason}`, pendingPlanAgeSeconds };
      // Nothing to cluster, but a clean or archiving is due: a run that goes straight to them.
      name = executionNameFor(table.config.name, settings.tablePath, latestCompleted, undefined, 'clean');
      input = { tablePath: settings.tablePath, services: 'clean-archive' };
      deps.log.info('clustering is not due, but cleaning or archiving is', { reason: services.reason });
    }
  }

  const started = await deps.starter.start({ name, input });
  deps.log.info(started.outcome === 'started' ? 'started a table-service run' : 'a run was already started for this timeline', {
    executionName: name,
    executionArn: started.executionArn,
    services: input.services ?? 'all',
    starter: deps.starter.description,
    ...(source.kind === 'after-write' ? { afterWrite: source.instant } : {}),
  });
  return {
    status: started.outcome === 'started' ? 'STARTED' : 'ALREADY_STARTED',
    reason: started.outcome === 'started' ? `started ${name}` : `an execution named ${name} exists already`,
    executionName: name,
    ...(started.executionArn === undefined ? {} : { executionArn: started.executionArn }),
    pendingPlanAgeSeconds,
  };
}

/**
 * Seconds since the oldest pending clustering (replacecommit) or clean was planned (or, with `actions`, another
 * table service's plan: compaction's schedule step passes ['compaction']), by its instant time; 0 when none is. The
 * alarms on it (template.yaml: PlanPendingTooLongAlarm, CompactionPendingTooLongAlarm) catch plans no run finishes.
 */
export function pendingPlanAge(timeline: HudiTable['timeline'], now: Date, actions: readonly string[] = ['replacecommit', 'clustering', 'clean']): number {
  const oldest = timeline.pending().find((instant) => actions.includes(instant.action));
  if (oldest === undefined) return 0;
  const planned = parseInstantTime(oldest.time);
  return planned === undefined ? 0 : Math.max(0, Math.round((now.getTime() - planned.getTime()) / 1000));
}

// ---------------------------------------------------------------------------------------------------------------
// Many tables (registry.ts).

/**
 * The trigger of a deployment with a table registry: a commit's event is checked for the registered table its key
 * lies under (an UnregisteredTableError for none); a schedule tick checks each registered table whose schedule is
 * due (a direct invocation: every table), plus the deployment's own TABLE_PATH when it is not registered, one after
 * another — one table's failure is reported in its outcome and does not stop the others.
 */
export async function triggerWithRegistry(source: TriggerSource, deps: TriggerDependencies & { readonly registry: TableRegistry }): Promise<TriggerOutput> {
  const { registry } = deps;
  if (source.kind === 'object-created') {
    const table = tableOfKey(registry, source.bucket, source.key);
    return triggerStep(source, { ...deps, env: environmentFor(deps.env, table) });
  }
  if (source.kind === 'after-write') return triggerStep(source, deps);
  const now = deps.now?.() ?? new Date();
  const tick = tickMinutesOf(deps.env);
  const outcomes: TableTriggerOutcome[] = [];
  const own = deps.env[ENV.tablePath]?.trim().replace(/\/+$/, '');
  const tables: { tablePath: string; due: boolean; env: Environment }[] = registry.tables.map((table) => ({
    tablePath: table.path,
    due: source.kind === 'direct' || isDue(table, now, tick),
    env: environmentFor(deps.env, table),
  }));
  if (own !== undefined && own !== '' && !registry.tables.some((table) => table.path === own)) tables.push({ tablePath: own, due: true, env: deps.env });
  for (const table of tables) {
    if (!table.due) {
      outcomes.push({ tablePath: table.tablePath, due: false });
      continue;
    }
    try {
      outcomes.push({ tablePath: table.tablePath, due: true, outcome: await triggerStep(source, { ...deps, env: table.env, now: () => now }) });
    } catch (error) {
      deps.log.warn('the check of one registered table failed; the others go on', {
        tablePath: table.tablePath,
        error: error instanceof Error ? error.message : String(error),
      });
      outcomes.push({ tablePath: table.tablePath, due: true, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const started = outcomes.filter((o) => o.outcome?.status === 'STARTED').length;
  const failed = outcomes.filter((o) => o.error !== undefined).length;
  const ages = outcomes.flatMap((o) => (o.outcome?.pendingPlanAgeSeconds === undefined ? [] : [o.outcome.pendingPlanAgeSeconds]));
  return {
    status: 'FANNED_OUT',
    reason: `${outcomes.filter((o) => o.due).length} of ${outcomes.length} table(s) due; ${started} run(s) started${failed > 0 ? `; ${failed} check(s) failed` : ''}`,
    tables: outcomes,
    ...(ages.length === 0 ? {} : { pendingPlanAgeSeconds: Math.max(...ages) }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Step Functions.

/** StartExecution on a deployed state machine; ExecutionAlreadyExists is success (see the top of this file). */
export class StepFunctionsStarter implements ExecutionStarter {
  readonly description: string;
  private readonly client: SFNClient;
  private readonly stateMachineArn: string;

  constructor(client: SFNClient, stateMachineArn: string) {
    this.client = client;
    this.stateMachineArn = stateMachineArn;
    this.description = stateMachineArn;
  }

  async start(request: StartRequest): Promise<StartOutcome> {
    try {
      const response = await this.client.send(
        new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name: request.name, input: JSON.stringify(request.input) }),
      );
      return response.executionArn === undefined ? { outcome: 'started' } : { outcome: 'started', executionArn: response.executionArn };
    } catch (error) {
      if (typeof error === 'object' && error !== null && 'name' in error && error.name === 'ExecutionAlreadyExists') return { outcome: 'already-exists' };
      throw error;
    }
  }
}

/** The deployed state machine from STATE_MACHINE_ARN. */
export function stateMachineArnFromEnv(env: Environment): string {
  const arn = env[ENV.stateMachineArn]?.trim();
  if (!arn) throw new HudiError(`${ENV.stateMachineArn} is not set`, { fix: 'deploy with template.yaml, which sets it to the table-services state machine' });
  return arn;
}

/**
 * What a writer (ingest) calls after its commits when hoodie.clean.automatic / hoodie.archive.automatic are on: the
 * trigger's check against the state machine of STATE_MACHINE_ARN — it starts the run the trigger would (clustering
 * when due, else straight to cleaning and archiving), named after the table's state, so a writer, the commit trigger
 * and the schedule asking for one state start one run. Undefined when STATE_MACHINE_ARN is not set.
 */
export function afterWriteStarterFromEnv(env: Environment, deps: Omit<StepDependencies, 'env'>): ((instant: string) => Promise<TriggerOutput>) | undefined {
  const arn = env[ENV.stateMachineArn]?.trim();
  if (!arn) return undefined;
  let starter: StepFunctionsStarter | undefined;
  return (instant) => {
    starter ??= new StepFunctionsStarter(sfnClientFromEnv(env), arn);
    return triggerStep({ kind: 'after-write', instant }, { ...deps, env, starter });
  };
}
