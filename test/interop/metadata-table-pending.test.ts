/**
 * A Hudi 1.0.2 / 1.1.1 writer killed while writing its metadata table's deltacommit leaves both instants pending
 * (made here by removing the two completed files of a Spark write, as the crash would have left them). Hudi and we
 * read the table alike meanwhile; our next write heals it as Hudi's next writer does: the data instant rolled back,
 * its deltacommit with it (1.1.1: by the data rollback; 1.0.2: by the metadata writer's own rollback of failed
 * writes before its deltacommit), then it writes, and Spark writes on top. Our clean heals the metadata table too.
 * One JVM per release, four Spark writes each.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { cleanKeepingLatestCommits } from '../helpers/interop-writer.js';
import { assertMetadata1xAgrees, assertMirroredBefore } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const OUR_PROPS = new Map([['hoodie.datasource.write.precombine.field', 'ts']]);
const COMPLETED = /^(\d{17})_\d{17}\.(\w+)$/;

for (const version of HUDI_1X_VERSIONS) {
  describe(`a Hudi ${version} writer killed during its metadata-table deltacommit`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mdt-pending-`);
    const table = join(root, 'cow');
    const mdt = join(table, '.hoodie/metadata/.hoodie/timeline');
    const sparkOptions = hudi1xWriteOptions('mdtp', 'COPY_ON_WRITE');
    let batch = 0;

    async function spark(ids: number[]): Promise<void> {
      batch += 1;
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, batch),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
    }

    /** A Spark upsert, then the completed files of its commit and deltacommit removed: the killed write's instant. */
    async function killedSpark(ids: number[]): Promise<string> {
      await spark(ids);
      const commit = readdirSync(join(table, '.hoodie/timeline'))
        .filter((name) => COMPLETED.exec(name)?.[2] === 'commit')
        .sort()
        .at(-1)!;
      const instant = commit.slice(0, 17);
      const deltaCommit = readdirSync(mdt).find((name) => name.startsWith(`${instant}_`) && name.endsWith('.deltacommit'));
      assert.ok(deltaCommit !== undefined, `Spark's deltacommit ${instant}`);
      rmSync(join(table, '.hoodie/timeline', commit));
      rmSync(join(mdt, deltaCommit));
      assert.deepEqual(pendingMetadata(), [`${instant}.deltacommit.inflight`, `${instant}.deltacommit.requested`]);
      return instant;
    }

    /** The metadata table's instant files of instants not completed. */
    const pendingMetadata = () => {
      const names = readdirSync(mdt).sort();
      const done = new Set(names.flatMap((name) => COMPLETED.exec(name)?.[1] ?? []));
      return names.filter((name) => /\.(inflight|requested)$/.test(name) && !done.has(name.slice(0, 17)));
    };
    /** The metadata table's completed rollback of `instant` (its plan names it), as [rollback time, plan]. */
    const metadataRollbackOf = (instant: string) => {
      for (const name of readdirSync(mdt).filter((n) => COMPLETED.exec(n)?.[2] === 'rollback')) {
        const path = join(mdt, `${name.slice(0, 17)}.rollback.requested`);
        const plan = decodeTimelineAvro('rollbackPlan', readFileSync(path), path);
        if (plan.instantToRollback?.commitTime === instant) return { time: name.slice(0, 17), plan };
      }
      return undefined;
    };

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      batch += 1;
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([1, 2, 3, 4, 5, 6], batch),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'insert' },
      });
    });
    after(async () => hudi?.close());

    it('both read it alike meanwhile; our write rolls both back as Hudi does, then writes, and Spark writes on top', async () => {
      const killed = await killedSpark([1, 2, 7]);
      await assertMetadata1xAgrees(hudi, table, `killed Spark upsert ${killed}`);

      batch += 1;
      const input = join(root, `batch-${batch}.jsonl`);
      writeFileSync(
        input,
        `${hudi1xRows([2, 8], batch)
          .map((row) => JSON.stringify(row))
          .join('\n')}\n`,
      );
      const { instantTime } = await writeBatch(new LocalStorage(table), {
        input: { file: input, format: 'jsonl' },
        operation: 'upsert',
        properties: OUR_PROPS,
      });
      const data = await HudiTable.open(new LocalStorage(table));
      assert.deepEqual(data.timeline.pending(), [], `${killed} rolled back`);
      const dataRollback = data.timeline.completed().find((i) => i.action === 'rollback')!.time;
      assert.deepEqual(pendingMetadata(), []);
      assert.ok(!readdirSync(mdt).some((name) => name.startsWith(killed)), `${killed} left the metadata table`);
      const rollback = metadataRollbackOf(killed);
      assert.ok(rollback !== undefined, `the metadata table rolled ${killed} back: ${readdirSync(mdt).join(', ')}`);
      assert.equal(rollback.plan.instantToRollback?.action, 'deltacommit');
      assert.ok((rollback.plan.RollbackRequests ?? []).length >= 3, 'its log files, listed');
      if (version === '1.1.1') assert.equal(rollback.time, dataRollback, '1.1.1: with the data rollback (update(HoodieRollbackMetadata) takes a pending one)');
      else assert.ok(rollback.time > instantTime, "1.0.2: the metadata writer's rollback of failed writes, when our deltacommit starts");
      assertMirroredBefore(table, instantTime, 'commit');
      await assertMetadata1xAgrees(hudi, table, `our upsert ${instantTime}`);

      await spark([3, 9]);
      await assertMetadata1xAgrees(hudi, table, 'Spark upsert on top');
    });

    it("our clean rolls a killed writer's deltacommit back before its own, as Hudi's commitInternal does", async () => {
      const killed = await killedSpark([4, 10]);
      const result = await cleanKeepingLatestCommits(table, 1);
      assert.equal(result.outcome, 'cleaned');
      assert.deepEqual(pendingMetadata(), []);
      const rollback = metadataRollbackOf(killed);
      assert.ok(rollback !== undefined && rollback.time > killed, `the metadata table rolled ${killed} back`);
      await assertMetadata1xAgrees(hudi, table, `our clean beside the killed ${killed}`);
    });
  });
}
