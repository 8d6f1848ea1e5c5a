/**
 * CLI commands. Kept apart from main.ts so tests can run a command in-process.
 */

import { formatTable } from '../engine/row-format.js';
import { type InputFormat, jsonLinesToParquet } from '../engine/write.js';
import { HudiError } from '../errors.js';
import { checkMetadataTable, dropMetadataTable } from '../metadata/check.js';
import { parseQueryType, readSnapshot } from '../read/reader.js';
import { rollbackInstant } from '../rollback/rollback.js';
import { doctorExitCode, doctorTable, formatDoctorReport } from '../status/doctor.js';
import { doctorFix, formatDoctorFix } from '../status/fix.js';
import { formatTableStatus, tableStatus } from '../status/status.js';
import { openStorage } from '../storage/index.js';
import { newTableOptionsFromWriteProperties } from '../table/config.js';
import { createTable } from '../table/init.js';
import { HudiTable, withTableLock } from '../table/table.js';
import { loadArchivedHistory } from '../timeline/archived/history.js';
import { writeBatch } from '../writer/write-client.js';
import { parseWriteOperation } from '../writer/write-config.js';
import { type Command, err, jobLock, out, parseCommandArgs, readPropsFile } from './args.js';
import { archiveCommand, cleanCommand, showCleanCommand } from './clean-commands.js';
import { clusterCommand, showClusteringCommand } from './cluster-commands.js';
import { compactCommand, showCompactionCommand } from './compact-commands.js';
import { generateUsers, writeJsonLines } from './generate.js';

const init: Command = {
  name: 'init',
  summary: 'create a new table from Hudi write properties: version 6, or 8/9 (Hudi 1.0/1.1) with --table-version',
  usage:
    'init <table> --props FILE | [--table-name N --record-key F[,F] --partition-fields F[,F] --precombine F --key-generator CLASS --hive-style --table-version 6|8|9]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'init',
      args,
      {
        props: { type: 'string' },
        'table-name': { type: 'string' },
        'record-key': { type: 'string' },
        'partition-fields': { type: 'string' },
        precombine: { type: 'string' },
        'key-generator': { type: 'string' },
        'hive-style': { type: 'boolean' },
        'table-version': { type: 'string' },
      },
      ['table'],
    );
    const props = values.props ? await readPropsFile(values.props) : new Map<string, string>();
    const flagKeys: [string | boolean | undefined, string][] = [
      [values['table-name'], 'hoodie.table.name'],
      [values['record-key'], 'hoodie.datasource.write.recordkey.field'],
      [values['partition-fields'], 'hoodie.datasource.write.partitionpath.field'],
      [values.precombine, 'hoodie.datasource.write.precombine.field'],
      [values['key-generator'], 'hoodie.datasource.write.keygenerator.class'],
      [values['hive-style'], 'hoodie.datasource.write.hive_style_partitioning'],
      [values['table-version'], 'hoodie.write.table.version'],
    ];
    for (const [value, key] of flagKeys) if (value !== undefined) props.set(key, String(value));
    const storage = openStorage(positionals[0]!);
    const config = await createTable(storage, newTableOptionsFromWriteProperties(props, values.props ?? 'command line'));
    out(`created ${config.type} table ${config.name} (version ${config.version}) at ${storage.uri}`);
    return 0;
  },
};

const timeline: Command = {
  name: 'timeline',
  summary: "list the instants on the active timeline (with --archived, the archived timeline's first)",
  usage: 'timeline <table> [--archived] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('timeline', args, { json: { type: 'boolean' }, archived: { type: 'boolean' } }, ['table']);
    const table = await HudiTable.open(openStorage(positionals[0]!));
    const active = new Set(table.timeline.instants.map((instant) => `${instant.time}.${instant.action}`));
    // An interrupted archive run can leave an instant in both: the active timeline shows it.
    const archived = values.archived
      ? (await loadArchivedHistory(table.storage, table.config.archiveLogFolder)).instants.filter((instant) => !active.has(`${instant.time}.${instant.action}`))
      : [];
    for (const [instant, where] of [...archived.map((i) => [i, 'archived'] as const), ...table.timeline.instants.map((i) => [i, 'active'] as const)]) {
      if (values.json) out(JSON.stringify(values.archived ? { ...instant, timeline: where } : instant));
      else
        out(
          `${instant.time}  ${instant.action.padEnd(13)}  ${instant.state === 'COMPLETED' ? 'COMPLETED' : `${instant.state} (pending)`}${where === 'archived' ? '  (archived)' : ''}`,
        );
    }
    return 0;
  },
};

