/**
 * Avro timeline files: the files Hudi 0.15 wrote into the fixture tables decode the same with our decoder and with
 * avsc + Hudi's official schemas (test/fixtures/avro), our files read back with the official schemas and are
 * byte-identical to Java's output, and unreadable input fails with a HudiError naming the file.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { HudiError } from '../../lib/errors.js';
import {
  decodeRequestedReplaceMetadata,
  decodeTimelineAvro,
  emptyRequestedReplaceMetadata,
  encodeTimelineAvro,
  type HoodieCleanerPlan,
  type HoodieCleanMetadata,
  type HoodieRequestedReplaceMetadata,
  type HoodieRollbackMetadata,
  type HoodieRollbackPlan,
  type HoodieSavepointMetadata,
  TIMELINE_AVRO_KINDS,
  type TimelineAvroKind,
  type TimelineAvroRecords,
  timelineAvroSchemaText,
} from '../../lib/timeline/avro-files.js';
import { nestedRecord, officialAvroType, readOfficial, readWithAvscStreams, type ThirdPartyRead } from '../helpers/avro-official.js';
import { committedTable, completedWrites, expectedOf, FIXTURE_TABLES, officialAvroSchema } from '../helpers/fixtures.js';

/** Timeline files Hudi 0.15 wrote into the fixture tables. */
const CLUSTERING_PLAN_FILE = path.join(
  committedTable('v6_clustering_pending'),
  '.hoodie',
  `${expectedOf('v6_clustering_pending').facts?.['clusteringInstant']}.replacecommit.requested`,
);
const V5_CLUSTERING_PLAN_FILE = path.join(
  committedTable('v5_cow_clustered_pending'),
  '.hoodie',
  `${expectedOf('v5_cow_clustered_pending').facts?.['clusteringInstant']}.replacecommit.requested`,
);
const OVERWRITE_REQUESTED_FILE = path.join(
  committedTable('v6_simplekeygen_nonhivestyle_overwritetable'),
  '.hoodie',
  `${completedWrites(expectedOf('v6_simplekeygen_nonhivestyle_overwritetable'))[2]}.replacecommit.requested`,
);
const ROLLBACK_TIME = expectedOf('v6_rollback').timeline.find((instant) => instant.action === 'rollback')!.time;
const ROLLBACK_REQUESTED_FILE = path.join(committedTable('v6_rollback'), '.hoodie', `${ROLLBACK_TIME}.rollback.requested`);
const ROLLBACK_FILE = path.join(committedTable('v6_rollback'), '.hoodie', `${ROLLBACK_TIME}.rollback`);
const CLEAN_TIME = expectedOf('v5_cow_clustered_pending').timeline.find((instant) => instant.action === 'clean')!.time;
const CLEAN_REQUESTED_FILE = path.join(committedTable('v5_cow_clustered_pending'), '.hoodie', `${CLEAN_TIME}.clean.requested`);
const CLEAN_FILE = path.join(committedTable('v5_cow_clustered_pending'), '.hoodie', `${CLEAN_TIME}.clean`);

/** Which kind of record a v6 timeline file name holds; undefined for non-Avro instant files. */
function kindOfFile(fileName: string): TimelineAvroKind | undefined {
  if (fileName.endsWith('.replacecommit.requested')) return 'requestedReplace';
  if (fileName.endsWith('.clean.requested') || fileName.endsWith('.clean.inflight')) return 'cleanerPlan';
  if (fileName.endsWith('.clean')) return 'cleanMetadata';
  if (fileName.endsWith('.rollback.requested')) return 'rollbackPlan';
  if (fileName.endsWith('.rollback')) return 'rollbackMetadata';
  return undefined;
}

/** Every Avro timeline file under `root`, skipping Hudi 1.x `.hoodie/timeline/`. */
function findTimelineAvroFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((relative) => path.join(root, relative))
    .filter((file) => {
      const parts = file.split(path.sep);
      return parts.includes('.hoodie') && !parts.includes('timeline') && kindOfFile(path.basename(file)) !== undefined && statSync(file).isFile();
    })
    .sort();
}

