/**
 * Compaction's Hudi 1.x plan encoding without Spark: the plans Hudi 1.0.2 and 1.1.1 scheduled in the fixture tables
 * (test/fixtures/hudi-1x-tables/<version>/mor) decode, and re-encode for layout 2 under the same writer schema to the
 * same record; layout 1 keeps 0.x's schema. test/interop/hudi-1x-compaction.test.ts runs the service against Spark.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeWithWriterSchema } from '../../lib/timeline/avro-files.js';
import { decodeCompactionPlan, encodeCompactionPlan } from '../../lib/timeline/compaction-plan.js';
import { HUDI_1X_VERSIONS, writerSchemaText } from '../helpers/hudi-1x-fixtures.js';

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
