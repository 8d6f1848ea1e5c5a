/**
 * The clean service on hand-written local tables: which files go (worked out by hand), the Avro instants it
 * writes, incremental planning, dry runs, the trigger, savepoints, pending clusterings, the metadata-table guard,
 * and a crash after every storage call leaving a table the next run finishes.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cleanMetadataOf, mergePartitionStats } from '../../lib/cleaner/clean-metadata.js';
import { type CleanConfig, cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { executeCleanerPlan } from '../../lib/cleaner/execute.js';
import { assembleCleanerPlan, sliceContext } from '../../lib/cleaner/plan.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { completeClean } from '../../lib/cleaning/commit.js';
import { planClean, planPartitions, prepareClean, scheduleClean } from '../../lib/cleaning/schedule.js';
import { describeClean, describeCleans } from '../../lib/cleaning/show.js';
import { MetadataTableError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { tempDir } from '../helpers/paths.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

const config = (props: Record<string, string> = {}): CleanConfig =>
  cleanConfigFromProperties(new Map(Object.entries({ 'hoodie.cleaner.commits.retained': '2', ...props })));
const lockOn = (storage: LocalStorage) => new StorageLockProvider(storage, { waitMs: 5_000, pollMs: 50 });

const A: FileWrite = { partition: 'dt=a', fileId: fileId(1) };
const B: FileWrite = { partition: 'dt=b', fileId: fileId(2) };
const C: FileWrite = { partition: 'dt=c', fileId: fileId(3) };
const D: FileWrite = { partition: 'dt=c', fileId: fileId(4) };
const f = (write: FileWrite, time: number) => SyntheticTable.fileOf(write, t(time));

/**
 * t1 inserts A, B, C; t2 and t3 update A (and B at t3); t4 clusters C into D; t5 updates A; t6 updates B.
 * Retaining 2 commits of the 6 completed: the earliest commit to retain is the 5th, t5.
 */
async function scenario(): Promise<SyntheticTable> {
  const table = await SyntheticTable.create();
  await table.commit(t(1), [A, B, C], 'INSERT');
  await table.commit(t(2), [A]);
  await table.commit(t(3), [A, B]);
  await table.clustering(t(4), [C], [D]);
  await table.commit(t(5), [A]);
  await table.commit(t(6), [B]);
  return table;
}

// a: A@t5 is the latest, A@t3 the last version before t5 (kept), A@t2 and A@t1 go. b: B@t6 latest, B@t3 kept, B@t1
// goes. c: C was replaced at t4 < t5, so C@t1 goes; D@t4 stays.
const FIRST_DELETES = [f(A, 1), f(A, 2), f(B, 1), f(C, 1)].sort();
const ALL_FILES = [f(A, 1), f(A, 2), f(A, 3), f(A, 5), f(B, 1), f(B, 3), f(B, 6), f(C, 1), f(D, 4)].sort();
const minus = (all: readonly string[], gone: readonly string[]) => all.filter((file) => !gone.includes(file));

