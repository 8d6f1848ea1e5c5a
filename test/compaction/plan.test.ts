/**
 * The compaction plan codec and the compaction instant's files (lib/timeline/compaction-plan.ts), on local storage.
 * The writer schema itself is checked against Hudi 0.15's in test/timeline/avro-timeline.test.ts; a plan Spark wrote is
 * decoded in test/interop/metadata-table-compaction.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConflictError } from '../../lib/errors.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import {
  type CompactionPlan,
  compactionInstantPath,
  completeCompaction,
  decodeCompactionPlan,
  encodeCompactionPlan,
  pendingCompactions,
  readCompactionPlan,
  requestCompaction,
  sliceMetrics,
  startCompaction,
} from '../../lib/timeline/compaction-plan.js';
import { Timeline } from '../../lib/timeline/timeline.js';

const PLAN: CompactionPlan = {
  operations: [
    {
      baseInstantTime: '20240101120000000001',
      deltaFilePaths: ['.files-0000-0_20240101120000000001.log.1_0-1-0', '.files-0000-0_20240101120000000001.log.2_0-1-0'],
      dataFilePath: 'files-0000-0_0-9-8_20240101120000000001.hfile',
      fileId: 'files-0000-0',
      partitionPath: 'files',
      metrics: sliceMetrics(3 * 1024 * 1024, [1024, 2048]),
      bootstrapFilePath: null,
    },
    {
      baseInstantTime: '20240101120000000010',
      deltaFilePaths: ['.record-index-0000-0_20240101120000000010.log.1_0-1-0'],
      dataFilePath: null,
      fileId: 'record-index-0000-0',
      partitionPath: 'record_index',
      metrics: sliceMetrics(undefined, [10]),
      bootstrapFilePath: null,
    },
  ],
  extraMetadata: { note: 'x' },
  version: 2,
  strategy: { compactorClassName: 'org.example.Compactor', strategyParams: { a: 'b' }, version: 1 },
  preserveHoodieMetadata: false,
};

describe('compaction plan codec', () => {
  it('round-trips a plan', () => {
    assert.deepEqual(decodeCompactionPlan(encodeCompactionPlan(PLAN), 'x.compaction.requested'), PLAN);
    const plain = { ...PLAN, strategy: null, extraMetadata: {} };
    assert.deepEqual(decodeCompactionPlan(encodeCompactionPlan(plain), 'x.compaction.requested'), plain);
  });

  it('reads a version-1 plan (full paths) as file names, and fills Hudi defaults for nulls', () => {
    const bytes = encodeTimelineAvro('compactionPlan', {
      operations: [
        {
          baseInstantTime: '001',
          deltaFilePaths: ['s3a://b/t/2024/.f1_001.log.1_1-0-1'],
          dataFilePath: 's3a://b/t/2024/f1_1-0-1_001.parquet',
          fileId: 'f1',
          partitionPath: null,
          metrics: null,
          bootstrapFilePath: null,
        },
      ],
      extraMetadata: null,
      version: 1,
      strategy: null,
      preserveHoodieMetadata: null,
    });
    const plan = decodeCompactionPlan(bytes, 'x');
    assert.deepEqual(plan.operations[0], {
      baseInstantTime: '001',
      deltaFilePaths: ['.f1_001.log.1_1-0-1'],
      dataFilePath: 'f1_1-0-1_001.parquet',
      fileId: 'f1',
      partitionPath: '',
      metrics: {},
      bootstrapFilePath: null,
    });
    assert.equal(plan.version, 2);
    assert.deepEqual(plan.extraMetadata, {});
    assert.equal(plan.preserveHoodieMetadata, false);
  });

  it('refuses an operation without a file id, naming the file', () => {
    const bytes = encodeTimelineAvro('compactionPlan', {
      operations: [
        { baseInstantTime: '001', deltaFilePaths: [], dataFilePath: null, fileId: null, partitionPath: 'p', metrics: null, bootstrapFilePath: null },
      ],
      extraMetadata: null,
      version: 2,
      strategy: null,
      preserveHoodieMetadata: false,
    });
    assert.throws(() => decodeCompactionPlan(bytes, 'mdt/.hoodie/1.compaction.requested'), /operation 0 names no fileId/);
  });

  it('captures metrics as Hudi: whole MB, 120 MB written for a slice without a base file', () => {
    assert.deepEqual(sliceMetrics(3 * 1024 * 1024, [1024, 2048]), {
      TOTAL_IO_READ_MB: 3,
      TOTAL_IO_WRITE_MB: 3,
      TOTAL_IO_MB: 6,
      TOTAL_LOG_FILES_SIZE: 3072,
      TOTAL_LOG_FILES: 2,
    });
    assert.deepEqual(sliceMetrics(undefined, [10]), {
      TOTAL_IO_READ_MB: 0,
      TOTAL_IO_WRITE_MB: 120,
      TOTAL_IO_MB: 120,
      TOTAL_LOG_FILES_SIZE: 10,
      TOTAL_LOG_FILES: 1,
    });
  });
});

describe('compaction instant', () => {
  it('moves requested → inflight → commit in the given timeline folder, each file once', async () => {
    const storage = new LocalStorage(mkdtempSync(join(tmpdir(), 'compaction-plan-')));
    const metaFolder = '.hoodie/metadata/.hoodie';
    const time = '20240101120000000001';
    await requestCompaction(storage, time, PLAN, { metaFolder });
    assert.deepEqual(await readCompactionPlan(storage, time, { metaFolder }), PLAN);
    await startCompaction(storage, time, { metaFolder });
    assert.equal((await storage.get(compactionInstantPath(time, 'INFLIGHT', { metaFolder }))).length, 0);
    await assert.rejects(startCompaction(storage, time, { metaFolder }), ConflictError);
    await completeCompaction(storage, time, '{}', { metaFolder });
    const names = (await storage.listDir(metaFolder)).files.map((f) => f.path.slice(f.path.lastIndexOf('/') + 1)).sort();
    assert.deepEqual(names, [`${time}.commit`, `${time}.compaction.inflight`, `${time}.compaction.requested`]);
    assert.equal(compactionInstantPath(time, 'COMPLETED'), `.hoodie/${time}.commit`);
  });

  it('pendingCompactions: compaction instants not completed as commits', () => {
    const timeline = new Timeline([
      { time: '1', action: 'compaction', state: 'REQUESTED' },
      { time: '1', action: 'compaction', state: 'INFLIGHT' },
      { time: '1', action: 'commit', state: 'COMPLETED' },
      { time: '2', action: 'deltacommit', state: 'COMPLETED' },
      { time: '3', action: 'compaction', state: 'REQUESTED' },
      { time: '4', action: 'compaction', state: 'REQUESTED' },
      { time: '4', action: 'compaction', state: 'INFLIGHT' },
    ]);
    assert.deepEqual(pendingCompactions(timeline), [
      { time: '3', action: 'compaction', state: 'REQUESTED' },
      { time: '4', action: 'compaction', state: 'INFLIGHT' },
    ]);
  });
});
