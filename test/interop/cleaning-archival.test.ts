/**
 * Archival (and cleaning) against real Hudi 0.15 (Spark 3.5.1), both ways.
 *
 * 1. We write a table (our writer, our clustering), clean and archive it; then Spark reads the same rows (metadata
 *    table on and off), `CALL show_archived_commits` lists exactly our archived commits with their write stats,
 *    `CALL show_commits` the active ones, and Spark keeps writing with its automatic cleaner and archiver on, adding
 *    its archive file after ours; we read its rows, both archive files, and clean and archive again.
 * 2. Spark writes a table with inline clustering, automatic cleaning and archiving, so replacecommits are cleaned and
 *    archived; our archived-timeline reader decodes its archive, our reader returns Spark's rows, and our planner and
 *    archiver run on it.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { planClean } from '../../lib/cleaning/schedule.js';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readLogFile } from '../../lib/log-format/log-files.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { archivedCommitMetadataOf, archivedInstants, archiveFolder, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import { ARCHIVED_META_ENTRY_SCHEMA_TEXT } from '../../lib/timeline/archived/meta-entry.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const WRITE_PROPS = new Map([
  ['hoodie.table.name', 'ours'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.index.bloom.num_entries', '1000'],
]);
const SERVICES = new Map([
  ['hoodie.cleaner.commits.retained', '2'],
  ['hoodie.keep.min.commits', '3'],
  ['hoodie.keep.max.commits', '4'],
]);
const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, ts: number) => ({ id, name: `n${id}@${ts}`, ts, dt: id % 2 === 0 ? 'even' : 'odd' });
const sparkOptions = (table: string, operation: string, extra: Record<string, string> = {}) => ({
  'hoodie.table.name': table,
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'false',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.table.timeline.timezone': 'UTC',
  'hoodie.insert.shuffle.parallelism': '2',
  'hoodie.upsert.shuffle.parallelism': '2',
  ...extra,
});
const NO_MDT = { options: { 'hoodie.metadata.enable': 'false' } };
const WITH_MDT = { options: { 'hoodie.metadata.enable': 'true' } };

async function ourWrite(path: string, rows: object[], operation: 'insert' | 'upsert'): Promise<string> {
  const file = join(tempDir('archival-batch-'), 'batch.jsonl');
  await writeJsonLines(file, rows);
  return (await writeBatch(new LocalStorage(path), { input: { file, format: 'jsonl' }, operation, properties: WRITE_PROPS })).instantTime;
}

async function ourRows(path: string): Promise<string[]> {
  return canonicalRows((await readSnapshot(await HudiTable.open(new LocalStorage(path)), { includeMetaFields: true })).rows);
}

describe('archival: Spark reads our archived timeline and carries on', () => {
  let hudi: HudiHarness;
  let path: string;
  let archivedByUs: string[];
  let activeAfterUs: string[];

  before(async () => {
    hudi = await startHudi();
    path = join(tempDir('archival-ours-'), 'ours');
    const storage = new LocalStorage(path);
    const lock = new StorageLockProvider(storage);
    const engine = await openParquetEngine();
    try {
      await ourWrite(
        path,
        [1, 2, 3, 4, 5, 6].map((id) => row(id, 1)),
        'insert',
      );
      for (let round = 2; round <= 5; round++) {
        await ourWrite(path, [row(1, round), row(2, round)], 'upsert');
        if (round === 3 || round === 5) {
          await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
            mode: 'scheduleAndExecute',
            config: resolveClusteringConfig().config,
            lock,
            engine,
            tempDir: tempDir(),
          });
        }
      }
      await ourWrite(path, [row(3, 6)], 'upsert');
      await ourWrite(path, [row(4, 7)], 'upsert');
    } finally {
      await engine.close();
    }
    const table = await HudiTable.open(storage, { mode: 'write' });
    const cleaned = await runClean(table, { config: cleanConfigFromProperties(SERVICES), lock });
    assert.equal(cleaned.outcome, 'cleaned');
    const archived = await runArchive(await table.reload(), {
      config: archivalConfigFromProperties(SERVICES),
      cleanConfig: cleanConfigFromProperties(SERVICES),
      lock,
    });
    assert.equal(archived.outcome, 'archived');
    archivedByUs = archived.plan.instants.filter((i) => i.action !== 'clean' && i.action !== 'rollback').map((i) => i.time);
    assert.ok(archivedByUs.length >= 3, `archived ${archivedByUs.join(', ')}`);
    activeAfterUs = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completedWrites().map((i) => i.time);
    await hudi.sql(`CREATE TABLE ours USING hudi LOCATION '${path}'`);
  });

  after(async () => {
    await hudi?.close();
  });

  it("our archive blocks carry Spark's schema header, and Spark reads our table's rows with the metadata table on and off", async () => {
    const blocks = await readLogFile(new LocalStorage(path), '.hoodie/archived/.commits_.archive.1_1-0-1');
    assert.ok(
      blocks.every(
        (block) => block.type === 'AVRO_DATA_BLOCK' && Object.keys(block.header).join() === 'SCHEMA' && block.header.SCHEMA === ARCHIVED_META_ENTRY_SCHEMA_TEXT,
      ),
    );
    assert.deepEqual(ARCHIVED_META_ENTRY_SCHEMA_TEXT, JSON.stringify(await hudi.avroSchema('HoodieArchivedMetaEntry')));
    const expected = await ourRows(path);
    assert.deepEqual(canonicalRows((await hudi.read(path, NO_MDT)).rows), expected);
    assert.deepEqual(canonicalRows((await hudi.read(path, WITH_MDT)).rows), expected);
  });

  it('show_archived_commits lists our archived commits and their write stats; show_commits the active ones', async () => {
    const shown = await hudi.sql(`CALL show_archived_commits(table => 'ours', limit => 100, start_ts => '20000101000000000', end_ts => '29991231235959999')`);
    const byTime = new Map(shown.rows.map((r) => [String(r['commit_time']), r]));
    assert.deepEqual([...byTime.keys()].sort(), [...archivedByUs].sort());
    const { records } = await readArchivedRecords(new LocalStorage(path), archiveFolder('archived'));
    for (const { instant, completed } of archivedInstants(records)) {
      if (instant.action === 'clean') continue;
      const stats = Object.values(
        (archivedCommitMetadataOf(completed!)!['partitionToWriteStats'] ?? {}) as Record<string, { numWrites: number; totalWriteBytes: number }[]>,
      ).flat();
      const spark = byTime.get(instant.time)!;
      assert.equal(
        Number(spark['total_records_written']),
        stats.reduce((sum, s) => sum + s.numWrites, 0),
        instant.time,
      );
      assert.equal(
        Number(spark['total_bytes_written']),
        stats.reduce((sum, s) => sum + s.totalWriteBytes, 0),
        instant.time,
      );
    }
    const active = await hudi.sql(`CALL show_commits(table => 'ours', limit => 100)`);
    assert.deepEqual(active.rows.map((r) => String(r['commit_time'])).sort(), [...activeAfterUs].sort());
  });

  it('an archive run of ours killed between its archive file and the last deletion: Spark reads it, and our next run finishes it', async () => {
    const copyPath = join(tempDir('archival-killed-'), 'ours');
    cpSync(path, copyPath, { recursive: true });
    const inner = new LocalStorage(copyPath);
    for (let i = 0; i < 2; i++) await ourWrite(copyPath, [row(6, 20 + i)], 'upsert');
    const props = new Map([
      ['hoodie.cleaner.commits.retained', '1'],
      ['hoodie.keep.min.commits', '2'],
      ['hoodie.keep.max.commits', '3'],
    ]);
    const services = { config: archivalConfigFromProperties(props), cleanConfig: cleanConfigFromProperties(props) };
    // Calls: the archive file, the requested/inflight files, then one per completed file: die at the second of those.
    await assert.rejects(
      runArchive(await HudiTable.open(new CrashingStorage(inner, 4), { mode: 'write' }), { ...services, lock: new StorageLockProvider(inner) }),
      SimulatedCrash,
    );
    await hudi.sql(`CREATE TABLE ours_killed USING hudi LOCATION '${copyPath}'`);
    const expected = await ourRows(copyPath);
    assert.deepEqual(canonicalRows((await hudi.read(copyPath, NO_MDT)).rows), expected);
    assert.ok((await hudi.sql(`CALL show_commits(table => 'ours_killed', limit => 100)`)).rows.length > 0);
    const next = await runArchive(await HudiTable.open(inner, { mode: 'write' }), { ...services, lock: new StorageLockProvider(inner) });
    assert.ok(next.finishedInterrupted.length > 0, 'the interrupted run is finished first');
    const { records } = await readArchivedRecords(inner, archiveFolder('archived'));
    const keys = records.map((r) => `${r.instant.time}.${r.instant.action}.${r.instant.state}`);
    assert.equal(new Set(keys).size, keys.length, 'no instant archived twice');
    const shown = await hudi.sql(
      `CALL show_archived_commits(table => 'ours_killed', limit => 100, start_ts => '20000101000000000', end_ts => '29991231235959999')`,
    );
    const active = new Set((await loadTimeline(inner, TIMELINE_LAYOUT_1)).instants.map((i) => i.time));
    assert.ok(
      shown.rows.every((r) => !active.has(String(r['commit_time']))),
      'Spark lists archived commits that are no longer active',
    );
    assert.deepEqual(canonicalRows((await hudi.read(copyPath, NO_MDT)).rows), expected);
  });

  it('Spark keeps writing, cleaning and archiving after us; we read its rows and both archive files, and clean and archive again', async () => {
    const services = {
      'hoodie.clean.automatic': 'true',
      'hoodie.archive.automatic': 'true',
      'hoodie.cleaner.commits.retained': '1',
      'hoodie.keep.min.commits': '2',
      'hoodie.keep.max.commits': '3',
    };
    for (const ts of [8, 9, 10]) await hudi.write(path, { schema: SCHEMA, rows: [row(1, ts), row(5, ts)], options: sparkOptions('ours', 'upsert', services) });
    const storage = new LocalStorage(path);
    const { records, files } = await readArchivedRecords(storage, archiveFolder('archived'));
    // Ours is version 1; each Spark archive run adds the next version.
    assert.ok(files.length >= 2, files.map((file) => file.path).join(', '));
    assert.deepEqual(
      files.map((file) => file.path),
      files.map((_, i) => `.hoodie/archived/.commits_.archive.${i + 1}_1-0-1`),
    );
    const sparkArchived = [...new Set(records.filter((r) => !r.file.endsWith('.1_1-0-1')).map((r) => r.instant.time))];
    assert.ok(sparkArchived.length > 0 && sparkArchived.every((time) => !archivedByUs.includes(time)), 'Spark archived newer instants into its own file');
    assert.deepEqual(await ourRows(path), canonicalRows((await hudi.read(path, NO_MDT)).rows));

    const lock = new StorageLockProvider(storage);
    const again = { 'hoodie.cleaner.commits.retained': '1', 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' };
    // Spark's archiver left 2 commits; two more (its services off) put 4 > keep.max.commits on the timeline.
    for (const ts of [11, 12])
      await hudi.write(path, {
        schema: SCHEMA,
        rows: [row(2, ts)],
        options: sparkOptions('ours', 'upsert', { 'hoodie.clean.automatic': 'false', 'hoodie.archive.automatic': 'false' }),
      });
    const cleaned = await runClean(await HudiTable.open(storage, { mode: 'write' }), {
      config: cleanConfigFromProperties(new Map(Object.entries(again))),
      lock,
    });
    assert.ok(['cleaned', 'nothing-to-clean'].includes(cleaned.outcome), cleaned.outcome);
    assert.equal(cleaned.planning!.scope.kind, 'incremental', "planned from Spark's last clean");
    const archived = await runArchive(await HudiTable.open(storage, { mode: 'write' }), {
      config: archivalConfigFromProperties(new Map(Object.entries(again))),
      cleanConfig: cleanConfigFromProperties(new Map(Object.entries(again))),
      lock,
    });
    assert.equal(
      archived.outcome,
      'archived',
      JSON.stringify({ kept: archived.plan.keptCommits, bounds: archived.plan.bounds, timeline: (await loadTimeline(storage, TIMELINE_LAYOUT_1)).instants }),
    );
    assert.equal(archived.archiveFile, `.hoodie/archived/.commits_.archive.${files.length + 1}_1-0-1`);
    assert.deepEqual(await ourRows(path), canonicalRows((await hudi.read(path, NO_MDT)).rows));
    const all = await hudi.sql(`CALL show_archived_commits(table => 'ours', limit => 100, start_ts => '20000101000000000', end_ts => '29991231235959999')`);
    assert.ok(
      archived.plan.instants.filter((i) => i.action === 'commit').every((i) => all.rows.some((r) => String(r['commit_time']) === i.time)),
      'Spark lists what we archived last',
    );
  });
});

describe('archival: our reader and planner on a table Spark cleaned and archived', () => {
  let hudi: HudiHarness;
  let path: string;

  before(async () => {
    hudi = await startHudi();
    path = join(tempDir('archival-spark-'), 'spark');
    const services = {
      'hoodie.clean.automatic': 'true',
      'hoodie.archive.automatic': 'true',
      'hoodie.cleaner.commits.retained': '1',
      'hoodie.keep.min.commits': '2',
      'hoodie.keep.max.commits': '3',
      'hoodie.clustering.inline': 'true',
      'hoodie.clustering.inline.max.commits': '2',
    };
    await hudi.write(path, { schema: SCHEMA, rows: [1, 2, 3, 4].map((id) => row(id, 1)), options: sparkOptions('spark', 'insert', services) });
    for (const ts of [2, 3, 4, 5, 6, 7])
      await hudi.write(path, { schema: SCHEMA, rows: [row((ts % 4) + 1, ts)], options: sparkOptions('spark', 'upsert', services) });
  });

  after(async () => {
    await hudi?.close();
  });

  it("decodes Spark's archive, archived replacecommits included, and reads the rows Spark reads", async () => {
    const storage = new LocalStorage(path);
    const { records, corruptBlocks } = await readArchivedRecords(storage, archiveFolder('archived'));
    assert.equal(corruptBlocks, 0);
    const instants = archivedInstants(records);
    const replaces = instants.filter((i) => i.instant.action === 'replacecommit' && i.instant.state === 'COMPLETED');
    assert.ok(replaces.length >= 1, `archived: ${instants.map((i) => `${i.instant.time} ${i.instant.action}`).join(', ')}`);
    const replaced = archivedCommitMetadataOf(replaces[0]!.completed!)!['partitionToReplaceFileIds'] as Record<string, string[]>;
    assert.ok(Object.values(replaced).flat().length > 0, 'the archived replacecommit names the file groups it replaced');
    assert.ok(
      instants.some((i) => i.instant.action === 'clean'),
      'cleans are archived too',
    );
    // Every archived state of an instant is there: requested, inflight, completed.
    const first = records.filter((r) => r.instant.time === replaces[0]!.instant.time).map((r) => r.instant.state);
    assert.deepEqual([...first].sort(), ['COMPLETED', 'INFLIGHT', 'REQUESTED']);
    assert.deepEqual(await ourRows(path), canonicalRows((await hudi.read(path, NO_MDT)).rows));
    // The archived replacecommits' replaced file groups are gone (cleaned before archiving, Hudi's rule).
    const view = await (await HudiTable.open(storage)).fileSystemView();
    assert.ok(view.latestBaseFiles().every((file) => !Object.values(replaced).flat().includes(file.fileId)));
  });

  it("our cleaner plans incrementally from Spark's clean and our archiver follows Spark's rules on its timeline", async () => {
    const storage = new LocalStorage(path);
    const table = await HudiTable.open(storage, { mode: 'write' });
    const props = new Map([
      ['hoodie.cleaner.commits.retained', '1'],
      ['hoodie.keep.min.commits', '2'],
      ['hoodie.keep.max.commits', '3'],
    ]);
    const planning = await planClean(table, cleanConfigFromProperties(props));
    assert.equal(planning.scope.kind, 'incremental');
    assert.equal(planning.plan, undefined, 'Spark cleaned after its last commit: nothing left with the same retention');
    const archived = await runArchive(table, {
      config: archivalConfigFromProperties(props),
      cleanConfig: cleanConfigFromProperties(props),
      lock: new StorageLockProvider(storage),
      dryRun: true,
    });
    assert.deepEqual(
      archived.plan.instants.filter((i) => i.action !== 'clean'),
      [],
      'Spark archived after its last commit: no commit is past its rules',
    );
    assert.ok(archived.plan.completedCommits <= 3, `${archived.plan.completedCommits} active`);
    assert.ok(readFileSync(join(path, '.hoodie', 'hoodie.properties'), 'utf8').includes('hoodie.table.version=6'));
  });
});
