/**
 * Snapshot reads of the Hudi-written fixture tables (test/fixtures/tables), through the built CLI: the sample rows as
 * literals, and every column as Spark read it when the fixture was generated (expected.json).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { committedTable, completedWrites, expectedOf, fixtureTable, onlyFileGroup, tempDir } from '../helpers/fixtures.js';
import { canonicalRows, withoutMetaColumns } from '../helpers/hudi.js';
import { tableFiles } from '../helpers/paths.js';

type Triple = [number, string, boolean];
const LATEST_FOUR: Triple[] = [
  [1, 'Alice', false],
  [2, 'Bob', false],
  [3, 'Carol', true],
  [4, 'Diana', true],
];

function triples(stdout: string): Triple[] {
  return jsonLines(stdout)
    .map((row) => [row['id'] as number, row['name'] as string, row['isActive'] as boolean] as Triple)
    .sort((a, b) => a[0] - b[0]);
}

function readTable(table: string, ...flags: string[]) {
  const result = runCli(['read', table, ...flags]);
  assert.equal(result.code, 0, result.stderr);
  return result;
}

/** Our rows and Spark's as sorted canonical strings. */
function sameRows(ours: readonly Record<string, unknown>[], spark: readonly Row[] | undefined): void {
  assert.ok(spark, 'Spark read the fixture when it was generated');
  // Spark leaves the meta columns out of tables without them (hoodie.populate.meta.fields=false).
  const sparkHasMeta = spark.some((row) => '_hoodie_record_key' in row);
  const comparable = sparkHasMeta ? (ours as Row[]) : withoutMetaColumns(ours as Row[]);
  assert.deepEqual(canonicalRows(comparable), canonicalRows(spark));
}

