/**
 * `clean`, `archive` and `show-clean`: the table services as Hudi's cleaner and archiver, with `--dry-run` saying
 * what would go and which rule keeps the rest. Progress goes to stderr, results to stdout.
 */
import { type ArchiveResult, runArchive } from '../archival/archive.js';
import { archivalConfigFromProperties } from '../archival/config.js';
import { cleanConfigFromProperties } from '../cleaner/config.js';
import { type CleanResult, runClean } from '../cleaning/clean.js';
import { describeClean, describeCleans } from '../cleaning/show.js';
import { openStorage } from '../storage/index.js';
import { HudiTable } from '../table/table.js';
import { type Command, err, jobLock, out, parseCommandArgs, readPropsFile } from './args.js';

async function openWithProps(tablePath: string, propsFile: string | undefined, mode: 'clean' | 'archive' = 'clean') {
  const props = propsFile === undefined ? new Map<string, string>() : await readPropsFile(propsFile);
  const storage = openStorage(tablePath);
  const table = await HudiTable.open(storage, { mode });
  // The job's properties win over hoodie.properties, as a Hudi writer's options do.
  const merged = new Map([...table.config.properties, ...props]);
  return { table, props: merged, location: propsFile ?? storage.uriOf('.hoodie/hoodie.properties'), lock: jobLock(table, props) };
}

export const cleanCommand: Command = {
  name: 'clean',
  summary: "delete file versions and replaced file groups past retention (hoodie.cleaner.policy), as Hudi's cleaner; finishes a pending clean first",
  usage: 'clean <table> [--props FILE] [--dry-run] [--json]   (--dry-run: what would be deleted and why each file is kept)',
  async run(args) {
    const { values, positionals } = parseCommandArgs('clean', args, { props: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } }, [
      'table',
    ]);
    const { table, props, location, lock } = await openWithProps(positionals[0]!, values.props);
    const config = cleanConfigFromProperties(props, location);
    const result = await runClean(table, { config, lock, dryRun: values['dry-run'] === true, onProgress: err, properties: props });
    if (values.json) out(JSON.stringify(cleanJson(result)));
    else printClean(result);
    return 0;
  },
};

function cleanJson(result: CleanResult) {
  const planning = result.planning;
  return {
    outcome: result.outcome,
    instantTime: result.clean?.instantTime ?? null,
    filesDeleted: result.clean?.metadata.totalFilesDeleted ?? null,
    failures: result.clean?.failures ?? [],
    metadataTable: result.clean?.metadataTable.deltaCommit?.partitions ?? null,
    resumed: result.resumed.map((clean) => ({ instantTime: clean.instantTime, filesDeleted: clean.metadata.totalFilesDeleted })),
    pendingLeft: result.pendingLeft,
    due: planning?.due ?? null,
    earliestCommitToRetain: planning?.retention.instant?.time ?? null,
    retention: planning?.retention.reason ?? null,
    scope: planning === undefined ? null : { kind: planning.scope.kind, reason: planning.scope.reason, partitionsListed: planning.partitionsListed },
    partitions: (planning?.partitions ?? []).map((partition) => ({
      partition: partition.partitionPath,
      deletePartition: partition.deletePartition,
      delete: partition.deletes.map((file) => ({ file: file.fileName, rule: file.rule, why: file.detail })),
      keep: partition.kept.map((file) => ({ file: file.fileName, rule: file.rule, why: file.detail })),
    })),
  };
}

function printClean(result: CleanResult): void {
  for (const clean of result.resumed) out(`resumed clean ${clean.instantTime}: ${clean.metadata.totalFilesDeleted} file(s) deleted`);
  const planning = result.planning;
  if (planning !== undefined) {
    out(`earliest commit to retain: ${planning.retention.instant?.time ?? 'none'} (${planning.retention.reason})`);
    out(`partitions: ${planning.scope.kind} (${planning.scope.reason}); ${planning.partitionsListed} listed`);
    out(`due: ${planning.due.due ? 'yes' : 'no'} (${planning.due.reason})`);
  }
  if (result.outcome === 'dry-run') {
    for (const pending of result.pendingLeft) out(`pending clean ${pending} would be finished first`);
    let deletes = 0;
    for (const partition of planning?.partitions ?? []) {
      const name = partition.partitionPath || '(non-partitioned)';
      for (const file of partition.deletes) out(`  delete  ${name}/${file.fileName}  ${file.rule}: ${file.detail}`);
      for (const file of partition.kept) out(`  keep    ${name}/${file.fileName}  ${file.rule}: ${file.detail}`);
      if (partition.deletePartition) out(`  delete partition ${name}: no file group is left in it`);
      deletes += partition.deletes.length;
    }
    out(`dry run: ${deletes} file(s) would be deleted${planning?.due.due === false ? ' (but no clean is due yet)' : ''}`);
    return;
  }
  if (result.outcome === 'cleaned') {
    const clean = result.clean!;
    out(
      `cleaned ${clean.instantTime}: ${clean.metadata.totalFilesDeleted} file(s) deleted in ${Object.keys(clean.metadata.partitionMetadata).length} partition(s)`,
    );
    for (const failure of clean.failures) out(`  could not delete ${failure.partitionPath}/${failure.fileName}: ${failure.reason}`);
  } else {
    out(result.outcome === 'not-due' ? 'no clean is due' : 'nothing to clean');
  }
}

