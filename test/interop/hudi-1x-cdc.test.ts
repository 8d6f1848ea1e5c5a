/**
 * Our upserts and deletes on copy-on-write CDC tables (hoodie.table.cdc.enabled=true) of Hudi 1.0.2 (table version 8)
 * and 1.1.1 (version 9), metadata table on, judged by that release on Spark 3.5.1 (one JVM per release). Spark writes
 * a table twice and it is copied; we upsert (updates, inserts into small files and a new partition) and delete on one
 * copy, Spark does the same on the other; per logging mode (the default DATA_BEFORE_AFTER, and OP_KEY_ONLY, whose
 * images Spark's CDC query takes from the base files) the query from the start returns the same changes on both, our
 * cdc logs hold the block Spark's hold, snapshot reads agree, and so do the metadata tables; Spark then upserts on
 * top of both (DATA_BEFORE_AFTER) and the query still agrees. Spark writes 5 or 6 times per mode and release.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { readLogFile } from '../../lib/log-format/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, type Hudi1xRow, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { assertMetadata1xAgrees, listTree } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const OUR_PROPS = new Map([['hoodie.datasource.write.precombine.field', 'ts']]);
/** Spark's CDC query over the whole timeline. */
const CDC_READ = {
  'hoodie.datasource.query.type': 'incremental',
  'hoodie.datasource.query.incremental.format': 'cdc',
  'hoodie.datasource.read.begin.instanttime': '0',
};
const MODES = ['DATA_BEFORE_AFTER', 'OP_KEY_ONLY'] as const;

