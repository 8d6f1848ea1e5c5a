/**
 * Hudi 1.0.2 and 1.1.1 (Spark 3.5, one JVM per version) write and archive a copy-on-write table until their
 * archiver has written level-0 history files and compacted them into level 1. Reading: our list of archived
 * instants equals what Hudi's own ArchivedTimelineV2 lists (requested and completion time, action), with the same
 * metadata bytes, each decoded as the Avro record its action holds — on copy-on-write tables with an
 * insert_overwrite or inline clustering, and merge-on-read ones compacted inline. Writing: on a copy of the table,
 * the history rebuilt by our writer from those instants (level-0 files, compactions, cleaning) reads in Hudi as the
 * original does; then Hudi's own archiver appends to and compacts our history, and Hudi and we still read the same.
 */
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStorage } from '../../lib/storage/index.js';
import { appendToHistory, historyFolder, parseArchiveFileName, readTimelineHistory } from '../../lib/timeline/history/index.js';
import { type HudiHarness, type HudiVersion, startHudi } from '../helpers/hudi.js';
import {
  type HudiArchivedInstant,
  historyAsHudiReports,
  hudiArchivedInstants,
  INLINE_CLUSTERING,
  INLINE_COMPACTION,
  writeArchivingTable,
} from '../helpers/hudi-1x-history.js';
import { tempDir } from '../helpers/paths.js';

/** Enough writes for the archiver to compact three level-0 files into level 1 (batch size 3). */
const WRITES = 16;
const FOLDER = historyFolder();

for (const version of ['1.0.2', '1.1.1'] as const satisfies readonly HudiVersion[]) {
  describe(`the timeline history Hudi ${version} writes`, { timeout: 1_800_000 }, () => {
    let hudi: HudiHarness;
    let table: string;
    let hudiView: HudiArchivedInstant[];
    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      table = join(tempDir('hudi-1x-history-'), 'archived');
      await writeArchivingTable(hudi, table, 'archived', WRITES);
      hudiView = await hudiArchivedInstants(hudi, table);
    });
    after(async () => {
      await hudi?.close();
    });

    it('reads as Hudi’s archived timeline reads it', async () => {
      const history = await readTimelineHistory(openStorage(table), FOLDER);
      const levels = history.manifest.files.map((file) => parseArchiveFileName(file.fileName)?.level);
      assert.ok(levels.includes(1), `Hudi ${version} compacted a level: the manifest names levels ${levels.join(', ')}`);
      assert.ok(hudiView.length > 10, `Hudi ${version} archived ${hudiView.length} instants`);
      assert.deepEqual(historyAsHudiReports(history), hudiView);

      const records = new Set(
        history.instants.map((instant) => `${instant.action}: ${instant.metadata?.recordName} / ${instant.plan?.recordName ?? 'no plan'}`),
      );
      assert.deepEqual([...records].sort(), [
        'clean: org.apache.hudi.avro.model.HoodieCleanMetadata / org.apache.hudi.avro.model.HoodieCleanerPlan',
        'commit: org.apache.hudi.avro.model.HoodieCommitMetadata / no plan',
        'replacecommit: org.apache.hudi.avro.model.HoodieReplaceCommitMetadata / org.apache.hudi.avro.model.HoodieCommitMetadata',
      ]);
    });

    it('reads merge-on-read compactions and clustering as Hudi does', async () => {
      const expected = {
        compacted: [
          'clean: org.apache.hudi.avro.model.HoodieCleanMetadata / org.apache.hudi.avro.model.HoodieCleanerPlan',
          'commit: org.apache.hudi.avro.model.HoodieCommitMetadata / org.apache.hudi.avro.model.HoodieCompactionPlan',
          'deltacommit: org.apache.hudi.avro.model.HoodieCommitMetadata / no plan',
        ],
        clustered: [
          'clean: org.apache.hudi.avro.model.HoodieCleanMetadata / org.apache.hudi.avro.model.HoodieCleanerPlan',
          'commit: org.apache.hudi.avro.model.HoodieCommitMetadata / no plan',
          'replacecommit: org.apache.hudi.avro.model.HoodieReplaceCommitMetadata / org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata',
        ],
      };
      for (const [name, options] of [
        ['compacted', INLINE_COMPACTION],
        ['clustered', INLINE_CLUSTERING],
      ] as const) {
        const path = join(tempDir('hudi-1x-history-'), name);
        await writeArchivingTable(hudi, path, name, 8, { insertOverwrite: undefined, options });
        const history = await readTimelineHistory(openStorage(path), FOLDER);
        assert.deepEqual(historyAsHudiReports(history), await hudiArchivedInstants(hudi, path), `${name}: Hudi ${version} lists what we list`);
        const records = new Set(
          history.instants.map((instant) => `${instant.action}: ${instant.metadata?.recordName} / ${instant.plan?.recordName ?? 'no plan'}`),
        );
        assert.deepEqual([...records].sort(), expected[name], name);
      }
    });

    it('reads our history back, and archives into it and compacts it as into its own', async () => {
      const copy = join(tempDir('hudi-1x-history-'), 'archived');
      cpSync(table, copy, { recursive: true });
      const storage = openStorage(copy);
      const original = await readTimelineHistory(storage, FOLDER);
      rmSync(join(copy, FOLDER), { recursive: true });
      const ours = new Set<string>();
      for (let start = 0; start < original.instants.length; start += 2) {
        const batch = original.instants.slice(start, start + 2).map((instant) => ({
          requestedTime: instant.requestedTime,
          completionTime: instant.completionTime,
          action: instant.action,
          metadata: instant.metadata?.bytes ?? null,
          plan: instant.plan?.bytes ?? null,
        }));
        const result = await appendToHistory(storage, FOLDER, batch, { compactionBatchSize: 3 });
        for (const name of [result.written ?? '', ...result.compacted]) ours.add(name);
      }
      const rebuilt = await readTimelineHistory(storage, FOLDER);
      assert.ok(rebuilt.manifest.files.some((file) => parseArchiveFileName(file.fileName)!.level >= 1));
      assert.deepEqual(await hudiArchivedInstants(hudi, copy), hudiView, `Hudi ${version} reads our rebuilt history as its own`);

      // Hudi's archiver goes on from our manifest: new level-0 files, and a compaction of files we wrote.
      await writeArchivingTable(hudi, copy, 'archived', 12, { first: WRITES + 1 });
      const extended = await readTimelineHistory(storage, FOLDER);
      const theirs = await hudiArchivedInstants(hudi, copy);
      assert.deepEqual(historyAsHudiReports(extended), theirs);
      assert.deepEqual(theirs.slice(0, hudiView.length), hudiView);
      assert.ok(theirs.length > hudiView.length, `Hudi ${version} archived more instants into our history`);
      // A file Hudi compacted whose range starts within what we archived: it holds rows it read from our files.
      const lastOfOurs = original.instants[original.instants.length - 1]!.requestedTime;
      const names = extended.manifest.files.map((file) => file.fileName);
      assert.ok(
        names.some((name) => !ours.has(name) && parseArchiveFileName(name)!.level >= 1 && parseArchiveFileName(name)!.minInstant <= lastOfOurs),
        `Hudi ${version} compacted our files: the manifest names ${names.join(', ')}`,
      );
    });
  });
}