describe('read: v6 copy-on-write fixtures', () => {
  for (const name of [
    'v6_nonpartitioned',
    'v6_simplekeygen_nonhivestyle',
    'v6_complexkeygen_hivestyle',
    'v6_simplekeygen_hivestyle_no_metafields',
    'v6_timebasedkeygen_nonhivestyle',
  ] as const) {
    it(`${name}: the latest four rows, every column as Spark read them`, () => {
      const table = committedTable(name);
      assert.deepEqual(triples(readTable(table).stdout), LATEST_FOUR);
      const ours = jsonLines(readTable(table, '--meta').stdout);
      if (name === 'v6_timebasedkeygen_nonhivestyle') {
        // Hudi's Spark reader gives the partition column of a timestamp-based key generator as the partition path
        // ("2023/04/01/12"); the files (and our reader) hold the written value.
        const spark = expectedOf(name).snapshot!.rows;
        assert.deepEqual(spark.map((row) => row['ts_str']).sort(), ['2023/04/01/12', '2023/04/02/12', '2023/04/03/12', '2023/04/04/13']);
        assert.deepEqual(ours.map((row) => row['ts_str']).sort(), [
          '2023-04-01T12:01:00.123Z',
          '2023-04-02T12:01:00.123Z',
          '2023-04-03T12:01:00.123Z',
          '2023-04-04T13:01:00.123Z',
        ]);
        const withoutTs = (rows: readonly Record<string, unknown>[]) => rows.map(({ ts_str: _ts, ...rest }) => rest);
        sameRows(withoutTs(ours), withoutTs(spark) as Row[]);
      } else {
        sameRows(ours, expectedOf(name).snapshot?.rows);
      }
    });
  }

  it('v6_simplekeygen_nonhivestyle as of each commit, as Spark read it', () => {
    const table = committedTable('v6_simplekeygen_nonhivestyle');
    const first = runCli(['timeline', table, '--json']);
    const times = jsonLines(first.stdout)
      .filter((i) => i['state'] === 'COMPLETED')
      .map((i) => i['time'] as string);
    const expected = expectedOf('v6_simplekeygen_nonhivestyle');
    assert.deepEqual(times, completedWrites(expected));
    assert.deepEqual(triples(readTable(table, '--as-of', times[0]!).stdout), [
      [1, 'Alice', true],
      [2, 'Bob', false],
      [3, 'Carol', true],
    ]);
    for (const time of times) sameRows(jsonLines(readTable(table, '--meta', '--as-of', time).stdout), expected.asOf?.[time]?.rows);
  });

  it('v6_simplekeygen_nonhivestyle_overwritetable: the insert_overwrite_table replacecommit hides every earlier file group', () => {
    const table = committedTable('v6_simplekeygen_nonhivestyle_overwritetable');
    const expected = expectedOf('v6_simplekeygen_nonhivestyle_overwritetable');
    const [c1, c2, c3] = completedWrites(expected);
    assert.ok(c1 && c2 && c3);
    assert.equal(expected.timeline.find((instant) => instant.time === c3)?.action, 'replacecommit');
    assert.deepEqual(triples(readTable(table).stdout), [[4, 'Diana', false]]);
    // As of c1 and c2 (before the replacecommit).
    assert.deepEqual(triples(readTable(table, '--as-of', c1).stdout), [
      [1, 'Alice', true],
      [2, 'Bob', false],
      [3, 'Carol', true],
    ]);
    assert.deepEqual(triples(readTable(table, '--as-of', c2).stdout), LATEST_FOUR);
    for (const time of [c1, c2, c3]) sameRows(jsonLines(readTable(table, '--meta', '--as-of', time).stdout), expected.asOf?.[time]?.rows);
    const files = jsonLines(runCli(['files', table, '--json']).stdout);
    const overwriting = expected.fileGroups.filter((group) => group.files.some((file) => file.endsWith(`_${c3}.parquet`)));
    assert.equal(overwriting.length, 1);
    assert.deepEqual(
      files.map((f) => f['fileId']),
      [overwriting[0]!.fileId],
    );
  });

  it('v6_empty reads 0 rows', () => {
    const result = readTable(committedTable('v6_empty'));
    assert.equal(result.stdout, '');
    assert.deepEqual(expectedOf('v6_empty').snapshot?.rows, []);
  });

  it('every column type in JSONL: decimals as strings, ISO timestamps, dates, base64 binary, nested JSON', () => {
    const table = committedTable('v6_simplekeygen_nonhivestyle_overwritetable');
    const [row] = jsonLines(readTable(table, '--meta').stdout);
    assert.ok(row);
    assert.equal(row['_hoodie_commit_time'], completedWrites(expectedOf('v6_simplekeygen_nonhivestyle_overwritetable'))[2]);
    assert.equal(row['_hoodie_record_key'], '4');
    assert.equal(row['_hoodie_partition_path'], '30');
    assert.equal(row['decimalField'], '65432.12345');
    assert.equal(row['dateField'], '2023-04-04');
    assert.match(String(row['timestampField']), /^2023-04-04T20:04:00(\.0+)?Z$/);
    assert.equal(row['binaryField'], Buffer.from('new binary data').toString('base64'));
    assert.equal(row['longField'], 987654321);
    assert.deepEqual(row['arrayField'], [
      { arr_struct_f1: 'orange', arr_struct_f2: 900 },
      { arr_struct_f1: 'gray', arr_struct_f2: 1000 },
    ]);
    assert.deepEqual(row['structField'], { field1: 'Diana', field2: 50, child_struct: { child_field1: 987.654, child_field2: true } });
    assert.equal(typeof row['mapField'], 'object');
    assert.deepEqual(Object.keys(row['mapField'] as object).sort(), ['key7', 'key8']);
    assert.deepEqual(Object.keys(row).slice(0, 5), [
      '_hoodie_commit_time',
      '_hoodie_commit_seqno',
      '_hoodie_record_key',
      '_hoodie_partition_path',
      '_hoodie_file_name',
    ]);
  });

  it('without --meta, no _hoodie_ columns; --format table prints a header', () => {
    const table = committedTable('v6_nonpartitioned');
    const [row] = jsonLines(readTable(table).stdout);
    assert.ok(row && !Object.keys(row).some((k) => k.startsWith('_hoodie_')));
    const text = readTable(table, '--format', 'table').stdout;
    assert.match(text.split('\n')[0]!, /\bid\b.*\bname\b/);
    assert.equal(
      text
        .trim()
        .split('\n')
        .filter((l) => /Alice|Bob|Carol|Diana/.test(l)).length,
      4,
    );
  });

  it('no_metafields: --meta prints no _hoodie_ columns, as Spark and hudi-rs read it (the files hold only placeholders)', () => {
    const table = committedTable('v6_simplekeygen_hivestyle_no_metafields');
    const rows = jsonLines(readTable(table, '--meta').stdout);
    assert.equal(rows.length, 4);
    for (const row of rows)
      assert.deepEqual(
        Object.keys(row).filter((k) => k.startsWith('_hoodie_')),
        [],
      );
  });
});

describe('read: older tables', () => {
  it('table version 5 (downgraded by Hudi), hive-style 2 levels, a completed clustering and a pending write: rows as Spark read them', () => {
    const table = committedTable('v5_cow_clustered_pending');
    const expected = expectedOf('v5_cow_clustered_pending');
    assert.equal(expected.tableVersion, 5);
    assert.ok(expected.timeline.some((instant) => instant.action === 'replacecommit' && instant.state === 'COMPLETED'));
    assert.ok(expected.timeline.some((instant) => instant.action === 'commit' && instant.state !== 'COMPLETED'));
    const columns = (r: Record<string, unknown>) => [
      r['_hoodie_partition_path'],
      r['id'],
      r['name'],
      r['ts'],
      r['dt'],
      r['hh'],
      r['_hoodie_commit_seqno'],
      r['_hoodie_record_key'],
    ];
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a['id']) - Number(b['id']);
    const rows = jsonLines(readTable(table, '--meta').stdout).sort(byId);
    assert.deepEqual(
      rows.map((r) => [r['id'], r['name'], r['ts'], r['_hoodie_partition_path']]),
      [
        [1, 'a1', 2000, 'dt=2021-12-09/hh=10'],
        [2, 'a2', 1000, 'dt=2021-12-09/hh=11'],
        [3, 'a3', 1000, 'dt=2021-12-09/hh=11'],
      ],
    );
    assert.deepEqual(rows.map(columns), [...expected.snapshot!.rows].sort(byId).map(columns));
    sameRows(rows, expected.snapshot?.rows);
  });
});

