/**
 * Compaction killed after every storage call of schedule, execute and commit (as the clean and clustering crash
 * tests do): after each crash our reader reads the table as before compacting, and the next run (resuming the
 * pending compaction, or rolling it back and running it again) completes it with nothing lost or duplicated. What
 * another writer leaves of ours: a compaction it rolled back to requested (Hudi deletes the outputs, not our stored
 * results) runs from scratch, and the results of one it completed go with the next heal.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { executeCompactionOperation, rollbackCompaction, runCompaction, startCompactionRun } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { healTable } from '../../lib/rollback/failed-writes.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { compactionFolderOf, compactionInstantPath, pendingCompactions } from '../../lib/timeline/compaction-plan.js';
import { compactionWorkDir } from '../../lib/timeline/work-folder.js';
import { tableWithLogs } from '../helpers/compaction-table.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { tempDir } from '../helpers/paths.js';

const config = compactionConfigFrom(new Map(), 'test');
const lockOf = (table: HudiTable, storage: Storage) => lockProviderFor(table.config.properties, table.config.name, storage);

async function read(storage: Storage, queryType: QueryType): Promise<Row[]> {
  const rows = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true, queryType })).rows;
  return rows.map(({ _hoodie_file_name: _name, ...rest }) => rest).sort((a, b) => Number(a['id']) - Number(b['id']));
}

/** Schedule (forced) and run a compaction, as one process would. */
async function compact(storage: Storage, lockStorage: Storage): Promise<void> {
  const table = await HudiTable.open(storage);
  const lock = lockOf(table, lockStorage);
  const scheduled = await scheduleCompaction(table, config, { lock, force: true });
  assert.ok(scheduled, 'a compaction is scheduled');
  await runCompaction(await table.reload(), scheduled.instantTime, { lock });
}

describe('compaction: a crash after any storage call', () => {
  it('leaves the table reading as before, and the next run (resume, or rollback and run) completes it', async () => {
    const { root: template } = await tableWithLogs(PAYLOAD_CLASSES.overwriteWithLatest);
    const before = await read(new LocalStorage(template), 'snapshot');
    const earlier = new Set((await HudiTable.open(new LocalStorage(template))).timeline.instants.map((i) => i.time));
    let crashes = 0;
    for (let crashAt = 1; ; crashAt++) {
      const dir = join(tempDir('compact-crash-'), 'table');
      cpSync(template, dir, { recursive: true });
      const inner = new LocalStorage(dir);
      const crashing = new CrashingStorage(inner, crashAt);
      let crashed = false;
      try {
        await compact(crashing, inner);
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
        crashed = true;
        crashes++;
      }
      const at = `crash at ${crashAt} (${crashing.log.at(-1)})`;
      assert.deepEqual(await read(inner, 'snapshot'), before, `the snapshot after the ${at}`);
      if (crashed) {
        const table = await HudiTable.open(inner);
        const lock = lockOf(table, inner);
        const [pending] = pendingCompactions(table.timeline);
        const committed = table.timeline.instants.some((i) => i.action === 'commit' && i.state === 'COMPLETED' && !earlier.has(i.time));
        // Crashed before its plan was written: schedule again; after its commit (tidying up): nothing to do.
        if (pending === undefined && !committed) await compact(inner, inner);
        else if (pending !== undefined) {
          // Half the crash points resume the pending compaction, the other half roll it back and run it again.
          if (crashAt % 2 === 0) await rollbackCompaction(table, pending.time, { lock });
          const result = await runCompaction(await table.reload(), pending.time, { lock });
          assert.equal(result.outcome, 'committed', at);
        }
      }
      const table = await HudiTable.open(inner);
      const compactions = table.timeline.instants.filter((i) => i.action === 'commit' && !earlier.has(i.time));
      assert.equal(compactions.length, 1, `one compaction after the ${at}`);
      assert.equal(compactions[0]!.state, 'COMPLETED');
      assert.deepEqual(pendingCompactions(table.timeline), [], `nothing pending after the ${at}`);
      assert.deepEqual(await read(inner, 'read_optimized'), before, `the compacted base files after the ${at}`);
      assert.deepEqual(await read(inner, 'snapshot'), before);
      // Exactly one base file per file group at the compaction's instant: no torn or duplicated output left.
      const outputs = (await inner.listRecursive(''))
        .map((object) => parseBaseFileName(object.path.slice(object.path.lastIndexOf('/') + 1)))
        .filter((parsed) => parsed?.instantTime === compactions[0]!.time);
      assert.equal(outputs.length, 2, `two compacted file groups after the ${at}`);
      assert.equal(new Set(outputs.map((parsed) => parsed!.fileId)).size, 2);
      if (!crashed) break;
    }
    assert.ok(crashes >= 8, `schedule, execute and commit each changed storage (${crashes} crash points)`);
  });
});

describe('compaction: what another writer leaves of ours', () => {
  it('a compaction it rolled back to requested runs from scratch; the results of one it completed go with the next heal', async () => {
    const { storage } = await tableWithLogs(PAYLOAD_CLASSES.overwriteWithLatest);
    const before = await read(storage, 'snapshot');
    const table = await HudiTable.open(storage);
    const lock = lockOf(table, storage);
    const scheduled = await scheduleCompaction(table, config, { lock, force: true });
    assert.ok(scheduled, 'a compaction is scheduled');
    const instant = scheduled.instantTime;
    const start = await startCompactionRun(await table.reload(), instant);
    const engine = await openParquetEngine();
    const first = await executeCompactionOperation(await table.reload(), instant, 0, { engine, plan: start.plan! }).finally(() => engine.close());
    // Rolled back as Hudi's rollbackInflightCompaction does: the outputs and the inflight file go, the plan stays.
    await storage.delete([first.stat.path!, compactionInstantPath(instant, 'INFLIGHT', compactionFolderOf(table.layout))]);
    assert.equal((await storage.listRecursive(compactionWorkDir(instant))).length, 1, 'our stored result is left');

    const result = await runCompaction(await HudiTable.open(storage), instant, { lock });
    assert.deepEqual([result.outcome, result.resumed], ['committed', false]);
    for (const stat of result.writeStats) assert.ok((await storage.head(stat.path!)) !== undefined, `the commit names ${stat.path}, which exists`);
    assert.deepEqual(await read(storage, 'read_optimized'), before);

    // Completed by another writer (as Hudi's inline compaction completes ours): the results outlive the instant.
    await storage.put(`${compactionWorkDir(instant)}/operation-0.json`, JSON.stringify(first));
    const healed = await healTable(await HudiTable.open(storage), { lock, policy: 'EAGER' });
    assert.ok(healed.cleanedUp.includes(instant), `healed: ${healed.cleanedUp.join(', ')}`);
    assert.deepEqual(await storage.listRecursive(compactionWorkDir(instant)), []);
  });
});
