/**
 * What the Glue sync tests share: a users table synced by Hudi's Glue sync keys, written by our writer, synced after
 * its commits against the local stack's Glue (moto), and the catalog read back.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { GetPartitionsCommand, GetTableCommand, type GlueClient, type Table } from '@aws-sdk/client-glue';
import { generateUsers, type UserRecord, writeJsonLines } from '../../lib/cli/generate.js';
import { openStorage } from '../../lib/storage/index.js';
import { type CatalogSyncOutcome, EXTRACTORS, GLUE_SYNC_TOOL, glueClientFor, syncCatalogAfterCommit } from '../../lib/sync/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from './paths.js';

export const RO_INPUT_FORMAT = 'org.apache.hudi.hadoop.HoodieParquetInputFormat';
export const RT_INPUT_FORMAT = 'org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function glue(): GlueClient {
  return glueClientFor({ region: undefined, endpoint: undefined });
}

/** A users table (key id, partition dt, ordering createTime, no metadata table) synced to `database` by Glue. */
export function usersTableProps(
  tableName: string,
  database: string,
  table: { readonly type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'; readonly version?: number },
  extra: Record<string, string> = {},
): Map<string, string> {
  return new Map([
    ['hoodie.table.name', tableName],
    ['hoodie.datasource.write.table.type', table.type],
    ...(table.version === undefined ? [] : [['hoodie.write.table.version', String(table.version)] as [string, string]]),
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'createTime'],
    ['hoodie.metadata.enable', 'false'],
    ['hoodie.datasource.meta.sync.enable', 'true'],
    ['hoodie.meta.sync.client.tool.class', GLUE_SYNC_TOOL],
    ['hoodie.datasource.hive_sync.database', database],
    ['hoodie.datasource.hive_sync.partition_extractor_class', EXTRACTORS.multiPart],
    ...Object.entries(extra),
  ]);
}

/** One write of `records` by our writer, every insert into a new file group (no small-file handling). */
export async function writeUsers(tablePath: string, props: ReadonlyMap<string, string>, records: readonly UserRecord[], operation: WriteOptions['operation']) {
  const file = join(tempDir(), `batch-${randomUUID().slice(0, 8)}.jsonl`);
  await writeJsonLines(file, records);
  return writeBatch(openStorage(tablePath), {
    input: { file, format: 'jsonl' },
    operation,
    properties: new Map([...props, ['hoodie.parquet.small.file.limit', '0']]),
  });
}

export type Synced = Extract<CatalogSyncOutcome, { status: 'SYNCED' }>;

/** The sync a commit runs, which must have synced. */
export async function syncNow(tablePath: string, props: ReadonlyMap<string, string>): Promise<Synced> {
  const outcome = await syncCatalogAfterCommit(await HudiTable.open(openStorage(tablePath)), props, { glue: () => glue(), log: quiet });
  assert.ok(outcome?.status === 'SYNCED', JSON.stringify(outcome));
  return outcome;
}

export async function getTable(database: string, name: string): Promise<Table> {
  return (await glue().send(new GetTableCommand({ DatabaseName: database, Name: name }))).Table!;
}

/** A catalog table's partitions as [values, location, input format], by their values. */
export async function partitionsOf(database: string, table: string): Promise<[string[], string | undefined, string | undefined][]> {
  const response = await glue().send(new GetPartitionsCommand({ DatabaseName: database, TableName: table }));
  return (response.Partitions ?? [])
    .map((p): [string[], string | undefined, string | undefined] => [p.Values ?? [], p.StorageDescriptor?.Location, p.StorageDescriptor?.InputFormat])
    .sort((a, b) => a[0].join('/').localeCompare(b[0].join('/')));
}

/** `count` users of one day. */
export function users(count: number, seed: number, startDate: string): UserRecord[] {
  return [...generateUsers({ count, seed, idStart: 1, startDate, days: 1 })];
}
