/**
 * A seeded, property-based fuzz of write batches against a small model of Hudi's semantics. Each seed builds a
 * table from one insert, then applies random batches: upserts and deletes with key collisions inside the batch and
 * with stored records, nulls in every nullable column, nested values, text that looks like dates, numbers or JSON,
 * columns added by a batch (schema evolution) and left out by later ones; and, now and then, a batch that must be
 * refused (a null ordering value, a boolean into the number column, a column name that is not an Avro name or
 * equals another or a meta field's but for case). After each batch the table is either byte-for-byte as before (a
 * refused batch) or reads back exactly as the model says.
 *
 * The model (Hudi 0.15's defaults, non-global index, OverwriteWithLatestAvroPayload): a batch's records with one
 * key combine to the one with the greatest ordering value (the later on a tie); an upsert's record replaces the
 * stored one whatever its ordering value; a delete removes the key. Partitions follow from the key, so a key never
 * moves between partitions (which a non-global index would keep as two records).
 *
 * Seeds are fixed, so a failure reproduces: FUZZ_SEEDS=N runs N seeds instead of the few run in CI, FUZZ_BATCHES=M
 * M batches per seed (`FUZZ_SEEDS=200 node --import tsx --test test/writer/fuzz.test.ts`).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { seededRandom } from '../../lib/cli/generate.js';
import { InputError } from '../../lib/errors.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/fixtures.js';
import { tableBytes } from '../helpers/paths.js';

const SEEDS = Number(process.env['FUZZ_SEEDS'] ?? 4);
const BATCHES = Number(process.env['FUZZ_BATCHES'] ?? 6);
const KEYS = 24;

const PROPS = new Map([
  ['hoodie.table.name', 'fuzz'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.index.bloom.num_entries', '100'],
  // Small files everywhere: inserts go to existing file groups, so merges and new groups both happen.
  ['hoodie.copyonwrite.insert.split.size', '7'],
  ['hoodie.copyonwrite.insert.auto.split', 'false'],
  // Batches may leave out columns added earlier: stored as NULL, as Hudi does with this key.
  ['hoodie.write.set.null.for.missing.columns', 'true'],
]);

interface FuzzRecord {
  id: number;
  ts: number;
  dt: string;
  v: number | null;
  s: string | null;
  b: boolean | null;
  o: { x: number | null; y: string | null } | null;
  tags: string[] | null;
  /** Columns added by later batches (schema evolution), by name; absent ones are NULL. */
  extra: Record<string, number | string | null>;
}

/** Names a batch may add as a column: each an Avro name, none equal to another but for case. */
const NEW_COLUMNS = ['c1', 'Alpha', '_u', 'x_1', 'zz9', 'beta_gamma', 'C_2', 'Omega'];
/** Names a batch must be refused for, whatever the table holds. */
const BAD_NAMES = ['a.b', 'c d', 'e-f', '1g', 'V', 'TAGS', '_Hoodie_File_Name', ''];

type Random = () => number;
const pick = <T>(random: Random, values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
const maybeNull = <T>(random: Random, value: T): T | null => (random() < 0.2 ? null : value);

const TEXT = ['', 'a', 'Zoë', '2024-01-01', '2024-01-01 10:00:00', '12', 'true', 'null', '{"k":1}', "it's", 'line\nbreak', '🦀', ' spaced '];

function randomRecord(random: Random, full = false, id = Math.floor(random() * KEYS)): FuzzRecord {
  const nullable = <T>(value: T): T | null => (full ? value : maybeNull(random, value));
  return {
    id,
    ts: Math.floor(random() * 5),
    dt: `p${id % 3}`,
    v: nullable(Math.floor(random() * 2_000_001) - 1_000_000),
    s: nullable(pick(random, TEXT)),
    b: nullable(random() < 0.5),
    o: nullable({ x: nullable(Math.floor(random() * 100)), y: nullable(pick(random, TEXT)) }),
    tags: nullable(Array.from({ length: (full ? 1 : 0) + Math.floor(random() * 3) }, () => pick(random, TEXT))),
    extra: {},
  };
}

/** A value for an added column of `kind`, null now and then. */
function extraValue(random: Random, kind: 'int' | 'text', nonNull = false): number | string | null {
  const value = kind === 'int' ? Math.floor(random() * 2_001) - 1_000 : pick(random, TEXT);
  return nonNull ? value : maybeNull(random, value);
}

/** The record as a JSON-lines object: its added columns beside the others. */
function inputObject(record: FuzzRecord): Record<string, unknown> {
  const { extra, ...rest } = record;
  return { ...rest, ...extra };
}

/** The batch's records combined as Hudi combines them: per key, the greatest ordering value, the later on a tie. */
function combined(batch: readonly FuzzRecord[]): Map<number, FuzzRecord> {
  const byKey = new Map<number, FuzzRecord>();
  for (const record of batch) {
    const held = byKey.get(record.id);
    if (held === undefined || record.ts >= held.ts) byKey.set(record.id, record);
  }
  return byKey;
}

let inputs = 0;
async function write(table: string, records: readonly FuzzRecord[] | readonly object[], operation: WriteOptions['operation']) {
  const file = join(tempDir(), `fuzz-${inputs++}.jsonl`);
  writeFileSync(file, records.map((record) => `${JSON.stringify('extra' in record ? inputObject(record as FuzzRecord) : record)}\n`).join(''));
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: PROPS });
}

