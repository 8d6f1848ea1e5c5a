/**
 * DuckDB types for Avro schema fields (lib/engine/avro-types.ts): the types Spark's Hudi writer records, as
 * DuckDB's SQL type names.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { duckDbTypeOfAvro } from '../../lib/engine/avro-types.js';

it('maps the Avro types Spark records to DuckDB types; unions with null read as their other branch', () => {
  const cases: [unknown, string | undefined][] = [
    [['null', 'long'], 'BIGINT'],
    [['null', 'int'], 'INTEGER'],
    ['string', 'VARCHAR'],
    [['null', 'double'], 'DOUBLE'],
    [['null', 'boolean'], 'BOOLEAN'],
    [['null', 'bytes'], 'BLOB'],
    [['null', { type: 'int', logicalType: 'date' }], 'DATE'],
    [['null', { type: 'long', logicalType: 'timestamp-micros' }], 'TIMESTAMP WITH TIME ZONE'],
    [['null', { type: 'fixed', name: 'fixed', size: 6, logicalType: 'decimal', precision: 12, scale: 3 }], 'DECIMAL(12,3)'],
    [
      [
        'null',
        {
          type: 'record',
          name: 'addr',
          fields: [
            { name: 'city', type: ['null', 'string'] },
            { name: 'zip', type: ['null', 'int'] },
          ],
        },
      ],
      'STRUCT("city" VARCHAR, "zip" INTEGER)',
    ],
    [['null', { type: 'array', items: ['null', 'string'] }], 'VARCHAR[]'],
    [['null', { type: 'map', values: ['null', 'int'] }], 'MAP(VARCHAR, INTEGER)'],
    // No single DuckDB type: left to the input.
    [['null', 'int', 'string'], undefined],
    [{ type: 'fixed', name: 'wide', size: 32, logicalType: 'decimal', precision: 60, scale: 0 }, undefined],
  ];
  for (const [avro, expected] of cases) assert.equal(duckDbTypeOfAvro(avro)?.toString(), expected, JSON.stringify(avro));
});
