/**
 * `compact` and `show-compaction`: compaction of merge-on-read tables as Hudi's HoodieCompactor job (schedule a plan,
 * execute the pending ones, or both; roll a failed one back), and the pending plans. Progress to stderr, results to stdout.
 */
import { compactionConfigFrom } from '../compaction/config.js';
import { type CompactionRunResult, rollbackCompaction, runCompaction, runPendingCompactions } from '../compaction/execute.js';
import { assertCompactionWrites, assertMergeOnRead, scheduleCompaction } from '../compaction/schedule.js';
import { HudiError } from '../errors.js';
import { openStorage } from '../storage/index.js';
import { HudiTable } from '../table/table.js';
import { CompactionMetric, compactionFolderOf, pendingCompactions, readCompactionPlan } from '../timeline/compaction-plan.js';
import { type Command, err, jobLock, out, parseCommandArgs, printRolledBack, readPropsFile } from './args.js';

const MODES = ['schedule', 'execute', 'scheduleAndExecute', 'rollback'] as const;
type Mode = (typeof MODES)[number];

export const compactCommand: Command = {
  name: 'compact',
  summary: "compact merge-on-read file slices (base + logs → new base files) like Hudi's compactor: schedule, execute, or both",
  usage: 'compact <table> --mode schedule|execute|scheduleAndExecute|rollback [--instant T] [--props FILE] [--force] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'compact',
      args,
      {
        mode: { type: 'string' },
        instant: { type: 'string' },
        props: { type: 'string' },
        force: { type: 'boolean' },
        json: { type: 'boolean' },
      },
      ['table'],
    );
    const mode = values.mode as Mode | undefined;
    if (mode === undefined || !MODES.includes(mode))
      throw new HudiError(`--mode ${values.mode ?? '(missing)'} is not a compaction mode`, { fix: `use --mode ${MODES.join(' | ')}` });
    if (mode === 'rollback' && values.instant === undefined)
      throw new HudiError('--mode rollback needs --instant T', { fix: 'name the pending compaction (see `show-compaction <table>`)' });
    const props = values.props === undefined ? new Map<string, string>() : await readPropsFile(values.props);
    const config = compactionConfigFrom(props, values.props ?? 'properties');
    const storage = openStorage(positionals[0]!);
    const table = await HudiTable.open(storage);
    assertCompactionWrites(table);
    const lock = jobLock(table, props);
    if (mode === 'rollback') {
      printRolledBack('compaction', values.instant!, await rollbackCompaction(table, values.instant!, { lock }), values.json);
      return 0;
    }
    let scheduled: string | undefined;
    if (mode !== 'execute') {
      const result = await scheduleCompaction(table, config, { lock, force: values.force === true, log: err, properties: props });
      scheduled = result?.instantTime;
      if (result !== undefined) err(`scheduled compaction ${result.instantTime}: ${result.plan.operations.length} file slice(s)`);
    }
    const runs: CompactionRunResult[] = [];
    if (mode === 'scheduleAndExecute' && scheduled !== undefined)
      runs.push(await runCompaction(await table.reload(), scheduled, { lock, properties: props, log: err }));
    if (mode === 'execute') {
      const current = await table.reload();
      if (values.instant !== undefined) runs.push(await runCompaction(current, values.instant, { lock, properties: props, log: err }));
      else runs.push(...(await runPendingCompactions(current, { lock, properties: props, log: err })));
    }
    if (values.json) {
      out(
        JSON.stringify({
          scheduled: scheduled ?? null,
          runs: runs.map((run) => ({
            instantTime: run.instantTime,
            outcome: run.outcome,
            resumed: run.resumed,
            files: run.writeStats.map((s) => s.path),
            bytesRead: run.bytesRead,
            millis: run.millis,
          })),
        }),
      );
    } else {
      if (mode !== 'execute') out(scheduled === undefined ? 'nothing scheduled' : `scheduled ${scheduled}`);
      for (const run of runs)
        out(
          `${run.outcome} compaction ${run.instantTime}${run.resumed ? ' (resumed)' : ''}: ${run.writeStats.length} base file(s), ${run.bytesRead} bytes read in ${run.millis} ms`,
        );
    }
    return 0;
  },
};

export const showCompactionCommand: Command = {
  name: 'show-compaction',
  summary: 'pending compaction plans of a merge-on-read table: their file slices and sizes',
  usage: 'show-compaction <table> [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('show-compaction', args, { json: { type: 'boolean' } }, ['table']);
    const table = await HudiTable.open(openStorage(positionals[0]!));
    assertMergeOnRead(table);
    const plans = [];
    for (const instant of pendingCompactions(table.timeline)) {
      const plan = await readCompactionPlan(table.storage, instant.time, compactionFolderOf(table.layout));
      plans.push({ instantTime: instant.time, state: instant.state, operations: plan.operations });
    }
    if (values.json) {
      for (const plan of plans) out(JSON.stringify(plan));
      return 0;
    }
    if (plans.length === 0) out('no pending compaction');
    for (const plan of plans) {
      out(`${plan.instantTime} ${plan.state}: ${plan.operations.length} file slice(s)`);
      for (const op of plan.operations) {
        out(
          `  ${op.partitionPath === '' ? '(root)' : op.partitionPath}/${op.fileId} base ${op.dataFilePath ?? '(none)'} + ${op.deltaFilePaths.length} log file(s), ${op.metrics[CompactionMetric.TOTAL_LOG_FILES_SIZE] ?? 0} log bytes, ${op.metrics[CompactionMetric.TOTAL_IO_MB] ?? 0} MB IO`,
        );
      }
    }
    return 0;
  },
};
