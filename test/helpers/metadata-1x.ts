/**
 * Metadata-table records in the shape Spark's `hudi_metadata('<table>')` returns them (a row's JSON), so that what
 * we read compares with what Hudi reads: unions as `member<i>` structs, longs and decimals as numbers, bytes Base64;
 * and the checks of a 1.x metadata table against Spark that the interop tests share.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VALUE_WRAPPERS } from '../../lib/log-format/value-wrappers.js';
import { readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import type { MetadataRecord, WrappedValue } from '../../lib/metadata/records.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, type ValidationReport } from './hudi.js';
import { ourCanonicalRows } from './table-files.js';

function sparkValue(value: WrappedValue | null): unknown {
  if (value === null) return null;
  const index = VALUE_WRAPPERS.findIndex(([, type]) => type === value.type);
  let inner: unknown;
  if (value.type === 'decimal') inner = Number(value.unscaled) / 1e15;
  else if (value.type === 'bytes') inner = Buffer.from(value.value).toString('base64');
  else if (typeof value.value === 'bigint') inner = Number(value.value);
  else inner = value.value;
  return { [`member${index}`]: { value: inner } };
}

/** One record as Spark's JSON row of hudi_metadata(). */
export function sparkMetadataRow(record: MetadataRecord): Record<string, unknown> {
  const row: Record<string, unknown> = { key: record.key, type: record.type };
  switch (record.type) {
    case 1:
    case 2:
      row['filesystemMetadata'] = Object.fromEntries([...record.files].map(([name, info]) => [name, { size: info.size, isDeleted: info.isDeleted }]));
      break;
    case 3:
    case 6: {
      const s = record.columnStats;
      const stats: Record<string, unknown> = {
        fileName: s.fileName,
        columnName: s.columnName,
        minValue: sparkValue(s.minValue),
        maxValue: sparkValue(s.maxValue),
        valueCount: s.valueCount,
        nullCount: s.nullCount,
        totalSize: s.totalSize,
        totalUncompressedSize: s.totalUncompressedSize,
        isDeleted: s.isDeleted,
      };
      if (s.isTightBound !== undefined) stats['isTightBound'] = s.isTightBound;
      if (s.valueType !== undefined && s.valueType !== null) {
        stats['valueType'] = s.valueType.additionalInfo === null ? { typeOrdinal: s.valueType.typeOrdinal } : { ...s.valueType };
      }
      row['ColumnStatsMetadata'] = Object.fromEntries(Object.entries(stats).filter(([, v]) => v !== null));
      break;
    }
    case 4: {
      const b = record.bloomFilter;
      row['BloomFilterMetadata'] = { type: b.type, timestamp: b.timestamp, bloomFilter: Buffer.from(b.bloomFilter).toString('base64'), isDeleted: b.isDeleted };
      break;
    }
    case 5: {
      // Longs as their decimal text: comparableMetadataRow reduces them as it does the harness's large longs.
      const r = record.recordIndex;
      const long = (value: bigint | null) => (value === null ? null : String(value));
      row['recordIndexMetadata'] = {
        partitionName: r.partitionName,
        fileIdHighBits: long(r.fileIdHighBits),
        fileIdLowBits: long(r.fileIdLowBits),
        fileIndex: r.fileIndex,
        fileId: r.fileId,
        instantTime: long(r.instantTime),
        fileIdEncoding: r.fileIdEncoding,
      };
      break;
    }
  }
  return row;
}

/**
 * A row in a form both sides reduce to: null fields dropped (Spark lists every struct field, every union member),
 * numeric strings as numbers (the harness gives decimals and large longs as strings), -0 as 0, and non-integers at
 * float precision (floats come back at their shortest float32 text).
 */
export function comparableMetadataRow(row: unknown): unknown {
  if (row === null || row === undefined) return undefined;
  if (Array.isArray(row)) return row.map(comparableMetadataRow);
  if (typeof row === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const reduced = comparableMetadataRow(value);
      if (reduced !== undefined) out[key] = reduced;
    }
    return out;
  }
  if (typeof row === 'string' && row.trim() !== '' && Number.isFinite(Number(row))) return comparableMetadataRow(Number(row));
  if (typeof row === 'number') {
    if (row === 0) return 0;
    // Infinities and NaN as the harness gives them (JSON has no such numbers); beyond safe integers, float precision.
    if (!Number.isFinite(row)) return String(row);
    return Number.isSafeInteger(row) ? row : Number(Math.fround(row).toPrecision(7));
  }
  return row;
}

/** Every file under `root` (relative paths, sorted). */
export function listTree(root: string, under = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, under), { withFileTypes: true })) {
    const path = under === '' ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listTree(root, path));
    else out.push(path);
  }
  return out.sort();
}

/** Every record reader-1x reads from the metadata table of the 1.x table at `table` (a local path, or a storage). */
export async function metadata1xRecords(table: string | Storage): Promise<MetadataRecord[]> {
  const storage = typeof table === 'string' ? new LocalStorage(table) : table;
  const { timeline } = await HudiTable.open(storage);
  const contents = await readMetadataTable1x(storage, {
    completedDataInstants: new Set(timeline.completed().map((i) => i.time)),
    pendingDataInstants: new Set(timeline.pending().map((i) => i.time)),
  });
  return [...contents.partitions.values()].flatMap((records) => [...records.values()]);
}

/**
 * The metadata table of a 1.x table as Spark and we see it: Spark reads the same rows with it on and off, and so do
 * we; `hudi_metadata()` equals what reader-1x reads; `files` lists every base file and log file of a completed
 * instant in storage (replaced ones until a clean removes them) and nothing else. Returns what reader-1x read.
 */
