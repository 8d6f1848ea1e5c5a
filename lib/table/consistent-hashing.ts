/**
 * Hudi 0.15's consistent-hashing bucket index (hoodie.index.bucket.engine=CONSISTENT_HASHING): each partition's hash
 * ring is a hashing metadata file under .hoodie/.bucket_index/consistent_hashing_metadata/<partition>/, chosen as
 * ConsistentBucketIndexUtils.loadMetadata chooses it; a record key goes to the first node at or after its hash
 * (ConsistentBucketIdentifier.getBucket), whose file group is `<node's fileIdPrefix>-0`. A partition's first ring is
 * created as Hudi creates it (defaultHashingMetadata); one only Hudi's recovery can confirm (resizes pending, failed
 * or without a commit marker) is refused by name before anything is written. docs/hudi-bucket-index.md.
 */
import { createHash } from 'node:crypto';
import { AlreadyExistsError, HudiError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import type { Timeline } from '../timeline/timeline.js';
import { fileNameOf, isHadoopChecksumFile } from '../util/paths.js';
import { hashKeysOf } from './bucket-index.js';
import { CONSISTENT_HASHING_METADATA_FOLDER, UnsupportedLayoutError } from './layouts.js';

/** HoodieTimeline.INIT_INSTANT_TS: the instant of a partition's first hashing metadata (loadOrCreateMetadata). */
export const INIT_HASHING_INSTANT = '00000000000000';
const HASHING_METADATA_SUFFIX = '.hashing_meta';
const COMMIT_MARKER_SUFFIX = '.commit';

/** ConsistentHashingNode: the end of a hash range (inclusive) and the prefix of its file group's id. */
export interface HashingNode {
  readonly value: number;
  readonly fileIdPrefix: string;
}

/** HoodieConsistentHashingMetadata as read from its file: the ring sorted by node value, as the identifier's TreeMap. */
export interface HashingMetadata {
  readonly partitionPath: string;
  readonly instant: string;
  /** The file it was read from, relative to the table. */
  readonly file: string;
  readonly nodes: readonly HashingNode[];
}

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

const rotl32 = (value: number, bits: number): number => (value << bits) | (value >>> (32 - bits));
const round32 = (acc: number, input: number): number => Math.imul(rotl32((acc + Math.imul(input, PRIME32_2)) | 0, 13), PRIME32_1);

/** XXH32 of `bytes` (lz4-java's XXHash32, which HashID.getXXHash32 calls), as a signed 32-bit int like Java's. */
export function xxHash32(bytes: Uint8Array, seed = 0): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.length;
  let offset = 0;
  let hash: number;
  if (length >= 16) {
    let v1 = (seed + PRIME32_1 + PRIME32_2) | 0;
    let v2 = (seed + PRIME32_2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME32_1) | 0;
    while (offset <= length - 16) {
      v1 = round32(v1, view.getInt32(offset, true));
      v2 = round32(v2, view.getInt32(offset + 4, true));
      v3 = round32(v3, view.getInt32(offset + 8, true));
      v4 = round32(v4, view.getInt32(offset + 12, true));
      offset += 16;
    }
    hash = (rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18)) | 0;
  } else {
    hash = (seed + PRIME32_5) | 0;
  }
  hash = (hash + length) | 0;
  while (offset <= length - 4) {
    hash = Math.imul(rotl32((hash + Math.imul(view.getInt32(offset, true), PRIME32_3)) | 0, 17), PRIME32_4);
    offset += 4;
  }
  while (offset < length) {
    hash = Math.imul(rotl32((hash + Math.imul(bytes[offset]!, PRIME32_5)) | 0, 11), PRIME32_1);
    offset++;
  }
  hash ^= hash >>> 15;
  hash = Math.imul(hash, PRIME32_2);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, PRIME32_3);
  hash ^= hash >>> 16;
  return hash | 0;
}

const utf8 = new TextEncoder();

/**
 * ConsistentBucketIdentifier.getBucket(List): the hash keys (BucketIdentifier.getHashKeys) joined with no separator
 * (String.join writes a null as "null"), XXHash32 with seed 0, masked to a non-negative int.
 */
export function consistentHashOf(recordKey: string, hashFields: readonly string[]): number {
  const joined = hashKeysOf(recordKey, hashFields)
    .map((value) => value ?? 'null')
    .join('');
  return xxHash32(utf8.encode(joined), 0) & 0x7fffffff;
}

/** The index of the node a hash falls on: the first with value ≥ hash, else the first (the ring wraps). */
export function nodeIndexOf(nodes: readonly HashingNode[], hash: number): number {
  let low = 0;
  let high = nodes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (nodes[mid]!.value >= hash) high = mid;
    else low = mid + 1;
  }
  return low === nodes.length ? 0 : low;
}

/** ConsistentBucketIdentifier's file id of a node: FSUtils.createNewFileId(prefix, 0). */
export function nodeFileId(node: HashingNode): string {
  return `${node.fileIdPrefix}-0`;
}