const status: Command = {
  name: 'status',
  summary: 'pending instants and their age, the last clustering, clean and archive, files and sizes per partition',
  usage: 'status <table> [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('status', args, { json: { type: 'boolean' } }, ['table']);
    const result = await tableStatus(await HudiTable.open(openStorage(positionals[0]!)));
    if (values.json) out(JSON.stringify(result));
    else process.stdout.write(formatTableStatus(result));
    return 0;
  },
};

const doctor: Command = {
  name: 'doctor',
  summary:
    'check a table: missing files, the metadata table, failed writes and abandoned plans, files past retention, the archival bounds, small files; each finding names its repair, --fix applies the safe ones (exit 0 healthy, 3 warnings, 4 errors)',
  usage: 'doctor <table> [--props FILE] [--fix] [--json]   (--fix: roll back failed writes, clean, archive; then check again)',
  async run(args) {
    const { values, positionals } = parseCommandArgs('doctor', args, { props: { type: 'string' }, fix: { type: 'boolean' }, json: { type: 'boolean' } }, [
      'table',
    ]);
    const storage = openStorage(positionals[0]!);
    const properties = values.props === undefined ? new Map<string, string>() : await readPropsFile(values.props);
    const options = { properties, ...(values.props === undefined ? {} : { propertiesLocation: values.props }) };
    if (values.fix !== true) {
      const report = await doctorTable(await HudiTable.open(storage), options);
      if (values.json) out(JSON.stringify(report));
      else process.stdout.write(formatDoctorReport(report));
      return doctorExitCode(report);
    }
    const table = await HudiTable.open(storage);
    const lock = jobLock(table, properties);
    const result = await doctorFix(storage, { ...options, lock, onProgress: err });
    if (values.json) out(JSON.stringify(result));
    else process.stdout.write(formatDoctorFix(result));
    return doctorExitCode(result.after);
  },
};

const files: Command = {
  name: 'files',
  summary: 'list the latest file slices (replaced file groups excluded)',
  usage: 'files <table> [--as-of T] [--all-slices] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'files',
      args,
      {
        'as-of': { type: 'string' },
        'all-slices': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      ['table'],
    );
    const table = await HudiTable.open(openStorage(positionals[0]!));
    const view = await table.fileSystemView(values['as-of'] === undefined ? {} : { asOf: values['as-of'] });
    for (const group of view.fileGroups()) {
      const slices = values['all-slices'] ? group.slices : group.slices.slice(0, 1);
      const pending = view.isInPendingClustering(group.partitionPath, group.fileId);
      for (const slice of slices) {
        const record = {
          partition: slice.partitionPath,
          fileId: slice.fileId,
          instant: slice.baseInstantTime,
          size: slice.baseFile.size,
          path: slice.baseFile.path,
          pendingClustering: pending,
        };
        if (values.json) out(JSON.stringify(record));
        else
          out(
            `${record.partition || '(non-partitioned)'}  ${record.fileId}  ${record.instant}  ${record.size}  ${record.path}${pending ? '  [in pending clustering]' : ''}`,
          );
      }
    }
    return 0;
  },
};

