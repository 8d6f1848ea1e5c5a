import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compareFields,
  decimalFixedBytes,
  describeParquetType,
  latestTopLevelFields,
  type ParquetColumnInfo,
  type TypeNode,
  topLevelFields,
  withFixedDecimals,
} from '../../lib/parquet/schema.js';

/** Schema elements in schema order, as a footer lists them: [path, repetition, children, annotations]. */
function schema(...elements: [string, ParquetColumnInfo['repetition'], number, Partial<ParquetColumnInfo>?][]): ParquetColumnInfo[] {
  return elements.map(([path, repetition, numChildren, rest]) => {
    const parts = path.split('.');
    return { path: parts, name: parts[parts.length - 1]!, repetition, numChildren, ...rest };
  });
}

const INT32: Partial<ParquetColumnInfo> = { physicalType: 'INT32' };
const STRING: Partial<ParquetColumnInfo> = { physicalType: 'BYTE_ARRAY', logicalType: 'STRING' };

/** A tree as a short string: lists as [x] (2-level lists [x]²), maps as {k:v}, structs as (a:x, b:y), leaves by leafIndex. */
function shape(node: TypeNode | undefined): string {
  if (node === undefined) return '-';
  switch (node.kind) {
    case 'primitive':
      return `#${node.leafIndex}`;
    case 'list':
      return `[${shape(node.element)}]${node.twoLevel ? '²' : ''}`;
    case 'map':
      return `{${shape(node.key)}:${shape(node.value)}}`;
    case 'struct':
      return `(${[...node.fields].map(([name, child]) => `${name}:${shape(child)}`).join(', ')})`;
  }
}

