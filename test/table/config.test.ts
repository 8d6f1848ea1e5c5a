/**
 * hoodie.properties: checksums, parsing the fixtures' files, writing new tables.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UnsupportedTableError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import {
  assertSupported,
  formatTableProperties,
  newTableOptionsFromWriteProperties,
  newTableProperties,
  readTableConfig,
  storedPropertiesProblem,
  tableChecksum,
  tableConfigFromProperties,
} from '../../lib/table/config.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { committedTable, fixtureTable } from '../helpers/fixtures.js';

describe('table config', () => {
  it('checksum is CRC32 of "<database>.<table>" (values from the format doc)', () => {
    assert.equal(tableChecksum('default', 'v6_simplekeygen_nonhivestyle_overwritetable'), 3443920226);
    assert.equal(tableChecksum('', 'testtable'), 4200765993);
  });

  it('reads every v6 fixture config', () => {
    for (const name of [
      'v6_nonpartitioned',
      'v6_simplekeygen_nonhivestyle',
      'v6_complexkeygen_hivestyle',
      'v6_timebasedkeygen_nonhivestyle',
      'v6_simplekeygen_hivestyle_no_metafields',
    ] as const) {
      const file = join(committedTable(name), '.hoodie/hoodie.properties');
      const config = tableConfigFromProperties(parseJavaProperties(readFileSync(file, 'utf8')), file);
      assert.equal(config.name, name);
      assert.equal(config.version, 6);
      assert.equal(config.type, 'COPY_ON_WRITE');
      assertSupported(config, file);
      if (name === 'v6_complexkeygen_hivestyle') {
        assert.deepEqual(config.recordKeyFields, ['id', 'name']);
        assert.deepEqual(config.partitionFields, ['byteField', 'shortField']);
        assert.equal(config.hiveStylePartitioning, true);
      }
      if (name === 'v6_timebasedkeygen_nonhivestyle')
        assert.equal(config.properties.get('hoodie.keygen.timebased.input.dateformat'), "yyyy-MM-dd'T'HH:mm:ss.SSSZ");
      if (name === 'v6_simplekeygen_hivestyle_no_metafields') assert.equal(config.populateMetaFields, false);
      // Datasource writes store no create schema (hudi-rs's SQL-created tables had one); v6_empty is SQL-created.
      assert.equal(config.createSchema, undefined);
    }
    const sqlCreated = join(committedTable('v6_empty'), '.hoodie/hoodie.properties');
    assert.ok(tableConfigFromProperties(parseJavaProperties(readFileSync(sqlCreated, 'utf8')), sqlCreated).createSchema?.startsWith('{"type":"record"'));
    // Downgraded to version 5 by Hudi's own CALL downgrade_table.
    const v5 = join(committedTable('v5_cow_clustered_pending'), '.hoodie/hoodie.properties');
    const v5Config = tableConfigFromProperties(parseJavaProperties(readFileSync(v5, 'utf8')), v5);
    assert.equal(v5Config.version, 5);
    assert.doesNotThrow(() => assertSupported(v5Config, v5, 'read'));
  });

  it('writes a v6 COW table config from Hudi write keys that reads back the same', () => {
    const props = new Map([
      ['hoodie.table.name', 'users'],
      ['hoodie.datasource.write.recordkey.field', 'id'],
      ['hoodie.datasource.write.partitionpath.field', 'dt'],
      ['hoodie.datasource.write.precombine.field', 'createTime'],
      ['hoodie.datasource.write.hive_style_partitioning', 'true'],
    ]);
    const stored = newTableProperties(newTableOptionsFromWriteProperties(props, 'test'));
    const text = formatTableProperties(stored, new Date(Date.UTC(2024, 0, 1)));
    assert.match(text, /^#Properties saved on 2024-01-01T00:00:00.000Z\n#/);
    const config = tableConfigFromProperties(parseJavaProperties(text), 'x');
    assert.equal(config.version, 6);
    assert.equal(config.timelineLayoutVersion, 1);
    assert.equal(config.keyGeneratorClass, 'org.apache.hudi.keygen.SimpleKeyGenerator');
    assert.deepEqual(config.partitionFields, ['dt']);
    assert.equal(config.precombineField, 'createTime');
    assert.equal(config.hiveStylePartitioning, true);
    assert.equal(stored.get('hoodie.table.checksum'), String(tableChecksum('', 'users')));
  });

  it("reads Hudi 1.x's hoodie.table.keygenerator.type when no class is stored, as KeyGeneratorType does", () => {
    const v8 = (extra: [string, string][]) =>
      tableConfigFromProperties(
        new Map([
          ['hoodie.table.name', 't'],
          ['hoodie.table.version', '8'],
          ['hoodie.table.recordkey.fields', 'id'],
          ['hoodie.table.partition.fields', 'dt'],
          ...extra,
        ]),
        'f',
      );
    assert.equal(v8([['hoodie.table.keygenerator.type', 'TIMESTAMP']]).keyGeneratorClass, 'org.apache.hudi.keygen.TimestampBasedKeyGenerator');
    assert.equal(v8([['hoodie.table.keygenerator.type', 'CUSTOM']]).keyGeneratorClass, 'org.apache.hudi.keygen.CustomKeyGenerator');
    const custom = v8([
      ['hoodie.table.keygenerator.type', 'CUSTOM'],
      ['hoodie.table.partition.fields', 'region:SIMPLE,event:TIMESTAMP'],
    ]);
    assert.deepEqual(custom.partitionFields, ['region', 'event'], "the fields' names, as Hudi's getPartitionFields gives them");
    assert.equal(custom.properties.get('hoodie.table.partition.fields'), 'region:SIMPLE,event:TIMESTAMP', 'the types stay for the key generator');
    assert.equal(
      v8([
        ['hoodie.table.keygenerator.type', 'TIMESTAMP'],
        ['hoodie.table.keygenerator.class', 'org.apache.hudi.keygen.SimpleKeyGenerator'],
      ]).keyGeneratorClass,
      'org.apache.hudi.keygen.SimpleKeyGenerator',
      'the class wins',
    );
    assert.equal(v8([]).keyGeneratorClass, 'org.apache.hudi.keygen.SimpleKeyGenerator', 'neither: inferred from the fields');
    assert.throws(() => v8([['hoodie.table.keygenerator.type', 'NO_SUCH_TYPE']]), UnsupportedTableError);
  });

  it('refuses bad input with the key named', () => {
    assert.throws(
      () => newTableOptionsFromWriteProperties(new Map([['hoodie.table.name', 't']]), 'p.properties'),
      /p\.properties: hoodie\.datasource\.write\.recordkey\.field is required/,
    );
    assert.throws(() => newTableOptionsFromWriteProperties(new Map(), 'p.properties'), /hoodie\.table\.name is required/);
    assert.throws(
      () =>
        tableConfigFromProperties(
          new Map([
            ['hoodie.table.name', 't'],
            ['hoodie.table.version', 'six'],
          ]),
          'f',
        ),
      /hoodie\.table\.version="six" is not a whole number, expected a whole number/,
    );
    assert.throws(
      () =>
        tableConfigFromProperties(
          new Map([
            ['hoodie.table.name', 't'],
            ['hoodie.table.type', 'FOO'],
          ]),
          'f',
        ),
      /hoodie\.table\.type="FOO" is not an accepted value, expected one of COPY_ON_WRITE, MERGE_ON_READ/,
    );
    const v8 = tableConfigFromProperties(
      new Map([
        ['hoodie.table.name', 't'],
        ['hoodie.table.version', '8'],
      ]),
      'f',
    );
    assert.doesNotThrow(() => assertSupported(v8, 'f', 'read'));
    assert.throws(() => assertSupported(v8, 'f', 'write'), UnsupportedTableError, 'write');
    // The writer, the cleaner, the archiver and clustering write 1.x copy-on-write tables; of merge-on-read ones all
    // but clustering (compaction, 'write', only them).
    assert.doesNotThrow(() => assertSupported(v8, 'f', 'clean'));
    assert.doesNotThrow(() => assertSupported(v8, 'f', 'delta-write'));
    assert.doesNotThrow(() => assertSupported(v8, 'f', 'clustering'));
    const v8MergeOnRead = tableConfigFromProperties(
      new Map([
        ['hoodie.table.name', 't'],
        ['hoodie.table.version', '8'],
        ['hoodie.table.type', 'MERGE_ON_READ'],
      ]),
      'f',
    );
    assert.doesNotThrow(() => assertSupported(v8MergeOnRead, 'f', 'clean'));
    assert.doesNotThrow(() => assertSupported(v8MergeOnRead, 'f', 'archive'));
    assert.doesNotThrow(() => assertSupported(v8MergeOnRead, 'f', 'write'));
    assert.doesNotThrow(() => assertSupported(v8MergeOnRead, 'f', 'clustering'));
    assert.doesNotThrow(() => assertSupported(v8MergeOnRead, 'f', 'delta-write'));
    const v5 = tableConfigFromProperties(
      new Map([
        ['hoodie.table.name', 't'],
        ['hoodie.table.version', '5'],
      ]),
      'f',
    );
    assert.doesNotThrow(() => assertSupported(v5, 'f', 'read'));
    assert.throws(() => assertSupported(v5, 'f', 'write'), /table version 5 is not supported for writing/);
  });
});

describe('reading hoodie.properties', () => {
  const whole = () => readFileSync(join(committedTable('v6_complexkeygen_hivestyle'), '.hoodie/hoodie.properties'), 'utf8');
  const withoutChecksum = () =>
    whole()
      .split('\n')
      .filter((line) => !line.startsWith('hoodie.table.checksum='))
      .join('\n');

  it('a file of a version 4+ table without its checksum, or with a wrong one, is not whole; older versions need none', () => {
    assert.equal(storedPropertiesProblem(whole()), undefined);
    assert.match(
      storedPropertiesProblem(withoutChecksum()) ?? '',
      /^hoodie\.table\.checksum is missing \(Hudi writes it into every table of version 4 and later/,
    );
    assert.match(
      storedPropertiesProblem(whole().replace(/hoodie\.table\.name=.*/, 'hoodie.table.name=other')) ?? '',
      /^hoodie\.table\.checksum \d+ does not match the table name \(expected \d+\)$/,
    );
    assert.equal(storedPropertiesProblem('hoodie.table.name=t\nhoodie.table.version=3\n'), undefined);
    assert.match(storedPropertiesProblem('hoodie.table.name=t\n') ?? '', /checksum is missing/);
    assert.equal(storedPropertiesProblem('garbage\u0000'), 'it holds no hoodie.* keys');
    assert.equal(storedPropertiesProblem('hoodie.table.version=6\n'), 'hoodie.table.name is missing');
  });

  it('a file that is not whole falls back to a whole backup; with none, it is refused naming both', async () => {
    const table = fixtureTable('v6_complexkeygen_hivestyle');
    const file = join(table, '.hoodie/hoodie.properties');
    writeFileSync(file, withoutChecksum());
    await assert.rejects(
      readTableConfig(openStorage(table)),
      /hoodie\.properties: hoodie\.properties is corrupt: hoodie\.table\.checksum is missing .*, and there is no hoodie\.properties\.backup \(restore hoodie\.properties from a copy of the table/,
    );
    writeFileSync(`${file}.backup`, withoutChecksum());
    await assert.rejects(readTableConfig(openStorage(table)), /and hoodie\.properties\.backup is not usable either: hoodie\.table\.checksum is missing/);
    writeFileSync(`${file}.backup`, whole());
    const config = await readTableConfig(openStorage(table));
    assert.equal(config.hiveStylePartitioning, true);
    assert.equal(config.keyGeneratorClass, 'org.apache.hudi.keygen.ComplexKeyGenerator');
  });
});