const read: Command = {
  name: 'read',
  summary: 'print the rows of the latest snapshot (or as of an instant)',
  usage: 'read <table> [--as-of T] [--query-type snapshot|read_optimized] [--meta] [--format jsonl|table]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'read',
      args,
      {
        'as-of': { type: 'string' },
        'query-type': { type: 'string' },
        meta: { type: 'boolean' },
        format: { type: 'string', default: 'jsonl' },
      },
      ['table'],
    );
    if (values.format !== 'jsonl' && values.format !== 'table') {
      throw new HudiError(`--format ${values.format} is not supported`, { fix: 'use --format jsonl or --format table' });
    }
    const table = await HudiTable.open(openStorage(positionals[0]!));
    const queryType = parseQueryType(values['query-type']);
    const snapshot = await readSnapshot(table, {
      ...(values['as-of'] === undefined ? {} : { asOf: values['as-of'] }),
      includeMetaFields: values.meta === true,
      queryType,
    });
    if (values.format === 'table') process.stdout.write(formatTable(snapshot.rows, snapshot.columns));
    else for (const row of snapshot.rows) out(JSON.stringify(row));
    return 0;
  },
};

function inputFormatOf(file: string, given: string | undefined): InputFormat {
  const format = (given ?? (file.endsWith('.parquet') ? 'parquet' : file.endsWith('.csv') ? 'csv' : 'jsonl')).toLowerCase();
  if (format !== 'jsonl' && format !== 'csv' && format !== 'parquet') {
    throw new HudiError(`--input-format ${format} is not supported`, { fix: 'use jsonl, csv or parquet' });
  }
  return format;
}

function progressLine(message: string): void {
  process.stderr.write(`${message}\n`);
}

const write: Command = {
  name: 'write',
  summary: 'write a batch (bulk_insert | insert | upsert | delete); creates the table from --props if needed',
  usage: 'write <table> --input FILE [--operation OP] [--props FILE] [--input-format jsonl|csv|parquet]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      'write',
      args,
      {
        input: { type: 'string' },
        operation: { type: 'string' },
        props: { type: 'string' },
        'input-format': { type: 'string' },
        quiet: { type: 'boolean' },
      },
      ['table'],
    );
    if (!values.input)
      throw new HudiError('--input FILE is required', { fix: 'usage: hudi-serverless write <table> --input FILE [--operation OP] [--props FILE]' });
    const props = values.props ? await readPropsFile(values.props) : new Map<string, string>();
    const operation = parseWriteOperation(values.operation ?? props.get('hoodie.datasource.write.operation'));
    const result = await writeBatch(openStorage(positionals[0]!), {
      input: { file: values.input, format: inputFormatOf(values.input, values['input-format']) },
      operation,
      properties: props,
      ...(values.quiet ? {} : { onProgress: progressLine }),
    });
    out(
      JSON.stringify({
        instant: result.instantTime,
        operation: result.operation,
        inserted: result.inserted,
        updated: result.updated,
        deleted: result.deleted,
        files: result.stats.length,
        badRecords: result.badRecords.length,
      }),
    );
    return 0;
  },
};

const rollback: Command = {
  name: 'rollback',
  summary: 'roll back a failed (pending) write or clustering attempt, removing its files',
  usage: 'rollback <table> <instant> [--props FILE] [--force]  (--force: the writer is known to be dead, ignore its heartbeat)',
  async run(args) {
    const { values, positionals } = parseCommandArgs('rollback', args, { props: { type: 'string' }, force: { type: 'boolean' } }, ['table', 'instant']);
    const props = values.props ? await readPropsFile(values.props) : new Map<string, string>();
    const table = await HudiTable.open(openStorage(positionals[0]!), { mode: 'delta-write' });
    const result = await rollbackInstant(table, positionals[1]!, {
      lock: jobLock(table, props),
      ignoreHeartbeat: values.force === true,
    });
    out(JSON.stringify(result));
    return 0;
  },
};

