/**
 * The committed fixtures still are what Hudi makes: every fixture is regenerated into a temp folder with the
 * harness (one Spark for the file) and compared with test/fixtures. Instant times, file ids and write tokens differ
 * from run to run, so those are compared by shape: rows (all columns, record keys and partition paths exactly, the
 * commit-time columns as "the k-th instant"), the timeline's sequence of actions and states, hoodie.properties
 * except its date comments, and the number of partitions, file groups and slices. Avro schemas and space-curve
 * vectors are compared byte for byte.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { type ExpectedTable, generateAvroSchemas, generateSpaceCurves, generateTables, TABLE_NAMES } from '../helpers/fixture-generator.js';
import { FIXTURES, tempDir } from '../helpers/fixtures.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';

let hudi: HudiHarness;
const fresh = tempDir('fixtures-regenerated-');

before(async () => {
  hudi = await startHudi();
});

after(async () => {
  await hudi?.close();
});

function filesOf(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

function expectedIn(root: string, name: string): ExpectedTable {
  return JSON.parse(readFileSync(join(root, 'tables', name, 'expected.json'), 'utf8')) as ExpectedTable;
}

/** Instant times as their rank on the table's timeline, file names as their file group's rank. */
function normalizer(expected: ExpectedTable): (value: unknown) => unknown {
  const times = new Map(expected.timeline.map((instant, index) => [instant.time, `<instant ${index}>`]));
  const groups = new Map(expected.fileGroups.map((group, index) => [group.fileId, index]));
  const replace = (text: string): string => {
    let out = text;
    for (const [time, token] of times) out = out.replaceAll(time, token);
    // Write tokens (<partition>-<stage>-<attempt>) depend on how many Spark jobs ran before.
    return out.replace(/([0-9a-f-]{36}-\d+)_\d+-\d+-\d+_/g, (_, fileId: string) => `<file group ${groups.get(fileId) ?? '?'}>_<token>_`);
  };
  const visit = (value: unknown): unknown => {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) return value.map(visit);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v)]));
    return value;
  };
  return visit;
}

/** File groups are ordered by partition, then by their first instant and row count (file ids are random). */
function shapeOf(expected: ExpectedTable) {
  const times = expected.timeline.map((instant) => instant.time);
  const instantIndex = (file: string) => times.findIndex((time) => file.includes(time));
  return expected.fileGroups
    .map((group) => ({ partitionPath: group.partitionPath, slices: group.files.map(instantIndex) }))
    .sort((a, b) => (a.partitionPath + JSON.stringify(a.slices) < b.partitionPath + JSON.stringify(b.slices) ? -1 : 1));
}

function rowsShape(expected: ExpectedTable, rows: readonly Row[] | undefined): string[] {
  const normalize = normalizer(expected);
  // File ids are random: a row keeps which of its table's rows share its file, not the file's rank.
  return canonicalRows(
    (rows ?? []).map((row) => {
      const out = normalize(row) as Row;
      if (typeof out['_hoodie_file_name'] === 'string') out['_hoodie_file_name'] = out['_hoodie_file_name'].replace(/<file group \d+>/, '<file group>');
      return out;
    }),
  );
}

function propertiesWithoutDates(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .sort();
}

describe('regenerated fixtures match the committed ones', () => {
  it('Avro schemas: byte for byte', async () => {
    await generateAvroSchemas(hudi, join(fresh, 'avro'));
    const names = filesOf(join(FIXTURES, 'avro'));
    assert.deepEqual(filesOf(join(fresh, 'avro')), names);
    for (const name of names) assert.equal(readFileSync(join(fresh, 'avro', name), 'utf8'), readFileSync(join(FIXTURES, 'avro', name), 'utf8'), name);
  });

  it('space-curve vectors: byte for byte', async () => {
    await generateSpaceCurves(hudi, join(fresh, 'spacecurve'));
    const names = filesOf(join(FIXTURES, 'spacecurve'));
    assert.deepEqual(filesOf(join(fresh, 'spacecurve')), names);
    for (const name of names)
      assert.equal(readFileSync(join(fresh, 'spacecurve', name), 'utf8'), readFileSync(join(FIXTURES, 'spacecurve', name), 'utf8'), name);
  });

  it('tables: rows, timeline shape, hoodie.properties, partitions / file groups / slices', async () => {
    assert.deepEqual(readdirSync(join(FIXTURES, 'tables')).sort(), [...TABLE_NAMES].sort());
    await generateTables(hudi, join(fresh, 'tables'));
    for (const name of TABLE_NAMES) {
      const committed = expectedIn(FIXTURES, name);
      const regenerated = expectedIn(fresh, name);
      assert.equal(regenerated.description, committed.description, name);
      assert.equal(regenerated.tableVersion, committed.tableVersion, name);
      assert.deepEqual(
        regenerated.timeline.map((i) => [i.action, i.state]),
        committed.timeline.map((i) => [i.action, i.state]),
        `${name}: timeline`,
      );
      assert.deepEqual(shapeOf(regenerated), shapeOf(committed), `${name}: file groups and slices`);
      assert.deepEqual(rowsShape(regenerated, regenerated.snapshot?.rows), rowsShape(committed, committed.snapshot?.rows), `${name}: snapshot rows`);
      assert.deepEqual(Object.keys(regenerated.asOf ?? {}).length, Object.keys(committed.asOf ?? {}).length, `${name}: as-of reads`);
      const asOf = (expected: ExpectedTable) => Object.entries(expected.asOf ?? {}).map(([, rows]) => rowsShape(expected, rows.rows));
      assert.deepEqual(asOf(regenerated), asOf(committed), `${name}: as-of rows`);
      assert.deepEqual(normalizer(regenerated)(regenerated.facts ?? {}), normalizer(committed)(committed.facts ?? {}), `${name}: facts`);
      const properties = (root: string) => propertiesWithoutDates(readFileSync(join(root, 'tables', name, '.hoodie/hoodie.properties'), 'utf8'));
      assert.deepEqual(properties(fresh), properties(FIXTURES), `${name}: hoodie.properties`);
      // The same files, up to instant times, file ids and write tokens.
      const files = (root: string, expected: ExpectedTable) =>
        filesOf(join(root, 'tables', name))
          .map((file) => String(normalizer(expected)(file)).replace(/<file group \d+>/, '<file group>'))
          .sort();
      assert.deepEqual(files(fresh, regenerated), files(FIXTURES, committed), `${name}: files`);
    }
  });
});
