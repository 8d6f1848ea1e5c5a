/**
 * Instants, the timeline and commit metadata against Hudi-written files.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { HudiError } from '../../lib/errors.js';
import { tableConfigFromProperties } from '../../lib/table/config.js';
import { newWriteStat, parseCommitMetadata, serializeCommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { compareInstantTimes, instantFileName, newInstantTime, parseInstantFileName, parseInstantTime } from '../../lib/timeline/instant.js';
import { Timeline } from '../../lib/timeline/timeline.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { committedTable, expectedOf, type FixtureTableName, tempDir } from '../helpers/fixtures.js';

describe('instants', () => {
  it('parses every timeline file name Hudi writes for v6', () => {
    assert.deepEqual(parseInstantFileName('20240707001301554.commit'), { time: '20240707001301554', action: 'commit', state: 'COMPLETED' });
    assert.deepEqual(parseInstantFileName('20240707001301554.inflight'), { time: '20240707001301554', action: 'commit', state: 'INFLIGHT' });
    assert.deepEqual(parseInstantFileName('20240707001301554.commit.requested'), { time: '20240707001301554', action: 'commit', state: 'REQUESTED' });
    assert.deepEqual(parseInstantFileName('20240707001303088.replacecommit.inflight'), {
      time: '20240707001303088',
      action: 'replacecommit',
      state: 'INFLIGHT',
    });
    assert.deepEqual(parseInstantFileName('00000000000000.deltacommit'), { time: '00000000000000', action: 'deltacommit', state: 'COMPLETED' });
    for (const ignored of ['hoodie.properties', '.temp', 'archived', '20240707001301554.commit.crc', 'x.commit', '20240707001301554.bogus']) {
      assert.equal(parseInstantFileName(ignored), undefined, ignored);
    }
  });

  it('file names round-trip', () => {
    for (const name of [
      '20240707001301554.commit',
      '20240707001301554.inflight',
      '20240707001301554.commit.requested',
      '20250126040936578.rollback.inflight',
      '20250126040936578.clean',
    ]) {
      assert.equal(instantFileName(parseInstantFileName(name)!), name);
    }
  });

  it('legacy 14-digit times order as if padded with 000 ms', () => {
    assert.equal(compareInstantTimes('20230329224539', '20230329224539000'), 0);
    assert.equal(compareInstantTimes('20230329224539', '20230329224539001'), -1);
    assert.ok(parseInstantTime('20230329224539'));
    assert.equal(parseInstantTime('20231332000000000'), undefined);
  });

  it('new instant times are strictly greater than any on the timeline, even when the clock lags', () => {
    const now = new Date(Date.UTC(2024, 6, 7, 0, 13, 1, 554));
    assert.equal(newInstantTime([], now, 'UTC'), '20240707001301554');
    assert.equal(newInstantTime(['20240707001301554'], now, 'UTC'), '20240707001301555');
    assert.equal(newInstantTime(['20990101000000999'], now, 'UTC'), '20990101000001000');
    assert.equal(newInstantTime(['20240707001301553'], now, 'UTC'), '20240707001301554');
  });
});

describe('timeline', () => {
  it('keeps the furthest state of each instant and filters completed and pending', () => {
    const timeline = new Timeline(
      ['1.commit.requested', '1.inflight', '1.commit', '2.replacecommit.requested', '2.replacecommit.inflight', '3.commit.requested'].map(
        (n) => parseInstantFileName(n.replace(/^(\d)/, '2024070700000000$1'))!,
      ),
    );
    assert.deepEqual(
      timeline.instants.map((i) => `${i.time.slice(-1)}:${i.action}:${i.state}`),
      ['1:commit:COMPLETED', '2:replacecommit:INFLIGHT', '3:commit:REQUESTED'],
    );
    assert.equal(timeline.completed().length, 1);
    assert.equal(timeline.pending().length, 2);
    assert.equal(timeline.isCommitted('20240707000000001'), true);
    assert.equal(timeline.isCommitted('20240707000000002'), false);
    assert.equal(timeline.isCommitted('20240707000000003'), false);
    // Older than the active timeline: archived, so committed.
    assert.equal(timeline.isCommitted('20240101000000000'), true);
    assert.equal(timeline.asOf('20240707000000001').instants.length, 1);
  });
});

describe('commit metadata JSON', () => {
  const samples: { name: string; text: string }[] = [];
  const tables: FixtureTableName[] = [
    'v6_simplekeygen_nonhivestyle_overwritetable',
    'v6_complexkeygen_hivestyle',
    'v6_nonpartitioned',
    'v5_cow_clustered_pending',
  ];
  for (const name of tables) {
    const table = committedTable(name);
    for (const file of readdirSync(join(table, '.hoodie'))) {
      if (/^\d+\.(commit|replacecommit)$/.test(file)) samples.push({ name: `${name}:${file}`, text: readFileSync(join(table, '.hoodie', file), 'utf8') });
    }
  }

  it('finds the Hudi-written samples', () => assert.ok(samples.length >= 12, `${samples.length} samples`));

  it('reads commits written before cdcStats / runtimeStats existed (Hudi 0.12: those keys absent), clustering included', () => {
    // Hudi 0.15's own commits of the version-5 table, with the keys older writers did not write taken out.
    const dir = join(committedTable('v5_cow_clustered_pending'), '.hoodie');
    const files = readdirSync(dir).filter((f) => /^\d+\.(commit|replacecommit)$/.test(f));
    assert.equal(files.length, 5);
    const clustering = expectedOf('v5_cow_clustered_pending').facts?.['clusteringInstant'];
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      const older = JSON.parse(text, (key, value: unknown) => (key === 'cdcStats' || key === 'runtimeStats' ? undefined : value)) as Record<string, unknown>;
      assert.ok(!JSON.stringify(older).includes('cdcStats'));
      const metadata = parseCommitMetadata(JSON.stringify(older, null, 2), file);
      const files = (m: ReturnType<typeof parseCommitMetadata>) =>
        Object.values(m.partitionToWriteStats)
          .flat()
          .map((stat) => [stat.fileId, stat.path, stat.numWrites]);
      assert.deepEqual(files(metadata), files(parseCommitMetadata(text, file)));
      assert.ok(Object.keys(metadata.partitionToWriteStats).length > 0);
      if (file.endsWith('.replacecommit')) {
        assert.equal(file, `${clustering}.replacecommit`);
        assert.equal(metadata.operationType, 'CLUSTER');
        assert.deepEqual(Object.keys(metadata.partitionToReplaceFileIds ?? {}).sort(), ['dt=2021-12-09/hh=10', 'dt=2021-12-09/hh=11']);
      }
    }
  });

  for (const sample of samples) {
    it(`re-serializes ${sample.name} byte for byte (Jackson layout, Hudi field order)`, () => {
      const metadata = parseCommitMetadata(sample.text, sample.name);
      const written = serializeCommitMetadata(metadata);
      const expected = sample.text.replace(/\n$/, '');
      // JavaScript objects list integer-like keys ("10", "20") first, so partition order can differ from Hudi's
      // HashMap order there; the content and every line must still be Hudi's.
      if (Object.keys(metadata.partitionToWriteStats).some((k) => /^\d+$/.test(k))) {
        assert.deepEqual(JSON.parse(written), JSON.parse(expected));
        const lines = (text: string) =>
          text
            .split('\n')
            .map((l) => l.replace(/,$/, ''))
            .sort();
        assert.deepEqual(lines(written), lines(expected));
      } else {
        assert.equal(written, expected);
      }
    });
  }

  it('replacecommit metadata keeps partitionToReplaceFileIds after operationType', () => {
    const text = serializeCommitMetadata({
      partitionToWriteStats: { p: [newWriteStat({ fileId: 'f-0', path: 'p/f-0_0-1-1_1.parquet', partitionPath: 'p', numWrites: 2, numInserts: 2 })] },
      compacted: false,
      extraMetadata: { schema: '{}' },
      operationType: 'CLUSTER',
      partitionToReplaceFileIds: { p: ['a-0', 'b-0'] },
    });
    assert.match(text, /"operationType" : "CLUSTER",\n {2}"partitionToReplaceFileIds" : {\n {4}"p" : \[ "a-0", "b-0" \]\n {2}}\n}$/);
    assert.match(text, /"prevCommit" : "null"/);
  });

  it('a truncated or non-JSON file is an error naming it', () => {
    assert.throws(() => parseCommitMetadata('{ "partitionToWriteStats" : {', '.hoodie/1.commit'), /\.hoodie\/1\.commit: commit metadata is not valid JSON/);
    assert.throws(() => parseCommitMetadata('[1,2]', '.hoodie/2.commit'), /\.hoodie\/2\.commit: commit metadata is not a JSON object/);
    assert.deepEqual(parseCommitMetadata('', 'x').partitionToWriteStats, {});
  });
});

/** Wall-clock digits (yyyyMMddHHmmssSSS) of a moment in an IANA zone, from Intl (independent of lib/). */
function wallClock(date: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      fractionalSecondDigits: 3,
    })
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  return `${parts['year']}${parts['month']}${parts['day']}${parts['hour']}${parts['minute']}${parts['second']}${parts['fractionalSecond']}`;
}

