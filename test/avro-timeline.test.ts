/**
 * Avro timeline files: real Hudi-written files decode to the golden JSON, our files read back with the official
 * Hudi schemas and are byte-identical to Java's output, and unreadable input fails with a HudiError naming the file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { HudiError } from '../lib/errors.js';
import { HUDI_FIXTURES, unzipFixture } from './helpers/fixtures.js';
import {
  TIMELINE_AVRO_KINDS,
  decodeRequestedReplaceMetadata,
  decodeTimelineAvro,
  emptyRequestedReplaceMetadata,
  encodeTimelineAvro,
  timelineAvroSchemaText,
  type HoodieCleanMetadata,
  type HoodieCleanerPlan,
  type HoodieRequestedReplaceMetadata,
  type HoodieRollbackMetadata,
  type HoodieRollbackPlan,
  type TimelineAvroKind,
  type TimelineAvroRecords,
} from '../lib/timeline/avro-files.js';

const hudiFixtures = HUDI_FIXTURES;
const avroFixtures = path.join(hudiFixtures, 'avro');
const hudiRsData = path.join(hudiFixtures, 'tables/hudi-rs/crates/test/data');

const KAZDY_REPLACE_REQUESTED = path.join(
  hudiFixtures,
  'tables/kazdy-HUDI-8259/testtable/.hoodie/20230329224554584.replacecommit.requested',
);

/** Files inside the fixture zips, relative to the extraction folder. */
const COW_OVERWRITE_REQUESTED = 'cow/v6_simplekeygen_nonhivestyle_overwritetable/.hoodie/20240707001303088.replacecommit.requested';
const MOR_OVERWRITE_REQUESTED = 'mor/v6_simplekeygen_nonhivestyle_overwritetable/.hoodie/20250121000702475.replacecommit.requested';
const MOR_ROLLBACK_REQUESTED = 'mor/v6_nonpartitioned_rollback/.hoodie/20250126040936578.rollback.requested';
const MOR_ROLLBACK_COMPLETED = 'mor/v6_nonpartitioned_rollback/.hoodie/20250126040936578.rollback';

/** Which kind of record a v6 timeline file name holds; undefined for non-Avro instant files. */
function kindOfFile(fileName: string): TimelineAvroKind | undefined {
  if (fileName.endsWith('.replacecommit.requested')) return 'requestedReplace';
  if (fileName.endsWith('.clean.requested') || fileName.endsWith('.clean.inflight')) return 'cleanerPlan';
  if (fileName.endsWith('.clean')) return 'cleanMetadata';
  if (fileName.endsWith('.rollback.requested')) return 'rollbackPlan';
  if (fileName.endsWith('.rollback')) return 'rollbackMetadata';
  return undefined;
}

/** Every v6 Avro timeline file under `root`, skipping Hudi 1.x `.hoodie/timeline/` and macOS resource forks. */
function findTimelineAvroFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((relative) => path.join(root, relative))
    .filter((file) => {
      const parts = file.split(path.sep);
      return (
        parts.includes('.hoodie') &&
        !parts.includes('timeline') &&
        !parts.includes('__MACOSX') &&
        kindOfFile(path.basename(file)) !== undefined &&
        statSync(file).isFile()
      );
    })
    .sort();
}

function readGolden(name: string): unknown {
  // fastavro's JSON: unions unwrapped, maps as objects, doubles like 0.0 parse to the same JS numbers; no bytes
  // fields, so it equals our decoded values as is.
  return JSON.parse(readFileSync(path.join(avroFixtures, 'decoded', name), 'utf8'));
}

function readEmbeddedSchema(name: string): string {
  return readFileSync(path.join(avroFixtures, 'embedded', `${name}.writer-schema.json`), 'utf8').trim();
}

/** The last 16 bytes of a one-block container are its sync marker. */
function syncMarkerOf(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(bytes.length - 16);
}

/** avsc hands out records as class instances; compare plain data. */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plain(entry)]));
}

/** Deterministic bytes for the corruption tests (a fixed-seed LCG, so a failure reproduces). */
function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The official schemas from apache/hudi, as a reader would use them.

