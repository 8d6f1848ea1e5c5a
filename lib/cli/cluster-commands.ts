/**
 * `cluster` and `show-clustering`: the clustering job (as Hudi's HoodieClusteringJob), the pending plans and the
 * completed clusterings. Progress goes to stderr, results to stdout.
 */
import { resolveClusteringConfig } from '../clustering/config.js';
import { CLUSTERING_JOB_MODES, type ClusteringJobMode, runClusteringJob } from '../clustering/job.js';
import { formatClusteringReport, formatClusteringSummary } from '../clustering/report.js';
import { type ClusteringPlanSummary, type CompletedClusteringSummary, describeClusteringHistory, describeClusteringPlans } from '../clustering/show.js';
import { openParquetEngine } from '../engine/parquet-engine.js';
import { HudiError } from '../errors.js';
import { rollbackInflightClustering } from '../rollback/rollback.js';
import type { CostEstimate } from '../serverless/aws/cost.js';
import { describeTableServices, type TableServicesOutput } from '../serverless/executions/run-output.js';
import type { ViaStateMachineResult } from '../serverless/executions/via-state-machine.js';
import { openStorage } from '../storage/index.js';
import { HudiTable } from '../table/table.js';
import { writeConfigFromProperties } from '../writer/write-config.js';
import { type Command, err, jobLock, out, parseCommandArgs, printRolledBack, readPropsFile } from './args.js';

const MIB = 1024 * 1024;
const size = (bytes: number): string => (bytes >= MIB ? `${(bytes / MIB).toFixed(2)} MB` : `${bytes} B`);

export const clusterCommand: Command = {
  name: 'cluster',
  summary: "cluster small files (and sort them) like Hudi's HoodieClusteringJob: schedule a plan, execute one, or both",
  usage:
    'cluster <table> --mode schedule|execute|scheduleAndExecute|rollback [--instant T] [--props FILE] [--force] [--memory-limit 2GB] [--temp-dir DIR] [--json]\n' +
    '  cluster <table> --via-state-machine local|<ARN> [--props FILE] [--force] [--json]   (the whole run through the Step Functions definition)',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'cluster',
      args,
      {
        mode: { type: 'string' },
        instant: { type: 'string' },
        props: { type: 'string' },
        force: { type: 'boolean' },
        'memory-limit': { type: 'string' },
        'temp-dir': { type: 'string' },
        json: { type: 'boolean' },
        'via-state-machine': { type: 'string' },
      },
      ['table'],
    );
    if (values['via-state-machine'] !== undefined) return runViaStateMachine(positionals[0]!, values['via-state-machine'], values);
    if (values.mode === 'rollback') return rollbackClustering(positionals[0]!, values);
    const mode = values.mode as ClusteringJobMode | undefined;
    if (mode === undefined || !CLUSTERING_JOB_MODES.includes(mode)) {
      throw new HudiError(`--mode ${values.mode ?? '(missing)'} is not a clustering mode`, {
        fix: `use --mode ${[...CLUSTERING_JOB_MODES, 'rollback'].join(' | ')}`,
      });
    }
    // The configuration is resolved (and refused) before the table is touched.
    const props = values.props === undefined ? new Map<string, string>() : await readPropsFile(values.props);
    const { config, warnings } = resolveClusteringConfig({
      ...(values.props === undefined ? {} : { file: { location: values.props, properties: props } }),
      env: process.env,
    });
    for (const warning of warnings) err(`warning: ${warning}`);

    const storage = openStorage(positionals[0]!);
    const table = await HudiTable.open(storage, { mode: 'clustering' });
    const lock = jobLock(table, props);
    const engine = await openParquetEngine({
      ...(values['memory-limit'] === undefined ? {} : { memoryLimit: values['memory-limit'] }),
      ...(values['temp-dir'] === undefined ? {} : { tempDirectory: `${values['temp-dir']}/duckdb-spill` }),
    });
    try {
      const result = await runClusteringJob(table, {
        mode,
        ...(values.instant === undefined ? {} : { instant: values.instant }),
        config,
        force: values.force === true,
        lock,
        engine,
        ...(values['temp-dir'] === undefined ? {} : { tempDir: values['temp-dir'] }),
        onProgress: err,
        bloom: writeConfigFromProperties(props, values.props ?? 'properties').bloom,
        properties: props,
      });
      if (values.json) {
        const html = result.commit?.htmlReport;
        out(
          JSON.stringify({
            scheduled: result.scheduled ?? null,
            instantTime: result.instantTime ?? null,
            takenOver: result.takenOver ?? null,
            report: result.commit?.report ?? null,
            htmlReport: html === undefined ? null : 'path' in html ? table.storage.uriOf(html.path) : html,
            metadataTable:
              result.commit?.metadataTable?.deltaCommit === undefined
                ? null
                : { partitions: result.commit.metadataTable.deltaCommit.partitions, disabled: result.commit.metadataTable.disabled ?? null },
          }),
        );
        return 0;
      }
      if (result.takenOver !== undefined) {
        out(
          `${result.takenOver.outcome === 'resumed' ? 'resumed' : 'rolled back'} pending clustering ${result.takenOver.instant} (${result.takenOver.reason})`,
        );
      }
      if (result.commit?.report !== undefined) {
        process.stdout.write(formatClusteringReport(result.commit.report));
        const html = result.commit.htmlReport;
        if (html !== undefined) out('path' in html ? `HTML report: ${table.storage.uriOf(html.path)}` : `the HTML report was not written: ${html.error}`);
      } else if (result.scheduled !== undefined) {
        out(`scheduled ${result.scheduled.instantTime}`);
        for (const group of result.scheduled.groups) {
          out(
            `  group ${group.index}  ${group.partitionPath || '(non-partitioned)'}  ${group.inputFiles} file(s), ${size(group.inputBytes)} → ${group.numOutputFileGroups} file group(s)`,
          );
        }
      }
      return 0;
    } finally {
      await engine.close();
    }
  },
};

