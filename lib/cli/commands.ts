/**
 * CLI commands. Kept apart from main.ts so tests can run a command in-process.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { HudiError } from '../errors.js';
import { parseJavaProperties } from '../properties.js';
import { formatTable } from '../engine/row-format.js';
import { openStorage } from '../storage/index.js';
import { HudiTable } from '../table.js';
import { createTable } from '../table-init.js';
import { newTableOptionsFromWriteProperties } from '../table-config.js';
import { readSnapshot } from '../reader.js';

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}

/** parseArgs with a usage error that names the command. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(command: string, args: string[], options: T, positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new HudiError(`${(error as Error).message}`, { fix: `usage: hudi-serverless ${command} ${positionals.map((p) => `<${p}>`).join(' ')} [options]` });
  }
  if (parsed.positionals.length < positionals.length) {
    throw new HudiError(`missing ${positionals.slice(parsed.positionals.length).map((p) => `<${p}>`).join(' ')}`, {
      fix: `usage: hudi-serverless ${command} ${positionals.map((p) => `<${p}>`).join(' ')} [options]`,
    });
  }
  return parsed;
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function readPropsFile(file: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new HudiError(`cannot read properties file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { location: file, fix: 'check the --props path' });
  }
  return parseJavaProperties(text);
}

const init: Command = {
  name: 'init',
  summary: 'create a new copy-on-write table (v6) from Hudi write properties',
  usage: 'init <table> --props FILE | [--table-name N --record-key F[,F] --partition-fields F[,F] --precombine F --key-generator CLASS --hive-style]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('init', args, {
      props: { type: 'string' },
      'table-name': { type: 'string' },
      'record-key': { type: 'string' },
      'partition-fields': { type: 'string' },
      precombine: { type: 'string' },
      'key-generator': { type: 'string' },
      'hive-style': { type: 'boolean' },
    }, ['table']);
    const props = values.props ? await readPropsFile(values.props) : new Map<string, string>();
    const flagKeys: [string | boolean | undefined, string][] = [
      [values['table-name'], 'hoodie.table.name'],
      [values['record-key'], 'hoodie.datasource.write.recordkey.field'],
      [values['partition-fields'], 'hoodie.datasource.write.partitionpath.field'],
      [values.precombine, 'hoodie.datasource.write.precombine.field'],
      [values['key-generator'], 'hoodie.datasource.write.keygenerator.class'],
      [values['hive-style'], 'hoodie.datasource.write.hive_style_partitioning'],
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
  summary: 'list the instants on the active timeline',
  usage: 'timeline <table> [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('timeline', args, { json: { type: 'boolean' } }, ['table']);
    const table = await HudiTable.open(openStorage(positionals[0]!));
    for (const instant of table.timeline.instants) {
      if (values.json) out(JSON.stringify(instant));
      else out(`${instant.time}  ${instant.action.padEnd(13)}  ${instant.state === 'COMPLETED' ? 'COMPLETED' : `${instant.state} (pending)`}`);
    }
    return 0;
  },
};

const files: Command = {
  name: 'files',
  summary: 'list the latest file slices (replaced file groups excluded)',
  usage: 'files <table> [--as-of T] [--all-slices] [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('files', args, {
      'as-of': { type: 'string' },
      'all-slices': { type: 'boolean' },
      json: { type: 'boolean' },
    }, ['table']);
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
        else out(`${record.partition || '(non-partitioned)'}  ${record.fileId}  ${record.instant}  ${record.size}  ${record.path}${pending ? '  [in pending clustering]' : ''}`);
      }
    }
    return 0;
  },
};

const read: Command = {
  name: 'read',
  summary: 'print the rows of the latest snapshot (or as of an instant)',
  usage: 'read <table> [--as-of T] [--meta] [--format jsonl|table]',
  async run(args) {
    const { values, positionals } = parseCommandArgs('read', args, {
      'as-of': { type: 'string' },
      meta: { type: 'boolean' },
      format: { type: 'string', default: 'jsonl' },
    }, ['table']);
    if (values.format !== 'jsonl' && values.format !== 'table') {
      throw new HudiError(`--format ${values.format} is not supported`, { fix: 'use --format jsonl or --format table' });
    }
    const table = await HudiTable.open(openStorage(positionals[0]!));
    const snapshot = await readSnapshot(table, { ...(values['as-of'] === undefined ? {} : { asOf: values['as-of'] }), includeMetaFields: values.meta === true });
    if (values.format === 'table') process.stdout.write(formatTable(snapshot.rows, snapshot.columns));
    else for (const row of snapshot.rows) out(JSON.stringify(row));
    return 0;
  },
};

/** Every command; later modules (writer, clustering) add theirs here. */
export const COMMANDS: Command[] = [init, timeline, files, read];

export function usage(): string {
  const lines = ['usage: hudi-serverless <command> [options] [--verbose]', '', 'commands:'];
  for (const command of COMMANDS) lines.push(`  ${command.usage}`, `      ${command.summary}`);
  lines.push('', 'A table is s3://bucket/prefix or a local directory. S3 settings come from the standard AWS_* environment variables.');
  return `${lines.join('\n')}\n`;
}
