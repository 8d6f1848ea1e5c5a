/**
 * The consistent-hashing bucket index's pieces (lib/table/consistent-hashing.ts): XXHash32, the ring lookup, the
 * hashing metadata file Hudi 0.15's loadMetadata chooses, and its parsing. test/interop/consistent-hashing-writes.test.ts
 * compares them with Hudi itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chooseHashingMetadata,
  consistentHashOf,
  type HashingNode,
  nodeFileId,
  nodeIndexOf,
  parseHashingMetadata,
  xxHash32,
} from '../../lib/table/consistent-hashing.js';
import { UnsupportedLayoutError } from '../../lib/table/layouts.js';
import type { Instant } from '../../lib/timeline/instant.js';

const bytes = (text: string) => new TextEncoder().encode(text);

function timeline(instants: readonly Instant[]) {
  return {
    completed: () => instants.filter((i) => i.state === 'COMPLETED'),
    pending: () => instants.filter((i) => i.state !== 'COMPLETED'),
  };
}

describe('consistent hashing: hash and ring', () => {
  it("XXHash32 with seed 0 gives the reference values, as Java's signed int", () => {
    assert.equal(xxHash32(bytes(''), 0), 0x02cc5d05);
    assert.equal(xxHash32(bytes('a'), 0), 0x550d7456);
    assert.equal(xxHash32(bytes('abc'), 0), 0x32d153ff);
    // 16 bytes and more take the four-lane path.
    assert.equal(xxHash32(bytes('Nobody inspects the spammish repetition'), 0), 0xe2293b2f | 0);
  });

  it('hashes the joined hash-key values, a null as "null", masked to a non-negative int', () => {
    assert.equal(consistentHashOf('abc', ['id']), 0x32d153ff & 0x7fffffff);
    assert.equal(consistentHashOf('id:1,dt:a', ['id', 'dt']), xxHash32(bytes('1a')) & 0x7fffffff);
    assert.equal(consistentHashOf('id:__null__,dt:a', ['id', 'dt']), xxHash32(bytes('nulla')) & 0x7fffffff);
    assert.ok(consistentHashOf('Nobody inspects the spammish repetition', ['id']) >= 0);
  });

  it('takes the first node at or after the hash, and wraps to the first', () => {
    const nodes: HashingNode[] = [
      { value: 100, fileIdPrefix: 'p0' },
      { value: 200, fileIdPrefix: 'p1' },
      { value: 300, fileIdPrefix: 'p2' },
    ];
    assert.deepEqual(
      [0, 100, 101, 200, 250, 300, 301, 0x7fffffff].map((h) => nodeIndexOf(nodes, h)),
      [0, 0, 1, 1, 2, 2, 0, 0],
    );
    assert.equal(nodeFileId(nodes[1]!), 'p1-0');
  });
});

describe("consistent hashing: the hashing metadata file Hudi's loadMetadata chooses", () => {
  const init = '00000000000000.hashing_meta';
  const replace = (time: string, state: Instant['state']): Instant => ({ time, action: 'replacecommit', state });

  it('none without a metadata file; the initial one; the newest with its commit marker', () => {
    assert.deepEqual(chooseHashingMetadata([], timeline([])), { kind: 'none' });
    assert.deepEqual(chooseHashingMetadata(['20240101000000.commit'], timeline([])), { kind: 'none' });
    assert.deepEqual(chooseHashingMetadata([init], timeline([])), { kind: 'file', name: init });
    assert.deepEqual(chooseHashingMetadata([init, '20240101000000.hashing_meta', '20240101000000.commit'], timeline([])), {
      kind: 'file',
      name: '20240101000000.hashing_meta',
    });
  });

  it('without a marker: the newest whose resize completed; a pending resize or one only recovery confirms is refused', () => {
    const names = [init, '20240101000000.hashing_meta', '20240101000000.commit', '20240202000000.hashing_meta'];
    assert.deepEqual(chooseHashingMetadata(names, timeline([replace('20240202000000', 'COMPLETED')])), {
      kind: 'file',
      name: '20240202000000.hashing_meta',
    });
    const pending = chooseHashingMetadata(names, timeline([replace('20240202000000', 'INFLIGHT')]));
    assert.equal(pending.kind, 'refused');
    assert.match(pending.kind === 'refused' ? pending.problem : '', /still pending: a consistent-hashing resize/);
    const unknown = chooseHashingMetadata(names, timeline([]));
    assert.equal(unknown.kind, 'refused');
    assert.match(unknown.kind === 'refused' ? unknown.problem : '', /no commit marker.*recommitMetadataFile/);
    // A deltacommit at that time is no resize: Hudi's commit-and-replace timeline does not hold it.
    assert.equal(chooseHashingMetadata(names, timeline([{ time: '20240202000000', action: 'deltacommit', state: 'COMPLETED' }])).kind, 'refused');
  });

  it('parses the nodes sorted by value; a node of a resize in progress (tag other than NORMAL) is refused', () => {
    const json = (tag: string) =>
      JSON.stringify({
        version: 0,
        partitionPath: 'dt=a',
        instant: '00000000000000',
        numBuckets: 2,
        seqNo: 0,
        nodes: [
          { value: 2147483647, fileIdPrefix: 'f1', tag },
          { value: 1073741824, fileIdPrefix: 'f0', tag: 'NORMAL' },
        ],
      });
    const parsed = parseHashingMetadata(json('NORMAL'), 'm', 'test');
    assert.deepEqual(
      parsed.nodes.map((n) => n.fileIdPrefix),
      ['f0', 'f1'],
    );
    assert.equal(parsed.partitionPath, 'dt=a');
    assert.throws(
      () => parseHashingMetadata(json('REPLACE'), 'm', 'test'),
      (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'consistent-hashing-bucket-index' && /tagged REPLACE/.test(error.message),
    );
    assert.throws(() => parseHashingMetadata('', 'm', 'test'), /not JSON/);
    assert.throws(() => parseHashingMetadata('{"nodes":[{"value":-1,"fileIdPrefix":"x"}]}', 'm', 'test'), /a node's value is -1/);
  });
});