/**
 * `--mode rollback --instant T`: a failed clustering back to its plan, as Hudi's rollbackInflightClustering (a rollback
 * instant naming it, the attempt's files and inflight file deleted, the requested plan kept for `--mode execute`).
 */
async function rollbackClustering(tablePath: string, values: { instant?: string; props?: string; json?: boolean }): Promise<number> {
  const instant = values.instant;
  if (instant === undefined) throw new HudiError('--mode rollback needs --instant T', { fix: 'name the pending clustering (see `show-clustering <table>`)' });
  const props = values.props === undefined ? new Map<string, string>() : await readPropsFile(values.props);
  const storage = openStorage(tablePath);
  const table = await HudiTable.open(storage, { mode: 'clustering' });
  const result = await rollbackInflightClustering(table, instant, { lock: jobLock(table, props) });
  if (result === undefined && !values.json) out(`clustering ${instant} is only requested: nothing to roll back, plan kept`);
  else printRolledBack('clustering', instant, { rollbackInstant: result?.rollbackInstantTime, deleted: result?.deletedFiles ?? [] }, values.json);
  return 0;
}

/** `--via-state-machine`: schedule, the Map over groups and commit, run by the state machine (local or deployed). */
async function runViaStateMachine(
  tablePath: string,
  stateMachine: string,
  values: { props?: string; force?: boolean; json?: boolean; mode?: string; instant?: string },
): Promise<number> {
  if ((values.mode !== undefined && values.mode !== 'scheduleAndExecute') || values.instant !== undefined) {
    throw new HudiError('--via-state-machine runs a whole clustering (schedule and execute); it takes no --instant or other --mode', {
      fix: 'drop --mode/--instant, or run without --via-state-machine',
    });
  }
  const props = values.props === undefined ? new Map<string, string>() : await readPropsFile(values.props);
  const run = { properties: Object.fromEntries(props), force: values.force === true, onProgress: err };
  // Loaded on demand: the Step Functions client, or the local stand-ins (the interpreter, Lambda emulation), only here.
  const result: ViaStateMachineResult & { readonly cost?: CostEstimate } =
    stateMachine === 'local'
      ? await (await import('../serverless/local/via-state-machine.js')).clusterViaLocalStateMachine(tablePath, run)
      : await (await import('../serverless/executions/via-state-machine.js')).clusterViaStateMachine(tablePath, { stateMachine, ...run });
  const output = (result.output ?? {}) as TableServicesOutput;
  if (values.json)
    out(
      JSON.stringify({
        status: result.status,
        executionArn: result.executionArn,
        output: result.output,
        error: result.error ?? null,
        cost: result.cost ?? null,
      }),
    );
  else {
    if (output.clustering?.report !== undefined)
      process.stdout.write(formatClusteringReport(output.clustering.report as Parameters<typeof formatClusteringReport>[0]));
    if (result.status === 'SUCCEEDED') for (const line of describeTableServices(output)) out(line);
    else out(`${result.status}: ${result.error ?? ''}`);
    // Only a local run is measured, and so priced.
    if (result.cost !== undefined) process.stdout.write((await import('../serverless/aws/cost.js')).formatCostEstimate(result.cost));
  }
  if (result.status !== 'SUCCEEDED') {
    throw new HudiError(`the clustering execution ${result.executionArn} ended ${result.status}: ${result.error ?? ''} ${result.cause ?? ''}`.trim(), {
      fix: 'see `show-clustering` for the pending plan; the README says how to retry or roll it back',
    });
  }
  return 0;
}