describe('Parquet schema tree', () => {
  test('resolves lists and maps by the spec’s backward-compatibility rules', () => {
    const fields = topLevelFields(
      schema(
        ['id', 'REQUIRED', 0, INT32],
        // 3-level list: LIST > repeated group "list" > element.
        ['tags', 'OPTIONAL', 1, { logicalType: 'LIST' }],
        ['tags.list', 'REPEATED', 1],
        ['tags.list.element', 'OPTIONAL', 0, STRING],
        // 2-level list, parquet-avro's old form: LIST > repeated primitive "array".
        ['scores', 'OPTIONAL', 1, { convertedType: 'LIST' }],
        ['scores.array', 'REPEATED', 0, INT32],
        // A repeated group named "array" is the element itself (a struct), not a wrapper.
        ['points', 'OPTIONAL', 1, { logicalType: 'LIST' }],
        ['points.array', 'REPEATED', 1],
        ['points.array.x', 'REQUIRED', 0, INT32],
        // So is "<list name>_tuple".
        ['pairs', 'OPTIONAL', 1, { logicalType: 'LIST' }],
        ['pairs.pairs_tuple', 'REPEATED', 1],
        ['pairs.pairs_tuple.v', 'REQUIRED', 0, INT32],
        // A repeated field outside a LIST annotation is a list of itself.
        ['legacy', 'REPEATED', 0, INT32],
        // MAP > repeated key_value > key, value.
        ['attributes', 'OPTIONAL', 1, { logicalType: 'MAP' }],
        ['attributes.key_value', 'REPEATED', 2],
        ['attributes.key_value.key', 'REQUIRED', 0, STRING],
        ['attributes.key_value.value', 'OPTIONAL', 0, INT32],
        ['address', 'OPTIONAL', 2],
        ['address.city', 'OPTIONAL', 0, STRING],
        ['address.zip', 'OPTIONAL', 0, INT32],
      ),
    );
    assert.deepEqual(
      [...fields].map(([name, node]) => `${name} ${shape(node)}`),
      ['id #0', 'tags [#1]', 'scores [#2]²', 'points [(x:#3)]²', 'pairs [(v:#4)]²', 'legacy [#5]²', 'attributes {#6:#7}', 'address (city:#8, zip:#9)'],
    );
  });

  test('the latest schema that has a column wins', () => {
    const older = schema(['id', 'REQUIRED', 0, INT32], ['price', 'OPTIONAL', 0, { physicalType: 'INT64', logicalType: 'DECIMAL', precision: 10, scale: 2 }]);
    const newer = schema(['price', 'OPTIONAL', 0, { physicalType: 'FIXED_LEN_BYTE_ARRAY', typeLength: 5, logicalType: 'DECIMAL', precision: 10, scale: 2 }]);
    const fields = latestTopLevelFields([older, newer]);
    assert.deepEqual([...fields.keys()], ['id', 'price']);
    const price = fields.get('price');
    assert.equal(price?.kind === 'primitive' ? describeParquetType(price.info) : undefined, 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,2)');
  });

  test('describes leaf types as one comparable phrase', () => {
    const [decimal, timestamp, unsigned, plain, text] = schema(
      ['a', 'OPTIONAL', 0, { physicalType: 'FIXED_LEN_BYTE_ARRAY', typeLength: 9, logicalType: 'DECIMAL', precision: 20, scale: 3 }],
      ['b', 'OPTIONAL', 0, { physicalType: 'INT64', logicalType: 'TIMESTAMP', timeUnit: 'MILLIS', isAdjustedToUTC: true }],
      ['c', 'OPTIONAL', 0, { physicalType: 'INT32', logicalType: 'INTEGER', bitWidth: 16, isSigned: false }],
      ['d', 'OPTIONAL', 0, { physicalType: 'INT64' }],
      ['e', 'OPTIONAL', 0, STRING],
    );
    assert.deepEqual([decimal!, timestamp!, unsigned!, plain!, text!].map(describeParquetType), [
      'FIXED_LEN_BYTE_ARRAY(9) DECIMAL(20,3)',
      'INT64 TIMESTAMP(MILLIS, UTC)',
      'INT32 INT(16, unsigned)',
      'INT64 INT(64, signed)',
      'BYTE_ARRAY STRING',
    ]);
  });

  test('compares output types with the input’s, marking what readers see alike', () => {
    const input = topLevelFields(
      schema(
        ['name', 'OPTIONAL', 0, { physicalType: 'BYTE_ARRAY', logicalType: 'ENUM' }],
        ['price', 'OPTIONAL', 0, { physicalType: 'FIXED_LEN_BYTE_ARRAY', typeLength: 5, logicalType: 'DECIMAL', precision: 10, scale: 2 }],
        ['tags', 'OPTIONAL', 1, { logicalType: 'LIST' }],
        ['tags.array', 'REPEATED', 0, INT32],
        ['same', 'OPTIONAL', 0, INT32],
      ),
    );
    const output = topLevelFields(
      schema(
        ['name', 'OPTIONAL', 0, STRING],
        ['price', 'OPTIONAL', 0, { physicalType: 'INT64', logicalType: 'DECIMAL', precision: 10, scale: 2 }],
        ['tags', 'OPTIONAL', 1, { logicalType: 'LIST' }],
        ['tags.list', 'REPEATED', 1],
        ['tags.list.element', 'OPTIONAL', 0, INT32],
        ['same', 'OPTIONAL', 0, INT32],
        ['extra', 'OPTIONAL', 0, INT32],
      ),
    );
    assert.deepEqual(compareFields(input, output), [
      { column: 'name', input: 'BYTE_ARRAY ENUM', output: 'BYTE_ARRAY STRING', compatible: true },
      { column: 'price', input: 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,2)', output: 'INT64 DECIMAL(10,2)', compatible: false },
      { column: 'tags', input: 'LIST (2-level)', output: 'LIST (3-level)', compatible: true },
      { column: 'extra', input: 'absent', output: 'INT32 INT(32, signed)', compatible: false },
    ]);
  });

  test('decimals get Spark’s fixed length for their precision (Decimal.minBytesForPrecision)', () => {
    const bytesByPrecision = [1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 15, 17, 18, 19, 38].map((precision) => [precision, decimalFixedBytes(precision)]);
    assert.deepEqual(bytesByPrecision, [
      [1, 1],
      [2, 1],
      [3, 2],
      [4, 2],
      [5, 3],
      [6, 3],
      [7, 4],
      [9, 4],
      [10, 5],
      [12, 6],
      [15, 7],
      [17, 8],
      [18, 8],
      [19, 9],
      [38, 16],
    ]);
    const fields = withFixedDecimals(
      topLevelFields(
        schema(
          ['amounts', 'OPTIONAL', 1, { logicalType: 'LIST' }],
          ['amounts.list', 'REPEATED', 1],
          ['amounts.list.element', 'OPTIONAL', 0, { physicalType: 'INT64', logicalType: 'DECIMAL', precision: 12, scale: 3 }],
          ['id', 'REQUIRED', 0, INT32],
        ),
      ),
    );
    const amounts = fields.get('amounts');
    const element = amounts?.kind === 'list' && amounts.element.kind === 'primitive' ? amounts.element : undefined;
    assert.equal(element === undefined ? undefined : describeParquetType(element.info), 'FIXED_LEN_BYTE_ARRAY(6) DECIMAL(12,3)');
    assert.equal(element?.leafIndex, 0);
    const id = fields.get('id');
    assert.equal(id?.kind === 'primitive' ? describeParquetType(id.info) : undefined, 'INT32 INT(32, signed)');
  });
});
