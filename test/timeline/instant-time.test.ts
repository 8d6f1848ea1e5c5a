/**
 * Hudi's instant-time grammar, defined once (lib/timeline/instant.ts INSTANT_TIME_PATTERN): a 14- or 17-digit time and
 * any number of 3-digit suffixes, as the metadata table stacks them (`<T>011001`: a compaction after a partition's
 * initialization). Every parser of instant times takes every shape; names outside the grammar are refused, never
 * skipped; a metadata compaction at a suffixed time is the slice the next deltacommit appends to.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { MetadataTableError, UnsupportedTableError } from '../../lib/errors.js';
import { logFileName, parseLogFileName } from '../../lib/log-format/index.js';
import { MetadataTable } from '../../lib/metadata/index.js';
import { isMetadataOwnDeltaCommit, listMetadataTimeline } from '../../lib/metadata/timeline.js';
import { COMPLETED_COMMIT_KEY, isCommitOfTable } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { newTableOptionsFromWriteProperties } from '../../lib/table/config.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { createTable } from '../../lib/table/init.js';
import { compareInstantTimes, instantFileName, isValidInstantTime, parseInstantFileName, parseInstantTime } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { CLEAN_PLANNING_ID } from '../../lib/timeline/work-folder.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { REPO_ROOT } from '../helpers/paths.js';

const T = '20261206021500123';
/** Every shape Hudi writes: legacy seconds, milliseconds, and one to three metadata suffixes on either. */
const SHAPES = ['20261206021500', T, `${T}010`, `${T}011001`, `${T}010001002`, '00000000000000010', '00000000000000010001'];
const NOT_INSTANTS = ['2026120602150', '202612060215001', '2026120602150012', `${T}0`, `${T}01`, `${T}0101`, `${T}01100`, `${T}x`, '', 'abcdefghijklmnopq'];

