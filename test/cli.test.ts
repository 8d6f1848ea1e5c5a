/**
 * CLI: init, timeline on real tables (pending instants marked), usage errors.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseJavaProperties } from '../lib/properties.js';
import { tableChecksum } from '../lib/table-config.js';
import { runCli, jsonLines } from './helpers/cli.js';
import { HUDI_FIXTURES, tempDir } from './helpers/fixtures.js';

describe('cli', () => {
  it('init creates a v6 copy-on-write table from Hudi write keys, once', () => {
    const dir = tempDir();
    const props = join(dir, 'table.properties');
    writeFileSync(props, [
      'hoodie.table.name=trips',
      'hoodie.datasource.write.recordkey.field=uuid,rider',
      'hoodie.datasource.write.partitionpath.field=city',
      'hoodie.datasource.write.precombine.field=ts',
      'hoodie.datasource.write.hive_style_partitioning=true',
    ].join('\n'));
    const table = join(dir, 'trips');
    const result = runCli(['init', table, '--props', props]);
    assert.equal(result.code, 0, result.stderr);
    const stored = parseJavaProperties(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'));
    assert.equal(stored.get('hoodie.table.version'), '6');
    assert.equal(stored.get('hoodie.table.type'), 'COPY_ON_WRITE');
    assert.equal(stored.get('hoodie.table.recordkey.fields'), 'uuid,rider');
    assert.equal(stored.get('hoodie.table.keygenerator.class'), 'org.apache.hudi.keygen.ComplexKeyGenerator');
    assert.equal(stored.get('hoodie.datasource.write.hive_style_partitioning'), 'true');
    assert.equal(stored.get('hoodie.table.checksum'), String(tableChecksum('', 'trips')));
    assert.equal(runCli(['read', table]).code, 0);
    const again = runCli(['init', table, '--props', props]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /a Hudi table already exists here/);
  });

  it('init with flags, and a missing record key is refused naming the key', () => {
    const dir = tempDir();
    assert.equal(runCli(['init', join(dir, 't'), '--table-name', 't', '--record-key', 'id']).code, 0);
    const bad = runCli(['init', join(dir, 'u'), '--table-name', 'u']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /hoodie\.datasource\.write\.recordkey\.field is required/);
  });

  it('timeline marks pending instants; files ignores the pending write (kazdy table, Hudi 0.12.1)', () => {
    const dir = tempDir();
    cpSync(join(HUDI_FIXTURES, 'tables/kazdy-HUDI-8259/testtable'), join(dir, 't'), { recursive: true });
    const result = runCli(['timeline', join(dir, 't')]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /20230329224554584 {2}replacecommit +COMPLETED/);
    assert.match(result.stdout, /20230329224605640 {2}commit +INFLIGHT \(pending\)/);
    const json = jsonLines(runCli(['timeline', join(dir, 't'), '--json']).stdout);
    assert.equal(json.filter((i) => i['state'] !== 'COMPLETED').length, 1);
  });
});