const metadata: Command = {
  name: 'metadata',
  summary: "check Hudi's metadata table against the data table (stranded log files, files listed or missing); drop it to repair",
  usage: 'metadata <table> check|drop [--props FILE]  (drop: as hoodie.metadata.enable=false; the next Hudi write rebuilds it)',
  async run(args) {
    const { values, positionals } = parseCommandArgs('metadata', args, { props: { type: 'string' } }, ['table', 'action']);
    const action = positionals[1];
    if (action !== 'check' && action !== 'drop')
      throw new HudiError(`metadata ${action}: not an action`, { fix: 'use `metadata <table> check` or `metadata <table> drop`' });
    const table = await HudiTable.open(openStorage(positionals[0]!), { mode: action === 'drop' ? 'delta-write' : 'read' });
    if (action === 'check') {
      const report = await checkMetadataTable(table.storage);
      if (report === undefined) {
        out(JSON.stringify({ metadataTable: false, ok: true }));
        return 0;
      }
      out(JSON.stringify({ metadataTable: true, ...report }));
      return report.ok ? 0 : 1;
    }
    const props = values.props ? await readPropsFile(values.props) : new Map<string, string>();
    const dropped = await withTableLock(table, jobLock(table, props), (current) => dropMetadataTable(current.storage, current.config));
    out(JSON.stringify({ dropped }));
    return 0;
  },
};

const generate: Command = {
  name: 'generate',
  summary: 'generate seeded user records (id, name, birthday, createTime, position, dt) as JSON lines or Parquet',
  usage: 'generate --out FILE [--count N] [--seed S] [--id-start N] [--days D] [--start-date YYYY-MM-DD]',
  async run(args) {
    const { values } = parseCommandArgs(
      'generate',
      args,
      {
        out: { type: 'string' },
        count: { type: 'string', default: '1000' },
        seed: { type: 'string', default: '1' },
        'id-start': { type: 'string', default: '1' },
        days: { type: 'string', default: '3' },
        'start-date': { type: 'string', default: '2024-01-01' },
      },
      [],
    );
    if (!values.out) throw new HudiError('--out FILE is required', { fix: 'e.g. --out users.jsonl or --out users.parquet' });
    const numbers = Object.fromEntries(
      (['count', 'seed', 'id-start', 'days'] as const).map((key) => {
        const value = Number(values[key]);
        if (!Number.isInteger(value) || value < 0) throw new HudiError(`--${key} ${values[key]} is not a whole number ≥ 0`);
        return [key, value];
      }),
    ) as Record<'count' | 'seed' | 'id-start' | 'days', number>;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(values['start-date'])) throw new HudiError(`--start-date ${values['start-date']} is not YYYY-MM-DD`);
    const records = generateUsers({
      count: numbers.count,
      seed: numbers.seed,
      idStart: numbers['id-start'],
      days: numbers.days,
      startDate: values['start-date'],
    });
    const parquet = values.out.endsWith('.parquet');
    const jsonFile = parquet ? `${values.out}.jsonl.tmp` : values.out;
    const count = await writeJsonLines(jsonFile, records);
    if (parquet) {
      await jsonLinesToParquet(jsonFile, values.out);
      await import('node:fs/promises').then((fs) => fs.rm(jsonFile, { force: true }));
    }
    out(JSON.stringify({ out: values.out, records: count }));
    return 0;
  },
};

/** Every command, in the order `--help` lists them. */
export const COMMANDS: Command[] = [
  init,
  status,
  doctor,
  timeline,
  files,
  read,
  write,
  clusterCommand,
  showClusteringCommand,
  compactCommand,
  showCompactionCommand,
  cleanCommand,
  archiveCommand,
  showCleanCommand,
  rollback,
  metadata,
  generate,
];

export function usage(): string {
  const lines = ['usage: hudi-serverless <command> [options] [--verbose]', '', 'commands:'];
  for (const command of COMMANDS) lines.push(`  ${command.usage}`, `      ${command.summary}`);
  lines.push('', 'A table is s3://bucket/prefix or a local directory. S3 settings come from the standard AWS_* environment variables.');
  return `${lines.join('\n')}\n`;
}