/** Updates in both partitions, inserts (into our small files) and one into a new partition; then two deletes. */
const UPSERT: Hudi1xRow[] = [...hudi1xRows([2, 4, 9, 13, 14], 3), { id: 15, name: 'v3-15', ts: 3, dt: '2024-01-03' }];
const DELETES = hudi1xRows([5, 10], 4);
const ON_TOP: Hudi1xRow[] = [...hudi1xRows([2, 13, 6], 5), { id: 15, name: 'v5-15', ts: 5, dt: '2024-01-03' }];

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our writes on copy-on-write CDC tables of Hudi ${version} (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-cdc-`);
    let batch = 0;

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });

    after(async () => {
      await hudi?.close();
    });

    async function ours(table: string, operation: WriteOperation, rows: readonly Hudi1xRow[]) {
      batch += 1;
      const input = join(root, `batch-${batch}.jsonl`);
      writeFileSync(input, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      return writeBatch(new LocalStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties: OUR_PROPS });
    }

    /** Spark's CDC query as comparable changes: the commit by its place among the commits, images without meta columns. */
    async function changes(table: string): Promise<string[]> {
      const commits = readdirSync(join(table, '.hoodie', 'timeline'))
        .filter((name) => name.endsWith('.commit'))
        .map((name) => name.slice(0, 17))
        .sort();
      const image = (text: unknown) => {
        const parsed = text === null || text === undefined ? null : (JSON.parse(String(text)) as Row | null);
        return parsed === null ? null : Object.fromEntries(Object.entries(parsed).filter(([column]) => !column.startsWith('_hoodie_')));
      };
      const rows = (await hudi.read(table, { options: CDC_READ, meta: false })).rows;
      return canonicalRows(
        rows.map((r) => ({ op: r['op'] ?? null, commit: commits.indexOf(String(r['ts_ms'])), before: image(r['before']), after: image(r['after']) })),
      );
    }

    /** Each cdc log file of a table (path → its blocks' type and SCHEMA header). */
    async function cdcLogs(table: string): Promise<Map<string, string>> {
      const out = new Map<string, string>();
      for (const file of listTree(table).filter((path) => !path.startsWith('.hoodie') && path.endsWith('.cdc'))) {
        out.set(file, (await readLogFile(new LocalStorage(table), file)).map((block) => `${block.type} ${block.header.SCHEMA}`).join('\n'));
      }
      return out;
    }

    for (const mode of MODES) {
      it(`${mode}: Spark's CDC query returns our upsert's and delete's changes as it returns its own`, async () => {
        const sparkTable = join(root, `spark-${mode}`);
        const ourTable = join(root, `ours-${mode}`);
        const options = (operation: string) => ({
          ...hudi1xWriteOptions(`cdc_${mode.toLowerCase()}`, 'COPY_ON_WRITE'),
          'hoodie.table.cdc.enabled': 'true',
          'hoodie.table.cdc.supplemental.logging.mode': mode,
          'hoodie.datasource.write.operation': operation,
        });
        const spark = (table: string, rows: readonly Hudi1xRow[], operation: string) =>
          hudi.write(table, { schema: HUDI_1X_SCHEMA, rows, options: options(operation) });
        await spark(sparkTable, hudi1xRows([1, 2, 3, 4, 5, 6, 7, 8], 1), 'upsert');
        await spark(sparkTable, hudi1xRows([1, 2, 3, 9, 10, 11, 12], 2), 'upsert');
        cpSync(sparkTable, ourTable, { recursive: true });
        const copied = new Set((await cdcLogs(ourTable)).keys());

        const upserted = await ours(ourTable, 'upsert', UPSERT);
        assert.equal(upserted.updated, 3);
        assert.equal(upserted.inserted, 3);
        const merged = upserted.stats.filter((stat) => stat.prevCommit !== 'null');
        assert.ok(merged.length >= 2 && merged.every((stat) => stat.cdcStats !== null), 'each merged file group has its cdc log');
        assert.ok(
          upserted.stats.some((stat) => stat.prevCommit === 'null' && stat.cdcStats === null),
          'the new partition is a new file group, without change data',
        );
        assert.equal((await ours(ourTable, 'delete', DELETES)).deleted, 2);
        await spark(sparkTable, UPSERT, 'upsert');
        await spark(sparkTable, DELETES, 'delete');

        const sparkBlocks = new Set((await cdcLogs(sparkTable)).values());
        const ourLogs = [...(await cdcLogs(ourTable))].filter(([file]) => !copied.has(file));
        assert.ok(ourLogs.length >= 3, 'our upsert and delete wrote cdc log files');
        for (const [file, blocks] of ourLogs) assert.ok(sparkBlocks.has(blocks), `${file} holds the block Spark's cdc logs hold`);

        const ourChanges = await changes(ourTable);
        assert.deepEqual(ourChanges, await changes(sparkTable), 'the CDC query returns the same changes');
        const opsOf = (commit: number) =>
          ourChanges
            .map((c) => JSON.parse(c) as { op: string; commit: number })
            .filter((c) => c.commit === commit)
            .map((c) => c.op)
            .sort();
        assert.deepEqual(opsOf(2), ['i', 'i', 'i', 'u', 'u', 'u'], 'our upsert: 3 updates, 3 inserts');
        assert.deepEqual(opsOf(3), ['d', 'd'], 'our delete: 2 deletes');
        assert.deepEqual(
          canonicalRows((await hudi.read(ourTable, { meta: false })).rows),
          canonicalRows((await hudi.read(sparkTable, { meta: false })).rows),
          'snapshot reads agree',
        );
        await assertMetadata1xAgrees(hudi, ourTable, 'after our upsert and delete');
        if (mode !== 'DATA_BEFORE_AFTER') return;

        // Spark upserts on top: its change data takes our base files' records as before images.
        await spark(ourTable, ON_TOP, 'upsert');
        await spark(sparkTable, ON_TOP, 'upsert');
        const later = await changes(ourTable);
        assert.deepEqual(later, await changes(sparkTable), "the CDC query agrees after Spark's upsert on top");
        assert.equal(later.length, ourChanges.length + 4);
        await assertMetadata1xAgrees(hudi, ourTable, "after Spark's upsert on top");
      });
    }
  });
}