describe('clean: KEEP_LATEST_COMMITS on a hand-written table', () => {
  it("deletes the superseded and replaced files, and writes Hudi's three clean instants", async () => {
    const table = await scenario();
    const result = await runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage) });
    assert.equal(result.outcome, 'cleaned');
    assert.deepEqual(await table.baseFiles(), minus(ALL_FILES, FIRST_DELETES));

    const clean = result.clean!;
    const hoodie = join(table.dir, '.hoodie');
    const requested = readFileSync(join(hoodie, `${clean.instantTime}.clean.requested`));
    const inflight = readFileSync(join(hoodie, `${clean.instantTime}.clean.inflight`));
    assert.deepEqual(inflight, requested, 'the inflight file holds the same plan');
    const plan = decodeTimelineAvro('cleanerPlan', requested, 'requested');
    assert.deepEqual(plan, clean.plan);
    assert.deepEqual(plan.earliestInstantToRetain, { timestamp: t(5), action: 'commit', state: 'COMPLETED' });
    assert.equal(plan.lastCompletedCommitTimestamp, t(6));
    assert.deepEqual(Object.keys(plan.filePathsToBeDeletedPerPartition!).sort(), ['dt=a', 'dt=b', 'dt=c']);
    assert.ok(plan.filePathsToBeDeletedPerPartition!['dt=c']!.every((info) => info.filePath === table.storage.uriOf(f(C, 1))));

    const metadata = decodeTimelineAvro('cleanMetadata', readFileSync(join(hoodie, `${clean.instantTime}.clean`)), 'clean');
    assert.deepEqual(metadata, clean.metadata, 'the result exposes what .clean holds');
    assert.equal(metadata.totalFilesDeleted, 4);
    assert.equal(metadata.earliestCommitToRetain, t(5));
    assert.deepEqual(metadata.partitionMetadata['dt=a'], {
      partitionPath: 'dt=a',
      policy: 'KEEP_LATEST_COMMITS',
      deletePathPatterns: [f(A, 2).slice(5), f(A, 1).slice(5)],
      successDeleteFiles: [f(A, 2).slice(5), f(A, 1).slice(5)],
      failedDeleteFiles: [],
      isPartitionDeleted: false,
    });

    // The view still has every latest slice.
    const view = await (await HudiTable.open(table.storage)).fileSystemView();
    assert.deepEqual(
      view
        .latestBaseFiles()
        .map((file) => file.path)
        .sort(),
      [f(A, 5), f(B, 6), f(D, 4)].sort(),
    );
    const shown = await describeCleans(await HudiTable.open(table.storage));
    assert.deepEqual(
      shown.map((s) => [s.instantTime, s.state, s.files, s.partitions, s.earliestCommitToRetain]),
      [[clean.instantTime, 'COMPLETED', 4, 3, t(5)]],
    );
    const detail = await describeClean(await HudiTable.open(table.storage), clean.instantTime);
    assert.deepEqual(detail.find((d) => d.partitionPath === 'dt=c')?.deleted, [f(C, 1).slice(5)]);
  });

  it('plans the next clean from the partitions written since the last one, with the same result as listing all', async () => {
    const table = await scenario();
    await runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage) });
    await table.commit(t(7), [B]);
    await table.commit(t(8), [B]);
    // 8 completed, 2 retained: earliest commit to retain t7. The last clean retained from t5: the window t5..t6
    // touched dt=a (t5) and dt=b (t6). a: A@t5 latest and last before t7, A@t3 goes. b: B@t8 latest, B@t7 within
    // retention, B@t6 the last before t7, B@t3 goes.
    const incremental = await planClean(await HudiTable.open(table.storage), config());
    assert.equal(incremental.scope.kind, 'incremental');
    assert.equal(incremental.partitionsListed, 2);
    const full = await planClean(await HudiTable.open(table.storage), config({ 'hoodie.cleaner.incremental.mode': 'false' }));
    assert.equal(full.scope.kind, 'full');
    assert.ok(full.partitionsListed > 3, `${full.partitionsListed} folders listed`);
    assert.deepEqual(incremental.plan, full.plan);

    const second = await runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage) });
    assert.equal(second.outcome, 'cleaned');
    assert.deepEqual(await table.baseFiles(), [f(A, 5), f(B, 6), f(B, 7), f(B, 8), f(D, 4)].sort());
    // Nothing new since: the trigger (hoodie.clean.max.commits=1) says no.
    const third = await runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage) });
    assert.equal(third.outcome, 'not-due');
    assert.match(third.planning!.due.reason, /^0 completed commit\(s\) after/);
  });

  it('a dry run writes nothing and says why each file stays or goes', async () => {
    const table = await scenario();
    const before = (await table.storage.listRecursive('')).map((object) => object.path).sort();
    const result = await runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage), dryRun: true });
    assert.equal(result.outcome, 'dry-run');
    assert.deepEqual((await table.storage.listRecursive('')).map((object) => object.path).sort(), before);
    const planning = result.planning!;
    assert.match(planning.retention.reason, /2 commit\(s\) retained: 20240101000005000 is the 2nd newest of 6 completed/);
    const decisions = planning.partitions.flatMap((p) => [
      ...p.deletes.map((d) => ['delete', p.partitionPath, d.instantTime, d.rule]),
      ...p.kept.map((k) => ['keep', p.partitionPath, k.instantTime, k.rule]),
    ]);
    assert.deepEqual(
      decisions.sort(),
      [
        ['delete', 'dt=a', t(1), 'older-than-retention'],
        ['delete', 'dt=a', t(2), 'older-than-retention'],
        ['delete', 'dt=b', t(1), 'older-than-retention'],
        ['delete', 'dt=c', t(1), 'replaced'],
        ['keep', 'dt=a', t(3), 'last-version-before-retention'],
        ['keep', 'dt=a', t(5), 'latest-version'],
        ['keep', 'dt=b', t(3), 'last-version-before-retention'],
        ['keep', 'dt=b', t(6), 'latest-version'],
        ['keep', 'dt=c', t(4), 'latest-version'],
      ].sort(),
    );
  });

  it('nothing to clean while fewer commits than retained completed', async () => {
    const table = await scenario();
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.commits.retained': '6' }),
      lock: lockOn(table.storage),
    });
    assert.equal(result.outcome, 'nothing-to-clean');
    assert.equal(result.planning!.scope.kind, 'none');
    assert.deepEqual(await table.baseFiles(), ALL_FILES);
    assert.deepEqual(
      (await loadTimeline(table.storage, TIMELINE_LAYOUT_1)).instants.filter((i) => i.action === 'clean'),
      [],
    );
  });
});

