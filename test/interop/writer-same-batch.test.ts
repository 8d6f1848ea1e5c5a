/**
 * One upsert batch, applied by Spark with its datasource defaults and by our writer with ours, to two copies of a
 * table Spark created: the snapshots must be identical. The batch has keys whose precombine value is older than the
 * stored one (the payload decides: OverwriteWithLatestAvroPayload lets them win, DefaultHoodieRecordPayload keeps the
 * stored row) and keys repeated within the batch (the greatest precombine value wins before merging).
 *
 * Once for a table created through the datasource, once for one created by Spark SQL (CREATE TABLE ... USING hudi,
 * INSERT INTO). Hudi 0.15 records no payload class for a copy-on-write table on either path (not even when one is
 * given), so both writers use their default, OverwriteWithLatestAvroPayload. A table whose hoodie.properties does
 * name one (Hudi records it for merge-on-read tables; older tables may carry it) is merged with that class by both.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { PAYLOAD_CLASSES, TABLE_PAYLOAD_CLASS_KEY } from '../../lib/table/payload.js';
import { formatJavaProperties } from '../../lib/table/properties.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { ourRows, ourWrite, parquetFromRows, project, tableProperties } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';

const COLUMNS = { id: 'BIGINT', name: 'VARCHAR', seq: 'BIGINT', dt: 'VARCHAR' } as const;
const SPARK_SCHEMA = 'id BIGINT, name STRING, seq BIGINT, dt STRING';
const COMPARED = ['_hoodie_record_key', '_hoodie_partition_path', 'id', 'name', 'seq', 'dt'];
const row = (id: number, name: string, seq: number): Row => ({ id, name, seq, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' });

/** Stored: ids 1–6 at precombine value 10. */
const STORED = [1, 2, 3, 4, 5, 6].map((id) => row(id, `stored-${id}`, 10));
/** The batch, in this order: a repeated key's greater value comes first, so "the later record wins" would be wrong. */
const BATCH = [
  row(1, 'newer-1', 20), // newer than stored: every payload applies it
  row(2, 'older-2', 5), // older than stored: the payload decides
  row(3, 'dup-3-newest', 15), // repeated, the greater value (newer than stored) first
  row(4, 'dup-4-greater', 6), // repeated, both older than stored
  row(7, 'new-7-greater', 2), // a new key, repeated
  row(3, 'dup-3-older', 7),
  row(4, 'dup-4-smaller', 3),
  row(7, 'new-7-smaller', 1),
  row(8, 'new-8', 1), // a new key
];

/**
 * What Hudi's rules give, worked out here: within the batch the greatest precombine value per key wins; against the
 * stored row OverwriteWithLatestAvroPayload takes the incoming one, DefaultHoodieRecordPayload only when its value is
 * not smaller.
 */
function expectedSnapshot(payloadClass: string, hiveStyle: boolean): Row[] {
  const incoming = new Map<number, Row>();
  for (const r of BATCH) {
    const seen = incoming.get(r['id'] as number);
    if (seen === undefined || (r['seq'] as number) > (seen['seq'] as number)) incoming.set(r['id'] as number, r);
  }
  const result = new Map(STORED.map((r) => [r['id'] as number, r]));
  for (const [id, r] of incoming) {
    const stored = result.get(id);
    const keepStored = payloadClass === PAYLOAD_CLASSES.default && stored !== undefined && (stored['seq'] as number) > (r['seq'] as number);
    if (!keepStored) result.set(id, r);
  }
  return [...result.values()].map((r) => ({
    _hoodie_record_key: String(r['id']),
    _hoodie_partition_path: hiveStyle ? `dt=${String(r['dt'])}` : r['dt']!,
    ...r,
  }));
}