describe('the instant-time grammar', () => {
  it('takes 14 and 17 digits with any number of 3-digit suffixes, and nothing else', () => {
    for (const time of SHAPES) assert.equal(isValidInstantTime(time), true, time);
    for (const time of NOT_INSTANTS) assert.equal(isValidInstantTime(time), false, time);
  });

  it('parses instant file names of every shape, in every action and state', () => {
    for (const time of SHAPES) {
      for (const name of [`${time}.commit`, `${time}.deltacommit.inflight`, `${time}.compaction.requested`, `${time}.clean`, `${time}.rollback.inflight`]) {
        const instant = parseInstantFileName(name);
        assert.ok(instant, name);
        assert.equal(instant.time, time);
        assert.equal(instantFileName(instant), name);
      }
    }
    for (const time of NOT_INSTANTS) assert.equal(parseInstantFileName(`${time}.commit`), undefined, time);
  });

  it('parses base and log file names of every shape (Parquet and the metadata table HFile)', () => {
    for (const time of SHAPES) {
      assert.deepEqual(parseBaseFileName(`f1a2b3c4-0_0-1-2_${time}.parquet`), { fileId: 'f1a2b3c4-0', writeToken: '0-1-2', instantTime: time });
      assert.deepEqual(parseBaseFileName(`files-0000-0_0-75-123_${time}.hfile`, 'hfile'), {
        fileId: 'files-0000-0',
        writeToken: '0-75-123',
        instantTime: time,
      });
      assert.equal(parseBaseFileName(`files-0000-0_0-75-123_${time}.hfile`), undefined, 'an HFile is not a Parquet base file');
      const log = logFileName({ fileId: 'files-0000-0', baseInstant: time, version: 3, writeToken: '0-1-1' });
      assert.equal(parseLogFileName(log)?.baseInstant, time);
    }
    for (const time of NOT_INSTANTS.filter((t) => t !== '')) {
      assert.equal(parseBaseFileName(`f1-0_0-1-2_${time}.parquet`), undefined, time);
      assert.equal(parseBaseFileName(`files-0000-0_0-1-2_${time}.hfile`, 'hfile'), undefined, time);
    }
  });

  it('orders suffixed times as Hudi compares them (as strings)', () => {
    const later = '20261206021500124';
    const times = [later, `${T}012`, `${T}011001`, `${T}011`, T, `${T}010`, `${T}010001`];
    assert.deepEqual([...times].sort(compareInstantTimes), [T, `${T}010`, `${T}010001`, `${T}011`, `${T}011001`, `${T}012`, later]);
    assert.deepEqual([...times].sort(compareInstantTimes), [...times].sort());
  });

  it('dates a suffixed time by its first 17 digits (parseDateFromInstantTime)', () => {
    assert.equal(parseInstantTime(`${T}011001`)?.toISOString(), '2026-12-06T02:15:00.123Z');
    assert.equal(parseInstantTime(`${T}010`)?.toISOString(), '2026-12-06T02:15:00.123Z');
    assert.equal(parseInstantTime('20261306021500123'), undefined, 'month 13');
  });

  it("keeps Hudi's own-deltacommit rule: only 20-digit times are the metadata table's own (isValidInstant)", () => {
    assert.equal(isMetadataOwnDeltaCommit({ time: `${T}010`, action: 'deltacommit', state: 'COMPLETED' }), true);
    assert.equal(isMetadataOwnDeltaCommit({ time: `${T}002`, action: 'deltacommit', state: 'COMPLETED' }), true);
    assert.equal(isMetadataOwnDeltaCommit({ time: `${T}011001`, action: 'deltacommit', state: 'COMPLETED' }), false);
    assert.equal(isMetadataOwnDeltaCommit({ time: T, action: 'deltacommit', state: 'COMPLETED' }), false);
  });

  it('the S3 trigger and clean planning ids use the grammar; metadata-table commits do not trigger', () => {
    assert.equal(COMPLETED_COMMIT_KEY.exec(`lake/users/.hoodie/${T}.commit`)?.[1], 'lake/users/');
    assert.equal(COMPLETED_COMMIT_KEY.exec(`lake/users/.hoodie/${T}.replacecommit`)?.[2], T);
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/metadata/.hoodie/${T}011001.commit`), false);
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/${T}.commit.requested`), false);
    // Layout 2 (table versions 8 and 9): `<instant>_<completion>.<action>` under .hoodie/timeline/.
    const completion = '20261206021501456';
    assert.equal(COMPLETED_COMMIT_KEY.exec(`lake/users/.hoodie/timeline/${T}_${completion}.commit`)?.[3], T);
    assert.equal(isCommitOfTable({ bucket: 'b', key: `lake/users/.hoodie/timeline/${T}_${completion}.replacecommit` }, 's3://b/lake/users'), true);
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/timeline/${T}.clustering.requested`), false);
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/timeline/${T}.commit`), false, 'layout 2 completes with its completion time');
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/${T}_${completion}.commit`), false, 'layout 1 has no completion time');
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/metadata/.hoodie/timeline/${T}_${completion}.commit`), false);
    assert.equal(COMPLETED_COMMIT_KEY.test(`lake/users/.hoodie/timeline/history/${T}_${completion}_0.parquet`), false);
    assert.equal(CLEAN_PLANNING_ID.test(`plan-${T}-0a1b2c3d`), true);
    assert.equal(CLEAN_PLANNING_ID.test(`plan-${T}1-0a1b2c3d`), false);
  });

  it('no other regular expression on instant times exists in the shipped code', () => {
    // Digit runs of an instant's length in a pattern: \d{14}, [0-9]{17}, \d{20}, … (a lease generation's \d{12} is not one).
    const instantPattern = /(\\d|\[0-9\])\{(1[4-9]|2\d)(,\d*)?\}/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.(ts|mjs|js)$/.test(entry.name)) {
          readFileSync(path, 'utf8')
            .split('\n')
            .forEach((line, index) => {
              if (instantPattern.test(line)) offenders.push(`${relative(REPO_ROOT, path)}:${index + 1}`);
            });
        }
      }
    };
    for (const dir of ['lib', 'functions', 'infra', 'bench']) walk(join(REPO_ROOT, dir));
    assert.deepEqual(
      offenders.filter((place) => !place.startsWith('lib/timeline/instant.ts:')),
      [],
      'instant times are parsed through lib/timeline/instant.ts (INSTANT_TIME_PATTERN, isValidInstantTime)',
    );
    assert.ok(
      offenders.some((place) => place.startsWith('lib/timeline/instant.ts:')),
      'the check finds the one definition (so it would find another)',
    );
  });
});

