import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { firstTooDeepJsonLine } from '../../lib/engine/json-lines.js';
import { tempDir } from '../helpers/paths.js';

function file(lines: readonly string[], gzip = false): string {
  const path = join(tempDir(), gzip ? 'input.jsonl.gz' : 'input.jsonl');
  const text = `${lines.join('\n')}\n`;
  writeFileSync(path, gzip ? gzipSync(text) : text);
  return path;
}

const structs = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('firstTooDeepJsonLine: nesting counted from the bytes, before DuckDB reads them', () => {
  it('counts the levels below the line object, as a column counts its struct and list levels', async () => {
    assert.equal(await firstTooDeepJsonLine(file([`{"id":1,"v":${structs(3)}}`]), 3), undefined);
    assert.deepEqual(await firstTooDeepJsonLine(file([`{"id":1,"v":${structs(4)}}`]), 3), { line: 1, depth: 4, path: 'v.a.a.a' });
    // A list level counts like a struct level, and is named `[]`.
    assert.deepEqual(await firstTooDeepJsonLine(file(['{"v":[[{"a":[1]}]]}']), 3), { line: 1, depth: 4, path: 'v[][].a' });
  });

  it('names the first line too deep, after shallow ones, and reports its deepest point', async () => {
    const lines = ['{"id":1}', '', `{"id":2,"w":${structs(2)}}`, `{"id":3,"x":1,"y":{"b":${structs(6)}}}`, `{"id":4,"z":${structs(9)}}`];
    assert.deepEqual(await firstTooDeepJsonLine(file(lines), 5), { line: 4, depth: 7, path: 'y.b.a.a.a.a.a' });
  });

  it('does not count brackets inside strings, escaped quotes included', async () => {
    const tricky = '{"s":"{[{[{[\\"{[{[","k\\"{":"]]]}}}","v":{"a":1}}';
    assert.equal(await firstTooDeepJsonLine(file([tricky]), 1), undefined);
    assert.deepEqual(await firstTooDeepJsonLine(file([tricky]), 0), { line: 1, depth: 1, path: 'v' });
  });

  it('reads gzip inputs, and lines far larger than one read', async () => {
    const wide = `{"pad":"${'x'.repeat(3 << 20)}","v":${structs(12)}}`;
    assert.deepEqual(await firstTooDeepJsonLine(file(['{"id":1}', wide], true), 10), { line: 2, depth: 12, path: 'v.a.a.a.a.a.a.a.a.a.a.a' });
    assert.equal(await firstTooDeepJsonLine(file(['{"id":1}', wide]), 12), undefined);
  });

  it('leaves a malformed line to the JSON checks: an unclosed string ends with its line', async () => {
    assert.deepEqual(await firstTooDeepJsonLine(file(['{"s":"unclosed', `{"v":${structs(3)}}`]), 2), { line: 2, depth: 3, path: 'v.a.a' });
  });
});
