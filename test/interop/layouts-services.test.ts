/**
 * The layouts README's "Table layouts" table says our services keep, against Hudi 0.15 (Spark 3.5.1) writing before
 * and after them (copy-on-write, metadata table off):
 * - a timestamp-based key generator: our upsert puts records in the partitions Spark's key generator names, so
 *   Spark's later upsert finds them (no key twice);
 * - dropped partition columns: our upsert and our clustering leave files Spark reads and upserts into;
 * - no meta fields: our clustering leaves files Spark reads and upserts into (our writes are refused).
 *
 * One Spark session for the file; seven Spark writes in all.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteResult, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, region STRING, event STRING';
const row = (id: number, ts: number) => ({
  id,
  name: `n${id}-${ts}`,
  ts,
  region: id % 2 === 0 ? 'eu' : 'us',
  event: `2024-01-0${(id % 3) + 1} 1${id % 10}:00:00`,
});
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

const BASE = {
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.table.timeline.timezone': 'UTC',
  'hoodie.metadata.enable': 'false',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.insert.shuffle.parallelism': '1',
  'hoodie.upsert.shuffle.parallelism': '1',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  // Each insert becomes new base files: small files for our clustering.
  'hoodie.parquet.small.file.limit': '0',
};

let hudi: HudiHarness;
let engine: ParquetEngine;

before(async () => {
  hudi = await startHudi();
  engine = await openParquetEngine();
});

after(async () => {
  await engine?.close();
  await hudi?.close();
});

async function ourUpsert(path: string, rows: readonly Record<string, unknown>[]): Promise<WriteResult> {
  const input = join(tempDir('layouts-input-'), 'batch.jsonl');
  await writeJsonLines(input, rows);
  return writeBatch(openStorage(path), {
    input: { file: input, format: 'jsonl' },
    operation: 'upsert',
    properties: new Map([['hoodie.metadata.enable', 'false']]),
  });
}

async function ourClustering(path: string) {
  const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
  const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
  const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'name' } }).config;
  const run = await runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir('layouts-cluster-'), force: true });
  assert.ok(run.commit, 'our clustering committed');
}

/** id → name as Spark reads the table and as we read it: the same, no key twice; also id → partition path. */
async function readAlike(path: string): Promise<{ names: Map<number, string>; partitions: Map<number, string> }> {
  const spark = (await hudi.read(path)).rows;
  const ours = (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true })).rows;
  const names = (rows: readonly Row[]) => new Map(rows.map((r) => [Number(r['id']), String(r['name'])]));
  assert.equal(names(spark).size, spark.length, 'no key twice in Spark');
  assert.deepEqual(names(ours), names(spark), 'our reader reads what Spark reads');
  return { names: names(spark), partitions: new Map(spark.map((r) => [Number(r['id']), String(r['_hoodie_partition_path'])])) };
}

describe('layouts our services keep, with Spark writing before and after', () => {
  it('timestamp-based key generator: our upsert lands where Spark keys records', async () => {
    const path = join(tempDir('layouts-ts-'), 'ts_keygen');
    const options = (operation: string) => ({
      ...BASE,
      'hoodie.table.name': 'ts_keygen',
      'hoodie.datasource.write.operation': operation,
      'hoodie.datasource.write.partitionpath.field': 'event',
      'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.TimestampBasedKeyGenerator',
      'hoodie.keygen.timebased.timestamp.type': 'DATE_STRING',
      'hoodie.keygen.timebased.input.dateformat': 'yyyy-MM-dd HH:mm:ss',
      'hoodie.keygen.timebased.output.dateformat': 'yyyy/MM/dd',
      'hoodie.keygen.timebased.timezone': 'UTC',
    });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 6).map((id) => row(id, 1)), options: options('insert') });
    const sparkPartitions = (await readAlike(path)).partitions;
    const ours = await ourUpsert(
      path,
      ids(3, 9).map((id) => row(id, 2)),
    );
    assert.equal(ours.updated, 4);
    assert.equal(ours.inserted, 3);
    const afterOurs = await readAlike(path);
    for (const id of ids(1, 6)) assert.equal(afterOurs.partitions.get(id), sparkPartitions.get(id), `record ${id} stays in Spark's partition`);
    assert.equal(afterOurs.partitions.get(9), sparkPartitions.get(6), 'same event day, same partition as Spark names it');
    await hudi.write(path, { schema: SCHEMA, rows: [1, 4, 9].map((id) => row(id, 3)), options: options('upsert') });
    const last = await readAlike(path);
    assert.equal(last.names.size, 9);
    assert.deepEqual(
      [1, 4, 9].map((id) => last.names.get(id)),
      ['n1-3', 'n4-3', 'n9-3'],
    );
    assert.equal(last.names.get(5), 'n5-2');
  });

  it('dropped partition columns: our upsert and clustering, then Spark upserts', async () => {
    const path = join(tempDir('layouts-drop-'), 'dropped');
    const options = (operation: string) => ({
      ...BASE,
      'hoodie.table.name': 'dropped',
      'hoodie.datasource.write.operation': operation,
      'hoodie.datasource.write.partitionpath.field': 'region',
      'hoodie.datasource.write.drop.partition.columns': 'true',
    });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 6).map((id) => row(id, 1)), options: options('insert') });
    const ours = await ourUpsert(
      path,
      ids(3, 8).map((id) => row(id, 2)),
    );
    assert.equal(ours.updated, 4);
    await readAlike(path);
    await ourClustering(path);
    await hudi.write(path, { schema: SCHEMA, rows: [1, 4, 8].map((id) => row(id, 3)), options: options('upsert') });
    const last = await readAlike(path);
    assert.equal(last.names.size, 8);
    assert.deepEqual(
      [1, 2, 4, 5, 8].map((id) => last.names.get(id)),
      ['n1-3', 'n2-1', 'n4-3', 'n5-2', 'n8-3'],
    );
    const regions = (await hudi.read(path)).rows.map((r) => `${r['id']}:${r['region']}`).sort();
    assert.deepEqual(
      regions,
      ids(1, 8)
        .map((id) => `${id}:${id % 2 === 0 ? 'eu' : 'us'}`)
        .sort(),
      'Spark reads each partition value back',
    );
  });

  it('no meta fields: our writes refused; our clustering, then Spark upserts', async () => {
    const path = join(tempDir('layouts-virtual-'), 'virtual');
    const options = (operation: string) => ({
      ...BASE,
      'hoodie.table.name': 'virtual',
      'hoodie.datasource.write.operation': operation,
      'hoodie.datasource.write.partitionpath.field': 'region',
      'hoodie.populate.meta.fields': 'false',
    });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 6).map((id) => row(id, 1)), options: options('insert') });
    await hudi.write(path, { schema: SCHEMA, rows: ids(7, 10).map((id) => row(id, 1)), options: options('insert') });
    await assert.rejects(ourUpsert(path, [row(1, 2)]), (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'no-meta-fields');
    const before0 = await readAlike(path);
    await ourClustering(path);
    assert.deepEqual((await readAlike(path)).names, before0.names);
    await hudi.write(path, { schema: SCHEMA, rows: [1, 8].map((id) => row(id, 3)), options: options('upsert') });
    const last = await readAlike(path);
    assert.equal(last.names.size, 10);
    assert.deepEqual(
      [1, 2, 8].map((id) => last.names.get(id)),
      ['n1-3', 'n2-1', 'n8-3'],
    );
  });
});