/** The last 16 bytes of a one-block container are its sync marker. */
function syncMarkerOf(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(bytes.length - 16);
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
// The official schemas (Hudi 0.15's getClassSchema(), each self-contained), as a reader would use them.

const OFFICIAL_ROOT_OF_KIND: Record<TimelineAvroKind, string> = {
  requestedReplace: 'HoodieRequestedReplaceMetadata',
  cleanerPlan: 'HoodieCleanerPlan',
  cleanMetadata: 'HoodieCleanMetadata',
  rollbackPlan: 'HoodieRollbackPlan',
  rollbackMetadata: 'HoodieRollbackMetadata',
  savepointMetadata: 'HoodieSavepointMetadata',
  mergeArchivePlan: 'HoodieMergeArchiveFilePlan',
  compactionPlan: 'HoodieCompactionPlan',
};

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
    '2024/01': [{ filePath: 's3://bucket/trips/2024/01/a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet', isBootstrapBaseFile: false }],
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

const SAVEPOINT_METADATA: HoodieSavepointMetadata = {
  savepointedBy: 'etl',
  savepointedAt: 1704067200,
  comments: 'before the backfill',
  partitionMetadata: {
    '2024/01': { partitionPath: '2024/01', savepointDataFile: ['a1b2c3d4-0000-4000-8000-000000000001-0_0-10-20_20240101120000000.parquet'] },
  },
  version: 1,
};

const SAMPLE_RECORDS: { [K in TimelineAvroKind]: TimelineAvroRecords[K] } = {
  requestedReplace: CLUSTERING_PLAN,
  cleanerPlan: CLEANER_PLAN,
  cleanMetadata: CLEAN_METADATA,
  rollbackPlan: ROLLBACK_PLAN,
  rollbackMetadata: ROLLBACK_METADATA,
  savepointMetadata: SAVEPOINT_METADATA,
  mergeArchivePlan: {
    version: 1,
    candidate: ['s3://bucket/trips/.hoodie/archived/.commits_.archive.2_1-0-1', 's3://bucket/trips/.hoodie/archived/.commits_.archive.1_1-0-1'],
    mergedArchiveFileName: '.commits_.archive.3_1-0-1',
  },
  compactionPlan: {
    operations: [
      {
        baseInstantTime: '20240101120000000001',
        deltaFilePaths: ['.files-0000-0_20240101120000000001.log.1_0-1-0', '.files-0000-0_20240101120000000001.log.2_0-1-0'],
        dataFilePath: 'files-0000-0_0-9-8_20240101120000000001.hfile',
        fileId: 'files-0000-0',
        partitionPath: 'files',
        metrics: { TOTAL_LOG_FILES: 2, TOTAL_IO_MB: 120.5 },
        bootstrapFilePath: null,
      },
      {
        baseInstantTime: '20240101120000000010',
        deltaFilePaths: ['.record-index-0000-0_20240101120000000010.log.1_0-1-0'],
        dataFilePath: null,
        fileId: 'record-index-0000-0',
        partitionPath: 'record_index',
        metrics: {},
        bootstrapFilePath: null,
      },
    ],
    extraMetadata: {},
    version: 2,
    strategy: null,
    preserveHoodieMetadata: false,
  },
};

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
  /** Ours and avsc's (official schema) decoding of a Hudi-written file: the same record. */
  async function decodedBoth<K extends TimelineAvroKind>(
    kind: K,
    file: string,
  ): Promise<{ ours: TimelineAvroRecords[K]; official: ThirdPartyRead & { record: unknown } }> {
    const bytes = readFileSync(file);
    const ours = decodeTimelineAvro(kind, bytes, file);
    const official = await readOfficial(bytes, OFFICIAL_ROOT_OF_KIND[kind]);
    assert.deepEqual(ours, official.record, file);
    return { ours, official };
  }

  it('decodes every Avro timeline file in the fixtures', () => {
    const files = findTimelineAvroFiles(FIXTURE_TABLES);
    for (const known of [
      CLUSTERING_PLAN_FILE,
      V5_CLUSTERING_PLAN_FILE,
      OVERWRITE_REQUESTED_FILE,
      ROLLBACK_REQUESTED_FILE,
      ROLLBACK_FILE,
      CLEAN_REQUESTED_FILE,
      CLEAN_FILE,
    ]) {
      assert.ok(files.includes(known), `found ${known}`);
    }
    for (const file of files) {
      const kind = kindOfFile(path.basename(file));
      assert.ok(kind !== undefined);
      const bytes = readFileSync(file);
      const record = kind === 'requestedReplace' ? decodeRequestedReplaceMetadata(bytes, file) : decodeTimelineAvro(kind, bytes, file);
      assert.equal(typeof record, 'object', file);
    }
  });

  it('clustering plans Hudi scheduled (CALL run_clustering) decode as avsc reads them with the official schema', async () => {
    for (const [file, table] of [
      [CLUSTERING_PLAN_FILE, 'v6_clustering_pending'],
      [V5_CLUSTERING_PLAN_FILE, 'v5_cow_clustered_pending'],
    ] as const) {
      const { ours } = await decodedBoth('requestedReplace', file);
      assert.equal(ours.operationType, 'CLUSTER');
      const fileIds = new Set(expectedOf(table).fileGroups.map((group) => group.fileId));
      const slices = ours.clusteringPlan?.inputGroups?.flatMap((group) => group.slices) ?? [];
      assert.ok(slices.length >= 3, file);
      // The v5 table's inputs were cleaned after clustering; the pending plan's are all on disk.
      if (table === 'v6_clustering_pending')
        assert.ok(
          slices.every((slice) => slice !== null && fileIds.has(String(slice.fileId))),
          file,
        );
    }
  });

  it('the insert_overwrite requested file is the all-null record', async () => {
    const { ours } = await decodedBoth('requestedReplace', OVERWRITE_REQUESTED_FILE);
    assert.deepEqual(ours, emptyRequestedReplaceMetadata());
    assert.deepEqual(decodeRequestedReplaceMetadata(readFileSync(OVERWRITE_REQUESTED_FILE), OVERWRITE_REQUESTED_FILE), emptyRequestedReplaceMetadata());
  });

  it('the rollback plan and metadata of a failed write Hudi rolled back', async () => {
    const plan = (await decodedBoth('rollbackPlan', ROLLBACK_REQUESTED_FILE)).ours;
    const metadata = (await decodedBoth('rollbackMetadata', ROLLBACK_FILE)).ours;
    const failed = plan.instantToRollback?.commitTime;
    assert.ok(failed);
    assert.equal(plan.instantToRollback?.action, 'commit');
    // Rolled back: no longer on the timeline, between the commit before it and the rollback.
    const timeline = expectedOf('v6_rollback').timeline;
    assert.ok(!timeline.some((instant) => instant.time === failed));
    assert.ok(failed > timeline[0]!.time && failed < ROLLBACK_TIME);
    assert.deepEqual(metadata.commitsRollback, [failed]);
    assert.deepEqual(metadata.instantsRollback, [{ commitTime: failed, action: 'commit' }]);
    const deleted = Object.values(metadata.partitionMetadata).flatMap((partition) => partition.successDeleteFiles);
    assert.equal(deleted.length, 1);
    assert.ok(deleted[0]!.endsWith(`_${failed}.parquet`), deleted[0]);
    assert.equal(metadata.partitionMetadata['']?.logFilesFromFailedCommit !== undefined, true);
  });

  it('the cleaner plan and clean metadata of a clean Hudi ran (CALL run_clean)', async () => {
    const plan = (await decodedBoth('cleanerPlan', CLEAN_REQUESTED_FILE)).ours;
    const metadata = (await decodedBoth('cleanMetadata', CLEAN_FILE)).ours;
    assert.equal(plan.policy, 'KEEP_LATEST_COMMITS');
    assert.ok(metadata.totalFilesDeleted >= 3, `${metadata.totalFilesDeleted} files cleaned`);
    assert.equal(metadata.startCleanTime, CLEAN_TIME);
    // The clustering's replaced files are gone from the table.
    for (const partition of Object.values(metadata.partitionMetadata)) {
      for (const file of partition.successDeleteFiles) {
        assert.ok(!expectedOf('v5_cow_clustered_pending').fileGroups.some((group) => group.files.some((kept) => kept.endsWith(file))), file);
      }
    }
  });

  it('re-encoding a real file with its sync marker reproduces it byte for byte', () => {
    const cases: [TimelineAvroKind, string][] = [
      ['requestedReplace', CLUSTERING_PLAN_FILE],
      ['requestedReplace', V5_CLUSTERING_PLAN_FILE],
      ['requestedReplace', OVERWRITE_REQUESTED_FILE],
      ['rollbackPlan', ROLLBACK_REQUESTED_FILE],
      ['rollbackMetadata', ROLLBACK_FILE],
      // The clean files too, now that our schemas carry Hudi's exact header text (maps keep the file's entry order).
      ['cleanerPlan', CLEAN_REQUESTED_FILE],
      ['cleanMetadata', CLEAN_FILE],
    ];
    for (const [kind, file] of cases) {
      const original = new Uint8Array(readFileSync(file));
      assert.deepEqual(reencode(kind, original, file), original, file);
    }
  });

  it('our writer schemas equal the ones Hudi 0.15 files embed, and the official schemas', async () => {
    const cases: [TimelineAvroKind, string][] = [
      ['requestedReplace', CLUSTERING_PLAN_FILE],
      ['rollbackPlan', ROLLBACK_REQUESTED_FILE],
      ['rollbackMetadata', ROLLBACK_FILE],
      ['cleanerPlan', CLEAN_REQUESTED_FILE],
      ['cleanMetadata', CLEAN_FILE],
    ];
    for (const [kind, file] of cases) {
      const read = await readWithAvscStreams(readFileSync(file), officialAvroType(OFFICIAL_ROOT_OF_KIND[kind]));
      assert.equal(read.writerSchemaText, JSON.stringify(officialAvroSchema(OFFICIAL_ROOT_OF_KIND[kind])), kind);
      // The clean schemas included, with the stray "default":null Hudi's .avsc files leave inside some map types.
      assert.equal(timelineAvroSchemaText(kind), read.writerSchemaText, `${kind}: ${file}`);
    }
  });
});

