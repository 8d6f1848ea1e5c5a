/**
 * Cleaning and archival of merge-on-read tables this build writes (delta commits into log files, compactions into
 * new base files), by Hudi 0.15's rules (CleanPlanner over file slices, HoodieTimelineArchiver with
 * CompactionUtils.getOldestInstantToRetainForCompaction): a superseded slice goes whole (base file and its log
 * files), the latest slices stay, the slices of a pending compaction stay and the compaction still runs after the
 * clean, the snapshot reads the same rows; delta commits and compaction commits are archived with their compaction
 * plans, never past the delta commits the compaction trigger counts.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { oldestInstantToRetainForCompaction } from '../../lib/archiver/plan.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { planClean } from '../../lib/cleaning/schedule.js';
import { generateUsers, type UserRecord, writeJsonLines } from '../../lib/cli/generate.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { UnsupportedTableError } from '../../lib/errors.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { parseLogFileName } from '../../lib/log-format/names.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { archiveFolder, listArchiveFiles, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import type { Instant } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, Timeline } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/paths.js';

const PROPS = new Map([
  ['hoodie.table.name', 'users_mor_clean'],
  ['hoodie.datasource.write.table.type', 'MERGE_ON_READ'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '1000'],
  // Updates go to log files: no file group is rewritten as a small file.
  ['hoodie.parquet.small.file.limit', '0'],
]);
// Hudi's metadata table is kept by the clean and archive of a table that has one: test/interop/mor-clean-archive.
const NO_METADATA = new Map([...PROPS, ['hoodie.metadata.enable', 'false']]);

function users(count: number, seed: number, idStart = 1): UserRecord[] {
  return [...generateUsers({ count, seed, idStart, startDate: '2024-01-01', days: 2 })];
}

async function write(path: string, records: readonly UserRecord[], operation: 'insert' | 'upsert', props: ReadonlyMap<string, string>): Promise<string> {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, records);
  const result = await writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(props) });
  return result.instantTime!;
}

/** Updates of the first `count` ids, stamped later than anything before (the precombine field wins). */
function updates(count: number, round: number): UserRecord[] {
  return users(count, 1).map((u) => ({ ...u, name: `${u.name}-v${round}`, createTime: `${u.dt} 23:${String(10 + round).padStart(2, '0')}:00` }));
}

async function compact(path: string, props: ReadonlyMap<string, string>, run = true): Promise<string> {
  const storage = openStorage(path);
  const table = await HudiTable.open(storage);
  const lock = lockProviderFor(table.config.properties, table.config.name, storage);
  const scheduled = await scheduleCompaction(table, compactionConfigFrom(props, 'test'), { lock, force: true, properties: props });
  assert.ok(scheduled !== undefined, 'a compaction was planned');
  if (run) await runCompaction(await HudiTable.open(storage), scheduled.instantTime, { lock, properties: props });
  return scheduled.instantTime;
}

/** Every data file of the table: partition/name. */
function dataFiles(path: string): string[] {
  const out: string[] = [];
  for (const partition of readdirSync(path).filter((name) => !name.startsWith('.'))) {
    for (const name of readdirSync(join(path, partition))) if (!name.startsWith('.hoodie_partition_metadata')) out.push(`${partition}/${name}`);
  }
  return out.sort();
}

/** A data file's slice: its file id and base instant (a log file's base instant, a base file's own). */
function sliceOf(file: string): { fileId: string; baseInstant: string } {
  const name = file.slice(file.lastIndexOf('/') + 1);
  const log = parseLogFileName(name);
  if (log !== undefined) return { fileId: log.fileId, baseInstant: log.baseInstant };
  const match = /^(.+)_\d+-\d+-\d+_(\d+)\.parquet$/.exec(name);
  assert.ok(match !== null, name);
  return { fileId: match[1]!, baseInstant: match[2]! };
}

async function rows(path: string): Promise<string[]> {
  const snapshot = await readSnapshot(await HudiTable.open(openStorage(path)), {});
  return snapshot.rows.map((row) => JSON.stringify([row['id'], row['name'], row['createTime']])).sort();
}