export const archiveCommand: Command = {
  name: 'archive',
  summary: "move old instants to the archived timeline (hoodie.keep.min.commits / max.commits), as Hudi's archiver",
  usage: 'archive <table> [--props FILE] [--dry-run] [--json]   (--dry-run: which instants would be archived and which rule keeps the rest)',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'archive',
      args,
      { props: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
      ['table'],
    );
    const { table, props, location, lock } = await openWithProps(positionals[0]!, values.props, 'archive');
    const result = await runArchive(table, {
      config: archivalConfigFromProperties(props, location),
      cleanConfig: cleanConfigFromProperties(props, location),
      lock,
      properties: props,
      dryRun: values['dry-run'] === true,
      onProgress: err,
    });
    if (values.json) out(JSON.stringify(archiveJson(result)));
    else printArchive(result);
    return 0;
  },
};

function archiveJson(result: ArchiveResult) {
  return {
    outcome: result.outcome,
    instants: result.plan.instants,
    keepMinCommits: result.plan.minToKeep,
    keepMaxCommits: result.plan.maxToKeep,
    adjustment: result.plan.adjustment ?? null,
    kept: result.plan.keptCommits.map((kept) => ({ time: kept.instant.time, action: kept.instant.action, rule: kept.rule, why: kept.detail })),
    archiveFile: result.archiveFile ?? null,
    records: result.recordsWritten,
    archivedFiles: result.archivedFiles,
    merged: result.merged ?? null,
    compacted: result.compacted,
    finishedInterrupted: result.finishedInterrupted,
  };
}

function printArchive(result: ArchiveResult): void {
  const { plan } = result;
  out(
    `${plan.completedCommits} completed commit(s) active; keep.min.commits=${plan.minToKeep}, keep.max.commits=${plan.maxToKeep}${plan.adjustment === undefined ? '' : ` (${plan.adjustment})`}`,
  );
  for (const instant of plan.instants) out(`  ${result.outcome === 'dry-run' ? 'would archive' : 'archived'}  ${instant.time}  ${instant.action}`);
  for (const kept of plan.keptCommits) out(`  keep    ${kept.instant.time}  ${kept.instant.action}  ${kept.rule}: ${kept.detail}`);
  if (result.outcome === 'archived')
    out(`archived ${plan.instants.length} instant(s), ${result.recordsWritten} record(s) into ${result.archiveFile ?? 'the archive'}`);
  else if (result.outcome === 'nothing-to-archive') out('nothing to archive');
  else out(`dry run: ${plan.instants.length} instant(s) would be archived`);
  if (result.merged !== undefined) out(`merged ${result.merged.candidates.length} small archive file(s) into ${result.merged.into}`);
  for (const file of result.compacted) out(`compacted the timeline history into ${file}`);
}

export const showCleanCommand: Command = {
  name: 'show-clean',
  summary: "list the cleans on the active timeline, or one clean's partitions",
  usage: 'show-clean <table> [<instant>] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('show-clean', args, { json: { type: 'boolean' } }, ['table']);
    const table = await HudiTable.open(openStorage(positionals[0]!));
    if (positionals[1] !== undefined) {
      for (const partition of await describeClean(table, positionals[1])) {
        if (values.json) out(JSON.stringify(partition));
        else
          out(
            `${partition.partitionPath || '(non-partitioned)'}  ${partition.policy}  deleted ${partition.deleted.length}  failed ${partition.failed.length}${partition.planned.length > 0 ? `  to delete ${partition.planned.length}` : ''}${partition.partitionDeleted ? '  partition deleted' : ''}`,
          );
      }
      return 0;
    }
    for (const clean of await describeCleans(table)) {
      if (values.json) out(JSON.stringify(clean));
      else
        out(
          `${clean.instantTime}  ${clean.state.padEnd(9)}  ${clean.policy}  earliest retained ${clean.earliestCommitToRetain || '-'}  ${clean.state === 'COMPLETED' ? 'deleted' : 'to delete'} ${clean.files} file(s) in ${clean.partitions} partition(s)${clean.failedFiles > 0 ? `, ${clean.failedFiles} failed` : ''}${clean.timeTakenInMillis === undefined ? '' : `  ${clean.timeTakenInMillis} ms`}`,
        );
    }
    return 0;
  },
};