describe('read: refusals and bad input', () => {
  for (const name of ['v8_nonpartitioned'] as const) {
    it(`${name} (no instants) reads 0 rows; clean finds nothing due and writes nothing; compact refuses it in one line`, () => {
      const read = runCli(['read', committedTable(name)]);
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stdout, '');
      const table = fixtureTable(name);
      const before = tableFiles(table);
      // The cleaner runs on version 8 copy-on-write tables (test/interop/hudi-1x-services.test.ts).
      const cleaned = runCli(['clean', table]);
      assert.equal(cleaned.code, 0, cleaned.stderr);
      assert.match(cleaned.stdout, /no clean is due/);
      assert.deepEqual(tableFiles(table), before);
      const compacted = runCli(['compact', table, '--mode', 'scheduleAndExecute']);
      assert.notEqual(compacted.code, 0);
      assert.equal(compacted.stderr.trim().split('\n').length, 1, 'one line, no stack');
      assert.deepEqual(tableFiles(table), before);
    });
  }

  it('MOR tables are read (snapshot and read-optimized) as Spark read them; a clean dry run plans them', () => {
    const table = committedTable('v6_mor_nonpartitioned');
    sameRows(jsonLines(readTable(table, '--meta').stdout), expectedOf('v6_mor_nonpartitioned').snapshot?.rows);
    // Both commits wrote base files, so the read-optimized view is the snapshot.
    sameRows(jsonLines(readTable(table, '--meta', '--query-type', 'read_optimized').stdout), expectedOf('v6_mor_nonpartitioned').snapshot?.rows);
    const result = runCli(['clean', fixtureTable('v6_mor_nonpartitioned'), '--dry-run']);
    assert.equal(result.code, 0, result.stderr);
  });

  it('a path with no .hoodie', () => {
    const result = runCli(['read', tempDir()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /not a Hudi table: no \.hoodie\/hoodie\.properties/);
  });

  it('a corrupt hoodie.properties', () => {
    const table = fixtureTable('v6_nonpartitioned');
    const file = join(table, '.hoodie/hoodie.properties');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/hoodie\.table\.name=.*/, 'hoodie.table.name=renamed_by_hand'));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /hoodie\.properties: hoodie\.properties is corrupt: hoodie\.table\.checksum .* does not match/);
    writeFileSync(file, Buffer.from([0, 1, 2, 3, 255, 254]));
    const garbage = runCli(['read', table]);
    assert.match(garbage.stderr, /hoodie\.properties: hoodie\.properties is corrupt/);
  });

  it('an unknown table version', () => {
    const table = fixtureTable('v6_nonpartitioned');
    const file = join(table, '.hoodie/hoodie.properties');
    writeFileSync(file, readFileSync(file, 'utf8').replace('hoodie.table.version=6', 'hoodie.table.version=42'));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /table version 42 is not supported/);
  });

  it('a truncated commit instant file names the file', () => {
    const table = fixtureTable('v6_simplekeygen_nonhivestyle_overwritetable');
    const replace = completedWrites(expectedOf('v6_simplekeygen_nonhivestyle_overwritetable'))[2]!;
    const file = join(table, `.hoodie/${replace}.replacecommit`);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 200));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, new RegExp(`${replace}\\.replacecommit: commit metadata is not valid JSON`));
  });

  it('a truncated Avro instant file names the file', () => {
    const table = fixtureTable('v6_nonpartitioned');
    // A pending clustering whose plan file (one Hudi wrote) was cut short.
    const clustering = expectedOf('v6_clustering_pending').facts?.['clusteringInstant'];
    const plan = readFileSync(join(committedTable('v6_clustering_pending'), `.hoodie/${clustering}.replacecommit.requested`));
    writeFileSync(join(table, '.hoodie/20991231000000000.replacecommit.requested'), plan.subarray(0, plan.length / 2));
    const result = runCli(['files', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /20991231000000000\.replacecommit\.requested/);
  });

  it('an unreadable Parquet file names the file', () => {
    const table = fixtureTable('v6_nonpartitioned');
    const latest = onlyFileGroup(expectedOf('v6_nonpartitioned'), '').files.at(-1)!;
    const file = join(table, latest);
    writeFileSync(file, readFileSync(file).subarray(0, 300));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.ok(result.stderr.includes(latest), result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    const verbose = runCli(['read', table, '--verbose']);
    assert.ok(verbose.stderr.trim().split('\n').length > 1, 'stack trace with --verbose');
  });

  it('unknown command and missing arguments', () => {
    assert.equal(runCli(['frobnicate']).code, 2);
    const missing = runCli(['read']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /missing <table>/);
  });
});