async function clean(path: string, props: Record<string, string>, properties: ReadonlyMap<string, string>) {
  const storage = openStorage(path);
  const table = await HudiTable.open(storage, { mode: 'write' });
  return runClean(table, {
    config: cleanConfigFromProperties(new Map(Object.entries(props))),
    lock: lockProviderFor(table.config.properties, table.config.name, storage),
    properties,
  });
}

describe('clean: merge-on-read tables', () => {
  it('KEEP_LATEST_COMMITS deletes the slice a compaction superseded, base file and log files together; the rows stay right', async () => {
    const path = join(tempDir(), 'mor_clean');
    const t1 = await write(path, users(20, 1), 'insert', PROPS);
    const t2 = await write(path, updates(6, 2), 'upsert', PROPS);
    await write(path, updates(6, 3), 'upsert', PROPS);
    const t4 = await compact(path, PROPS);
    const t5 = await write(path, updates(4, 5), 'upsert', PROPS);
    await write(path, updates(4, 6), 'upsert', PROPS);
    const before = dataFiles(path);
    const oldSlices = before.filter((file) => sliceOf(file).baseInstant === t1);
    assert.ok(
      oldSlices.some((file) => file.includes('.log.')),
      'the superseded slices have log files',
    );
    assert.ok(
      before.some((file) => sliceOf(file).baseInstant === t4 && file.includes('.log.')),
      'the compacted slices have log files too',
    );
    const expected = await rows(path);

    const result = await clean(path, { 'hoodie.cleaner.commits.retained': '2' }, PROPS);
    assert.equal(result.outcome, 'cleaned');
    const plan = result.clean!.plan;
    // Six completed commits (five delta commits, one compaction), two retained: the earliest to retain is t5.
    assert.deepEqual(plan.earliestInstantToRetain, { timestamp: t5, action: 'deltacommit', state: 'COMPLETED' });
    const compactedGroups = new Set(before.filter((file) => sliceOf(file).baseInstant === t4).map((file) => sliceOf(file).fileId));
    const gone = oldSlices.filter((file) => compactedGroups.has(sliceOf(file).fileId));
    assert.ok(gone.length > compactedGroups.size, 'base files and log files');
    assert.deepEqual(dataFiles(path), before.filter((file) => !gone.includes(file)).sort(), 'exactly the superseded slices went');
    assert.equal(result.clean!.metadata.totalFilesDeleted, gone.length);
    assert.ok(
      gone.some(
        (file) => sliceOf(file).baseInstant === t1 && file.includes(`.log.`) && parseLogFileName(file.slice(file.indexOf('/') + 1))?.baseInstant === t1,
      ),
      `log files of ${t2}'s upsert into the t1 slice are among them`,
    );
    assert.deepEqual(await rows(path), expected, 'the snapshot reads the same rows');

    // Nothing more to clean: the kept slices are the latest ones and the last before the retention point.
    const again = await clean(path, { 'hoodie.cleaner.commits.retained': '2', 'hoodie.clean.max.commits': '0' }, PROPS);
    assert.notEqual(again.outcome, 'cleaned');
  });

  it('a pending compaction keeps the slices it reads; it runs after the clean and the rows are right', async () => {
    const path = join(tempDir(), 'mor_clean_pending');
    const t1 = await write(path, users(16, 1), 'insert', NO_METADATA);
    await write(path, updates(5, 2), 'upsert', NO_METADATA);
    const t3 = await compact(path, NO_METADATA);
    await write(path, updates(5, 4), 'upsert', NO_METADATA);
    const t5 = await compact(path, NO_METADATA, false);
    await write(path, updates(3, 6), 'upsert', NO_METADATA);
    const expected = await rows(path);
    const before = dataFiles(path);

    // One version per file group: the slice the pending compaction reads counts as it (Hudi's keepVersions--).
    const config = cleanConfigFromProperties(
      new Map([
        ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
        ['hoodie.cleaner.fileversions.retained', '1'],
      ]),
    );
    const planning = await planClean(await HudiTable.open(openStorage(path), { mode: 'write' }), config, { explain: true });
    const decisions = planning.partitions.flatMap((partition) => [...partition.kept, ...partition.deletes]);
    const compacting = decisions.filter((decision) => decision.rule === 'pending-compaction');
    assert.ok(compacting.length > 0, 'the slices of the pending compaction are named');
    // A file group compacted at t3 is compacted from its t3 slice; one no update reached yet from its t1 slice.
    assert.ok(
      compacting.every((decision) => decision.instantTime === t3 || decision.instantTime === t1),
      `the pending compaction ${t5} reads slices of ${t1} or ${t3}: ${JSON.stringify(compacting.map((d) => [d.fileName, d.instantTime]))}`,
    );
    assert.ok(
      decisions.filter((decision) => decision.instantTime === t5).every((decision) => decision.rule === 'uncommitted'),
      'log files written into the pending compaction slice stay',
    );

    const result = await clean(path, { 'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS', 'hoodie.cleaner.fileversions.retained': '1' }, NO_METADATA);
    assert.equal(result.outcome, 'cleaned');
    const after = dataFiles(path);
    const deleted = before.filter((file) => !after.includes(file));
    assert.ok(deleted.length > 0);
    assert.ok(
      deleted.every((file) => sliceOf(file).baseInstant === t1),
      'only slices older than the compacted one went',
    );
    const protectedFiles = compacting.map((decision) => decision.fileName);
    assert.ok(
      protectedFiles.every((name) => after.some((file) => file.endsWith(`/${name}`))),
      'the slices the pending compaction reads stay',
    );
    assert.ok(
      before.filter((file) => [t3, t5].includes(sliceOf(file).baseInstant)).every((file) => after.includes(file)),
      'the compacted slices and the pending one stay',
    );
    assert.deepEqual(await rows(path), expected);

    const storage = openStorage(path);
    const table = await HudiTable.open(storage);
    await runCompaction(table, t5, { lock: lockProviderFor(table.config.properties, table.config.name, storage), properties: NO_METADATA });
    assert.deepEqual(await rows(path), expected, 'the compaction read what it planned');
  });

  it('refuses, before writing anything, a table with a pending log compaction; cleans a version 6 change-data-capture table', async () => {
    const path = join(tempDir(), 'mor_clean_refused');
    await write(path, users(6, 1), 'insert', NO_METADATA);
    await write(path, updates(3, 2), 'upsert', NO_METADATA);
    await write(path, updates(3, 3), 'upsert', NO_METADATA);
    const { writeFileSync, readFileSync } = await import('node:fs');
    const { rm } = await import('node:fs/promises');
    writeFileSync(join(path, '.hoodie', '29990101000000000.logcompaction.requested'), '');
    const timeline = await loadTimeline(openStorage(path), TIMELINE_LAYOUT_1);
    await assert.rejects(
      clean(path, { 'hoodie.cleaner.commits.retained': '1' }, NO_METADATA),
      (error: unknown) => error instanceof UnsupportedTableError && error.message.includes('log compaction 29990101000000000'),
    );
    assert.deepEqual((await loadTimeline(openStorage(path), TIMELINE_LAYOUT_1)).instants, timeline.instants, 'nothing was written');

    const properties = join(path, '.hoodie', 'hoodie.properties');
    const text = readFileSync(properties, 'utf8');
    const withCdc = text.replace(/\n?$/, '\nhoodie.table.cdc.enabled=true\n');
    writeFileSync(properties, withCdc);
    await rm(join(path, '.hoodie', '29990101000000000.logcompaction.requested'));
    // Planned as any table (Hudi 0.15's cleaner deletes a slice's cdc log files with it: cdc-merge-on-read.test.ts
    // in test/interop); the upserts only appended logs, so no slice is superseded yet.
    assert.equal((await clean(path, { 'hoodie.cleaner.commits.retained': '1' }, NO_METADATA)).outcome, 'nothing-to-clean');
  });
});

