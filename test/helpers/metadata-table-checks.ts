/**
 * The checks every test/interop/metadata-table-*.test.ts makes after a step, against real Hudi: Hudi's
 * HoodieMetadataTableValidator passes every check asked (and runs each of them), our own index check agrees with it,
 * and Spark reads the same rows with `hoodie.metadata.enable=true` and `false`. Bound to a harness getter, since each file starts its harness in `before`.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { checkMetadataTable } from '../../lib/metadata/check.js';
import { openStorage } from '../../lib/storage/index.js';
import { canonicalRows, type HudiHarness, type RowSet } from './hudi.js';

/** Every check of the validator the harness exposes, for a table with every metadata partition. */
export const ALL_CHECKS: readonly string[] = [
  'partitions',
  'latest-file-slices',
  'latest-base-files',
  'all-file-groups',
  'all-column-stats',
  'bloom-filters',
  'record-index-count',
  'record-index-content',
];
/** The checks for a table with the `files` partition only. */
export const FILES_CHECKS: readonly string[] = ALL_CHECKS.slice(0, 4);
/** Without the record index (a table without it, or a step where Hudi's own record-index checks cannot run). */
export const WITHOUT_RECORD_INDEX: readonly string[] = ALL_CHECKS.filter((check) => !check.startsWith('record-index'));

type Row = RowSet['rows'][number];

export interface MetadataTableChecks {
  /** The validator passes `checks` (default: all), each of them ran; one diagnostic line per step. */
  validate(t: TestContext, table: string, step: string, checks?: readonly string[]): Promise<void>;
  /** Spark's rows (meta columns left out) with the metadata table on and off, equal; returns them. */
  readBoth(table: string, step: string): Promise<Row[]>;
  /** readBoth's `id`s, sorted, asserted free of duplicates. */
  readIds(table: string, step: string): Promise<number[]>;
}

export function metadataTableChecks(harness: () => HudiHarness): MetadataTableChecks {
  const readBoth = async (table: string, step: string): Promise<Row[]> => {
    const on = await harness().read(table, { options: { 'hoodie.metadata.enable': 'true' }, meta: false });
    const off = await harness().read(table, { options: { 'hoodie.metadata.enable': 'false' }, meta: false });
    assert.deepEqual(canonicalRows(on.rows), canonicalRows(off.rows), `${step}: rows with and without the metadata table`);
    return off.rows;
  };
  return {
    async validate(t, table, step, checks = ALL_CHECKS) {
      const report = await harness().validateMetadataTable(table, checks);
      const failed = Object.entries(report.checks).filter(([, check]) => check.status !== 'passed');
      assert.deepEqual(report.errors, [], `${step}: validator errors`);
      assert.deepEqual(
        failed.map(([name, check]) => `${name}: ${check.status} ${check.details}`),
        [],
        `${step}: failed checks`,
      );
      assert.deepEqual(Object.keys(report.checks).sort(), [...checks].sort(), `${step}: every check ran`);
      // Where Hudi's validator passed the indexes, our own check (metadata check, doctor) finds nothing either.
      if (checks.includes('all-column-stats') || checks.includes('bloom-filters')) {
        const ours = await checkMetadataTable(openStorage(table));
        const compared = ours?.indexMismatches.filter((m) => checks.includes(m.partition === 'column_stats' ? 'all-column-stats' : 'bloom-filters'));
        assert.deepEqual(compared, [], `${step}: our index check`);
      }
      if (checks.includes('record-index-content')) {
        const ours = await checkMetadataTable(openStorage(table));
        assert.deepEqual(ours?.recordIndexMismatches.slice(0, 5), [], `${step}: our record-index check`);
      }
      t.diagnostic(
        `${step}: ${Object.entries(report.checks)
          .map(([name, check]) => `${name} ${check.status}${check.counts ? ` ${JSON.stringify(check.counts)}` : ''}`)
          .join('; ')}`,
      );
    },
    readBoth,
    async readIds(table, step) {
      const ids = (await readBoth(table, step)).map((row) => Number(row['id'])).sort((a, b) => a - b);
      assert.equal(new Set(ids).size, ids.length, `${step}: no duplicates`);
      return ids;
    },
  };
}