const PROPS = new Map([
  ['hoodie.table.name', 'users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
]);

async function mdtTable(): Promise<{ table: string; storage: Storage }> {
  const table = join(tempDir('instant-grammar-'), 'users');
  const storage = openStorage(table);
  await createTable(storage, newTableOptionsFromWriteProperties(PROPS, 'test'));
  await initMetadataTable(storage, ['files']);
  return { table, storage };
}

let batch = 0;
async function write(table: string, idStart: number, props: ReadonlyMap<string, string> = PROPS): Promise<string> {
  const input = join(tempDir(), `batch-${batch++}.jsonl`);
  await writeJsonLines(
    input,
    [...generateUsers({ count: 20, seed: idStart, idStart, days: 1 })].map((user) => ({ ...user, dt: user.id % 2 === 0 ? '2024-01-02' : '2024-01-01' })),
  );
  const result = await writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: props });
  return result.instantTime;
}

/** An empty completed deltacommit of the metadata table's own, as Hudi writes when it initializes a partition. */
async function addOwnDeltaCommit(storage: Storage, time: string): Promise<void> {
  for (const suffix of ['.deltacommit.requested', '.deltacommit.inflight']) await storage.put(`.hoodie/metadata/.hoodie/${time}${suffix}`, '');
  await storage.put(
    `.hoodie/metadata/.hoodie/${time}.deltacommit`,
    JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'BULK_INSERT' }),
  );
}