describe('clean: split over workers, as a serverless run does', () => {
  it('planning per partition share and deleting per partition share give the one-process result', async () => {
    const table = await scenario();
    const opened = await HudiTable.open(table.storage);
    const whole = await planClean(opened, config());
    const preparation = await prepareClean(opened, config());
    assert.equal(preparation.scope.kind, 'full');
    // The coordinator lists the partitions; each worker gets two of them and only its slice of the context.
    const paths = ['dt=a', 'dt=b', 'dt=c'];
    const shares = [paths.slice(0, 2), paths.slice(2)];
    const planned = await Promise.all(
      shares.map((share) => planPartitions(table.storage, JSON.parse(JSON.stringify(sliceContext(preparation.context!, share))), share, { concurrency: 2 })),
    );
    const plan = assembleCleanerPlan(
      preparation.summary,
      planned.flatMap((p) => p.partitions),
      (path) => table.storage.uriOf(path),
    );
    assert.deepEqual(plan, whole.plan);

    const { instantTime } = await scheduleClean(opened, { ...whole, plan }, { lock: lockOn(table.storage) });
    await table.storage.putIfAbsent(`.hoodie/${instantTime}.clean.inflight`, await table.storage.get(`.hoodie/${instantTime}.clean.requested`));
    const stats = await Promise.all(
      shares.map((share) => executeCleanerPlan(table.storage, plan!, { concurrency: 2, partitions: share, isPartitioned: true })),
    );
    const metadata = cleanMetadataOf(instantTime, plan!, mergePartitionStats(stats), 5);
    await completeClean(table.storage, TIMELINE_LAYOUT_1, instantTime, metadata, { lock: lockOn(table.storage) });
    assert.equal(metadata.totalFilesDeleted, 4);
    assert.deepEqual(await table.baseFiles(), minus(ALL_FILES, FIRST_DELETES));
    assert.deepEqual(
      (await loadTimeline(table.storage, TIMELINE_LAYOUT_1)).instants.filter((i) => i.action === 'clean').map((i) => i.state),
      ['COMPLETED'],
    );
  });
});

