/**
 * Hudi 1.0.2 and 1.1.1 (Spark 3.5, one JVM per version) write and archive a copy-on-write table until their
 * archiver has written level-0 history files and compacted them into level 1; our reading of the timeline history
 * lists the instants Hudi's own ArchivedTimelineV2 lists (requested and completion time, action), with the same
 * metadata bytes, and decodes each as the Avro record its action holds.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStorage } from '../../lib/storage/index.js';
import { historyFolder, parseArchiveFileName, readTimelineHistory } from '../../lib/timeline/history/index.js';
import { startHudi, type HudiHarness, type HudiVersion } from '../helpers/hudi.js';
import { hudiArchivedInstants, writeArchivingTable } from '../helpers/hudi-1x-history.js';
import { tempDir } from '../helpers/paths.js';

/** Enough writes for the archiver to compact three level-0 files into level 1 (batch size 3). */
const WRITES = 16;

for (const version of ['1.0.2', '1.1.1'] as const satisfies readonly HudiVersion[]) {
  describe(`the timeline history Hudi ${version} writes`, { timeout: 1_800_000 }, () => {
    let hudi: HudiHarness;
    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });
    after(async () => {
      await hudi?.close();
    });

    it('reads as Hudi’s archived timeline reads it', async () => {
      const table = join(tempDir('hudi-1x-history-'), 'archived');
      await writeArchivingTable(hudi, table, 'archived', WRITES);

      const history = await readTimelineHistory(openStorage(table), historyFolder());
      const levels = history.manifest.files.map((file) => parseArchiveFileName(file.fileName)?.level);
      assert.ok(levels.includes(1), `Hudi ${version} compacted a level: the manifest names levels ${levels.join(', ')}`);

      const theirs = await hudiArchivedInstants(hudi, table);
      assert.ok(theirs.length > 10, `Hudi ${version} archived ${theirs.length} instants`);
      const ours = history.instants.map((instant) => ({
        requestedTime: instant.requestedTime,
        completionTime: instant.completionTime,
        action: instant.action,
        state: 'COMPLETED',
        metadata: instant.metadata === null ? null : Buffer.from(instant.metadata.bytes).toString('base64'),
      }));
      assert.deepEqual(ours, theirs);

      const records = new Set(
        history.instants.map((instant) => `${instant.action}: ${instant.metadata?.recordName} / ${instant.plan?.recordName ?? 'no plan'}`),
      );
      assert.deepEqual([...records].sort(), [
        'clean: org.apache.hudi.avro.model.HoodieCleanMetadata / org.apache.hudi.avro.model.HoodieCleanerPlan',
        'commit: org.apache.hudi.avro.model.HoodieCommitMetadata / no plan',
        'replacecommit: org.apache.hudi.avro.model.HoodieReplaceCommitMetadata / org.apache.hudi.avro.model.HoodieCommitMetadata',
      ]);
    });
  });
}
