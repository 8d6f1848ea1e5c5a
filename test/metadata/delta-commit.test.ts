/**
 * A metadata-table deltacommit whose bloom-filter log files are each large (a commit of hundreds of base files):
 * each large log file uploads while the next is encoded, and every log file holds exactly the bytes the plain
 * (synchronous, joined) encoders give for its records. Records still being read from footers are encoded as they
 * come in, the footers read in the file groups' order; nothing is written before all are in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BLOOM_FILTER_FOOTER_KEY } from '../../lib/base-file/bloom-filter.js';
import { writeHudiLogBlockHFile } from '../../lib/hfile/index.js';
import { encodeLogBlock } from '../../lib/log-format/index.js';
import { encodeMetadataRecord } from '../../lib/metadata/codec.js';
import { type MetadataChange, type PendingChange, streamCommitMetadata } from '../../lib/metadata/convert.js';
import { routeChanges, writeDeltaCommit } from '../../lib/metadata/delta-commit.js';
import { type MetadataFileGroup, partitionFolder } from '../../lib/metadata/file-groups.js';
import { fileGroupId, mapRecordKeyToFileGroupIndex } from '../../lib/metadata/partitions.js';
import { bloomFilterRecord, type MetadataRecord } from '../../lib/metadata/records.js';
import { METADATA_RECORD_WRITER_SCHEMA_TEXT } from '../../lib/metadata/schema.js';
import { metadataInstantPath } from '../../lib/metadata/timeline.js';
import { FILE_METADATA } from '../../lib/parquet/footer.js';
import { THRIFT_BINARY, THRIFT_LIST, THRIFT_STRUCT, ThriftList, ThriftStruct } from '../../lib/parquet/thrift.js';
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

function emptyGroup(index: number, partition: 'bloom_filters' | 'files' = 'bloom_filters'): MetadataFileGroup {
  const fileId = fileGroupId(partition, index);
  return { partition, fileId, latest: { fileId, baseInstant: '00000000000000010', baseFile: undefined, logFiles: [] }, allLogFiles: [] };
}

describe('a deltacommit of large log files', () => {
  it('uploads each large log file while the next is encoded; every log file has the plain encoders’ bytes', async () => {
    const groups = [0, 1, 2].map((index) => emptyGroup(index));
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

  it('encodes file groups whose records are still being read; a file without a filter adds none; nothing is written until every record is in', async () => {
    const groups = [0, 1, 2].map((index) => emptyGroup(index));
    const names = Array.from({ length: 60 }, (_, i) => ({ partition: `2024-01-0${1 + (i % 5)}`, name: `file-${i}_0-1-0_${INSTANT}.parquet` }));
    const keyOf = ({ partition, name }: (typeof names)[number]): string => bloomFilterRecord(partition, name, INSTANT, undefined).key;
    // Every file of group 2 has no filter: the group has nothing to write. Files 0 and 1 have none either.
    const noFilter = (i: number): boolean => i < 2 || mapRecordKeyToFileGroupIndex(keyOf(names[i]!), groups.length) === 2;
    const records = names.map(({ partition, name }, i) =>
      noFilter(i) ? undefined : bloomFilterRecord(partition, name, INSTANT, { type: 'DYNAMIC_V0', serialized: bloomText(i, 20_000) }),
    );
    assert.ok(records.some((record) => record === undefined) && records.some((record) => record !== undefined));
    let inHand = 0;
    const release: (() => void)[] = [];
    const changes: PendingChange[] = names.map((file, i) => ({
      key: keyOf(file),
      pending: new Promise((resolve) => {
        release.push(() => {
          inHand++;
          resolve(records[i]);
        });
      }),
    }));
    const local = openStorage(tempDir('mdt-delta-commit-pending-'));
    const storage: Storage = Object.create(local);
    storage.putIfAbsent = async (path, body) => {
      assert.equal(inHand, names.length, `${path} is written only once every record is in`);
      return local.putIfAbsent(path, body);
    };
    const written = writeDeltaCommit(storage, {
      instantTime: INSTANT,
      changes: new Map([['bloom_filters', changes]]),
      fileGroups: new Map([['bloom_filters', groups]]),
    });
    // The records come in one per turn of the event loop, the writer running meanwhile.
    for (const resolve of release) {
      await new Promise<void>((done) => setImmediate(done));
      resolve();
    }
    const stats = await written;

    const plain = routeChanges(
      'bloom_filters',
      records.filter((record) => record !== undefined).map((record) => ({ record })),
      groups,
    );
    assert.deepEqual(
      stats.map((stat) => stat.fileId),
      [...plain.keys()],
      'a log file for each file group with a filter in it, none for group 2',
    );
    assert.ok(!plain.has(groups[2]!.fileId));
    assert.deepEqual(
      (await local.listRecursive(partitionFolder('bloom_filters'))).map((file) => file.path.split('/').pop()).sort(),
      stats.map((stat) => stat.path.split('/')[1]).sort(),
      'no other log file',
    );
    for (const stat of stats) {
      const expected = encodeLogBlock({
        type: 'HFILE_DATA_BLOCK',
        header: { INSTANT_TIME: INSTANT, SCHEMA: METADATA_RECORD_WRITER_SCHEMA_TEXT },
        content: writeHudiLogBlockHFile(
          plain.get(stat.fileId)!.records.map((record) => ({ key: record.key, value: encodeMetadataRecord(record) })),
          { schema: METADATA_RECORD_WRITER_SCHEMA_TEXT, gzipLevel: 1, gzipStrategy: 'run-length' },
        ),
      });
      assert.ok(Buffer.from(await local.get(`${partitionFolder('bloom_filters')}/${stat.path.split('/')[1]}`)).equals(expected), stat.path);
    }
    const inflight = JSON.parse(
      Buffer.from(await local.get(metadataInstantPath({ time: INSTANT, action: 'deltacommit', state: 'INFLIGHT' }))).toString('utf8'),
    ) as { partitionToWriteStats: Record<string, { fileId: string; numUpdateWrites: number }[]> };
    assert.deepEqual(
      inflight.partitionToWriteStats['bloom_filters']!.filter((stat) => stat.fileId !== '').map((stat) => [stat.fileId, stat.numUpdateWrites]),
      [...plain.values()].map((work) => [work.group.fileId, work.records.length]),
      'the inflight file counts the records written',
    );
  });

  it('a footer that cannot be read fails the commit before anything is written; the reads go in bloom file-group order', async () => {
    const groups = [0, 1, 2, 3].map((index) => emptyGroup(index));
    const stats = Array.from({ length: 40 }, (_, i) => ({
      path: `2024-01-0${1 + (i % 5)}/file-${i}_0-1-0_${INSTANT}.parquet`,
      partitionPath: `2024-01-0${1 + (i % 5)}`,
      fileSizeInBytes: 100,
    }));
    const footer = (i: number): ThriftStruct => {
      const entry = new ThriftStruct();
      entry.set(1, THRIFT_BINARY, Buffer.from(BLOOM_FILTER_FOOTER_KEY));
      entry.set(2, THRIFT_BINARY, bloomText(i, 1000));
      const metadata = new ThriftStruct();
      metadata.set(FILE_METADATA.keyValueMetadata, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, [entry]));
      return metadata;
    };
    const read: string[] = [];
    const commit = (broken: string | undefined) =>
      streamCommitMetadata(
        { partitionToWriteStats: { p: stats as never }, compacted: false, extraMetadata: {}, operationType: 'INSERT' },
        {
          instantTime: INSTANT,
          partitions: new Set(['files', 'bloom_filters']),
          populateMetaFields: true,
          bloomFileGroups: groups.length,
          footer: async (path) => {
            read.push(path);
            if (path === broken) throw new Error(`cannot read ${path}`);
            return footer(stats.findIndex((stat) => stat.path === path));
          },
        },
      );
    const groupOf = (path: string): number => {
      const [partition, name] = path.split('/');
      return mapRecordKeyToFileGroupIndex(bloomFilterRecord(partition!, name!, INSTANT, undefined).key, groups.length);
    };

    const fileGroups = new Map([
      ['files', [emptyGroup(0, 'files')]],
      ['bloom_filters', groups],
    ] as const);
    const storage = openStorage(tempDir('mdt-delta-commit-broken-'));
    const broken = stats[25]!.path;
    await assert.rejects(writeDeltaCommit(storage, { instantTime: INSTANT, changes: commit(broken), fileGroups }), new RegExp(`cannot read ${broken}`));
    assert.deepEqual(await storage.listRecursive(''), [], 'nothing written');

    read.length = 0;
    const changes = commit(undefined);
    const written = await writeDeltaCommit(storage, { instantTime: INSTANT, changes, fileGroups });
    assert.equal(read.length, stats.length);
    // Read group by group, in the order the groups first appear among the files (the order they are written in).
    const firstSeen = [...new Set(stats.map((stat) => groupOf(stat.path)))];
    assert.deepEqual(
      read.map(groupOf),
      [...read.map(groupOf)].sort((a, b) => firstSeen.indexOf(a) - firstSeen.indexOf(b)),
    );
    assert.deepEqual(
      written.filter((stat) => stat.partition === 'bloom_filters').map((stat) => stat.fileId),
      firstSeen.map((index) => groups[index]!.fileId),
    );
  });
});
