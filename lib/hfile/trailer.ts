/**
 * The fixed file trailer, the last 4096 bytes of an HFile v3:
 *
 *   magic `TRABLK"$` (8) | delimited TrailerProto | zero padding | version (i32: minor << 24 | major)
 *
 * It says where the load-on-open section (root data index, meta index, file info) starts, how many entries the
 * root indexes hold, the cell count, the compression codec and the comparator class.
 */

import { COMPRESSION_CODECS, type CompressionCodecName, magicBytes } from './block.js';
import { ByteCursor, ByteWriter, readI32 } from './bytes.js';
import { HFileFormatError } from './errors.js';
import { decodeTrailer, encodeTrailer, readDelimited, type TrailerFields } from './protobuf.js';

export const TRAILER_SIZE = 4096;
export const HFILE_MAJOR_VERSION = 3;
/** The minor version HBase 2's writer stamps (`HFileReaderImpl.MAX_MINOR_VERSION`: checksums and a protobuf trailer). */
export const HFILE_MINOR_VERSION = 3;

export interface HFileTrailer {
  majorVersion: number;
  minorVersion: number;
  fileInfoOffset: number;
  loadOnOpenDataOffset: number;
  uncompressedDataIndexSize: number;
  totalUncompressedBytes: number;
  dataIndexCount: number;
  metaIndexCount: number;
  entryCount: number;
  numDataIndexLevels: number;
  firstDataBlockOffset: number;
  lastDataBlockOffset: number;
  comparatorClassName: string;
  compressionCodec: CompressionCodecName;
}

export function readTrailer(bytes: Uint8Array): HFileTrailer {
  if (bytes.length < TRAILER_SIZE) {
    throw new HFileFormatError(`${bytes.length} bytes are too few for an HFile (its trailer alone is ${TRAILER_SIZE})`);
  }
  const start = bytes.length - TRAILER_SIZE;
  const version = readI32(bytes, bytes.length - 4);
  const majorVersion = version & 0x00ffffff;
  const minorVersion = version >>> 24;
  if (majorVersion !== HFILE_MAJOR_VERSION) {
    throw new HFileFormatError(`HFile major version ${majorVersion} is not supported (Hudi 0.14/0.15 write version 3)`);
  }
  const magic = magicBytes('TRAILER');
  for (let i = 0; i < magic.length; i++) {
    if (bytes[start + i] !== magic[i]) throw new HFileFormatError('the trailer magic is missing: not an HFile, or truncated');
  }
  const cursor = new ByteCursor(bytes, start + magic.length, bytes.length - 4, 'HFile trailer');
  const fields: TrailerFields = decodeTrailer(readDelimited(cursor));
  const codec = fields.compressionCodec ?? COMPRESSION_CODECS.indexOf('NONE');
  const compressionCodec = COMPRESSION_CODECS[codec];
  if (compressionCodec === undefined) throw new HFileFormatError(`unknown compression codec ${codec} in the trailer`);
  return {
    majorVersion,
    minorVersion,
    fileInfoOffset: fields.fileInfoOffset ?? 0,
    loadOnOpenDataOffset: fields.loadOnOpenDataOffset ?? 0,
    uncompressedDataIndexSize: fields.uncompressedDataIndexSize ?? 0,
    totalUncompressedBytes: fields.totalUncompressedBytes ?? 0,
    dataIndexCount: fields.dataIndexCount ?? 0,
    metaIndexCount: fields.metaIndexCount ?? 0,
    entryCount: fields.entryCount ?? 0,
    numDataIndexLevels: fields.numDataIndexLevels ?? 1,
    firstDataBlockOffset: fields.firstDataBlockOffset ?? 0,
    lastDataBlockOffset: fields.lastDataBlockOffset ?? 0,
    comparatorClassName: fields.comparatorClassName ?? '',
    compressionCodec,
  };
}

export function serializeTrailer(trailer: HFileTrailer): Uint8Array {
  const proto = encodeTrailer({
    fileInfoOffset: trailer.fileInfoOffset,
    loadOnOpenDataOffset: trailer.loadOnOpenDataOffset,
    uncompressedDataIndexSize: trailer.uncompressedDataIndexSize,
    totalUncompressedBytes: trailer.totalUncompressedBytes,
    dataIndexCount: trailer.dataIndexCount,
    metaIndexCount: trailer.metaIndexCount,
    entryCount: trailer.entryCount,
    numDataIndexLevels: trailer.numDataIndexLevels,
    firstDataBlockOffset: trailer.firstDataBlockOffset,
    lastDataBlockOffset: trailer.lastDataBlockOffset,
    comparatorClassName: trailer.comparatorClassName,
    compressionCodec: COMPRESSION_CODECS.indexOf(trailer.compressionCodec),
  });
  const head = new ByteWriter(TRAILER_SIZE).bytes(magicBytes('TRAILER')).varint(proto.length).bytes(proto).toBytes();
  if (head.length > TRAILER_SIZE - 4) throw new RangeError(`the trailer's protobuf (${proto.length} bytes) does not fit ${TRAILER_SIZE} bytes`);
  const out = new Uint8Array(TRAILER_SIZE);
  out.set(head);
  const version = ((trailer.minorVersion << 24) | trailer.majorVersion) >>> 0;
  new DataView(out.buffer).setUint32(TRAILER_SIZE - 4, version);
  return out;
}