function planLines(plan: ClusteringPlanSummary): string[] {
  const state = plan.state === 'COMPLETED' ? 'completed' : `${plan.state.toLowerCase()} (pending)`;
  const estimated = plan.groups.some((group) => group.bytesFrom === 'plan metrics') ? ' (from plan metrics)' : '';
  const lines = [
    `${plan.instantTime}  ${state}  ${plan.groups.length} group(s)  ${plan.inputFiles} input file(s), ${size(plan.inputBytes)}${estimated}  → ${plan.expectedOutputFiles} output file(s)` +
      `  sort: ${plan.sortColumns.length > 0 ? plan.sortColumns.join(',') : '-'}`,
  ];
  for (const group of plan.groups) {
    lines.push(
      `  group ${group.index}  ${group.partitionPath || '(non-partitioned)'}  ${group.inputFiles} file(s), ${size(group.inputBytes)}` +
        `${group.bytesFrom === 'plan metrics' ? ' (plan metrics)' : ''}  → ${group.numOutputFileGroups}${group.done ? '  [done]' : ''}`,
    );
  }
  return lines;
}

function historyLines(clustering: CompletedClusteringSummary): string[] {
  const headline =
    `${clustering.instantTime}  completed  ${clustering.replacedFileGroups} file group(s) replaced → ${clustering.filesWritten} file(s), ` +
    `${size(clustering.bytesWritten)}, ${clustering.rowsWritten} rows`;
  if (clustering.summary === undefined) return [headline, '  no summary recorded (committed by Hudi, or by an older build)'];
  const summary = formatClusteringSummary(clustering.instantTime, clustering.summary).trimEnd().split('\n');
  return [headline, ...summary.map((line) => `  ${line}`)];
}

export const showClusteringCommand: Command = {
  name: 'show-clustering',
  summary: 'list pending clustering plans: groups, input files and bytes, expected output files; or, with --history, past runs (read-only)',
  usage: 'show-clustering <table> [--all | --history] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'show-clustering',
      args,
      { all: { type: 'boolean' }, history: { type: 'boolean' }, json: { type: 'boolean' } },
      ['table'],
    );
    if (values.all === true && values.history === true) {
      throw new HudiError('--all and --history list different things', {
        fix: 'give --all for every plan on the active timeline, or --history for the completed clusterings and their summaries',
      });
    }
    const table = await HudiTable.open(openStorage(positionals[0]!), { mode: 'read' });
    if (values.history === true) {
      const history = await describeClusteringHistory(table);
      if (values.json) for (const clustering of history) out(JSON.stringify({ ...clustering, summary: clustering.summary ?? null }));
      else if (history.length === 0) out('no completed clustering on the active timeline');
      else for (const clustering of history) for (const line of historyLines(clustering)) out(line);
      return 0;
    }
    const plans = await describeClusteringPlans(table, { includeCompleted: values.all === true });
    if (values.json) {
      for (const plan of plans) out(JSON.stringify(plan));
      return 0;
    }
    if (plans.length === 0) out(values.all ? 'no clustering plans on the active timeline' : 'no pending clustering plans (--all also lists completed ones)');
    for (const plan of plans) for (const line of planLines(plan)) out(line);
    return 0;
  },
};
