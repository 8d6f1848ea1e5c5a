/**
 * Every documented range's ends work: each numeric key the config kernel defines (definedKeys, with its parser's
 * range) is set to its minimum and maximum, and one past each, and given to a command that reads it (found by
 * running each command once and noting the keys it reads: keysReadBy). The outcome must be a result or one clear
 * refusal (a HudiError), never a TypeError or another crash. Keys no CLI command reads are named in the output, and
 * each must be one test/serverless/ranges.test.ts walks through the Lambda step or service that reads it.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../lib/cli/commands.js';
import { type ConfigKey, definedKeys, keysReadBy } from '../../lib/config/index.js';
// Every settings module, so definedKeys() holds every key (the reference lists them all).
import '../../lib/docs/config-reference.js';
import '../../lib/serverless/index.js';
import { HudiError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import { newTableOptionsFromWriteProperties } from '../../lib/table/config.js';
import { createTable } from '../../lib/table/init.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { tempDir } from '../helpers/paths.js';
import { STEP_WALKED_KEYS } from '../helpers/ranges.js';

const TABLE_PROPS = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
};

let files = 0;
function file(name: string, text: string): string {
  const path = join(tempDir('ranges-'), `${files++}-${name}`);
  writeFileSync(path, text);
  return path;
}

function batch(round: number): string {
  const rows = [1, 2, 3, 4].map((id) => ({ id: id + round, ts: round, dt: id % 2 === 0 ? 'p1' : 'p2', name: `n${round}` }));
  return file('batch.jsonl', rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

type TableKind = 'COPY_ON_WRITE' | 'MERGE_ON_READ' | 'COPY_ON_WRITE_WITH_METADATA_TABLE';

/**
 * A table of four upserts (copy-on-write, or merge-on-read), to copy for each run; the third kind has a metadata
 * table with every partition, as Hudi initializes one, so a write reads the metadata table's keys.
 */
async function table(kind: TableKind): Promise<string> {
  const path = join(tempDir('ranges-table-'), 't');
  const type = kind === 'MERGE_ON_READ' ? 'MERGE_ON_READ' : 'COPY_ON_WRITE';
  const properties = new Map(Object.entries({ ...TABLE_PROPS, 'hoodie.datasource.write.table.type': type, 'hoodie.clean.automatic': 'false' }));
  if (kind === 'COPY_ON_WRITE_WITH_METADATA_TABLE') {
    await createTable(openStorage(path), newTableOptionsFromWriteProperties(properties, 'test'));
    await initMetadataTable(openStorage(path), ['files', 'column_stats', 'bloom_filters', 'record_index'], {
      column_stats: 1,
      bloom_filters: 1,
      record_index: 1,
    });
  }
  for (let round = 0; round < 4; round++) {
    await writeBatch(openStorage(path), { input: { file: batch(round), format: 'jsonl' }, operation: 'upsert', properties });
  }
  return path;
}

interface Run {
  readonly name: string;
  readonly table: TableKind;
  args(table: string, props: string): string[];
}

const RUNS: readonly Run[] = [
  { name: 'write', table: 'COPY_ON_WRITE', args: (t, p) => ['write', t, '--input', batch(9), '--props', p] },
  { name: 'write (merge-on-read)', table: 'MERGE_ON_READ', args: (t, p) => ['write', t, '--input', batch(9), '--props', p] },
  { name: 'write (metadata table)', table: 'COPY_ON_WRITE_WITH_METADATA_TABLE', args: (t, p) => ['write', t, '--input', batch(9), '--props', p] },
  { name: 'cluster', table: 'COPY_ON_WRITE', args: (t, p) => ['cluster', t, '--mode', 'scheduleAndExecute', '--props', p, '--json'] },
  { name: 'compact', table: 'MERGE_ON_READ', args: (t, p) => ['compact', t, '--mode', 'scheduleAndExecute', '--props', p, '--json'] },
  { name: 'clean --dry-run', table: 'COPY_ON_WRITE', args: (t, p) => ['clean', t, '--props', p, '--dry-run', '--json'] },
  { name: 'clean', table: 'COPY_ON_WRITE', args: (t, p) => ['clean', t, '--props', p, '--json'] },
  { name: 'archive --dry-run', table: 'COPY_ON_WRITE', args: (t, p) => ['archive', t, '--props', p, '--dry-run', '--json'] },
  { name: 'archive', table: 'COPY_ON_WRITE', args: (t, p) => ['archive', t, '--props', p, '--json'] },
  { name: 'doctor --fix', table: 'COPY_ON_WRITE', args: (t, p) => ['doctor', t, '--props', p, '--fix', '--json'] },
];

