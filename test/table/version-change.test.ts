/**
 * A run that opened a table at one version never commits at another: when hoodie.properties says another version or
 * timeline layout under the lock (a Hudi 1.x writer upgraded the table in place, or a downgrade ran), the reload
 * every commit path makes refuses with TableVersionChangedError, and the write leaves no completed instant.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TableVersionChangedError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import { formatJavaProperties, parseJavaProperties } from '../../lib/table/properties.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/fixtures.js';

const PROPS = new Map([
  ['hoodie.table.name', 't'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.metadata.enable', 'false'],
]);

function input(rows: readonly object[]): string {
  const file = join(tempDir(), 'input.jsonl');
  writeFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  return file;
}

/** What an in-place upgrade changes first in hoodie.properties (the timeline move aside). */
function markUpgraded(table: string, version: number): void {
  const path = join(table, '.hoodie/hoodie.properties');
  const properties = parseJavaProperties(readFileSync(path, 'utf8'));
  properties.set('hoodie.table.version', String(version));
  properties.set('hoodie.timeline.layout.version', '2');
  writeFileSync(path, formatJavaProperties(properties));
}

describe('a table whose version changes while a run works on it', () => {
  it('reload refuses it, naming both versions', async () => {
    const table = join(tempDir(), 't');
    await writeBatch(openStorage(table), { input: { file: input([{ id: 1, ts: 1, dt: 'a' }]), format: 'jsonl' }, operation: 'insert', properties: PROPS });
    const opened = await HudiTable.open(openStorage(table));
    markUpgraded(table, 8);
    await assert.rejects(opened.reload(), (error: unknown) => {
      assert.ok(error instanceof TableVersionChangedError, String(error));
      assert.deepEqual(
        [error.from, error.to],
        [
          { version: 6, timelineLayoutVersion: 1 },
          { version: 8, timelineLayoutVersion: 2 },
        ],
      );
      return true;
    });
  });

  it('a write whose table is upgraded before its commit fails there and completes nothing', async () => {
    const table = join(tempDir(), 't');
    await writeBatch(openStorage(table), { input: { file: input([{ id: 1, ts: 1, dt: 'a' }]), format: 'jsonl' }, operation: 'insert', properties: PROPS });
    const attempt = writeBatch(openStorage(table), {
      input: { file: input([{ id: 2, ts: 1, dt: 'a' }]), format: 'jsonl' },
      operation: 'upsert',
      properties: PROPS,
      afterDataFiles: async () => markUpgraded(table, 9),
    });
    await assert.rejects(attempt, TableVersionChangedError);
    const completed = readdirSync(join(table, '.hoodie')).filter((name) => /^\d{17}\.commit$/.test(name));
    assert.equal(completed.length, 1, `only the first write completed: ${completed.join(', ')}`);
  });
});
