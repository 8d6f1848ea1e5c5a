/**
 * Snapshot reads of the real Hudi-written fixture tables (MANIFEST.md's expected rows), through the built CLI.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, jsonLines } from './helpers/cli.js';
import { HUDI_FIXTURES, tempDir, unzipSampleTable } from './helpers/fixtures.js';

type Triple = [number, string, boolean];
const LATEST_FOUR: Triple[] = [[1, 'Alice', false], [2, 'Bob', false], [3, 'Carol', true], [4, 'Diana', true]];

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

describe('read: v6 copy-on-write fixtures', () => {
  for (const name of ['v6_nonpartitioned', 'v6_simplekeygen_nonhivestyle', 'v6_complexkeygen_hivestyle', 'v6_simplekeygen_hivestyle_no_metafields', 'v6_timebasedkeygen_nonhivestyle']) {
    it(`${name}: the latest four rows`, () => {
      const table = unzipSampleTable(`cow/${name}.zip`);
      assert.deepEqual(triples(readTable(table).stdout), LATEST_FOUR);
    });
  }

  it('v6_simplekeygen_nonhivestyle as of the first commit', () => {
    const table = unzipSampleTable('cow/v6_simplekeygen_nonhivestyle.zip');
    const first = runCli(['timeline', table, '--json']);
    const times = jsonLines(first.stdout).filter((i) => i['state'] === 'COMPLETED').map((i) => i['time'] as string);
    assert.ok(times.length >= 2);
    assert.deepEqual(triples(readTable(table, '--as-of', times[0]!).stdout), [[1, 'Alice', true], [2, 'Bob', false], [3, 'Carol', true]]);
  });

  it('v6_simplekeygen_nonhivestyle_overwritetable: the insert_overwrite_table replacecommit hides every earlier file group', () => {
    const table = unzipSampleTable('cow/v6_simplekeygen_nonhivestyle_overwritetable.zip');
    assert.deepEqual(triples(readTable(table).stdout), [[4, 'Diana', false]]);
    // As of c1 and c2 (before the replacecommit).
    assert.deepEqual(triples(readTable(table, '--as-of', '20240707001301554').stdout), [[1, 'Alice', true], [2, 'Bob', false], [3, 'Carol', true]]);
    assert.deepEqual(triples(readTable(table, '--as-of', '20240707001302376').stdout), LATEST_FOUR);
    const files = jsonLines(runCli(['files', table, '--json']).stdout);
    assert.deepEqual(files.map((f) => f['fileId']), ['ebcb261d-62d3-4895-90ec-5b3c9622dff4-0']);
  });

  it('v6_empty reads 0 rows', () => {
    const result = readTable(unzipSampleTable('cow/v6_empty.zip'));
    assert.equal(result.stdout, '');
  });

  it('every column type in JSONL: decimals as strings, ISO timestamps, dates, base64 binary, nested JSON', () => {
    const table = unzipSampleTable('cow/v6_simplekeygen_nonhivestyle_overwritetable.zip');
    const [row] = jsonLines(readTable(table, '--meta').stdout);
    assert.ok(row);
    assert.equal(row['_hoodie_commit_time'], '20240707001303088');
    assert.equal(row['_hoodie_record_key'], '4');
    assert.equal(row['_hoodie_partition_path'], '30');
    assert.equal(row['decimalField'], '65432.12345');
    assert.equal(row['dateField'], '2023-04-04');
    assert.match(String(row['timestampField']), /^2023-04-04T20:04:00(\.0+)?Z$/);
    assert.equal(row['binaryField'], Buffer.from('new binary data').toString('base64'));
    assert.equal(row['longField'], 987654321);
    assert.deepEqual(row['arrayField'], [{ arr_struct_f1: 'orange', arr_struct_f2: 900 }, { arr_struct_f1: 'gray', arr_struct_f2: 1000 }]);
    assert.deepEqual(row['structField'], { field1: 'Diana', field2: 50, child_struct: { child_field1: 987.654, child_field2: true } });
    assert.equal(typeof row['mapField'], 'object');
    assert.deepEqual(Object.keys(row['mapField'] as object).sort(), ['key7', 'key8']);
    assert.deepEqual(Object.keys(row).slice(0, 5), ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name']);
  });

  it('without --meta, no _hoodie_ columns; --format table prints a header', () => {
    const table = unzipSampleTable('cow/v6_nonpartitioned.zip');
    const [row] = jsonLines(readTable(table).stdout);
    assert.ok(row && !Object.keys(row).some((k) => k.startsWith('_hoodie_')));
    const text = readTable(table, '--format', 'table').stdout;
    assert.match(text.split('\n')[0]!, /\bid\b.*\bname\b/);
    assert.equal(text.trim().split('\n').filter((l) => /Alice|Bob|Carol|Diana/.test(l)).length, 4);
  });

  it('no_metafields: --meta prints no _hoodie_ columns, as Spark and hudi-rs read it (the files hold only placeholders)', () => {
    const table = unzipSampleTable('cow/v6_simplekeygen_hivestyle_no_metafields.zip');
    const rows = jsonLines(readTable(table, '--meta').stdout);
    assert.equal(rows.length, 4);
    for (const row of rows) assert.deepEqual(Object.keys(row).filter((k) => k.startsWith('_hoodie_')), []);
  });
});

describe('read: older and real-world tables', () => {
  it('trino hudi_cow_pt_tbl (table version 5, hive-style 2 levels)', () => {
    const dir = tempDir();
    cpSync(join(HUDI_FIXTURES, 'tables/trino/hudi_cow_pt_tbl'), join(dir, 't'), { recursive: true });
    const rows = jsonLines(readTable(join(dir, 't'), '--meta').stdout).sort((a, b) => Number(a['id']) - Number(b['id']));
    assert.deepEqual(rows.map((r) => [r['_hoodie_partition_path'], r['id'], r['name'], r['ts'], r['dt'], r['hh'], r['_hoodie_commit_seqno'], r['_hoodie_record_key']]), [
      ['dt=2021-12-09/hh=10', 1, 'a1', 1000, '2021-12-09', '10', '20220906063435640_0_0', 'id:1'],
      ['dt=2021-12-09/hh=11', 2, 'a2', 1000, '2021-12-09', '11', '20220906063456550_0_0', 'id:2'],
    ]);
  });
});

describe('read: refusals and bad input', () => {
  for (const name of ['v8_nonpartitioned', 'v8_empty']) {
    it(`${name} is refused naming the table version`, () => {
      const result = runCli(['read', unzipSampleTable(`cow/${name}.zip`)]);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /table version 8/);
      assert.equal(result.stderr.trim().split('\n').length, 1, 'one line, no stack');
    });
  }

  it('MOR tables are refused naming the table type', () => {
    const result = runCli(['read', unzipSampleTable('mor/parquet/v6_nonpartitioned.zip')]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /MERGE_ON_READ/);
  });

  it('a path with no .hoodie', () => {
    const result = runCli(['read', tempDir()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /not a Hudi table: no \.hoodie\/hoodie\.properties/);
  });

  it('a corrupt hoodie.properties', () => {
    const table = unzipSampleTable('cow/v6_nonpartitioned.zip');
    const file = join(table, '.hoodie/hoodie.properties');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/hoodie\.table\.name=.*/, 'hoodie.table.name=renamed_by_hand'));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /hoodie\.properties: hoodie\.table\.checksum .* does not match/);
    writeFileSync(file, Buffer.from([0, 1, 2, 3, 255, 254]));
    const garbage = runCli(['read', table]);
    assert.match(garbage.stderr, /hoodie\.properties: hoodie\.properties is corrupt/);
  });

  it('an unknown table version', () => {
    const table = unzipSampleTable('cow/v6_nonpartitioned.zip');
    const file = join(table, '.hoodie/hoodie.properties');
    writeFileSync(file, readFileSync(file, 'utf8').replace('hoodie.table.version=6', 'hoodie.table.version=42'));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /table version 42 is not supported/);
  });

  it('a truncated commit instant file names the file', () => {
    const table = unzipSampleTable('cow/v6_simplekeygen_nonhivestyle_overwritetable.zip');
    const file = join(table, '.hoodie/20240707001303088.replacecommit');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 200));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /20240707001303088\.replacecommit: commit metadata is not valid JSON/);
  });

  it('a truncated Avro instant file names the file', () => {
    const table = unzipSampleTable('cow/v6_nonpartitioned.zip');
    // A pending clustering whose plan file was cut short.
    const plan = readFileSync(join(HUDI_FIXTURES, 'tables/kazdy-HUDI-8259/testtable/.hoodie/20230329224554584.replacecommit.requested'));
    writeFileSync(join(table, '.hoodie/20991231000000000.replacecommit.requested'), plan.subarray(0, plan.length / 2));
    const result = runCli(['files', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /20991231000000000\.replacecommit\.requested/);
  });

  it('an unreadable Parquet file names the file', () => {
    const table = unzipSampleTable('cow/v6_nonpartitioned.zip');
    const file = join(table, 'a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906.parquet');
    writeFileSync(file, readFileSync(file).subarray(0, 300));
    const result = runCli(['read', table]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /a079bdb3-731c-4894-b855-abfcd6921007-0_0-203-274_20240418173551906\.parquet/);
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