type Outcome =
  | { readonly kind: 'result'; readonly code: number }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'crash'; readonly error: unknown };

/** One command in this process, its output swallowed: its exit code, its HudiError, or the crash. */
async function runCommand(args: readonly string[]): Promise<Outcome> {
  const command = COMMANDS.find((c) => c.name === args[0]);
  assert.ok(command !== undefined, args[0]);
  const write = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = () => true;
  process.stderr.write = () => true;
  try {
    return { kind: 'result', code: await command.run(args.slice(1)) };
  } catch (error) {
    return error instanceof HudiError ? { kind: 'refused', message: error.message } : { kind: 'crash', error };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

/** The ends of a key's range and one past each, as texts. */
function ends(key: ConfigKey<unknown>): string[] {
  const range = key.parser.range!;
  const min = Number(range.min);
  const below = Number.isInteger(min) ? String(BigInt(range.min) - 1n) : String(min - 1);
  const max = range.max ?? '1e308';
  const above = range.max === undefined ? 'Infinity' : String(BigInt(range.max) + 1n);
  return [range.min, below, max, above];
}

describe('config ranges: every numeric key at the ends of its range, through a command that reads it', () => {
  it('gives a result or a HudiError, never a crash', async () => {
    const tables = {
      COPY_ON_WRITE: await table('COPY_ON_WRITE'),
      MERGE_ON_READ: await table('MERGE_ON_READ'),
      COPY_ON_WRITE_WITH_METADATA_TABLE: await table('COPY_ON_WRITE_WITH_METADATA_TABLE'),
    };
    const copy = (run: Run) => {
      const target = join(tempDir('ranges-run-'), 't');
      cpSync(tables[run.table], target, { recursive: true });
      return target;
    };
    const noProps = file('empty.properties', '');
    // Which command reads which key: each run once, at the defaults.
    const readers = new Map<ConfigKey<unknown>, Run>();
    for (const run of RUNS) {
      const { result, keys } = await keysReadBy(() => runCommand(run.args(copy(run), noProps)));
      assert.equal(result.kind, 'result', `${run.name} at the defaults: ${JSON.stringify(result)}`);
      for (const key of keys) if (!readers.has(key)) readers.set(key, run);
    }
    const numeric = definedKeys().filter((key) => key.parser.range !== undefined && !key.deprecated);
    assert.ok(numeric.length > 30, `${numeric.length} numeric keys defined`);
    const crashes: string[] = [];
    const unread: string[] = [];
    let runs = 0;
    for (const key of numeric) {
      const run = readers.get(key);
      if (run === undefined) {
        unread.push(key.key);
        continue;
      }
      for (const value of ends(key)) {
        const props = file('job.properties', `${key.key}=${value}\n`);
        const outcome = await runCommand(run.args(copy(run), props));
        runs++;
        if (outcome.kind === 'crash') crashes.push(`${run.name} with ${key.key}=${value}: ${String((outcome.error as Error)?.stack ?? outcome.error)}`);
      }
    }
    console.log(`# ${runs} runs of ${numeric.length - unread.length} keys; read by no CLI command: ${unread.join(', ')}`);
    assert.deepEqual(crashes, []);
    const walkedByNone = unread.filter((name) => !STEP_WALKED_KEYS.some((key) => key.key === name));
    assert.deepEqual(walkedByNone, [], 'keys neither a CLI command nor a Lambda step walk reads (add them to test/serverless/ranges.test.ts)');
  });
});
