/**
 * `hudi-serverless write` (the built CLI, dist/cli.mjs) refuses each bad input of a batch with one line on stderr,
 * exit code 1, and leaves every file under the table as it was, timeline included. The writer's own tests
 * (test/writer/input.test.ts) check the error classes and every variant; this checks the command a user runs.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/paths.js';

const PROPS = [
  'hoodie.table.name=t',
  'hoodie.datasource.write.recordkey.field=id',
  'hoodie.datasource.write.partitionpath.field=dt',
  'hoodie.datasource.write.precombine.field=ts',
  'hoodie.index.bloom.num_entries=100',
];

let files = 0;
function file(dir: string, name: string, text: string): string {
  const path = join(dir, `${files++}-${name}`);
  writeFileSync(path, text);
  return path;
}
const jsonLines = (records: readonly object[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
const record = (values: Record<string, unknown> = {}) => ({ id: 3, name: 'c', ts: 1, dt: 'p1', ...values });

/** Every file under the table with its size, sorted. */
function listing(table: string): string[] {
  if (!existsSync(table)) return [];
  return readdirSync(table, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => `${relative(table, path)} ${statSync(path).size}`)
    .sort();
}

describe('cli write: bad input is refused with one line, nothing written', () => {
  let dir: string;
  let table: string;
  let props: string;

  const write = (input: string, extraProps: readonly string[] = [], target = table) => {
    const propsFile = extraProps.length === 0 ? props : file(dir, 'write.properties', [...PROPS, ...extraProps].join('\n'));
    return runCli(['write', target, '--input', input, '--operation', 'upsert', '--props', propsFile, '--quiet']);
  };

  /** Exit code 1, one stderr line `hudi-serverless write: <table's input or file>: <problem>`, no file changed. */
  function assertRefused(input: string, message: RegExp, extraProps: readonly string[] = [], target = table): void {
    const before = listing(target);
    const result = write(input, extraProps, target);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, `one line: ${result.stderr}`);
    assert.match(lines[0]!, /^hudi-serverless write: /);
    assert.match(lines[0]!, message);
    assert.doesNotMatch(lines[0]!, /TypeError|undefined|\n\s+at /);
    assert.deepEqual(listing(target), before, 'no file under the table was added, removed or changed');
  }

  before(() => {
    dir = tempDir('cli-write-input-');
    table = join(dir, 't');
    props = file(dir, 'write.properties', PROPS.join('\n'));
    const created = write(file(dir, 'seed.jsonl', jsonLines([record({ id: 1 }), record({ id: 2, dt: 'p2' })])));
    assert.equal(created.code, 0, created.stderr);
  });

  const partitionCases: [string, RegExp][] = [
    ['.hidden', /partition path "\.hidden" has a folder "\.hidden" starting with "\.", which readers skip as hidden/],
    ['.hoodie', /partition path "\.hoodie" has a folder "\.hoodie" starting with "\."/],
    ['..', /partition path "\.\." has a folder "\.\." starting with "\."/],
    ['../../escape', /folder levels for 1 partition field\(s\) \(dt\)/],
    ['a/b', /folder levels for 1 partition field\(s\) \(dt\): a partition value holds "\/"/],
    ['x*y', /holds the glob character "\*", which DuckDB would expand/],
    ['line\nbreak', /holds the control character U\+000A/],
  ];
  for (const [value, message] of partitionCases) {
    it(`refuses the partition value ${JSON.stringify(value)}`, () => {
      assertRefused(
        file(dir, 'bad.jsonl', jsonLines([record({ dt: value })])),
        new RegExp(`1 record\\(s\\) cannot be written; the first, row 1: .*(${message.source})`),
      );
    });
  }

  it('refuses a lossy key, a null ordering value, missing columns, an input without the precombine column', () => {
    assertRefused(
      file(dir, 'fraction.jsonl', jsonLines([record({ id: 1.5 })])),
      /row 1, column "id": 1\.5 \(DOUBLE\) does not fit the table's type BIGINT exactly \(it would be stored as 2\)/,
    );
    assertRefused(file(dir, 'null-ts.jsonl', jsonLines([record({ id: 1, ts: null })])), /Ordering value is null/);
    assertRefused(file(dir, 'missing.jsonl', jsonLines([{ id: 1, ts: 2, dt: 'p1' }])), /input lacks table column\(s\) name, which would be stored as NULL/);
    assertRefused(file(dir, 'missing-ts.jsonl', jsonLines([{ id: 1, name: 'x', dt: 'p1' }])), /input lacks table column\(s\) ts/);
    assertRefused(file(dir, 'missing-ts.jsonl', jsonLines([{ id: 1, name: 'x', dt: 'p1' }])), /Ordering value is null/, [
      'hoodie.write.set.null.for.missing.columns=true',
    ]);
  });

  it('reads --input as one literal path: a[1].jsonl is that file, a*.jsonl is refused though files match it', () => {
    const inputs = tempDir('cli-write-literal-');
    writeFileSync(join(inputs, 'a[1].jsonl'), jsonLines([record({ id: 21 })]));
    writeFileSync(join(inputs, 'a1.jsonl'), jsonLines([record({ id: 22 })]));
    assertRefused(join(inputs, 'a*.jsonl'), /a\*\.jsonl: no input file has this name \(the path is read as it is spelled, never as a pattern\)/);
    const literal = join(tempDir('cli-write-literal-table-'), 't');
    const result = write(join(inputs, 'a[1].jsonl'), [], literal);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).inserted, 1);
    const read = runCli(['read', literal]);
    assert.deepEqual(
      read.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).id),
      [21],
    );
  });

  it('refuses column names a Hudi table cannot hold and booleans into a number column', () => {
    assertRefused(file(dir, 'case.jsonl', jsonLines([record({ Name: 'x' })])), /"name" and "Name" differ only in case/);
    assertRefused(file(dir, 'avro.jsonl', jsonLines([record({ 'a.b': 1 })])), /"a\.b" is not a valid Avro name/);
    assertRefused(file(dir, 'meta.jsonl', jsonLines([record({ _HOODIE_COMMIT_TIME: 'x' })])), /"_HOODIE_COMMIT_TIME" is Hudi's meta field/);
    assertRefused(
      file(dir, 'bool.jsonl', jsonLines([record({ ts: true })])),
      /column "ts": true \(BOOLEAN\) does not fit the table's type BIGINT exactly \(it would be stored as 1\)/,
    );
  });

  it('refuses an empty input with allow.empty.commit=false, and never creates a table from one', () => {
    const empty = file(dir, 'empty.jsonl', '');
    assertRefused(empty, /the input has no records and hoodie\.allow\.empty\.commit=false/, ['hoodie.allow.empty.commit=false']);
    const fresh = join(dir, 'fresh');
    assertRefused(empty, /the input has no records, so there is nothing to create the table from/, [], fresh);
    assert.equal(existsSync(fresh), false);
  });

  it('refuses a table whose hoodie.properties is truncated, instead of starting a second partition layout', () => {
    const copy = join(tempDir('cli-write-truncated-'), 't');
    const hiveStyle = ['hoodie.datasource.write.hive_style_partitioning=true'];
    assert.equal(write(file(dir, 'seed.jsonl', jsonLines([record({ id: 1 })])), hiveStyle, copy).code, 0);
    assert.deepEqual(
      readdirSync(copy).filter((name) => !name.startsWith('.')),
      ['dt=p1'],
    );
    const properties = join(copy, '.hoodie/hoodie.properties');
    const text = readFileSync(properties, 'utf8');
    writeFileSync(properties, text.slice(0, text.indexOf('\n', text.indexOf('hoodie.table.partition.fields=')) + 1));
    assertRefused(file(dir, 'ok.jsonl', jsonLines([record({ id: 5 })])), /hoodie\.properties is corrupt: hoodie\.table\.checksum is missing/, hiveStyle, copy);
  });

  it('with partitionpath.urlencode=true, "/" and glob characters are escaped as Hudi escapes them, and written', () => {
    const encoded = join(tempDir('cli-write-urlencode-'), 't');
    const result = write(
      file(dir, 'encoded.jsonl', jsonLines([record({ id: 1, dt: 'a/b' }), record({ id: 2, dt: 'x*y' })])),
      ['hoodie.datasource.write.partitionpath.urlencode=true'],
      encoded,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      readdirSync(encoded)
        .filter((name) => !name.startsWith('.'))
        .sort(),
      ['a%2Fb', 'x%2Ay'],
    );
  });
});
