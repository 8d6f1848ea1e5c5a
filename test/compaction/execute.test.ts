/**
 * Compaction's merge (DuckDB: base rows stay in SQL, the logs' changes go in) against the row-by-row merge-on-read
 * reader (JavaScript) on the same table: after compacting, the read-optimized view (base files only) is exactly the
 * snapshot read before, for both payload classes, with updates older and newer than the stored record, new keys in
 * the logs, delete blocks and `_hoodie_is_deleted`. The new base files carry Hudi's footers for their keys.
 * Spark's agreement is test/interop/merge-on-read-compaction.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import type { LocalStorage } from '../../lib/storage/local.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { tableWithLogs } from '../helpers/compaction-table.js';

async function read(storage: LocalStorage, queryType: QueryType): Promise<Row[]> {
  const rows = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true, queryType })).rows;
  return rows.map(({ _hoodie_file_name: _name, ...rest }) => rest).sort((a, b) => Number(a['id']) - Number(b['id']));
}

describe('compaction merges in DuckDB by the reader’s rule', () => {
  for (const [label, payload] of [
    ['OverwriteWithLatestAvroPayload', PAYLOAD_CLASSES.overwriteWithLatest],
    ['DefaultHoodieRecordPayload', PAYLOAD_CLASSES.default],
  ] as const) {
    it(`${label}: read-optimized after compaction is the snapshot before`, async () => {
      const { storage, root } = await tableWithLogs(payload);
      const before = await read(storage, 'snapshot');
      const names = new Map(before.map((row) => [Number(row['id']), row['name']]));
      // Each case takes effect as the payload says (so the comparison below is not of two unchanged tables).
      const keepsStored = label === 'DefaultHoodieRecordPayload';
      for (const first of [0, 1]) {
        assert.equal(names.get(first), `n${first}-newer`);
        assert.equal(names.get(first + 2), keepsStored ? `n${first + 2}` : `n${first + 2}-older`);
        assert.equal(names.has(first + 4), false, 'a newer soft delete removes the key');
        assert.equal(names.get(first + 6), keepsStored ? `n${first + 6}` : undefined);
        assert.equal(names.has(first + 8), false, 'a delete block removes the key');
        assert.equal(names.get(first + 1000), `n${first + 1000}-inserted`);
        assert.equal(names.has(first + 2000), false);
      }
      const table = await HudiTable.open(storage);
      const lock = lockProviderFor(table.config.properties, table.config.name, storage);
      const scheduled = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true });
      assert.ok(scheduled);
      const result = await runCompaction(await table.reload(), scheduled.instantTime, { lock });
      assert.equal(result.outcome, 'committed');
      assert.equal(
        result.writeStats.reduce((sum, stat) => sum + stat.numWrites, 0),
        before.length,
      );
      assert.deepEqual(await read(storage, 'read_optimized'), before);
      const engine = await openParquetEngine();
      try {
        for (const stat of result.writeStats) {
          const file = join(root, stat.path ?? '');
          const footer = await engine.readFooter(file);
          const rows = (await engine.readRows([file], { columns: ['_hoodie_record_key', '_hoodie_file_name'] })).rows;
          const keys = rows.map((row) => String(row['_hoodie_record_key'])).sort();
          assert.equal(footer.keyValues['hoodie_min_record_key'], keys[0]);
          assert.equal(footer.keyValues['hoodie_max_record_key'], keys.at(-1));
          assert.ok(footer.keyValues['org.apache.hudi.bloomfilter']);
          assert.ok(rows.every((row) => file.endsWith(String(row['_hoodie_file_name']))));
        }
      } finally {
        await engine.close();
      }
    });
  }
});
