/**
 * Checks the interop tests share on a table Spark and we both wrote: Spark reads the same rows with the metadata
 * table on and off, our reader reads what Spark reads, no record key twice; and each bucket-index row in the file
 * group of its hash bucket, one file group per bucket.
 */
import assert from 'node:assert/strict';
import type { Row } from '../../lib/engine/row-format.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { type BucketIndexSpec, bucketIdOf } from '../../lib/table/bucket-index.js';
import { bucketNumberOf } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness } from './hudi.js';

/** Spark's snapshot rows (metadata table on) and their `id` keys, once every reader agreed on them. */
export async function readsAlike(hudi: HudiHarness, path: string): Promise<{ rows: Row[]; keys: number[] }> {
  const withMdt = await hudi.read(path, { options: { 'hoodie.metadata.enable': 'true' } });
  const withoutMdt = await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false' } });
  assert.deepEqual(canonicalRows(withoutMdt.rows), canonicalRows(withMdt.rows), 'Spark reads alike with the metadata table on and off');
  const ours = await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true });
  assert.deepEqual(canonicalRows(ours.rows), canonicalRows(withMdt.rows), 'our reader reads what Spark reads');
  const keys = withMdt.rows.map((r) => Number(r['id']));
  assert.equal(new Set(keys).size, keys.length, 'no key twice');
  return { rows: withMdt.rows, keys };
}

/** Every row in its hash bucket's file group, and one live file group per bucket of each partition. */
export async function assertBucketsKept(path: string, rows: readonly Row[], spec: BucketIndexSpec): Promise<void> {
  for (const r of rows) {
    const id = Number(r['id']);
    assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(id), spec), `id ${id} is in its hash bucket`);
  }
  const slices = (await (await HudiTable.open(openStorage(path))).fileSystemView()).latestMergedSlices();
  const buckets = slices.map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`);
  assert.equal(new Set(buckets).size, buckets.length, `one file group per bucket: ${buckets.sort().join(' ')}`);
}