describe('a metadata table compacted at a suffixed time (23 digits)', () => {
  it('is the slice the next deltacommits append to, and our reader sees every file through it', async () => {
    const { table, storage } = await mdtTable();
    const first = await write(table, 1);
    // A partition initialized after `first` (Spark enabling an index): the latest deltacommit is `<first>010`, so the
    // next compaction is `<first>010001`.
    await addOwnDeltaCommit(storage, `${first}010`);
    const compactNow = new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '1']]);
    const second = await write(table, 100, compactNow);
    const compaction = `${first}010001`;
    const { instants, unreadable } = await listMetadataTimeline(storage);
    assert.deepEqual(unreadable, []);
    assert.ok(
      instants.some((i) => i.time === compaction && i.action === 'commit' && i.state === 'COMPLETED'),
      `the compaction ${compaction} completed as a commit`,
    );
    const third = await write(table, 200, new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '1000']]));

    const filesFolder = join(table, '.hoodie/metadata/files');
    const names = readdirSync(filesFolder);
    assert.ok(names.includes(names.find((n) => n.endsWith(`_${compaction}.hfile`)) ?? ''), `a base file at ${compaction}: ${names.join(', ')}`);
    const mdt = await MetadataTable.open(storage);
    assert.ok(mdt);
    const [group] = mdt.fileGroups.get('files') ?? [];
    assert.equal(group?.latest.baseInstant, compaction, 'the latest slice is the 23-digit compaction');
    // The deltacommits after the compaction went to its slice, none to the superseded one.
    const logsOf = (instant: string) =>
      names.filter((n) => parseLogFileName(n) !== undefined && readFileSync(join(filesFolder, n)).includes(Buffer.from(instant)));
    for (const instant of [second, third]) {
      const logs = logsOf(instant);
      assert.ok(logs.length > 0, `a log block of ${instant}`);
      for (const log of logs) assert.equal(parseLogFileName(log)?.baseInstant, compaction, `${log} holds ${instant}`);
    }
    assert.deepEqual(mdt.problems(), []);
    const reader = await mdt.reader();
    const listed = await reader.filesInPartition('2024-01-01');
    const onStorage = readdirSync(join(table, '2024-01-01')).filter((n) => n.endsWith('.parquet'));
    assert.deepEqual([...listed.keys()].sort(), onStorage.sort());
  });

  it('`metadata check` finds what an older build stranded on a superseded slice; `metadata drop` repairs', async () => {
    const { table, storage } = await mdtTable();
    const first = await write(table, 1);
    await addOwnDeltaCommit(storage, `${first}010`);
    await write(table, 100, new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '1']]));
    const compactionFiles = ['commit', 'compaction.inflight', 'compaction.requested'].map((s) => `.hoodie/metadata/.hoodie/${first}010001.${s}`);
    assert.equal(runCli(['metadata', table, 'check']).code, 0, 'in sync after our compaction');

    // What a build blind to the 23-digit compaction did: the next deltacommit went to the slice the compaction
    // superseded (here, by hiding the compaction's instant files while writing).
    const hidden = await Promise.all(compactionFiles.map((path) => storage.get(path)));
    await storage.delete(compactionFiles);
    const stale = await write(table, 200, new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '1000']]));
    for (const [index, path] of compactionFiles.entries()) await storage.put(path, hidden[index]!);

    const checked = runCli(['metadata', table, 'check']);
    assert.equal(checked.code, 1, checked.stderr);
    const report = jsonLines(checked.stdout)[0] as { ok: boolean; stranded: { path: string; instants: string[] }[]; missingFromMetadata: string[] };
    assert.equal(report.ok, false);
    assert.ok(report.stranded.length > 0 && report.stranded.every((s) => s.instants.includes(stale)), JSON.stringify(report.stranded));
    assert.ok(report.missingFromMetadata.length > 0, 'the stale write’s new base files are not listed through the latest slice');

    const rowsBefore = jsonLines(runCli(['read', table]).stdout).length;
    const dropped = runCli(['metadata', table, 'drop']);
    assert.equal(dropped.code, 0, dropped.stderr);
    assert.deepEqual(jsonLines(dropped.stdout)[0], { dropped: true });
    assert.equal(readdirSync(join(table, '.hoodie')).includes('metadata'), false, '.hoodie/metadata is gone');
    assert.match(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'), /^hoodie\.table\.metadata\.partitions=$/m);
    assert.deepEqual(jsonLines(runCli(['metadata', table, 'check']).stdout)[0], { metadataTable: false, ok: true });
    assert.equal(jsonLines(runCli(['read', table]).stdout).length, rowsBefore, 'every row is still read (from a listing)');
    await write(table, 300);
    assert.equal(jsonLines(runCli(['read', table]).stdout).length, rowsBefore + 20, 'and the table takes writes');
  });

  it('refuses to commit when an instant file or slice file of the metadata table is outside the grammar', async () => {
    const { table, storage } = await mdtTable();
    const first = await write(table, 1);
    for (const [path, kind] of [
      [`.hoodie/metadata/.hoodie/${first}0110.commit`, 'instant'],
      [`.hoodie/metadata/files/files-0000-0_0-1-1_${first}0110.hfile`, 'base file'],
      [`.hoodie/metadata/files/.files-0000-0_${first}01.log.1_0-1-1`, 'log file'],
    ] as const) {
      await storage.put(path, 'x');
      const before = readdirSync(join(table, '.hoodie')).sort();
      const mdt = await MetadataTable.open(storage);
      assert.ok(
        mdt?.problems().some((p) => p.problem.includes(path.split('/').at(-1)!)),
        `${kind} ${path} is a problem`,
      );
      await assert.rejects(write(table, 1000), MetadataTableError, `a write is refused over an unreadable ${kind}`);
      assert.deepEqual(readdirSync(join(table, '.hoodie')).sort(), before, 'nothing was written');
      await storage.delete([path]);
    }
    await write(table, 1000);
    assert.equal((await loadTimeline(storage, TIMELINE_LAYOUT_1)).completed().length, 2, 'a write goes through once the file is gone');
  });

  it('refuses a data timeline holding an instant-like file outside the grammar', async () => {
    const { table, storage } = await mdtTable();
    await write(table, 1);
    await storage.put(`.hoodie/${T}1.commit`, '{}');
    await assert.rejects(loadTimeline(storage, TIMELINE_LAYOUT_1), UnsupportedTableError);
    await assert.rejects(write(table, 50), UnsupportedTableError);
    await storage.delete([`.hoodie/${T}1.commit`]);
    assert.equal((await loadTimeline(storage, TIMELINE_LAYOUT_1)).completed().length, 1);
  });
});
