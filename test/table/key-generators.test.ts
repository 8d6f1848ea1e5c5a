/**
 * Key generators reproduce the record keys and partition paths Hudi wrote into the fixtures.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HudiError } from '../../lib/errors.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import {
  createKeyGenerator,
  escapePathName,
  formatWithPattern,
  keyGeneratorOptionsFromTable,
  parseWithPattern,
  partitionValuesFromPath,
} from '../../lib/table/key-generators.js';
import { HudiTable } from '../../lib/table/table.js';
import { committedTable } from '../helpers/fixtures.js';

describe('key generators against Hudi-written rows', () => {
  for (const name of ['v6_nonpartitioned', 'v6_simplekeygen_nonhivestyle', 'v6_complexkeygen_hivestyle', 'v6_timebasedkeygen_nonhivestyle'] as const) {
    it(`${name}: record key and partition path of every row`, async () => {
      const table = await HudiTable.open(openStorage(committedTable(name)));
      const keygen = createKeyGenerator(keyGeneratorOptionsFromTable(table.config));
      const { rows } = await readSnapshot(table, { includeMetaFields: true });
      assert.equal(rows.length, 4);
      for (const row of rows) {
        assert.equal(keygen.recordKey(row), row['_hoodie_record_key']);
        assert.equal(keygen.partitionPath(row), row['_hoodie_partition_path']);
      }
    });
  }
});

describe('key generator rules', () => {
  const base = { hiveStylePartitioning: false, urlEncodePartitioning: false, properties: new Map<string, string>() };
  it('simple: null partition value goes to the default partition; hive style adds field=', () => {
    const simple = createKeyGenerator({
      ...base,
      keyGeneratorClass: 'org.apache.hudi.keygen.SimpleKeyGenerator',
      recordKeyFields: ['id'],
      partitionFields: ['dt'],
    });
    assert.equal(simple.partitionPath({ id: 1, dt: null }), '__HIVE_DEFAULT_PARTITION__');
    const hive = createKeyGenerator({
      ...base,
      hiveStylePartitioning: true,
      keyGeneratorClass: 'org.apache.hudi.keygen.SimpleKeyGenerator',
      recordKeyFields: ['id'],
      partitionFields: ['dt'],
    });
    assert.equal(hive.partitionPath({ id: 1, dt: '2024-01-01' }), 'dt=2024-01-01');
    assert.throws(() => simple.recordKey({ id: null, dt: 'x' }), /record key field "id" is null or empty/);
  });

  it('complex: field:value pairs with __null__ / __empty__ placeholders', () => {
    const complex = createKeyGenerator({
      ...base,
      keyGeneratorClass: 'org.apache.hudi.keygen.ComplexKeyGenerator',
      recordKeyFields: ['id', 'name'],
      partitionFields: ['a', 'b'],
    });
    assert.equal(complex.recordKey({ id: 1, name: null }), 'id:1,name:__null__');
    assert.equal(complex.recordKey({ id: 1, name: '' }), 'id:1,name:__empty__');
    assert.throws(() => complex.recordKey({ id: null, name: null }), /all null or empty/);
    assert.equal(complex.partitionPath({ a: 'x', b: 2 }), 'x/2');
  });

  it('url-encodes partition values as Hudi escapes path names', () => {
    assert.equal(escapePathName('a/b:c=d%'), 'a%2Fb%3Ac%3Dd%25');
    // PartitionPathEncodeUtils.charToEscape sets 0x00–0x1F (its loop starts at 0), then the listed characters.
    assert.equal(escapePathName('\u0000\u0001\t\u001f\u007f*?[]{}^"#\'\\ .x'), '%00%01%09%1F%7F%2A%3F%5B%5D%7B}%5E%22%23%27%5C .x');
    const encoded = createKeyGenerator({
      ...base,
      urlEncodePartitioning: true,
      keyGeneratorClass: 'org.apache.hudi.keygen.SimpleKeyGenerator',
      recordKeyFields: ['id'],
      partitionFields: ['p'],
    });
    assert.equal(encoded.partitionPath({ id: 1, p: '2024/01' }), '2024%2F01');
  });

  it('timestamp formats in and out', () => {
    const ms = parseWithPattern('2023-04-01T12:01:00.123Z', "yyyy-MM-dd'T'HH:mm:ss.SSSZ", 'GMT');
    assert.equal(ms, Date.UTC(2023, 3, 1, 12, 1, 0, 123));
    assert.equal(formatWithPattern(ms!, 'yyyy/MM/dd/HH', 'GMT'), '2023/04/01/12');
    assert.equal(formatWithPattern(ms!, 'yyyy-MM-dd HH', 'GMT+08:00'), '2023-04-01 20');
    const epoch = createKeyGenerator({
      ...base,
      keyGeneratorClass: 'org.apache.hudi.keygen.TimestampBasedKeyGenerator',
      recordKeyFields: ['id'],
      partitionFields: ['ts'],
      properties: new Map([
        ['hoodie.keygen.timebased.timestamp.type', 'UNIX_TIMESTAMP'],
        ['hoodie.keygen.timebased.output.dateformat', 'yyyyMMdd'],
      ]),
    });
    assert.equal(epoch.partitionPath({ id: 1, ts: 1700000000 }), '20231114');
  });

  it('partition values back from a partition path: the inverse of the key generator for dropped partition columns', () => {
    const options = {
      ...base,
      hiveStylePartitioning: true,
      urlEncodePartitioning: true,
      keyGeneratorClass: 'org.apache.hudi.keygen.ComplexKeyGenerator',
      recordKeyFields: ['id'],
      partitionFields: ['dt', 'region'],
    };
    const keygen = createKeyGenerator(options);
    const path = keygen.partitionPath({ id: 1, dt: '2024-01-01', region: 'eu/west:1 100%' });
    assert.equal(path, 'dt=2024-01-01/region=eu%2Fwest%3A1 100%25');
    assert.deepEqual(partitionValuesFromPath(path, options), { dt: '2024-01-01', region: 'eu/west:1 100%' });
    assert.deepEqual(partitionValuesFromPath(keygen.partitionPath({ id: 1, dt: null, region: 'x' }), options), { dt: null, region: 'x' });
    // One field takes the whole path (timestamp formats have slashes); with more, a stray slash cannot be mapped.
    assert.deepEqual(partitionValuesFromPath('2024/01/02', { ...base, partitionFields: ['ts'] }), { ts: '2024/01/02' });
    assert.throws(
      () => partitionValuesFromPath('a/b/c', { ...base, partitionFields: ['x', 'y'] }),
      /partition path "a\/b\/c" has 3 segments for the 2 partition fields x, y/,
    );
  });

  it('custom: each partition field by its stored type (SIMPLE, TIMESTAMP); one record key field is the bare value', () => {
    const custom = (partitionFields: string, recordKeyFields: string[], hiveStylePartitioning = false) =>
      createKeyGenerator({
        ...base,
        hiveStylePartitioning,
        keyGeneratorClass: 'org.apache.hudi.keygen.CustomKeyGenerator',
        recordKeyFields,
        partitionFields: partitionFields.split(',').map((field) => field.split(':')[0]!),
        properties: new Map([
          ['hoodie.table.partition.fields', partitionFields],
          ['hoodie.keygen.timebased.timestamp.type', 'DATE_STRING'],
          ['hoodie.keygen.timebased.input.dateformat', 'yyyy-MM-dd HH:mm:ss'],
          ['hoodie.keygen.timebased.output.dateformat', 'yyyyMMdd'],
          ['hoodie.keygen.timebased.timezone', 'UTC'],
        ]),
      });
    const record = { id: 7, kind: 'a', region: 'eu', event: '2024-01-02 23:59:59' };
    const single = custom('region:SIMPLE,event:TIMESTAMP', ['id']);
    assert.deepEqual(single.partitionFields, ['region', 'event']);
    assert.equal(single.recordKey(record), '7');
    assert.equal(single.partitionPath(record), 'eu/20240102');
    assert.equal(single.partitionPath({ ...record, region: null }), '__HIVE_DEFAULT_PARTITION__/20240102');
    const hive = custom('event:timestamp', ['id', 'kind'], true);
    assert.equal(hive.recordKey(record), 'id:7,kind:a');
    assert.equal(hive.partitionPath(record), 'event=20240102');
    assert.throws(
      () => custom('region,event', ['id']),
      (error: unknown) => error instanceof HudiError && /"region" has no SIMPLE or TIMESTAMP type/.test(error.message),
    );
  });

  it('unknown key generator class is refused naming it', () => {
    assert.throws(
      () => createKeyGenerator({ ...base, keyGeneratorClass: 'com.acme.MyKeyGen', recordKeyFields: ['id'], partitionFields: [] }),
      /com\.acme\.MyKeyGen is not supported/,
    );
  });
});
