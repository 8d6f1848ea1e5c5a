import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ARCHIVAL_KEYS } from '../../lib/archival/config.js';
import { CLEAN_KEYS } from '../../lib/cleaner/config.js';
import { SERVERLESS_CLEAN_KEYS } from '../../lib/cleaning/shares.js';
import { CLUSTERING_KEYS } from '../../lib/clustering/config.js';
import { COMPACTION_KEYS } from '../../lib/compaction/config.js';
import {
  bool,
  type ConfigKey,
  ConfigValueError,
  commaList,
  decimalNumber,
  defineKey,
  javaInt,
  javaLong,
  namedValue,
  oneOf,
  optionalText,
  readKey,
  readKeys,
} from '../../lib/config/index.js';
import { HudiError } from '../../lib/errors.js';
import { INGEST_BATCH_MAX_BYTES } from '../../lib/ingest/index.js';
import { LOCK_KEYS } from '../../lib/lock/keys.js';
import { METADATA_TABLE_KEYS, metadataTableDisabled, partitionDisabled } from '../../lib/metadata/keys.js';
import { FAILED_WRITES_POLICY } from '../../lib/rollback/failed-writes.js';
import { SERVERLESS_CLUSTERING_KEYS } from '../../lib/serverless/steps/scale-out.js';
import { META_SYNC_KEYS } from '../../lib/sync/config.js';
import { NEW_TABLE_KEYS, TABLE_KEYS } from '../../lib/table/config.js';
import { WRITE_KEYS } from '../../lib/writer/write-config.js';

