import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CompactReader,
  CompactWriter,
  isStruct,
  THRIFT_BINARY,
  THRIFT_BOOL,
  THRIFT_I32,
  THRIFT_I64,
  THRIFT_LIST,
  THRIFT_STRUCT,
  ThriftList,
  ThriftStruct,
} from '../../lib/parquet/thrift.js';
import { duckdb } from '../helpers/duckdb.js';

let workDir: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-thrift-test-'));
});

after(async () => {
  await rm(workDir, { recursive: true, force: true });
});

// A struct encoded by hand from the compact protocol spec: field header = (id delta << 4) | type, ints zigzag varints.
const HAND_BUILT = Uint8Array.from([
  0x15,
  0x05, // 1: i32 -3 (zigzag 5)
  0x11, // 2: bool true (the type nibble carries the value)
  0x12, // 3: bool false
  0x18,
  0x02,
  0x68,
  0x69, // 4: binary "hi"
  0x06,
  0x28,
  0xd8,
  0x04, // 20: delta 16 > 15, so type byte then zigzag id 40; i64 300 (zigzag 600 = varint d8 04)
  0x19,
  0x25,
  0x02,
  0x04, // 21: list<i32> of 2: [1, 2]
  0x1c,
  0x15,
  0x0e,
  0x00, // 22: struct { 1: i32 7 }
  0x17,
  0x00,
  0x00,
  0x00,
  0x00,
  0x00,
  0x00,
  0xf8,
  0x3f, // 23: double 1.5, little-endian
  0x00, // stop
]);

describe('Thrift compact protocol', () => {
  test('decodes a hand-built struct field by field', () => {
    const reader = new CompactReader(HAND_BUILT);
    const struct = reader.readStruct();
    assert.equal(reader.position, HAND_BUILT.length);
    assert.equal(struct.int(1), -3);
    assert.equal(struct.value(2), true);
    assert.equal(struct.value(3), false);
    assert.equal(Buffer.from(struct.binary(4)!).toString('utf8'), 'hi');
    assert.equal(struct.bigint(20), 300n);
    assert.deepEqual(struct.list(21)?.items, [1, 2]);
    assert.equal(struct.struct(22)?.int(1), 7);
    assert.equal(struct.value(23), 1.5);
    assert.equal(struct.has(5), false);
  });

  test('encodes the same struct back to the same bytes', () => {
    assert.deepEqual(new CompactWriter().struct(new CompactReader(HAND_BUILT).readStruct()).bytes(), Buffer.from(HAND_BUILT));
  });

  test('builds structs from values: bools, long lists, negative and large integers', () => {
    const inner = new ThriftStruct();
    inner.set(1, THRIFT_BINARY, Buffer.from('key'));
    const struct = new ThriftStruct();
    struct.set(3, THRIFT_I64, -(2n ** 62n));
    struct.set(1, THRIFT_BOOL, false);
    struct.set(2, THRIFT_I32, 2 ** 31 - 1);
    // 15 elements and more take the long list header: 0xf0 | type, then the size as a varint.
    struct.set(
      4,
      THRIFT_LIST,
      new ThriftList(
        THRIFT_I32,
        Array.from({ length: 20 }, (_, index) => index - 10),
      ),
    );
    struct.set(5, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, [inner, inner]));
    const bytes = new CompactWriter().struct(struct).bytes();
    // Fields are written in id order whatever order they were set in: field 1 (bool false) comes first.
    assert.equal(bytes[0], 0x12);
    const listHeader = bytes.indexOf(0xf5);
    assert.ok(listHeader > 0 && bytes[listHeader + 1] === 20, 'a 20-element list has the long header');
    const decoded = new CompactReader(bytes).readStruct();
    assert.equal(decoded.value(1), false);
    assert.equal(decoded.int(2), 2 ** 31 - 1);
    assert.equal(decoded.bigint(3), -(2n ** 62n));
    assert.deepEqual(
      decoded.list(4)?.items,
      Array.from({ length: 20 }, (_, index) => index - 10),
    );
    const structs = decoded.list(5)?.items.filter(isStruct) ?? [];
    assert.equal(structs.length, 2);
    assert.equal(Buffer.from(structs[1]!.binary(1)!).toString(), 'key');
  });

  test('a skipped field is passed over whole: the others decode as before, and its span re-reads to its value', () => {
    const whole = new CompactReader(HAND_BUILT).readStruct();
    const ids = whole.fields().map((field) => field.id);
    assert.deepEqual(ids, [1, 2, 3, 4, 20, 21, 22, 23]);
    for (const id of ids) {
      const spans: [number, number, number][] = [];
      const reader = new CompactReader(HAND_BUILT);
      const partial = reader.readStruct(new Set([id]), (skippedId, _type, start, end) => spans.push([skippedId, start, end]));
      assert.equal(reader.position, HAND_BUILT.length, `field ${id}: the whole struct was read`);
      assert.deepEqual(
        partial.fields(),
        whole.fields().filter((field) => field.id !== id),
        `field ${id}: the other fields`,
      );
      assert.equal(spans.length, 1);
      const [skippedId, start, end] = spans[0]!;
      assert.equal(skippedId, id);
      const field = whole.fields().find((candidate) => candidate.id === id)!;
      // A bool's value is in its header: nothing to skip. Any other re-reads from its span to the same value.
      if (field.type === THRIFT_BOOL) assert.equal(end, start);
      else assert.deepEqual(new CompactReader(HAND_BUILT.subarray(start, end)).readValue(field.type), field.value);
    }
  });

  test('truncated input is refused', () => {
    assert.throws(() => new CompactReader(HAND_BUILT.subarray(0, 6)).readStruct(), /truncated Thrift binary/);
    assert.throws(() => new CompactReader(HAND_BUILT.subarray(0, 2)).readStruct(), /truncated Thrift data/);
  });

  test('reads the FileMetaData of a file DuckDB wrote, and writes it back byte for byte', async () => {
    const file = join(workDir, 'people.parquet');
    await duckdb(`COPY (SELECT range::INTEGER AS id, 'name ' || range AS name FROM range(300)) TO '${file}' (FORMAT parquet, KV_METADATA {owner: 'hudi'})`);
    const bytes = await readFile(file);
    const length = bytes.readUInt32LE(bytes.length - 8);
    const footer = bytes.subarray(bytes.length - 8 - length, bytes.length - 8);
    const metadata = new CompactReader(footer).readStruct();
    // parquet.thrift FileMetaData: 2 schema, 3 num_rows, 5 key_value_metadata.
    assert.equal(metadata.bigint(3), 300n);
    const names = (metadata.list(2)?.items.filter(isStruct) ?? []).map((element) => Buffer.from(element.binary(4)!).toString());
    assert.deepEqual(names.slice(1), ['id', 'name']);
    const keyValues = (metadata.list(5)?.items.filter(isStruct) ?? []).map((entry) => [
      Buffer.from(entry.binary(1)!).toString(),
      Buffer.from(entry.binary(2)!).toString(),
    ]);
    assert.ok(keyValues.some(([key, value]) => key === 'owner' && value === 'hudi'));
    assert.deepEqual(new CompactWriter().struct(metadata).bytes(), Buffer.from(footer));
    // Skipping any top-level field (lists of structs, nested structs, i64s and binaries in it) leaves the rest intact.
    for (const { id } of metadata.fields()) {
      const partial = new CompactReader(footer).readStruct(new Set([id]));
      assert.deepEqual(
        partial.fields(),
        metadata.fields().filter((field) => field.id !== id),
      );
    }
  });
});