describe('timeline time zone (hoodie.table.timeline.timezone)', () => {
  const props = [
    'hoodie.table.name=users',
    'hoodie.datasource.write.recordkey.field=id',
    'hoodie.datasource.write.partitionpath.field=dt',
    'hoodie.datasource.write.precombine.field=createTime',
  ];

  /** A table made by `init`, optionally with its timezone line changed, and a batch to write. */
  async function initTable(zone?: 'LOCAL'): Promise<{ table: string; propsFile: string; input: string }> {
    const dir = tempDir('timezone-');
    const table = join(dir, 'users');
    const propsFile = join(dir, 'props');
    writeFileSync(propsFile, props.join('\n'));
    const init = runCli(['init', table, '--props', propsFile]);
    assert.equal(init.code, 0, init.stderr);
    if (zone !== undefined) {
      const file = join(table, '.hoodie/hoodie.properties');
      writeFileSync(file, readFileSync(file, 'utf8').replace('hoodie.table.timeline.timezone=UTC', `hoodie.table.timeline.timezone=${zone}`));
    }
    const input = join(dir, 'batch.jsonl');
    await writeJsonLines(input, generateUsers({ count: 5, seed: 1 }));
    return { table, propsFile, input };
  }

  /** Write the batch in a child process whose zone is `timeZone` (TZ, which Node and a JVM's LOCAL both follow). */
  function writeIn(timeZone: string, made: { table: string; propsFile: string; input: string }): { instant: string; before: Date; after: Date } {
    const before = new Date();
    const result = runCli(['write', made.table, '--input', made.input, '--operation', 'upsert', '--props', made.propsFile, '--quiet'], {
      ...process.env,
      TZ: timeZone,
    });
    const after = new Date();
    assert.equal(result.code, 0, result.stderr);
    return { instant: String(jsonLines(result.stdout)[0]!['instant']), before, after };
  }

  it('init records UTC; a table without the key is LOCAL, as Hudi’s default; other values are refused', async () => {
    const { table } = await initTable();
    assert.match(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'), /^hoodie\.table\.timeline\.timezone=UTC$/m);
    const base = new Map([['hoodie.table.name', 't']]);
    assert.equal(tableConfigFromProperties(base, 'x').timelineTimeZone, 'LOCAL');
    assert.equal(tableConfigFromProperties(new Map([...base, ['hoodie.table.timeline.timezone', 'UTC']]), 'x').timelineTimeZone, 'UTC');
    assert.throws(
      () => tableConfigFromProperties(new Map([...base, ['hoodie.table.timeline.timezone', 'PST']]), 'x'),
      (error: unknown) =>
        error instanceof HudiError &&
        /hoodie\.table\.timeline\.timezone=PST is not a timeline time zone/.test(error.message) &&
        /UTC or LOCAL/.test(error.message),
    );
  });

  it('UTC: instants are on the UTC clock, also from a process west of UTC', async () => {
    const made = await initTable();
    const { instant, before, after } = writeIn('America/Los_Angeles', made);
    assert.ok(
      wallClock(before, 'UTC') <= instant && instant <= wallClock(after, 'UTC'),
      `${instant} is UTC time (${wallClock(before, 'UTC')}..${wallClock(after, 'UTC')})`,
    );
  });

  it('LOCAL: instants are on the process zone’s clock, and still greater than every instant on the timeline', async () => {
    const made = await initTable('LOCAL');
    const east = writeIn('Asia/Kathmandu', made);
    assert.ok(
      wallClock(east.before, 'Asia/Kathmandu') <= east.instant && east.instant <= wallClock(east.after, 'Asia/Kathmandu'),
      `${east.instant} is Kathmandu time (${wallClock(east.before, 'Asia/Kathmandu')}..${wallClock(east.after, 'Asia/Kathmandu')})`,
    );
    // A writer 13 h 45 min behind on the same LOCAL table: its clock lags every instant, so it takes the next millisecond.
    const west = writeIn('America/Los_Angeles', made);
    assert.ok(wallClock(west.after, 'America/Los_Angeles') < east.instant);
    assert.equal(west.instant, (BigInt(east.instant) + 1n).toString());
    const times = readdirSync(join(made.table, '.hoodie'))
      .filter((name) => name.endsWith('.commit'))
      .map((name) => name.slice(0, 17))
      .sort();
    assert.deepEqual(times, [east.instant, west.instant]);
  });
});