describe('archive: merge-on-read tables', () => {
  const instant = (time: string, action: Instant['action'], state: Instant['state'] = 'COMPLETED'): Instant => ({ time, action, state });
  const time = (n: number) => `202401010000${String(n).padStart(2, '0')}000`;

  it('CompactionUtils.getOldestInstantToRetainForCompaction: the last compaction, or the delta commit max.delta.commits back', () => {
    const timeline = new Timeline([
      instant(time(1), 'deltacommit'),
      instant(time(2), 'deltacommit'),
      instant(time(3), 'compaction', 'REQUESTED'),
      instant(time(3), 'commit'),
      instant(time(4), 'deltacommit'),
      instant(time(5), 'deltacommit'),
      instant(time(6), 'deltacommit', 'INFLIGHT'),
    ]);
    assert.equal(oldestInstantToRetainForCompaction(timeline, 5)?.time, time(3), 'fewer than 5 delta commits since: the compaction');
    assert.equal(oldestInstantToRetainForCompaction(timeline, 2)?.time, time(5), 'two back from the newest (pending ones count)');
    assert.equal(oldestInstantToRetainForCompaction(new Timeline([instant(time(1), 'deltacommit'), instant(time(2), 'deltacommit')]), 5)?.time, time(1));
    assert.equal(oldestInstantToRetainForCompaction(new Timeline([instant(time(1), 'commit')]), 5)?.time, time(1));
    assert.equal(oldestInstantToRetainForCompaction(new Timeline([]), 5), undefined);
  });

  it('archives delta commits and a compaction (its plan with its requested record), stopping where the compaction trigger counts', async () => {
    const path = join(tempDir(), 'mor_archive');
    const times: string[] = [await write(path, users(10, 1), 'insert', NO_METADATA)];
    for (let round = 2; round <= 3; round++) times.push(await write(path, updates(3, round), 'upsert', NO_METADATA));
    const compaction = await compact(path, NO_METADATA);
    for (let round = 5; round <= 8; round++) times.push(await write(path, updates(3, round), 'upsert', NO_METADATA));
    const expected = await rows(path);
    await clean(path, { 'hoodie.cleaner.commits.retained': '1' }, NO_METADATA);

    const storage = openStorage(path);
    const archiveProps = new Map([
      ['hoodie.keep.min.commits', '2'],
      ['hoodie.keep.max.commits', '3'],
      ['hoodie.compact.inline.max.delta.commits', '3'],
    ]);
    const table = await HudiTable.open(storage, { mode: 'write' });
    const result = await runArchive(table, {
      config: archivalConfigFromProperties(archiveProps),
      cleanConfig: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']])),
      lock: lockProviderFor(table.config.properties, table.config.name, storage),
    });
    assert.equal(result.outcome, 'archived');
    // Four delta commits since the compaction, three counted: archiving stops at the second of them.
    const bound = result.plan.bounds.find((b) => b.rule === 'compaction-trigger');
    assert.equal(bound?.time, times[4], JSON.stringify(result.plan.bounds));
    const archived = result.plan.instants.map((i) => `${i.time}.${i.action}`);
    assert.deepEqual(archived, [...times.slice(0, 3).map((t) => `${t}.deltacommit`), `${compaction}.commit`, `${times[3]}.deltacommit`].sort());
    const hoodie = readdirSync(join(path, '.hoodie'));
    assert.ok(!hoodie.some((name) => name.startsWith(compaction)), 'the compaction requested, inflight and commit files are archived');
    const folder = archiveFolder(table.config.archiveLogFolder);
    const records = (await readArchivedRecords(storage, folder, await listArchiveFiles(storage, folder))).records;
    const compactionRecords = records.filter((record) => record.instant.time === compaction).map((record) => record.entry);
    const requested = compactionRecords.find((entry) => entry.actionType === 'compaction' && entry.actionState === 'REQUESTED');
    assert.ok(requested?.hoodieCompactionPlan !== null && requested?.hoodieCompactionPlan !== undefined, 'the requested record carries the plan');
    assert.equal(compactionRecords.find((entry) => entry.actionType === 'compaction' && entry.actionState === 'INFLIGHT')?.hoodieCompactionPlan, null);
    assert.ok(compactionRecords.some((entry) => entry.actionType === 'commit' && entry.hoodieCommitMetadata !== null));
    assert.deepEqual(await rows(path), expected, 'the snapshot reads the same rows');
  });
});