/** The folder of a partition's hashing metadata (its own folder for a non-partitioned table). */
export function hashingMetadataFolder(partitionPath: string): string {
  return partitionPath === '' ? CONSISTENT_HASHING_METADATA_FOLDER : `${CONSISTENT_HASHING_METADATA_FOLDER}/${partitionPath}`;
}

/** HoodieConsistentHashingMetadata.getTimestampFromFile: the name up to its first dot. */
const timestampOf = (name: string): string => name.split('.')[0]!;

/** What the listing and the timeline say about a partition's hashing metadata files. */
export type HashingMetadataChoice =
  | { readonly kind: 'file'; readonly name: string }
  | { readonly kind: 'none' }
  | { readonly kind: 'refused'; readonly problem: string };

/**
 * ConsistentBucketIndexUtils.loadMetadata's choice among a partition folder's files (names containing `.hashing_meta`
 * and `.commit`): the newest metadata file when it is the initial one or has a commit marker; otherwise the newest of
 * those after the newest marker whose instant completed a commit or replacecommit. Hudi then writes the missing
 * marker, and confirms a file whose instant is neither completed nor pending from the base files (recommitMetadataFile):
 * both are left to Hudi, so a file only that recovery could confirm, and any resize still pending, are refused.
 */
export function chooseHashingMetadata(names: readonly string[], timeline: Pick<Timeline, 'completed' | 'pending'>): HashingMetadataChoice {
  const commits = names.filter((n) => n.includes(COMMIT_MARKER_SUFFIX)).map(timestampOf);
  const metas = names.filter((n) => n.includes(HASHING_METADATA_SUFFIX)).sort();
  const newest = metas.at(-1);
  if (newest === undefined) return { kind: 'none' };
  const maxCommit = commits.length === 0 ? undefined : commits.sort().at(-1)!;
  if (timestampOf(newest) === INIT_HASHING_INSTANT || timestampOf(newest) === maxCommit) return { kind: 'file', name: newest };
  const completed = new Set(timeline.completed().flatMap((i) => (i.action === 'commit' || i.action === 'replacecommit' ? [i.time] : [])));
  const pending = new Set(timeline.pending().map((i) => i.time));
  let chosen: string | undefined;
  for (const name of metas) {
    const time = timestampOf(name);
    if (maxCommit !== undefined && time <= maxCommit) continue;
    if (completed.has(time) || time === INIT_HASHING_INSTANT) {
      chosen = name;
    } else if (pending.has(time)) {
      return {
        kind: 'refused',
        problem: `hashing metadata ${name} belongs to instant ${time}, still pending: a consistent-hashing resize (clustering) is in progress, and Hudi's writers then write to both the old and the new file groups`,
      };
    } else {
      return {
        kind: 'refused',
        problem: `hashing metadata ${name} has no commit marker, and its instant ${time} is neither a completed resize (commit or replacecommit) on the active timeline nor pending: only Hudi's recovery (ConsistentBucketIndexUtils.recommitMetadataFile) decides from the base files whether it is the partition's ring`,
      };
    }
  }
  if (chosen === undefined) {
    return { kind: 'refused', problem: `no committed hashing metadata among ${metas.join(', ')}: Hudi would create a new ring over the existing file groups` };
  }
  return { kind: 'file', name: chosen };
}

/** HoodieConsistentHashingMetadata.fromBytes, checked: nodes with an int value, a file id prefix and the NORMAL tag. */
export function parseHashingMetadata(text: string, file: string, location: string): HashingMetadata {
  const bad = (why: string) =>
    new HudiError(`hashing metadata ${file} is not readable: ${why}`, {
      location,
      fix: 'repair the partition with Hudi before writing to it; nothing was written',
    });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { nodes?: unknown }).nodes)) throw bad('no nodes');
  const record = json as { partitionPath?: unknown; instant?: unknown; nodes: unknown[] };
  const byValue = new Map<number, HashingNode>();
  for (const raw of record.nodes) {
    const node = raw as { value?: unknown; fileIdPrefix?: unknown; tag?: unknown };
    const value = node.value;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0x7fffffff) throw bad(`a node's value is ${String(value)}`);
    if (typeof node.fileIdPrefix !== 'string' || node.fileIdPrefix === '') throw bad(`node ${value} has no fileIdPrefix`);
    if (node.tag !== undefined && node.tag !== null && node.tag !== 'NORMAL') {
      throw new UnsupportedLayoutError(
        'consistent-hashing-bucket-index',
        'write',
        `hashing metadata ${file} has node ${value} tagged ${String(node.tag)}: only a resize in progress leaves such nodes`,
        { location, fix: 'let Hudi finish or roll back the consistent-hashing clustering, then write; nothing was written' },
      );
    }
    // The identifier's TreeMap keeps the last node of a value.
    byValue.set(value, { value, fileIdPrefix: node.fileIdPrefix });
  }
  if (byValue.size === 0) throw bad('no nodes');
  return {
    partitionPath: typeof record.partitionPath === 'string' ? record.partitionPath : '',
    instant: typeof record.instant === 'string' ? record.instant : '',
    file,
    nodes: [...byValue.values()].sort((a, b) => a.value - b.value),
  };
}