describe('clean: a partition whose every file group was replaced', () => {
  it('goes whole once the replacement is past retention, folder included', async () => {
    const table = await SyntheticTable.create();
    const X: FileWrite = { partition: 'dt=x', fileId: fileId(5) };
    await table.commit(t(1), [A, X], 'INSERT');
    // A delete_partition: a replacecommit replacing X and writing nothing.
    await table.clustering(t(2), [X], []);
    await table.commit(t(3), [A]);
    await table.commit(t(4), [A]);
    // 4 completed, 1 retained: from t4; t2 < t4, so X goes, and dt=x has no file group left.
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.commits.retained': '1' }),
      lock: lockOn(table.storage),
    });
    assert.deepEqual(result.clean!.plan.partitionsToBeDeleted, ['dt=x']);
    assert.equal(result.clean!.metadata.partitionMetadata['dt=x']?.isPartitionDeleted, true);
    assert.equal(result.clean!.metadata.partitionMetadata['dt=a']?.isPartitionDeleted, false);
    assert.deepEqual((await table.storage.listDir('')).dirs.filter((dir) => !dir.startsWith('.')).sort(), ['dt=a']);
    assert.deepEqual(await table.baseFiles(), [f(A, 3), f(A, 4)]);
  });
});

describe('clean: what is never deleted', () => {
  it('savepointed files stay, and the plan records the savepoint', async () => {
    const table = await SyntheticTable.create();
    for (const time of [1, 2, 3, 4]) await table.commit(t(time), [A]);
    await table.savepoint(t(2), [f(A, 2)]);
    // 4 commits, 1 retained: earliest to retain t4 (the latest); A@t3 is the last before it; A@t2 savepointed; A@t1 goes.
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.commits.retained': '1' }),
      lock: lockOn(table.storage),
    });
    assert.deepEqual(await table.baseFiles(), [f(A, 2), f(A, 3), f(A, 4)]);
    assert.deepEqual(result.clean!.plan.extraMetadata, { savepointed_timestamps: t(2) });
    assert.deepEqual(result.clean!.metadata.extraMetadata, { savepointed_timestamps: t(2) });
  });

  it("file groups in a pending clustering keep every version; files of failed writes are not the cleaner's", async () => {
    const table = await SyntheticTable.create();
    for (const time of [1, 2, 3, 4]) await table.commit(t(time), [A, B]);
    await table.pendingClustering(t(5), [{ ...B, baseInstant: t(4) }]);
    await table.pendingCommit(t(6), [{ partition: 'dt=a', fileId: fileId(9) }]);
    await table.commit(t(7), [A]);
    // Completed: t1..t4, t7 (5). The pending clustering t5 caps the earliest commit to retain at t4 (retaining 1,
    // the 5th would be t7). A: latest t7, last before t4 is t3, so A@t2, A@t1 go. B: in the pending clustering.
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.commits.retained': '1' }),
      lock: lockOn(table.storage),
    });
    assert.equal(result.clean!.plan.earliestInstantToRetain?.timestamp, t(4));
    assert.deepEqual(
      await table.baseFiles(),
      [f(A, 3), f(A, 4), f(A, 7), f(B, 1), f(B, 2), f(B, 3), f(B, 4), SyntheticTable.fileOf({ partition: 'dt=a', fileId: fileId(9) }, t(6))].sort(),
    );
  });

  it('refuses a table whose metadata table it cannot keep (declared, but .hoodie/metadata is missing), naming the problem', async () => {
    const table = await scenario();
    const props = join(table.dir, '.hoodie', 'hoodie.properties');
    await table.storage.put('.hoodie/hoodie.properties', `${readFileSync(props, 'utf8')}hoodie.table.metadata.partitions=files\n`);
    await assert.rejects(runClean(await HudiTable.open(table.storage), { config: config(), lock: lockOn(table.storage) }), (error: unknown) => {
      assert.ok(error instanceof MetadataTableError);
      assert.match(
        error.message,
        /a clean cannot keep Hudi's metadata table correct: hoodie\.properties declares metadata-table partitions but .*\.hoodie\/metadata\/\.hoodie\/hoodie\.properties is missing/,
      );
      return true;
    });
    assert.deepEqual(await table.baseFiles(), ALL_FILES);
  });
});