describe('interop: the same upsert batch applied by Spark (datasource defaults) and by us (our defaults)', () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-writer-same-batch-');
  /** The datasource-created table before the batch, for the last test. */
  const pristine = join(dir, 'ds_pristine');
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  /** Copy the table, apply the batch by Spark to one copy and by us to the other; both snapshots, as Spark reads them. */
  async function applyBoth(table: string, name: string): Promise<{ spark: Row[]; ours: Row[] }> {
    const copy = `${table}_ours`;
    cpSync(table, copy, { recursive: true });
    // Spark's datasource defaults: upsert, no payload option, the metadata table on; it fills the rest from hoodie.properties.
    await hudi.write(table, {
      schema: SPARK_SCHEMA,
      rows: BATCH,
      options: { 'hoodie.table.name': name, 'hoodie.datasource.write.recordkey.field': 'id', 'hoodie.datasource.write.precombine.field': 'seq' },
    });
    // Ours: no options at all.
    await ourWrite(copy, 'upsert', await parquetFromRows(dir, BATCH, COLUMNS), new Map());
    const spark = project((await hudi.read(table)).rows, COMPARED);
    const ours = project((await hudi.read(copy)).rows, COMPARED);
    assert.deepEqual(canonicalRows(project(await ourRows(copy), COMPARED)), canonicalRows(ours), 'our reader agrees with Spark on our copy');
    return { spark, ours };
  }

  it('a table Spark created through the datasource (no payload class recorded): both apply OverwriteWithLatestAvroPayload', async () => {
    const table = join(dir, 'ds_table');
    await hudi.write(table, {
      schema: SPARK_SCHEMA,
      rows: STORED,
      options: {
        'hoodie.table.name': 'ds_table',
        'hoodie.datasource.write.recordkey.field': 'id',
        'hoodie.datasource.write.partitionpath.field': 'dt',
        'hoodie.datasource.write.precombine.field': 'seq',
        'hoodie.datasource.write.operation': 'insert',
        // So that our writer may write to the copy (this build refuses tables with a metadata table).
        'hoodie.metadata.enable': 'false',
      },
    });
    assert.equal(tableProperties(table).has(TABLE_PAYLOAD_CLASS_KEY), false, 'Hudi 0.15 records no payload class for a copy-on-write table');
    cpSync(table, pristine, { recursive: true });
    const { spark, ours } = await applyBoth(table, 'ds_table');
    assert.deepEqual(canonicalRows(ours), canonicalRows(spark));
    assert.deepEqual(canonicalRows(spark), canonicalRows(expectedSnapshot(PAYLOAD_CLASSES.overwriteWithLatest, false)));
  });

  it('a table Spark SQL created (CREATE TABLE ... USING hudi, INSERT INTO; no payload class recorded either): both apply OverwriteWithLatestAvroPayload', async () => {
    const table = join(dir, 'sql_table');
    await hudi.sql(
      `CREATE TABLE sql_table (id BIGINT, name STRING, seq BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) LOCATION '${table}' ` +
        `TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'seq', 'hoodie.metadata.enable' = 'false')`,
    );
    await hudi.sql(`INSERT INTO sql_table VALUES ${STORED.map((r) => `(${r['id']}, '${r['name']}', ${r['seq']}, '${r['dt']}')`).join(', ')}`);
    assert.equal(existsSync(join(table, '.hoodie/metadata')), false, 'no metadata table');
    const properties = tableProperties(table);
    assert.equal(properties.has(TABLE_PAYLOAD_CLASS_KEY), false, 'Spark SQL records no payload class either');
    // Spark SQL's own table settings, which both writers take from hoodie.properties.
    assert.equal(properties.get('hoodie.datasource.write.hive_style_partitioning'), 'true');
    assert.equal(properties.get('hoodie.database.name'), 'default');
    const { spark, ours } = await applyBoth(table, 'sql_table');
    assert.deepEqual(canonicalRows(ours), canonicalRows(spark));
    assert.deepEqual(canonicalRows(spark), canonicalRows(expectedSnapshot(PAYLOAD_CLASSES.overwriteWithLatest, true)));
  });

  it('a table whose hoodie.properties names DefaultHoodieRecordPayload: both keep stored rows with a greater precombine value', async () => {
    const table = join(dir, 'ds_payload');
    cpSync(pristine, table, { recursive: true });
    const properties = tableProperties(table);
    properties.set(TABLE_PAYLOAD_CLASS_KEY, PAYLOAD_CLASSES.default);
    writeFileSync(join(table, '.hoodie/hoodie.properties'), formatJavaProperties(properties, ['Properties saved']));
    // Hadoop's local file system keeps a checksum beside each file it wrote and refuses an edited file that has one.
    rmSync(join(table, '.hoodie/.hoodie.properties.crc'), { force: true });
    const { spark, ours } = await applyBoth(table, 'ds_table');
    assert.deepEqual(canonicalRows(ours), canonicalRows(spark));
    assert.deepEqual(canonicalRows(spark), canonicalRows(expectedSnapshot(PAYLOAD_CLASSES.default, false)));
  });
});