/** Named types first: later schemas refer to them by name. */
const OFFICIAL_SCHEMA_ORDER = [
  'HoodieSliceInfo',
  'HoodieClusteringGroup',
  'HoodieClusteringStrategy',
  'HoodieClusteringPlan',
  'HoodieRequestedReplaceMetadata',
  'HoodieInstantInfo',
  'HoodieRollbackPlan',
  'HoodieRollbackMetadata',
  'HoodieCleanPartitionMetadata',
  'HoodieCleanMetadata',
  'HoodieCleanerPlan',
] as const;

const OFFICIAL_ROOT_OF_KIND: Record<TimelineAvroKind, (typeof OFFICIAL_SCHEMA_ORDER)[number]> = {
  requestedReplace: 'HoodieRequestedReplaceMetadata',
  cleanerPlan: 'HoodieCleanerPlan',
  cleanMetadata: 'HoodieCleanMetadata',
  rollbackPlan: 'HoodieRollbackPlan',
  rollbackMetadata: 'HoodieRollbackMetadata',
};

function readAvsc(file: string): avro.Schema {
  // Hudi's .avsc files carry /* */ comments, which Avro-Java accepts and JSON does not.
  return JSON.parse(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')) as avro.Schema;
}

function loadOfficialTypes(): Map<string, avro.Type> {
  const registry: Record<string, avro.Type> = {};
  const types = new Map<string, avro.Type>();
  for (const name of OFFICIAL_SCHEMA_ORDER) {
    types.set(name, avro.Type.forSchema(readAvsc(path.join(avroFixtures, `${name}.avsc`)), { registry, wrapUnions: false }));
  }
  return types;
}

/** An older/alternative schema version, its named dependencies taken from the official ones. */
function loadAltType(fileName: string, dependencies: readonly string[]): avro.Type {
  const registry: Record<string, avro.Type> = {};
  for (const name of dependencies) {
    avro.Type.forSchema(readAvsc(path.join(avroFixtures, `${name}.avsc`)), { registry, wrapUnions: false });
  }
  return avro.Type.forSchema(readAvsc(path.join(avroFixtures, 'alt', fileName)), { registry, wrapUnions: false });
}

interface ThirdPartyRead {
  records: unknown[];
  codec: string;
  metadataKeys: string[];
  writerName: string | undefined;
}

/** Read a container with avsc's own stream decoder (not our code), resolving to `readerType`. */
function readWithAvscStreams(bytes: Uint8Array, readerType: avro.Type): Promise<ThirdPartyRead> {
  return new Promise((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder({ readerSchema: readerType });
    const result: ThirdPartyRead = { records: [], codec: '', metadataKeys: [], writerName: undefined };
    decoder.on('metadata', (writerType: avro.Type, codec: string, header: { meta: Record<string, Buffer> }) => {
      result.codec = codec;
      result.metadataKeys = Object.keys(header.meta);
      result.writerName = writerType.name;
    });
    decoder.on('data', (record: unknown) => result.records.push(plain(record)));
    decoder.on('error', reject);
    decoder.on('end', () => resolve(result));
    decoder.end(Buffer.from(bytes));
  });
}

/** Write a container with avsc's own stream encoder (adds avro.codec; optionally deflate). */
function writeWithAvscStreams(type: avro.Type, record: unknown, codec: 'null' | 'deflate'): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const encoder = new avro.streams.BlockEncoder(type, { codec });
    const chunks: Buffer[] = [];
    encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
    encoder.on('error', reject);
    encoder.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    encoder.end(record);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Realistic records of each kind.

const CLUSTERING_PLAN: HoodieRequestedReplaceMetadata = {
  operationType: 'CLUSTER',
  clusteringPlan: {
    inputGroups: [
      {
        slices: [
          {
            dataFilePath: 's3://bucket/trips/2024/01/a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet',
            deltaFilePaths: [],
            fileId: 'a1b2c3d4-0000-4000-8000-000000000001-0',
            partitionPath: '2024/01',
            bootstrapFilePath: '',
            version: 1,
          },
          {
            dataFilePath: 's3://bucket/trips/2024/01/a1b2c3d4-0000-4000-8000-000000000002-0_1-10-21_20240101120000000.parquet',
            deltaFilePaths: [],
            fileId: 'a1b2c3d4-0000-4000-8000-000000000002-0',
            partitionPath: '2024/01',
            bootstrapFilePath: '',
            version: 1,
          },
        ],
        metrics: { TOTAL_LOG_FILES: 0, TOTAL_IO_MB: 12.5, TOTAL_IO_READ_MB: 6.25, TOTAL_LOG_FILES_SIZE: 0, TOTAL_IO_WRITE_MB: 6.25 },
        numOutputFileGroups: 1,
        extraMetadata: null,
        version: 1,
      },
    ],
    strategy: {
      strategyClassName: 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy',
      strategyParams: { 'hoodie.clustering.plan.strategy.sort.columns': 'rider,ts' },
      version: 1,
    },
    extraMetadata: {},
    version: 1,
    preserveHoodieMetadata: true,
  },
  extraMetadata: {},
  version: 1,
};

const CLEANER_PLAN: HoodieCleanerPlan = {
  earliestInstantToRetain: { timestamp: '20240102000000000', action: 'commit', state: 'COMPLETED' },
  lastCompletedCommitTimestamp: '20240105000000000',
  policy: 'KEEP_LATEST_COMMITS',
  filesToBeDeletedPerPartition: {},
  version: 2,
  filePathsToBeDeletedPerPartition: {
    '2024/01': [
      { filePath: 's3://bucket/trips/2024/01/a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet', isBootstrapBaseFile: false },
    ],
  },
  partitionsToBeDeleted: [],
  extraMetadata: { savepointed_timestamps: '' },
};

const CLEAN_METADATA: HoodieCleanMetadata = {
  startCleanTime: '20240105000100000',
  timeTakenInMillis: 842,
  totalFilesDeleted: 1,
  earliestCommitToRetain: '20240102000000000',
  lastCompletedCommitTimestamp: '20240105000000000',
  partitionMetadata: {
    '2024/01': {
      partitionPath: '2024/01',
      policy: 'KEEP_LATEST_COMMITS',
      deletePathPatterns: ['a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet'],
      successDeleteFiles: ['a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet'],
      failedDeleteFiles: [],
      isPartitionDeleted: false,
    },
  },
  version: 2,
  bootstrapPartitionMetadata: {},
  extraMetadata: null,
};

const ROLLBACK_PLAN: HoodieRollbackPlan = {
  instantToRollback: { commitTime: '20240106000000000', action: 'replacecommit' },
  RollbackRequests: [
    {
      partitionPath: '2024/01',
      fileId: '',
      latestBaseInstant: '',
      filesToBeDeleted: ['s3://bucket/trips/2024/01/f0e1d2c3-0000-4000-8000-000000000009-0_0-1-1_20240106000000000.parquet'],
      logBlocksToBeDeleted: {},
    },
  ],
  version: 1,
};

const ROLLBACK_METADATA: HoodieRollbackMetadata = {
  startRollbackTime: '20240106000500000',
  timeTakenInMillis: 195,
  totalFilesDeleted: 1,
  commitsRollback: ['20240106000000000'],
  partitionMetadata: {
    '2024/01': {
      partitionPath: '2024/01',
      successDeleteFiles: ['s3://bucket/trips/2024/01/f0e1d2c3-0000-4000-8000-000000000009-0_0-1-1_20240106000000000.parquet'],
      failedDeleteFiles: [],
      rollbackLogFiles: null,
      logFilesFromFailedCommit: { 's3://bucket/trips/2024/01/.f0e1d2c3-0000-4000-8000-000000000008-0_20240105.log.1_0-1-1': 11828 },
    },
  },
  version: 1,
  instantsRollback: [{ commitTime: '20240106000000000', action: 'replacecommit' }],
};

const SAMPLE_RECORDS: { [K in TimelineAvroKind]: TimelineAvroRecords[K] } = {
  requestedReplace: CLUSTERING_PLAN,
  cleanerPlan: CLEANER_PLAN,
  cleanMetadata: CLEAN_METADATA,
  rollbackPlan: ROLLBACK_PLAN,
  rollbackMetadata: ROLLBACK_METADATA,
};

/** What a reader with the official schema sees: the 0.14/0.15-only field is dropped. */
function asOfficialSees(kind: TimelineAvroKind, record: unknown): unknown {
  if (kind !== 'rollbackMetadata') return record;
  const metadata = structuredClone(record) as HoodieRollbackMetadata;
  for (const partition of Object.values(metadata.partitionMetadata)) {
    delete (partition as Partial<typeof partition>).logFilesFromFailedCommit;
  }
  return metadata;
}

/** Decode a file and encode the record again with the file's own sync marker. */
function reencode<K extends TimelineAvroKind>(kind: K, original: Uint8Array, file: string): Uint8Array {
  const record = decodeTimelineAvro(kind, original, file);
  return encodeTimelineAvro(kind, record, { syncMarker: syncMarkerOf(original) });
}

function assertUnreadable(read: () => unknown, location: string, pattern: RegExp): void {
  assert.throws(read, (error: unknown) => {
    assert.ok(error instanceof HudiError, `expected a HudiError, got ${String(error)}`);
    assert.equal(error.location, location);
    assert.ok(error.message.includes(location), `message names the file: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------------

describe('Avro timeline files written by Hudi', () => {
  let extracted = '';

  before(() => {
    extracted = mkdtempSync(path.join(tmpdir(), 'avro-timeline-'));
    for (const [subfolder, zipFolder] of [
      ['cow', 'sample_table/cow'],
      ['mor', 'sample_table/mor/parquet'],
      ['trips', 'quickstart_trips_table/mor/avro'],
    ] as const) {
      const folder = path.join(hudiRsData, zipFolder);
      for (const zip of readdirSync(folder).filter((name) => name.startsWith('v6_') && name.endsWith('.zip'))) {
        unzipFixture(path.join(folder, zip), path.join(extracted, subfolder));
      }
    }
  });

  after(() => {
    if (extracted !== '') rmSync(extracted, { recursive: true, force: true });
  });

  it('decodes every v6 Avro timeline file in the fixtures', () => {
    const files = [...findTimelineAvroFiles(path.join(hudiFixtures, 'tables')), ...findTimelineAvroFiles(extracted)];
    const relative = files.map((file) => (file.startsWith(extracted) ? path.relative(extracted, file) : file));
    for (const known of [COW_OVERWRITE_REQUESTED, MOR_OVERWRITE_REQUESTED, MOR_ROLLBACK_REQUESTED, MOR_ROLLBACK_COMPLETED, KAZDY_REPLACE_REQUESTED]) {
      assert.ok(relative.includes(known), `found ${known}`);
    }
    for (const file of files) {
      const kind = kindOfFile(path.basename(file));
      assert.ok(kind !== undefined);
      const bytes = readFileSync(file);
      const record =
        kind === 'requestedReplace' ? decodeRequestedReplaceMetadata(bytes, file) : decodeTimelineAvro(kind, bytes, file);
      assert.equal(typeof record, 'object', file);
    }
  });

  it('0.12.1 clustering plan (kazdy HUDI-8259) matches the golden JSON', () => {
    const bytes = readFileSync(KAZDY_REPLACE_REQUESTED);
    const record = decodeTimelineAvro('requestedReplace', bytes, KAZDY_REPLACE_REQUESTED);
    assert.deepEqual(record, readGolden('kazdy_clustering.20230329224554584.replacecommit.requested.json'));
    assert.equal(record.clusteringPlan?.inputGroups?.[0]?.slices?.[0]?.fileId, '7712815f-3aa9-4a6c-b2d3-c2862af62dc4-0');
  });

  it('insert_overwrite requested files (cow and mor) are the all-null record', () => {
    const golden = readGolden('v6_overwritetable.20240707001303088.replacecommit.requested.json');
    assert.deepEqual(golden, emptyRequestedReplaceMetadata());
    for (const relative of [COW_OVERWRITE_REQUESTED, MOR_OVERWRITE_REQUESTED]) {
      const file = path.join(extracted, relative);
      assert.deepEqual(decodeTimelineAvro('requestedReplace', readFileSync(file), file), golden);
      assert.deepEqual(decodeRequestedReplaceMetadata(readFileSync(file), file), golden);
    }
  });

  it('rollback plan and rollback metadata match the golden JSON', () => {
    const planFile = path.join(extracted, MOR_ROLLBACK_REQUESTED);
    assert.deepEqual(
      decodeTimelineAvro('rollbackPlan', readFileSync(planFile), planFile),
      readGolden('v6_mor_rollback.20250126040936578.rollback.requested.json'),
    );
    const metadataFile = path.join(extracted, MOR_ROLLBACK_COMPLETED);
    const metadata = decodeTimelineAvro('rollbackMetadata', readFileSync(metadataFile), metadataFile);
    assert.deepEqual(metadata, readGolden('v6_mor_rollback.20250126040936578.rollback.json'));
    assert.equal(metadata.partitionMetadata['']?.logFilesFromFailedCommit?.[
      'file:/opt/data/external_tables/v6_nonpartitioned_rollback/.0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43'
    ], 11828);
  });

  it('re-encoding a real file with its sync marker reproduces it byte for byte', () => {
    const cases: [TimelineAvroKind, string][] = [
      ['requestedReplace', KAZDY_REPLACE_REQUESTED],
      ['requestedReplace', path.join(extracted, COW_OVERWRITE_REQUESTED)],
      ['requestedReplace', path.join(extracted, MOR_OVERWRITE_REQUESTED)],
      ['rollbackPlan', path.join(extracted, MOR_ROLLBACK_REQUESTED)],
      ['rollbackMetadata', path.join(extracted, MOR_ROLLBACK_COMPLETED)],
    ];
    for (const [kind, file] of cases) {
      const original = new Uint8Array(readFileSync(file));
      assert.deepEqual(reencode(kind, original, file), original, file);
    }
  });

  it('our writer schemas equal the ones real 0.14/0.15 files embed', () => {
    assert.equal(timelineAvroSchemaText('requestedReplace'), readEmbeddedSchema('HoodieRequestedReplaceMetadata.hudi-0.14-0.15'));
    assert.equal(timelineAvroSchemaText('requestedReplace'), readEmbeddedSchema('HoodieRequestedReplaceMetadata.hudi-0.12.1'));
    assert.equal(timelineAvroSchemaText('rollbackPlan'), readEmbeddedSchema('HoodieRollbackPlan.hudi-0.14-0.15'));
    assert.equal(timelineAvroSchemaText('rollbackMetadata'), readEmbeddedSchema('HoodieRollbackMetadata.hudi-0.14-0.15'));
  });
});

describe('Avro timeline files we write', () => {
  const officialTypes = loadOfficialTypes();

  for (const kind of TIMELINE_AVRO_KINDS) {
    it(`${kind}: round-trips through our decoder`, () => {
      const bytes = encodeTimelineAvro(kind, SAMPLE_RECORDS[kind]);
      assert.deepEqual(decodeTimelineAvro(kind, bytes, `test/${kind}`), SAMPLE_RECORDS[kind]);
    });

    it(`${kind}: reads with the official Hudi schema; header as Java writes it`, async () => {
      const bytes = encodeTimelineAvro(kind, SAMPLE_RECORDS[kind]);
      assert.deepEqual([...bytes.subarray(0, 4)], [...Buffer.from('Obj\x01', 'latin1')]);
      const officialType = officialTypes.get(OFFICIAL_ROOT_OF_KIND[kind]);
      assert.ok(officialType !== undefined);
      const read = await readWithAvscStreams(bytes, officialType);
      assert.deepEqual(read.metadataKeys, ['avro.schema'], 'no avro.codec key');
      assert.equal(read.codec, 'null');
      assert.equal(read.writerName, `org.apache.hudi.avro.model.${OFFICIAL_ROOT_OF_KIND[kind]}`);
      assert.equal(read.records.length, 1);
      assert.deepEqual(read.records[0], asOfficialSees(kind, SAMPLE_RECORDS[kind]));
    });
  }

  it('the insert_overwrite empty record round-trips, and a 0-byte requested file reads as it', () => {
    const bytes = encodeTimelineAvro('requestedReplace', emptyRequestedReplaceMetadata());
    assert.deepEqual(decodeTimelineAvro('requestedReplace', bytes, 'x.replacecommit.requested'), emptyRequestedReplaceMetadata());
    assert.deepEqual(decodeRequestedReplaceMetadata(new Uint8Array(0), 'x.replacecommit.requested'), emptyRequestedReplaceMetadata());
  });

  it('two encodings differ only in their random sync marker', () => {
    const first = encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN);
    const second = encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN);
    assert.notDeepEqual(syncMarkerOf(first), syncMarkerOf(second));
    const sync = new Uint8Array(16).fill(7);
    assert.deepEqual(
      encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN, { syncMarker: sync }),
      encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN, { syncMarker: sync }),
    );
  });

  it('refuses a record that does not fit the schema, naming the field', () => {
    const broken = { ...CLEANER_PLAN, policy: undefined } as unknown as HoodieCleanerPlan;
    assert.throws(() => encodeTimelineAvro('cleanerPlan', broken), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, /HoodieCleanerPlan.*policy/);
      return true;
    });
  });
});

describe('Avro timeline files from other schema versions and writers', () => {
  it('reads the older and alternative clean / rollback schemas, deflate-compressed', async () => {
    const altCleanMetadata = loadAltType('HoodieCleanMetadata@277d290b.avsc', ['HoodieCleanPartitionMetadata']);
    const { extraMetadata: _dropped, ...cleanWithoutExtra } = CLEAN_METADATA;
    const cleanBytes = await writeWithAvscStreams(altCleanMetadata, { policy: 'KEEP_LATEST_COMMITS', ...cleanWithoutExtra }, 'deflate');
    assert.deepEqual(decodeTimelineAvro('cleanMetadata', cleanBytes, 'alt.clean'), { ...CLEAN_METADATA, extraMetadata: null });

    const altCleanerPlan = loadAltType('HoodieCleanerPlan@42a480fc.avsc', []);
    const { lastCompletedCommitTimestamp: _ts, extraMetadata: _extra, ...planWithoutNewFields } = CLEANER_PLAN;
    const planBytes = await writeWithAvscStreams(altCleanerPlan, planWithoutNewFields, 'null');
    assert.deepEqual(decodeTimelineAvro('cleanerPlan', planBytes, 'alt.clean.requested'), {
      ...CLEANER_PLAN,
      lastCompletedCommitTimestamp: '',
      extraMetadata: null,
    });

    const altRollback = loadAltType('HoodieRollbackMetadata@12de2d8c.avsc', ['HoodieInstantInfo']);
    const older = structuredClone(ROLLBACK_METADATA) as unknown as {
      partitionMetadata: Record<string, Record<string, unknown>>;
    };
    for (const partition of Object.values(older.partitionMetadata)) {
      delete partition['logFilesFromFailedCommit'];
      partition['writtenLogFiles'] = { 'some.log': 3 };
    }
    const rollbackBytes = await writeWithAvscStreams(altRollback, older, 'deflate');
    const decoded = decodeTimelineAvro('rollbackMetadata', rollbackBytes, 'alt.rollback');
    assert.equal(decoded.partitionMetadata['2024/01']?.logFilesFromFailedCommit, null);
    assert.deepEqual(decoded.commitsRollback, ROLLBACK_METADATA.commitsRollback);
  });

  it('refuses a file that holds another record type', () => {
    const bytes = encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN);
    assert.throws(() => decodeTimelineAvro('cleanerPlan', bytes, 'x.clean.requested'), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, /^x\.clean\.requested: holds an Avro org\.apache\.hudi\.avro\.model\.HoodieRollbackPlan record/);
      return true;
    });
  });
});

describe('unreadable Avro timeline files', () => {
  const location = 's3://bucket/table/.hoodie/20240106000000000.rollback.requested';
  const unreadable = /truncated or not an Avro container file/;
  const valid = encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN);

  it('zero bytes: a HudiError saying it is empty', () => {
    assertUnreadable(() => decodeTimelineAvro('rollbackPlan', new Uint8Array(0), location), location, /empty \(0 bytes\)/);
  });

  it('truncated at any point: a HudiError naming the file', () => {
    for (let length = 1; length < valid.length; length++) {
      assertUnreadable(() => decodeTimelineAvro('rollbackPlan', valid.subarray(0, length), location), location, unreadable);
    }
  });

  it('random bytes, with and without the Avro magic', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const noise = pseudoRandomBytes(64 + seed * 13, seed);
      assertUnreadable(() => decodeTimelineAvro('rollbackPlan', noise, location), location, unreadable);
      const withMagic = new Uint8Array([...Buffer.from('Obj\x01', 'latin1'), ...noise]);
      assertUnreadable(() => decodeTimelineAvro('rollbackPlan', withMagic, location), location, unreadable);
    }
  });

  it('a valid header with a corrupt record block', () => {
    // The record bytes sit between the block's count/size varints and the trailing 16-byte sync marker.
    const recordLength = avro.Type.forSchema(JSON.parse(timelineAvroSchemaText('rollbackPlan')) as avro.Schema).toBuffer(ROLLBACK_PLAN).length;
    const recordStart = valid.length - 16 - recordLength;
    for (let seed = 1; seed <= 50; seed++) {
      const corrupt = new Uint8Array(valid);
      corrupt.set(pseudoRandomBytes(recordLength, seed), recordStart);
      assertUnreadable(() => decodeTimelineAvro('rollbackPlan', corrupt, location), location, unreadable);
    }
  });

  it('a huge array count fails fast instead of looping', () => {
    // instantToRollback = null, then RollbackRequests = an array claiming 2^31-1 items in a 7-byte record
    // (avsc alone spins over such a count for minutes).
    const sync = new Uint8Array(16).fill(1);
    const header = encodeTimelineAvro('rollbackPlan', ROLLBACK_PLAN, { syncMarker: sync }).subarray(0, indexAfterHeader(valid));
    const record = Buffer.concat([Buffer.from([0x00, 0x02]), avro.Type.forSchema('long').toBuffer(2 ** 31 - 1)]);
    const block = Buffer.concat([
      avro.Type.forSchema('long').toBuffer(1),
      avro.Type.forSchema('long').toBuffer(record.length),
      record,
      sync,
    ]);
    const file = new Uint8Array([...header, ...block]);
    assertUnreadable(() => decodeTimelineAvro('rollbackPlan', file, location), location, unreadable);
  });

  it('a deflate block that does not inflate', async () => {
    const type = avro.Type.forSchema(JSON.parse(timelineAvroSchemaText('rollbackPlan')) as avro.Schema);
    const bytes = await writeWithAvscStreams(type, ROLLBACK_PLAN, 'deflate');
    const deflated = deflateRawSync(type.toBuffer(ROLLBACK_PLAN));
    const start = Buffer.from(bytes).indexOf(deflated);
    assert.ok(start > 0);
    const corrupt = new Uint8Array(bytes);
    corrupt.fill(0xff, start, start + deflated.length);
    assertUnreadable(() => decodeTimelineAvro('rollbackPlan', corrupt, location), location, unreadable);
  });
});

/** Offset just after the header (magic, metadata map, sync) of a file we wrote: the schema text is known. */
function indexAfterHeader(bytes: Uint8Array): number {
  const schemaText = Buffer.from(timelineAvroSchemaText('rollbackPlan'), 'utf8');
  const schemaEnd = Buffer.from(bytes).indexOf(schemaText) + schemaText.length;
  return schemaEnd + 1 /* map end */ + 16 /* sync */;
}