describe('Avro timeline files we write', () => {
  for (const kind of TIMELINE_AVRO_KINDS) {
    it(`${kind}: round-trips through our decoder`, () => {
      const bytes = encodeTimelineAvro(kind, SAMPLE_RECORDS[kind]);
      assert.deepEqual(decodeTimelineAvro(kind, bytes, `test/${kind}`), SAMPLE_RECORDS[kind]);
    });

    it(`${kind}: reads with the official Hudi schema; header as Java writes it`, async () => {
      const bytes = encodeTimelineAvro(kind, SAMPLE_RECORDS[kind]);
      assert.deepEqual([...bytes.subarray(0, 4)], [...Buffer.from('Obj\x01', 'latin1')]);
      const read = await readWithAvscStreams(bytes, officialAvroType(OFFICIAL_ROOT_OF_KIND[kind]));
      assert.deepEqual(read.metadataKeys, ['avro.schema'], 'no avro.codec key');
      assert.equal(read.codec, 'null');
      assert.equal(read.writerName, `org.apache.hudi.avro.model.${OFFICIAL_ROOT_OF_KIND[kind]}`);
      assert.equal(read.records.length, 1);
      // Hudi 0.15's schemas have every field ours write (logFilesFromFailedCommit included).
      assert.deepEqual(read.records[0], SAMPLE_RECORDS[kind]);
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
    assert.throws(
      () => encodeTimelineAvro('cleanerPlan', broken),
      (error: unknown) => {
        assert.ok(error instanceof HudiError);
        assert.match(error.message, /HoodieCleanerPlan.*policy/);
        return true;
      },
    );
  });
});

describe('Avro timeline files from other schema versions and writers', () => {
  // Other Hudi versions' schemas, derived from 0.15's: a leading `policy` and no extraMetadata (an older
  // HoodieCleanMetadata), no lastCompletedCommitTimestamp / extraMetadata (an older HoodieCleanerPlan), and
  // writtenLogFiles instead of logFilesFromFailedCommit (an older HoodieRollbackPartitionMetadata).
  it('reads older and alternative clean / rollback schemas, deflate-compressed', async () => {
    const altCleanMetadata = officialAvroType('HoodieCleanMetadata', (schema) => {
      schema.fields = [{ name: 'policy', type: 'string' }, ...schema.fields.filter((field) => field.name !== 'extraMetadata')];
    });
    const { extraMetadata: _dropped, ...cleanWithoutExtra } = CLEAN_METADATA;
    const cleanBytes = await writeWithAvscStreams(altCleanMetadata, { policy: 'KEEP_LATEST_COMMITS', ...cleanWithoutExtra }, 'deflate');
    assert.deepEqual(decodeTimelineAvro('cleanMetadata', cleanBytes, 'alt.clean'), { ...CLEAN_METADATA, extraMetadata: null });

    const altCleanerPlan = officialAvroType('HoodieCleanerPlan', (schema) => {
      schema.fields = schema.fields.filter((field) => field.name !== 'lastCompletedCommitTimestamp' && field.name !== 'extraMetadata');
    });
    const { lastCompletedCommitTimestamp: _ts, extraMetadata: _extra, ...planWithoutNewFields } = CLEANER_PLAN;
    const planBytes = await writeWithAvscStreams(altCleanerPlan, planWithoutNewFields, 'null');
    assert.deepEqual(decodeTimelineAvro('cleanerPlan', planBytes, 'alt.clean.requested'), {
      ...CLEANER_PLAN,
      lastCompletedCommitTimestamp: '',
      extraMetadata: null,
    });

    const altRollback = officialAvroType('HoodieRollbackMetadata', (schema) => {
      const partition = nestedRecord(schema, 'HoodieRollbackPartitionMetadata');
      partition.fields = [
        ...partition.fields.filter((field) => field.name !== 'logFilesFromFailedCommit'),
        { name: 'writtenLogFiles', type: ['null', { type: 'map', values: 'long' }], default: null },
      ];
    });
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
    assert.throws(
      () => decodeTimelineAvro('cleanerPlan', bytes, 'x.clean.requested'),
      (error: unknown) => {
        assert.ok(error instanceof HudiError);
        assert.match(error.message, /^x\.clean\.requested: holds an Avro org\.apache\.hudi\.avro\.model\.HoodieRollbackPlan record/);
        return true;
      },
    );
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
    const block = Buffer.concat([avro.Type.forSchema('long').toBuffer(1), avro.Type.forSchema('long').toBuffer(record.length), record, sync]);
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