const props = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('config kernel: one definition per key', () => {
  const retained = defineKey({
    key: 'hoodie.cleaner.commits.retained',
    default: 10,
    parser: javaInt(0),
    description: 'commits kept',
    alternatives: ['hoodie.old.retained'],
  });

  it('reads the key, else its alternative, else the default; blank counts as unset', () => {
    assert.equal(readKey(props({}), retained), 10);
    assert.equal(readKey(props({ 'hoodie.cleaner.commits.retained': ' 7 ' }), retained), 7);
    assert.equal(readKey(props({ 'hoodie.old.retained': '3' }), retained), 3);
    assert.equal(readKey(props({ 'hoodie.cleaner.commits.retained': '5', 'hoodie.old.retained': '3' }), retained), 5);
    assert.equal(readKey(props({ 'hoodie.cleaner.commits.retained': '  ' }), retained), 10);
  });

  it("reads the cleaner's Hudi 1.x names beside 0.15's; both set to different values is refused, the same value is not", () => {
    assert.equal(readKey(props({ 'hoodie.clean.commits.retained': '2' }), CLEAN_KEYS.commitsRetained), 2);
    assert.equal(readKey(props({ 'hoodie.clean.policy': 'KEEP_LATEST_BY_HOURS' }), CLEAN_KEYS.policy), 'KEEP_LATEST_BY_HOURS');
    assert.equal(readKey(props({ 'hoodie.clean.async.enabled': 'true' }), CLEAN_KEYS.async), true);
    assert.equal(readKey(props({ 'hoodie.clean.failed.writes.policy': 'LAZY' }), FAILED_WRITES_POLICY), 'LAZY');
    assert.equal(readKey(props({ 'hoodie.cleaner.commits.retained': '2', 'hoodie.clean.commits.retained': ' 2' }), CLEAN_KEYS.commitsRetained), 2);
    assert.throws(
      () => readKey(props({ 'hoodie.cleaner.hours.retained': '24', 'hoodie.clean.hours.retained': '1' }), CLEAN_KEYS.hoursRetained),
      (error: unknown) =>
        error instanceof ConfigValueError &&
        error.key === 'hoodie.cleaner.hours.retained and hoodie.clean.hours.retained' &&
        /Hudi 0\.15 reads only hoodie\.cleaner\.hours\.retained, Hudi 1\.x reads hoodie\.clean\.hours\.retained before it/.test(error.message),
    );
    // Every renamed cleaner key of Hudi 1.x's HoodieCleanConfig is read, under the 0.15 key it renames.
    const renamed = Object.values(CLEAN_KEYS).flatMap((key) => key.renamedIn.map((name) => `${key.key} → ${name}`));
    assert.deepEqual(renamed.sort(), [
      'hoodie.clean.async → hoodie.clean.async.enabled',
      'hoodie.cleaner.commits.retained → hoodie.clean.commits.retained',
      'hoodie.cleaner.fileversions.retained → hoodie.clean.fileversions.retained',
      'hoodie.cleaner.hours.retained → hoodie.clean.hours.retained',
      'hoodie.cleaner.incremental.mode → hoodie.clean.incremental.enabled',
      'hoodie.cleaner.parallelism → hoodie.clean.parallelism',
      'hoodie.cleaner.policy → hoodie.clean.policy',
    ]);
  });

  it('refuses a bad value with one typed error naming the key as given, the value, what is accepted and the default', () => {
    assert.throws(
      () => readKey(props({ 'hoodie.old.retained': '-2' }), retained, 'job.properties'),
      (error: unknown) =>
        error instanceof ConfigValueError &&
        error instanceof HudiError &&
        error.key === 'hoodie.old.retained (hoodie.cleaner.commits.retained)' &&
        error.value === '-2' &&
        error.message ===
          'job.properties: hoodie.old.retained (hoodie.cleaner.commits.retained)="-2" is below 0 (use a whole number from 0 to 2147483647; default 10)',
    );
  });

  it('parses Java ints and longs as Hudi does, clamping a long past 2^53 with a warning', () => {
    assert.deepEqual(javaInt(1).parse('2147483647'), { value: 2147483647 });
    assert.deepEqual(javaInt(1).parse('2147483648'), { problem: 'is too large' });
    assert.deepEqual(javaInt(1).parse('1.5'), { problem: 'is not a whole number' });
    assert.deepEqual(javaLong(0).parse('9223372036854775807'), {
      value: Number.MAX_SAFE_INTEGER,
      warning: `is treated as ${Number.MAX_SAFE_INTEGER} (the largest exact number here)`,
    });
    assert.deepEqual(javaLong(0).parse('9223372036854775808'), { problem: 'is too large' });
    const size = defineKey({ key: 'k.bytes', default: 1, parser: javaLong(0), description: 'bytes' });
    const warnings: string[] = [];
    assert.equal(readKey(props({ 'k.bytes': '9223372036854775807' }), size, undefined, warnings), Number.MAX_SAFE_INTEGER);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^k\.bytes=9223372036854775807 is treated as/);
  });

  it('parses booleans strictly, enums without regard to case, named values, numbers and lists', () => {
    assert.deepEqual(bool.parse('TRUE'), { value: true });
    assert.deepEqual(bool.parse('yes'), { problem: 'is not a boolean' });
    assert.deepEqual(oneOf(['NONE', 'RECENT_DAYS'] as const).parse('recent_days'), { value: 'RECENT_DAYS' });
    assert.deepEqual(oneOf(['A.Class'] as const, { exactCase: true }).parse('a.class'), { problem: 'is not an accepted value' });
    const layout = namedValue({ linear: 1, zorder: 2, 'z-order': 2 }, (t) => t.toLowerCase(), ['linear', 'z-order']);
    assert.deepEqual(layout.parse('ZORDER'), { value: 2 });
    assert.deepEqual(layout.parse('constructor'), { problem: 'is not an accepted value' });
    assert.deepEqual(decimalNumber(0).parse('1e-9'), { value: 1e-9 });
    assert.deepEqual(decimalNumber(0).parse('-1'), { problem: 'is below 0' });
    assert.deepEqual(commaList.parse(' a, ,b '), { value: ['a', 'b'] });
    assert.deepEqual(optionalText.parse('x'), { value: 'x' });
  });

  it('reads a group of keys into one typed object', () => {
    const group = { retained, async: defineKey({ key: 'hoodie.clean.async', default: false, parser: bool, description: 'async' }) };
    assert.deepEqual(readKeys(props({ 'hoodie.clean.async': 'true' }), group), { retained: 10, async: true });
  });

  it('every key of every settings module is defined once, with a one-line description and a default its own parser accepts', () => {
    const groups: readonly (readonly ConfigKey<unknown>[])[] = [
      CLUSTERING_KEYS,
      Object.values(WRITE_KEYS),
      Object.values(CLEAN_KEYS),
      Object.values(SERVERLESS_CLEAN_KEYS),
      Object.values(ARCHIVAL_KEYS),
      Object.values(LOCK_KEYS),
      Object.values(TABLE_KEYS),
      Object.values(META_SYNC_KEYS),
      Object.values(SERVERLESS_CLUSTERING_KEYS),
      Object.values(METADATA_TABLE_KEYS),
      Object.values(COMPACTION_KEYS),
      [INGEST_BATCH_MAX_BYTES],
    ];
    const seen = new Map<string, number>();
    groups.forEach((group, index) => {
      for (const key of group) {
        assert.ok(!seen.has(key.key) || seen.get(key.key) === index, `${key.key} is defined in two settings modules`);
        seen.set(key.key, index);
        assert.ok(key.description.length > 0 && !key.description.includes('\n'), `${key.key} needs a one-line description`);
        if (key.defaultText !== '' && !key.defaultText.startsWith('(')) {
          const parsed = key.parser.parse(key.defaultText);
          assert.ok(!('problem' in parsed), `${key.key}: its default ${key.defaultText} is refused by its own parser`);
        }
      }
    });
    // New-table keys read the table's own names as alternatives: they reuse the definitions, not copies of the strings.
    assert.ok(NEW_TABLE_KEYS.recordKeyFields.alternatives.includes(TABLE_KEYS.recordKeyFields.key));
  });

  it("metadata-table switches count only when set, and a value that is not a boolean is refused rather than read as false (Java's parseBoolean)", () => {
    assert.equal(metadataTableDisabled(props({})), false);
    assert.equal(metadataTableDisabled(props({ 'hoodie.metadata.enable': 'FALSE' })), true);
    assert.equal(partitionDisabled(props({ 'hoodie.metadata.record.index.enable': 'false' }), 'record_index'), true);
    assert.equal(partitionDisabled(props({ 'hoodie.metadata.record.index.enable': 'true' }), 'record_index'), false);
    assert.throws(
      () => metadataTableDisabled(props({ 'hoodie.metadata.enable': 'off' })),
      (error: unknown) => error instanceof ConfigValueError && error.key === 'hoodie.metadata.enable' && /true or false/.test(error.fix ?? ''),
    );
  });
});