export async function assertMetadata1xAgrees(hudi: HudiHarness, table: string, step: string): Promise<MetadataRecord[]> {
  const on = canonicalRows((await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true' } })).rows);
  const off = canonicalRows((await hudi.read(table, { options: { 'hoodie.metadata.enable': 'false' } })).rows);
  assert.deepEqual(on, off, `${step}: Spark with and without the metadata table`);
  assert.deepEqual(await ourCanonicalRows(table), on, `${step}: our rows`);

  const ourTable = await HudiTable.open(new LocalStorage(table));
  const ourRecords = await metadata1xRecords(table);
  const theirs = (await hudi.sql(`select * from hudi_metadata('${table}')`)).rows;
  const sorted = (list: unknown[]) => list.map((row) => JSON.stringify(comparableMetadataRow(row))).sort();
  assert.deepEqual(sorted(ourRecords.map(sparkMetadataRow)), sorted(theirs), `${step}: hudi_metadata() and our reader`);

  const completed = new Set(ourTable.timeline.completed().map((i) => i.time));
  // Base files, and log files (merge-on-read ones named after the delta commit that wrote them, CDC tables' `.cdc`
  // ones after the commit), of completed instants;
  // an instant older than the active timeline was archived completed (containsOrBeforeTimelineStarts).
  const first = ourTable.timeline.instants[0]?.time ?? '';
  const writtenBy = (path: string) => /_(\d{17})\.parquet$/.exec(path)?.[1] ?? /\/?\.[^/]+_(\d{17})\.log\.\d+_[\d-]+(\.cdc)?$/.exec(path)?.[1];
  const stored = listTree(table)
    .filter((path) => !path.startsWith('.hoodie'))
    .filter((path) => {
      const instant = writtenBy(path);
      return instant !== undefined && (completed.has(instant) || instant < first);
    });
  const listed = ourRecords.flatMap((record) =>
    record.type === 2 ? [...record.files].filter(([, info]) => !info.isDeleted).map(([name]) => `${record.key}/${name}`) : [],
  );
  assert.deepEqual(listed.sort(), stored, `${step}: the files partition and storage`);
  return ourRecords;
}

/** The validator's checks of an index, by the metadata partition that holds it. */
const INDEX_CHECKS: Readonly<Record<string, readonly string[]>> = {
  column_stats: ['all-column-stats'],
  bloom_filters: ['bloom-filters'],
  record_index: ['record-index-count', 'record-index-content'],
};
const LISTING_CHECKS = ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups'];

/**
 * Hudi's metadata-table validation (test/hudi/mdt_validator.py: HoodieMetadataTableValidator's checks, run by the
 * harness's Hudi) passes on the table: the listing checks pass, and each index check passes where
 * hoodie.properties declares its partition, and is "not-enabled" where it does not (so a check cannot pass by
 * not running).
 */
export async function assertHudiValidates(hudi: HudiHarness, table: string, step: string): Promise<ValidationReport> {
  const report = await hudi.validateMetadataTable(table);
  const properties = readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8');
  const declared = (/^hoodie\.table\.metadata\.partitions=(.*)$/m.exec(properties)?.[1] ?? '').split(',');
  const expected: Record<string, string> = Object.fromEntries(LISTING_CHECKS.map((check) => [check, 'passed']));
  for (const [partition, checks] of Object.entries(INDEX_CHECKS)) {
    for (const check of checks) expected[check] = declared.includes(partition) ? 'passed' : 'not-enabled';
  }
  assert.deepEqual(report.errors, [], `${step}: Hudi's metadata validation ran`);
  const failures = Object.entries(report.checks)
    .filter(([name, check]) => check.status !== expected[name])
    .map(([name, check]) => `${name}: ${check.status} (expected ${expected[name]}) ${check.details}`);
  assert.deepEqual(failures, [], `${step}: Hudi's metadata validation`);
  assert.deepEqual(Object.keys(report.checks).sort(), Object.keys(expected).sort(), `${step}: every validation check ran`);
  return report;
}

/** assertMetadata1xAgrees, then Hudi's metadata validation passes on the table. */
export async function assertMetadata1xValidated(hudi: HudiHarness, table: string, step: string): Promise<MetadataRecord[]> {
  const records = await assertMetadata1xAgrees(hudi, table, step);
  await assertHudiValidates(hudi, table, step);
  return records;
}

/** Spark's data skipping over the metadata table's column stats finds the rows it finds without the metadata table. */
export async function assertDataSkippingAgrees(hudi: HudiHarness, table: string, wheres: readonly string[]): Promise<void> {
  for (const where of wheres) {
    const skipping = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true', 'hoodie.enable.data.skipping': 'true' }, where });
    const plain = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'false' }, where });
    assert.deepEqual(canonicalRows(skipping.rows), canonicalRows(plain.rows), where);
  }
}

/**
 * The metadata table's deltacommit at `instant` completed before the data instant (`action`) did, and wrote a log
 * file named by it into each of `partitions`.
 */
export function assertMirroredBefore(table: string, instant: string, action: string, partitions = ['files', 'column_stats', 'partition_stats']): void {
  const mdt = readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline')).find((n) => n.startsWith(`${instant}_`) && n.endsWith('.deltacommit'));
  const data = readdirSync(join(table, '.hoodie/timeline')).find((n) => n.startsWith(`${instant}_`) && n.endsWith(`.${action}`));
  assert.ok(mdt !== undefined && data !== undefined, `${instant}: a completed deltacommit and ${action}`);
  assert.ok(mdt.slice(18, 35) <= data.slice(18, 35), `${mdt} completed before ${data}`);
  for (const partition of partitions) {
    const logs = readdirSync(join(table, '.hoodie/metadata', partition)).filter((n) => n.includes(`_${instant}.log.1_`));
    assert.ok(logs.length > 0, `${partition}: a log file named by ${instant}`);
  }
}