/** HoodieConsistentHashingMetadata.generateUUID: UUID.nameUUIDFromBytes(start ‖ end ‖ partition path), an MD5 UUID. */
function nameUuid(partitionPath: string, start: bigint, end: bigint): string {
  const bytes = Buffer.alloc(16);
  bytes.writeBigInt64BE(start, 0);
  bytes.writeBigInt64BE(end, 8);
  const md5 = createHash('md5')
    .update(Buffer.concat([bytes, Buffer.from(partitionPath, 'utf8')]))
    .digest();
  md5[6] = (md5[6]! & 0x0f) | 0x30;
  md5[8] = (md5[8]! & 0x3f) | 0x80;
  const hex = md5.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The ring Hudi's writer creates for a partition without one (loadOrCreateMetadata with
 * hoodie.bucket.index.num.buckets): instant 00000000000000, nodes splitting [0, Integer.MAX_VALUE] evenly, each
 * prefix a name UUID of its range and the partition; the same for every writer, so no lock is needed. `json` is the
 * file's content, in the fields Hudi's Jackson mapper writes.
 */
export function defaultHashingMetadata(partitionPath: string, numBuckets: number): { metadata: HashingMetadata; json: string } {
  const max = 0x7fffffffn;
  const n = BigInt(numBuckets);
  const step = (max + n - 1n) / n;
  const nodes: HashingNode[] = [];
  let start = 0n;
  for (let idx = 1n; idx <= n; idx++) {
    const end = step * idx < max ? step * idx : max;
    nodes.push({ value: Number(end), fileIdPrefix: nameUuid(partitionPath, start, end) });
    start = end;
  }
  const file = `${hashingMetadataFolder(partitionPath)}/${INIT_HASHING_INSTANT}${HASHING_METADATA_SUFFIX}`;
  const content = {
    version: 0,
    partitionPath,
    instant: INIT_HASHING_INSTANT,
    numBuckets,
    seqNo: 0,
    nodes: nodes.map((node) => ({ value: node.value, fileIdPrefix: node.fileIdPrefix, tag: 'NORMAL' })),
  };
  return { metadata: { partitionPath, instant: INIT_HASHING_INSTANT, file, nodes }, json: JSON.stringify(content, null, 2) };
}

/**
 * A partition's hash ring as Hudi's writer loads it, or undefined when it has none yet (Hudi's writer then creates
 * defaultHashingMetadata's).
 */
export async function loadHashingMetadata(
  storage: Storage,
  partitionPath: string,
  timeline: Pick<Timeline, 'completed' | 'pending'>,
  location: string,
): Promise<HashingMetadata | undefined> {
  const folder = hashingMetadataFolder(partitionPath);
  const listed = await storage.listDir(folder);
  // Hadoop's local file system hides its `.<name>.crc` checksums from Hudi's listing; so do we.
  const names = listed.files.map((f) => fileNameOf(f.path)).filter((name) => !isHadoopChecksumFile(name));
  const choice = chooseHashingMetadata(names, timeline);
  const where = partitionPath === '' ? 'the table' : `partition "${partitionPath}"`;
  if (choice.kind === 'none') return undefined;
  if (choice.kind === 'refused') {
    throw new UnsupportedLayoutError('consistent-hashing-bucket-index', 'write', `${where}: ${choice.problem}`, {
      location,
      fix: 'let Hudi finish the consistent-hashing clustering (or write once with Hudi, which commits or recovers the metadata), then write here; nothing was written',
    });
  }
  const file = `${folder}/${choice.name}`;
  return parseHashingMetadata(new TextDecoder().decode(await storage.get(file)), file, location);
}

/**
 * Write a partition's first ring as ConsistentBucketIndexUtils.saveMetadata does (never over an existing file); when
 * another writer created it first, its ring is read back and must be the same, as Hudi's loadOrCreateMetadata does.
 */
export async function createHashingMetadata(
  storage: Storage,
  created: { readonly metadata: HashingMetadata; readonly json: string },
  timeline: Pick<Timeline, 'completed' | 'pending'>,
  location: string,
): Promise<void> {
  try {
    await storage.putIfAbsent(created.metadata.file, created.json);
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error;
    const found = await loadHashingMetadata(storage, created.metadata.partitionPath, timeline, location);
    const same = (a: readonly HashingNode[], b: readonly HashingNode[]) =>
      a.length === b.length && a.every((node, i) => node.value === b[i]!.value && node.fileIdPrefix === b[i]!.fileIdPrefix);
    if (found === undefined || !same(found.nodes, created.metadata.nodes)) {
      throw new HudiError(`partition "${created.metadata.partitionPath}" got another ring while this write created its first one (${created.metadata.file})`, {
        location,
        fix: 'retry the write, which reads the ring now there; nothing of this write is visible',
      });
    }
  }
}
