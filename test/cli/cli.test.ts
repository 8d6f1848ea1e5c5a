/**
 * CLI: init, timeline on real tables (pending instants marked), usage errors.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tableChecksum } from '../../lib/table/config.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { expectedOf, fixtureTable, tempDir } from '../helpers/fixtures.js';

describe('cli', () => {
  it('init creates a v6 copy-on-write table from Hudi write keys, once', () => {
    const dir = tempDir();
    const props = join(dir, 'table.properties');
    writeFileSync(
      props,
      [
        'hoodie.table.name=trips',
        'hoodie.datasource.write.recordkey.field=uuid,rider',
        'hoodie.datasource.write.partitionpath.field=city',
        'hoodie.datasource.write.precombine.field=ts',
        'hoodie.datasource.write.hive_style_partitioning=true',
      ].join('\n'),
    );
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

  it('timeline marks pending instants; files ignores the pending write (version-5 table with a failed write)', () => {
    const table = fixtureTable('v5_cow_clustered_pending');
    const expected = expectedOf('v5_cow_clustered_pending');
    const clustering = expected.facts?.['clusteringInstant'];
    const pending = expected.timeline.filter((instant) => instant.state !== 'COMPLETED');
    assert.deepEqual(
      pending.map((instant) => [instant.action, instant.state]),
      [['commit', 'INFLIGHT']],
    );
    const result = runCli(['timeline', table]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`${clustering} {2}replacecommit +COMPLETED`));
    assert.match(result.stdout, new RegExp(`${pending[0]!.time} {2}commit +INFLIGHT \\(pending\\)`));
    const json = jsonLines(runCli(['timeline', table, '--json']).stdout);
    assert.equal(json.filter((i) => i['state'] !== 'COMPLETED').length, 1);
    assert.deepEqual(
      json.map((i) => i['time']),
      expected.timeline.map((instant) => instant.time),
    );
    // The failed write left a data file behind; the file-system view does not show it.
    const leftBehind = expected.fileGroups.flatMap((group) => group.files).filter((file) => file.includes(pending[0]!.time));
    assert.equal(leftBehind.length, 1);
    const files = runCli(['files', table, '--json']);
    assert.equal(files.code, 0, files.stderr);
    assert.ok(jsonLines(files.stdout).length > 0);
    assert.ok(!files.stdout.includes(pending[0]!.time), files.stdout);
  });
});
