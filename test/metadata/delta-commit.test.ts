/**
 * A metadata-table deltacommit whose bloom-filter log files are each large (a commit of hundreds of base files):
 * each large log file uploads while the next is encoded, and every log file holds exactly the bytes the plain
 * (synchronous, joined) encoders give for its records.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writeHudiLogBlockHFile } from '../../lib/hfile/index.js';
import { encodeLogBlock } from '../../lib/log-format/index.js';
import { encodeMetadataRecord } from '../../lib/metadata/codec.js';
import type { MetadataChange } from '../../lib/metadata/convert.js';
import { routeChanges, writeDeltaCommit } from '../../lib/metadata/delta-commit.js';
import { type MetadataFileGroup, partitionFolder } from '../../lib/metadata/file-groups.js';
import { fileGroupId } from '../../lib/metadata/partitions.js';
import { bloomFilterRecord, type MetadataRecord } from '../../lib/metadata/records.js';
import { METADATA_RECORD_WRITER_SCHEMA_TEXT } from '../../lib/metadata/schema.js';
import { metadataInstantPath } from '../../lib/metadata/timeline.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { tempDir } from '../helpers/fixtures.js';

const INSTANT = '20240101000000000';
/** What delta-commit.ts writes alone, one after the other (LARGE_LOG_BYTES). */
const LARGE_LOG_BYTES = 16 * 1024 * 1024;

/** A bloom filter's Base64 text as Hudi's footers hold it: mostly 'A' (zero bits), a few set bits, distinct per file. */
function bloomText(seed: number, length = 430_000): Uint8Array {
  const text = new Uint8Array(length).fill(65);
  let state = seed * 2654435761 + 1;
  for (let i = 0; i < length / 7; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    text[state % length] = 66 + (state % 60);
  }
  return text;
}

function emptyGroup(index: number): MetadataFileGroup {
  const fileId = fileGroupId('bloom_filters', index);
  return { partition: 'bloom_filters', fileId, latest: { fileId, baseInstant: '00000000000000010', baseFile: undefined, logFiles: [] }, allLogFiles: [] };
}

describe('a deltacommit of large log files', () => {
  it('uploads each large log file while the next is encoded; every log file has the plain encoders’ bytes', async () => {
    const groups = [0, 1, 2].map(emptyGroup);
    const records: MetadataRecord[] = Array.from({ length: 150 }, (_, i) =>
      bloomFilterRecord(`2024-01-0${1 + (i % 5)}`, `file-${i}_0-1-0_${INSTANT}.parquet`, INSTANT, { type: 'DYNAMIC_V0', serialized: bloomText(i) }),
    );
    const changes: MetadataChange[] = records.map((record) => ({ record }));
    const routed = routeChanges('bloom_filters', changes, groups);
    assert.equal(routed.size, 3);
    for (const { records: inGroup } of routed.values()) {
      assert.ok(
        inGroup.reduce((sum, record) => sum + (record.type === 4 ? record.bloomFilter.bloomFilter.length : 0), 0) >= LARGE_LOG_BYTES,
        'every group is large',
      );
    }

    // The first log file's upload is held until another log file's upload starts: encoded one after the other with
    // no overlap, the second could never start and the commit would not finish.
    const local = openStorage(tempDir('mdt-delta-commit-'));
    const logsStarted: string[] = [];
    let releaseFirst: () => void = () => {};
    const secondStarted = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const storage: Storage = Object.create(local);
    storage.putIfAbsent = async (path, body) => {
      if (/\.log\.1_\d+-1-0$/.test(path)) {
        logsStarted.push(path);
        if (logsStarted.length === 1) await secondStarted;
        else releaseFirst();
      }
      return local.putIfAbsent(path, body);
    };
    const stats = await writeDeltaCommit(storage, {
      instantTime: INSTANT,
      changes: new Map([['bloom_filters', changes]]),
      fileGroups: new Map([['bloom_filters', groups]]),
    });
    assert.equal(logsStarted.length, 3);
    assert.deepEqual(stats.map((stat) => stat.records).sort(), [...routed.values()].map((work) => work.records.length).sort());

    // Each log file: one HFILE_DATA_BLOCK of its group's records, as writeHudiLogBlockHFile and encodeLogBlock write it.
    for (const stat of stats) {
      const inGroup = routed.get(stat.fileId)!.records;
      const content = writeHudiLogBlockHFile(
        inGroup.map((record) => ({ key: record.key, value: encodeMetadataRecord(record) })),
        { schema: METADATA_RECORD_WRITER_SCHEMA_TEXT, gzipLevel: 1, gzipStrategy: 'run-length' },
      );
      const expected = encodeLogBlock({
        type: 'HFILE_DATA_BLOCK',
        header: { INSTANT_TIME: INSTANT, SCHEMA: METADATA_RECORD_WRITER_SCHEMA_TEXT },
        content,
      });
      const written = await local.get(`${partitionFolder('bloom_filters')}/${stat.path.split('/')[1]}`);
      assert.equal(written.length, expected.length, stat.path);
      assert.ok(Buffer.from(written).equals(expected), `${stat.path} has the plain encoders' bytes`);
      assert.equal(stat.bytes, expected.length);
    }
    assert.ok((await local.head(metadataInstantPath({ time: INSTANT, action: 'deltacommit', state: 'COMPLETED' }))) !== undefined);
  });
});
