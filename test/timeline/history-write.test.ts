/**
 * lib/timeline/history/write.ts: appending archived instants to Hudi 1.x's timeline history as LSMTimelineWriter
 * does — level-0 files, manifest versions, `_version_`, compaction of full levels and cleaning — checked by reading
 * the history back (lib/timeline/history/read.ts) against the instants Hudi 1.0.2 and 1.1.1 archived in the
 * fixtures. test/interop/hudi-1x-history.test.ts has Hudi itself read what this writes.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HudiError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import {
  type ArchivedInstant,
  appendToHistory,
  historyFolder,
  type InstantToArchive,
  parseArchiveFileName,
  readTimelineHistory,
  writeLevelZero,
} from '../../lib/timeline/history/index.js';
import { REPO_ROOT, tableFiles, tempDir } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/hudi-1x-history');
const FOLDER = historyFolder();

async function fixtureInstants(version: string): Promise<readonly ArchivedInstant[]> {
  const root = tempDir('history-write-src-');
  mkdirSync(join(root, FOLDER), { recursive: true });
  cpSync(join(FIXTURES, version, 'history'), join(root, FOLDER), { recursive: true });
  return (await readTimelineHistory(openStorage(root), FOLDER)).instants;
}

const toArchive = (instant: ArchivedInstant): InstantToArchive => ({
  requestedTime: instant.requestedTime,
  completionTime: instant.completionTime,
  action: instant.action,
  metadata: instant.metadata?.bytes ?? null,
  plan: instant.plan?.bytes ?? null,
});

/** What a reader sees of an instant: times, action, and the stored bytes. */
const seen = (instant: ArchivedInstant) => ({
  requestedTime: instant.requestedTime,
  completionTime: instant.completionTime,
  action: instant.action,
  metadata: instant.metadata === null ? null : Buffer.from(instant.metadata.bytes).toString('base64'),
  plan: instant.plan === null ? null : Buffer.from(instant.plan.bytes).toString('base64'),
});

for (const version of ['1.0.2', '1.1.1']) {
  describe(`rebuilding the history Hudi ${version} wrote`, () => {
    test('in batches of two with a compaction batch of three: the same instants, levels 0 to 2, old versions cleaned', async () => {
      const instants = await fixtureInstants(version);
      const root = tempDir('history-write-');
      const storage = openStorage(root);
      let versions = 0;
      let compactions = 0;
      let manifestCount = 0;
      for (let start = 0; start < instants.length; start += 2) {
        const result = await appendToHistory(storage, FOLDER, instants.slice(start, start + 2).map(toArchive), { compactionBatchSize: 3 });
        assert.ok(result.written !== undefined);
        versions += 1 + result.compacted.length;
        compactions += result.compacted.length;
        assert.equal(result.version, versions);
        // Cleaning keeps the newest 3 manifests plus one per compaction of the run (LSMTimelineWriter.clean).
        manifestCount = Math.min(manifestCount + 1 + result.compacted.length, 3 + result.compacted.length);
        const manifests = readdirSync(join(root, FOLDER)).filter((name) => name.startsWith('manifest_'));
        assert.equal(manifests.length, manifestCount, `manifests after version ${versions}`);
        assert.ok(manifests.includes(`manifest_${versions}`));
      }
      const history = await readTimelineHistory(storage, FOLDER);
      assert.equal(history.version, versions);
      assert.deepEqual(history.instants.map(seen), instants.map(seen));
      const levels = history.manifest.files.map((file) => parseArchiveFileName(file.fileName)!.level);
      assert.ok(levels.includes(2) && compactions >= 8, `levels ${levels.join(', ')} after ${compactions} compactions`);
      for (const file of history.manifest.files) assert.equal(readFileSync(join(root, FOLDER, file.fileName)).length, file.fileLen);
      assert.equal(readFileSync(join(root, FOLDER, '_version_'), 'utf8'), String(versions));
    });
  });
}

describe('appending to the history', () => {
  test('a batch the latest manifest already names is not written again', async () => {
    const instants = (await fixtureInstants('1.0.2')).slice(0, 3).map(toArchive);
    const root = tempDir('history-write-');
    const storage = openStorage(root);
    assert.equal(await writeLevelZero(storage, FOLDER, instants), `${instants[0]!.requestedTime}_${instants[2]!.requestedTime}_0.parquet`);
    const before = tableFiles(root);
    assert.equal(await writeLevelZero(storage, FOLDER, instants), undefined);
    assert.deepEqual(tableFiles(root), before);
  });

  test('a file of the batch’s name that no manifest names (a cut-short write) is replaced', async () => {
    const instants = await fixtureInstants('1.1.1');
    const batch = instants.slice(0, 2).map(toArchive);
    const root = tempDir('history-write-');
    mkdirSync(join(root, FOLDER), { recursive: true });
    const name = `${batch[0]!.requestedTime}_${batch[1]!.requestedTime}_0.parquet`;
    writeFileSync(join(root, FOLDER, name), 'PAR1 cut short');
    await writeLevelZero(openStorage(root), FOLDER, batch);
    const history = await readTimelineHistory(openStorage(root), FOLDER);
    assert.deepEqual(history.instants.map(seen), instants.slice(0, 2).map(seen));
    assert.equal(history.version, 1);
  });

  test('a level stops taking files into a compaction once those taken exceed 1000 MB', async () => {
    const instants = (await fixtureInstants('1.0.2')).map(toArchive);
    const root = tempDir('history-write-');
    const storage = openStorage(root);
    for (let start = 0; start < 4; start += 2) await appendToHistory(storage, FOLDER, instants.slice(start, start + 2), { compactionBatchSize: 3 });
    // Make the two level-0 files look large in the latest manifest, as if written long ago by a big archival.
    const latest = readFileSync(join(root, FOLDER, '_version_'), 'utf8');
    const manifestPath = join(root, FOLDER, `manifest_${latest}`);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { files: { fileName: string; fileLen: number }[] };
    for (const file of manifest.files) file.fileLen = 600 * 1024 * 1024;
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const result = await appendToHistory(storage, FOLDER, instants.slice(4, 6), { compactionBatchSize: 3 });
    // The first file (600 MB taken) and the second (1200 MB taken): the third is left for a later run.
    assert.equal(result.compacted.length, 1);
    const history = await readTimelineHistory(storage, FOLDER);
    const names = history.manifest.files.map((file) => file.fileName);
    assert.equal(names.length, 2);
    assert.equal(parseArchiveFileName(names[0]!)!.level, 0);
    assert.equal(names[1], `${instants[0]!.requestedTime}_${instants[3]!.requestedTime}_1.parquet`);
    assert.deepEqual(
      history.instants.map((instant) => instant.requestedTime),
      instants.slice(0, 6).map((instant) => instant.requestedTime),
    );
  });

  test('refuses, writing nothing: no instants, instants out of order, an unknown action, a batch size below 2', async () => {
    const instants = (await fixtureInstants('1.0.2')).slice(0, 2).map(toArchive);
    const root = tempDir('history-write-');
    const storage = openStorage(root);
    const cases: [readonly InstantToArchive[], number][] = [
      [[], 3],
      [[instants[1]!, instants[0]!], 3],
      [[{ ...instants[0]!, action: 'compaction' as InstantToArchive['action'] }], 3],
      [instants, 1],
    ];
    for (const [batch, batchSize] of cases) {
      await assert.rejects(appendToHistory(storage, FOLDER, batch, { compactionBatchSize: batchSize }), HudiError);
      assert.equal(existsSync(join(root, FOLDER)), false);
    }
  });
});
