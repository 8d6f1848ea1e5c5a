import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildClusteringReport,
  dataSkippingFraction,
  type FileSummary,
  formatClusteringReport,
  rangeContains,
  toComparable,
} from '../../lib/clustering/report.js';

const file = (bytes: number, rows: number, ranges: FileSummary['ranges']): FileSummary => ({ bytes, rows, ranges });

describe('toComparable', () => {
  it('turns engine values into values that compare correctly', () => {
    const timestamp = { physicalType: 'INT64', logicalType: 'TIMESTAMP' };
    // ISO text with 3 vs 6 fraction digits would compare wrongly as text.
    assert.ok((toComparable('2024-01-01T00:00:00.000Z', timestamp) as number) < (toComparable('2024-01-01T00:00:00.000123Z', timestamp) as number));
    assert.equal(toComparable('1970-01-01T00:00:01.5Z', timestamp), 1_500_000);
    assert.equal(toComparable('1999-12-31', { physicalType: 'INT32', logicalType: 'DATE' }), '1999-12-31');
    assert.equal(toComparable('12.50', { physicalType: 'FIXED_LEN_BYTE_ARRAY', logicalType: 'DECIMAL' }), 12.5);
    assert.equal(toComparable('9007199254740993', { physicalType: 'INT64' }), 9007199254740992);
    assert.equal(toComparable('abc', { physicalType: 'BYTE_ARRAY', logicalType: 'STRING' }), 'abc');
    assert.equal(toComparable('AAEC', { physicalType: 'BYTE_ARRAY' }), null, 'binary (base64) has no order here');
    assert.equal(toComparable(true, { physicalType: 'BOOLEAN' }), 1);
    assert.equal(toComparable(null, undefined), null);
    assert.equal(toComparable([1, 2], undefined), null);
  });
});

describe('data skipping', () => {
  it('counts files whose range holds the value; unknown statistics must be read', () => {
    assert.equal(rangeContains([1, 5], 5), true);
    assert.equal(rangeContains([1, 5], 6), false);
    assert.equal(rangeContains([null, 5], 6), true);
    assert.equal(rangeContains(['a', 'c'], 4), true, 'a value of another kind cannot be ruled out');
    assert.equal(rangeContains(undefined, 4), true);
    const files = [file(1, 1, { x: [0, 10] }), file(1, 1, { x: [5, 15] }), file(1, 1, { x: [20, 30] }), file(1, 1, { x: [null, null] })];
    // 7 → 3 of 4 files, 25 → 2 of 4, null is not looked up.
    assert.deepEqual(dataSkippingFraction(files, 'x', [7, 25, null]), { fraction: (3 / 4 + 2 / 4) / 2, samples: 2 });
    assert.deepEqual(dataSkippingFraction([], 'x', [1]), { fraction: 0, samples: 0 });
  });

  it('reports files, bytes, rows per partition, taking a partition’s groups together, and sample-weighted totals', () => {
    const report = buildClusteringReport({
      instantTime: '20240101000000000',
      layout: 'z-order',
      sortColumns: ['x'],
      groups: [
        {
          groupIndex: 0,
          partitionPath: 'p=2',
          before: [file(10, 5, { x: [0, 9] }), file(10, 5, { x: [0, 9] })],
          after: [file(15, 10, { x: [0, 9] })],
          samples: { x: [1, 2] },
        },
        {
          groupIndex: 1,
          partitionPath: 'p=1',
          before: [file(10, 5, { x: [0, 9] }), file(10, 5, { x: [0, 9] })],
          after: [file(8, 5, { x: [0, 4] }), file(8, 5, { x: [5, 9] })],
          samples: { x: [1, 6] },
        },
        { groupIndex: 2, partitionPath: 'p=1', before: [file(10, 5, { x: [0, 9] })], after: [file(9, 5, { x: [0, 9] })], samples: { x: [3, 8] } },
      ],
    });
    assert.deepEqual(
      report.partitions.map((p) => p.partitionPath),
      ['p=1', 'p=2'],
    );
    const [p1, p2] = report.partitions;
    assert.deepEqual([p1!.filesBefore, p1!.filesAfter, p1!.bytesBefore, p1!.bytesAfter, p1!.rowsBefore, p1!.rowsAfter], [3, 3, 30, 25, 15, 15]);
    // p=1 after: each of the 4 samples hits 2 of the 3 files.
    assert.deepEqual(p1!.dataSkipping, [{ column: 'x', before: 1, after: 2 / 3, samples: 4 }]);
    assert.deepEqual(p2!.dataSkipping, [{ column: 'x', before: 1, after: 1, samples: 2 }]);
    assert.deepEqual(report.totals.dataSkipping, [{ column: 'x', before: 1, after: (4 * (2 / 3) + 2 * 1) / 6, samples: 6 }]);
    assert.equal(report.totals.filesBefore, 5);
    assert.equal(report.totals.filesAfter, 4);
    const text = formatClusteringReport(report);
    assert.match(text, /clustering 20240101000000000: 3 groups, layout z-order by x/);
    assert.match(text, /p=1: files 3 → 3/);
    assert.match(text, /x: a point query reads 100\.0% → 66\.7% of the files \(4 sampled values\)/);
    assert.match(text, /total: files 5 → 4/);
  });
});
