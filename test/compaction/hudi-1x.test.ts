/**
 * Compaction's Hudi 1.x plan encoding without Spark: the plans Hudi 1.0.2 and 1.1.1 scheduled in the fixture tables
 * (test/fixtures/hudi-1x-tables/<version>/mor) decode, and re-encode for layout 2 under the same writer schema to the
 * same record; layout 1 keeps 0.x's schema. A failed attempt at a fixture's pending plan rolls back through a layout-2
 * rollback instant, its metadata-table deltacommit with it (refused where Hudi refuses). test/interop/hudi-1x-compaction
 * .test.ts runs the service against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { rollbackCompaction } from '../../lib/compaction/execute.js';
import { MetadataTableError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, decodeWithWriterSchema } from '../../lib/timeline/avro-files.js';
import { compactionFolderOf, decodeCompactionPlan, encodeCompactionPlan, readCompactionPlan, startCompaction } from '../../lib/timeline/compaction-plan.js';
import { createMarker } from '../../lib/timeline/markers.js';
import { HUDI_1X_VERSIONS, writerSchemaText } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hudi-1x-tables');
const PLAN = 'org.apache.hudi.avro.model.HoodieCompactionPlan';

const hudiPlans = HUDI_1X_VERSIONS.flatMap((version) => {
  const folder = join(FIXTURES, version, 'mor', 'timeline');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.compaction.requested'))
    .map((name) => ({ version, name, bytes: readFileSync(join(folder, name)) }));
});

describe("compaction plans in Hudi 1.x's encoding", () => {
  it('the fixtures hold plans of both releases', () => {
    assert.deepEqual([...new Set(hudiPlans.map((plan) => plan.version))], [...HUDI_1X_VERSIONS]);
  });

  for (const { version, name, bytes } of hudiPlans) {
    it(`encodes the plan Hudi ${version} wrote (${name}) to the same record under the same writer schema`, () => {
      const plan = decodeCompactionPlan(bytes, name);
      assert.ok(plan.operations.length > 0);
      assert.deepEqual(plan.missingSchedulePartitions, [], 'incremental table services (1.x default) write a list, empty here');
      const ours = encodeCompactionPlan(plan, 2);
      assert.equal(writerSchemaText(ours), writerSchemaText(bytes), "1.x's HoodieCompactionPlan schema, missingSchedulePartitions last");
      assert.deepEqual(decodeWithWriterSchema(ours, 'ours', [PLAN]).record, decodeWithWriterSchema(bytes, name, [PLAN]).record);
    });
  }

  it("layout 1 keeps 0.x's schema; a 1.x plan without the list writes null", () => {
    const { missingSchedulePartitions: _, ...plan } = decodeCompactionPlan(hudiPlans[0]!.bytes, hudiPlans[0]!.name);
    const v6 = encodeCompactionPlan(plan, 1);
    assert.ok(!writerSchemaText(v6).includes('missingSchedulePartitions'));
    assert.equal('missingSchedulePartitions' in decodeCompactionPlan(v6, 'v6'), false);
    const record = decodeWithWriterSchema(encodeCompactionPlan(plan, 2), 'ours', [PLAN]).record as { missingSchedulePartitions: unknown };
    assert.equal(record.missingSchedulePartitions, null);
  });
});

describe('a failed compaction of a Hudi 1.x table goes back to its plan through a rollback instant', () => {
  for (const version of HUDI_1X_VERSIONS) {
    it(`Hudi ${version}: the attempt's base file deleted, the inflight gone, the plan kept, R_<completion>.rollback, the metadata table's deltacommit too`, async () => {
      const dir = tempDir(`hudi-${version}-compaction-rollback-`);
      mkdirSync(join(dir, '.hoodie'), { recursive: true });
      cpSync(join(FIXTURES, version, 'mor', 'hoodie.properties'), join(dir, '.hoodie', 'hoodie.properties'));
      cpSync(join(FIXTURES, version, 'mor', 'timeline'), join(dir, '.hoodie', 'timeline'), { recursive: true });
      const storage = new LocalStorage(dir);
      const timeline = join(dir, '.hoodie', 'timeline');
      const names = () => readdirSync(timeline).sort();
      const pending = names().find((name) => name.endsWith('.compaction.requested') && !names().some((other) => other.startsWith(`${name.slice(0, 17)}_`)));
      assert.ok(pending !== undefined, names().join(', '));
      const time = pending.slice(0, 17);
      const table = await HudiTable.open(storage, { mode: 'write' });
      const op = (await readCompactionPlan(storage, time, compactionFolderOf(table.layout))).operations[0]!;
      // The attempt: inflight, one output behind its MERGE marker.
      await startCompaction(storage, time, compactionFolderOf(table.layout));
      const output = `${op.fileId}_0-1-1_${time}.parquet`;
      await createMarker(storage, time, op.partitionPath, output, 'MERGE');
      mkdirSync(join(dir, op.partitionPath), { recursive: true });
      writeFileSync(join(dir, op.partitionPath, output), 'partial');
      const lock = new StorageLockProvider(storage);
      // The fixture declares a metadata table; the compaction's commit left its deltacommit there, and the metadata
      // table compacted after it: Hudi's validateRollback refuses, before anything is written.
      const mdtTimeline = join(dir, '.hoodie', 'metadata', '.hoodie', 'timeline');
      mkdirSync(mdtTimeline, { recursive: true });
      const mirrored = `${time}_${time.slice(0, 14)}999.deltacommit`;
      writeFileSync(join(mdtTimeline, mirrored), '');
      writeFileSync(join(mdtTimeline, '20991231235959000_20991231235959001.commit'), '');
      const before = names();
      await assert.rejects(
        rollbackCompaction(await HudiTable.open(storage, { mode: 'write' }), time, { lock }),
        (error: unknown) => error instanceof MetadataTableError && /not after its latest compaction/.test(error.message),
      );
      assert.deepEqual(names(), before);
      assert.ok(readdirSync(join(dir, op.partitionPath)).includes(output));
      // Without that compaction the deltacommit is rolled back with the compaction, at the same rollback instant.
      rmSync(join(mdtTimeline, '20991231235959000_20991231235959001.commit'));

      const result = await rollbackCompaction(await HudiTable.open(storage, { mode: 'write' }), time, { lock });
      assert.deepEqual(result.deleted, [`${op.partitionPath}/${output}`]);
      assert.deepEqual(readdirSync(join(dir, op.partitionPath)), []);
      const rollback = result.rollbackInstant!;
      assert.deepEqual(
        names().filter((name) => name.startsWith(time) || name.startsWith(rollback)),
        [
          `${time}.compaction.requested`,
          `${rollback}.rollback.inflight`,
          `${rollback}.rollback.requested`,
          names().find((name) => /^\d{17}_\d{17}\.rollback$/.test(name)),
        ].sort(),
      );
      const mdtNames = readdirSync(mdtTimeline).sort();
      assert.ok(!mdtNames.some((name) => name.startsWith(time)), mdtNames.join(', '));
      assert.ok(
        mdtNames.some((name) => new RegExp(`^${rollback}_\\d{17}\\.rollback$`).test(name)),
        mdtNames.join(', '),
      );
      const planFile = join(timeline, `${rollback}.rollback.requested`);
      assert.deepEqual(decodeTimelineAvro('rollbackPlan', readFileSync(planFile), planFile).instantToRollback, { commitTime: time, action: 'compaction' });
      // Only requested now: nothing to roll back, nothing written.
      assert.deepEqual((await rollbackCompaction(await HudiTable.open(storage, { mode: 'write' }), time, { lock })).deleted, []);
      assert.equal(names().filter((name) => name.endsWith('.rollback')).length, 1);
    });
  }
});