async function readBack(table: string): Promise<Record<string, unknown>[]> {
  const { rows } = await readSnapshot(await HudiTable.open(openStorage(table)));
  return rows.map((row) => ({ ...row })).sort((a, b) => Number(a['id']) - Number(b['id']));
}

/** A batch the writer must refuse (the model is unchanged by it). */
function badBatch(random: Random, good: readonly FuzzRecord[]): object[] {
  const records: Record<string, unknown>[] = good.map(inputObject);
  const at = Math.floor(random() * records.length);
  switch (Math.floor(random() * 3)) {
    case 0:
      records[at] = { ...records[at], ts: null };
      break;
    case 1:
      // A number column given only booleans in this batch: DuckDB would store 1 and 0.
      for (let i = 0; i < records.length; i++) records[i] = { ...records[i], v: i === at || random() < 0.5 ? true : null };
      break;
    default:
      // Not an Avro name, a column's name in another case, a meta field's name in another case.
      records[at] = { ...records[at], [pick(random, BAD_NAMES)]: 1 };
      break;
  }
  return records;
}

describe('writer fuzz: random batches against a model', () => {
  let batches = 0;
  let refused = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    it(`seed ${seed}: ${BATCHES} batches read back as the model says, refused ones change nothing`, async () => {
      const random = seededRandom(seed * 7919);
      const table = join(tempDir(), 't');
      const model = new Map<number, FuzzRecord>();
      const added = new Map<string, 'int' | 'text'>();
      const unused = [...NEW_COLUMNS].sort(() => random() - 0.5);
      // The first batch types the table: distinct keys, every column non-null (a list not empty) in its first record.
      const first = Array.from({ length: 9 }, (_, i) => randomRecord(random, i === 0, i * 2));
      await write(table, first, 'insert');
      for (const record of first) model.set(record.id, record);
      for (let batch = 0; batch < BATCHES; batch++) {
        batches++;
        const records = Array.from({ length: 1 + Math.floor(random() * 12) }, () => randomRecord(random));
        // Columns added before, each in some batches only; now and then a new one (non-null in the first record).
        const present = [...added.keys()].filter(() => random() < 0.6);
        const adding = random() < 0.25 ? unused.pop() : undefined;
        if (adding !== undefined) added.set(adding, random() < 0.5 ? 'int' : 'text');
        for (const [index, record] of records.entries()) {
          for (const name of present) record.extra[name] = extraValue(random, added.get(name)!);
          if (adding !== undefined) record.extra[adding] = extraValue(random, added.get(adding)!, index === 0);
        }
        if (random() < 0.25) {
          refused++;
          if (adding !== undefined) added.delete(adding);
          const before = tableBytes(table);
          await assert.rejects(write(table, badBatch(random, records), 'upsert'), InputError, `seed ${seed} batch ${batch}`);
          assert.deepEqual(tableBytes(table), before, `seed ${seed} batch ${batch}: a refused batch changed the table`);
          continue;
        }
        const operation = random() < 0.3 ? 'delete' : 'upsert';
        await write(table, records, operation);
        for (const [key, record] of combined(records)) {
          if (operation === 'delete') model.delete(key);
          else model.set(key, record);
        }
        const expected = [...model.values()]
          .sort((a, b) => a.id - b.id)
          .map((record) => ({ ...inputObject(record), ...Object.fromEntries([...added.keys()].map((name) => [name, record.extra[name] ?? null])) }));
        assert.deepEqual(await readBack(table), expected, `seed ${seed} batch ${batch} (${operation} of ${records.length} records)`);
      }
    });
  }

  it('ran the cases it promised', () => {
    assert.equal(batches, SEEDS * BATCHES);
    assert.ok(refused > 0 || SEEDS * BATCHES < 8, 'some batches were refused');
    process.stderr.write(`writer fuzz: ${SEEDS} seeds, ${batches} batches, ${refused} refused as expected\n`);
  });
});
