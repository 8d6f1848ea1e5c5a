/**
 * The committed fixtures (test/fixtures, made by real Hudi with `npm run fixtures:generate`): copies of the tables
 * for tests to read or change, what Spark read from each (expected.json), Hudi's official Avro schemas and the
 * space-curve vectors. Nothing here starts Spark.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExpectedTable, FileGroupEntry } from './fixture-generator.js';
import { REPO_ROOT, tempDir } from './paths.js';

export type { ExpectedTable, FileGroupEntry };
export { REPO_ROOT, tempDir };

export const FIXTURES = join(REPO_ROOT, 'test/fixtures');
export const FIXTURE_TABLES = join(FIXTURES, 'tables');

export type FixtureTableName =
  | 'v6_nonpartitioned'
  | 'v6_simplekeygen_nonhivestyle'
  | 'v6_complexkeygen_hivestyle'
  | 'v6_simplekeygen_hivestyle_no_metafields'
  | 'v6_simplekeygen_nonhivestyle_overwritetable'
  | 'v6_timebasedkeygen_nonhivestyle'
  | 'v6_empty'
  | 'v6_mor_nonpartitioned'
  | 'v6_clustering_pending'
  | 'v6_rollback'
  | 'v5_cow_clustered_pending'
  | 'v8_nonpartitioned';

/** The committed folder of a fixture table: read it, never change it (use {@link fixtureTable} for that). */
export function committedTable(name: FixtureTableName): string {
  return join(FIXTURE_TABLES, name);
}

/** A fresh copy of a fixture table (without its expected.json), named like the fixture, in a temp folder. */
export function fixtureTable(name: FixtureTableName, into: string = tempDir()): string {
  const table = join(into, name);
  cpSync(committedTable(name), table, { recursive: true, filter: (source) => !source.endsWith('/expected.json') });
  return table;
}

/** What Spark read from the table when it was generated, and its timeline and files. */
export function expectedOf(name: FixtureTableName): ExpectedTable {
  return JSON.parse(readFileSync(join(committedTable(name), 'expected.json'), 'utf8')) as ExpectedTable;
}

/** Times of the completed writes (commit, replacecommit, deltacommit), oldest first. */
export function completedWrites(expected: ExpectedTable): string[] {
  return expected.timeline
    .filter((instant) => instant.state === 'COMPLETED' && ['commit', 'replacecommit', 'deltacommit'].includes(instant.action))
    .map((instant) => instant.time);
}

/** The instant time in a data file's name (`<fileId>_<token>_<instant>.parquet`). */
export function instantOfFile(path: string): string {
  const match = /_(\d{17})\.parquet$/.exec(path);
  if (!match) throw new Error(`${path} is not a base file name`);
  return match[1]!;
}

/** The only file group of a partition (fails the test when there are several or none). */
export function onlyFileGroup(expected: ExpectedTable, partitionPath: string): FileGroupEntry {
  const groups = expected.fileGroups.filter((group) => group.partitionPath === partitionPath);
  if (groups.length !== 1) throw new Error(`${expected.name}: ${groups.length} file groups in partition "${partitionPath}"`);
  return groups[0]!;
}

/** org.apache.hudi.avro.model.<name>.getClassSchema() of the Hudi 0.15 bundle, as JSON. */
export function officialAvroSchema(name: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, 'avro', `${name}.avsc.json`), 'utf8')) as unknown;
}

/** A file under test/fixtures/spacecurve, parsed. */
export function spaceCurveFixture(file: 'golden-vectors.json' | 'hilbert-2d-index-tables.json'): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, 'spacecurve', file), 'utf8')) as unknown;
}