describe('clean: KEEP_LATEST_FILE_VERSIONS and KEEP_LATEST_BY_HOURS', () => {
  it('file versions: the newest N per file group', async () => {
    const table = await scenario();
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS', 'hoodie.cleaner.fileversions.retained': '1' }),
      lock: lockOn(table.storage),
    });
    assert.equal(result.clean!.plan.earliestInstantToRetain, null);
    assert.deepEqual(await table.baseFiles(), [f(A, 5), f(B, 6), f(D, 4)].sort());
  });

  it('by hours: commits older than the window, from the pinned clock', async () => {
    const table = await scenario();
    // 1 hour retained, now one hour after t4: the cutoff is t4, the first commit at or after it.
    const now = new Date(Date.UTC(2024, 0, 1) + 4_000 + 3_600_000);
    const result = await runClean(await HudiTable.open(table.storage), {
      config: config({ 'hoodie.cleaner.policy': 'KEEP_LATEST_BY_HOURS', 'hoodie.cleaner.hours.retained': '1' }),
      lock: lockOn(table.storage),
      now,
    });
    assert.equal(result.clean!.plan.earliestInstantToRetain?.timestamp, t(4));
    // a: A@t5 latest, A@t3 last before t4; A@t2, A@t1 go. b: B@t3 is the last before t4: B@t1 goes. c: C replaced at
    // t4 is not before t4: stays.
    assert.deepEqual(await table.baseFiles(), minus(ALL_FILES, [f(A, 1), f(A, 2), f(B, 1)]));
  });
});

describe('clean: a crash after any storage call', () => {
  it('leaves a readable table and the next run completes the same clean', async () => {
    const template = await scenario();
    let crashes = 0;
    for (let crashAt = 1; ; crashAt++) {
      const dir = join(tempDir('clean-crash-'), 'table');
      cpSync(template.dir, dir, { recursive: true });
      const inner = new LocalStorage(dir);
      const crashing = new CrashingStorage(inner, crashAt);
      let crashed = false;
      try {
        await runClean(await HudiTable.open(crashing), { config: config(), lock: lockOn(inner) });
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
        crashed = true;
        crashes++;
      }
      const files = async () =>
        (await inner.listRecursive(''))
          .map((o) => o.path)
          .filter((p) => p.endsWith('.parquet'))
          .sort();
      // Only planned files are ever gone, and every latest slice is still readable.
      assert.ok(
        minus(ALL_FILES, await files()).every((gone) => FIRST_DELETES.includes(gone)),
        `crash at ${crashAt}`,
      );
      const view = await (await HudiTable.open(inner)).fileSystemView();
      assert.deepEqual(
        view
          .latestBaseFiles()
          .map((file) => file.path)
          .sort(),
        [f(A, 5), f(B, 6), f(D, 4)].sort(),
      );
      if (!crashed) {
        assert.deepEqual(await files(), minus(ALL_FILES, FIRST_DELETES));
        break;
      }
      const next = await runClean(await HudiTable.open(inner), { config: config(), lock: lockOn(inner) });
      assert.deepEqual(await files(), minus(ALL_FILES, FIRST_DELETES), `after the crash at ${crashAt} (${crashing.log.at(-1)})`);
      const cleans = (await loadTimeline(inner, TIMELINE_LAYOUT_1)).instants.filter((i) => i.action === 'clean');
      assert.equal(cleans.length, 1, `one clean after the crash at ${crashAt}`);
      assert.equal(cleans[0]!.state, 'COMPLETED');
      assert.equal(next.resumed.length + (next.outcome === 'cleaned' ? 1 : 0), 1);
      const metadata = next.resumed[0]?.metadata ?? next.clean!.metadata;
      // A resumed clean counts files an interrupted attempt already deleted as deleted.
      assert.equal(metadata.totalFilesDeleted, 4);
    }
    // requested, inflight, the deletes, the completed file.
    assert.equal(crashes, 4);
  });
});
