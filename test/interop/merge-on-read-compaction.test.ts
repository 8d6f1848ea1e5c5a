/**
 * Compaction of merge-on-read tables against real Hudi 0.15 (Spark 3.5.1): on copies of one Spark-written table,
 * Hudi's `run_compaction` schedule and ours plan the same operations; after our compaction Spark's snapshot is
 * unchanged (but for `_hoodie_file_name`) and its read-optimized view equals it; Spark then writes and compacts on top
 * of ours; a compaction that crashed mid-way is resumed from its plan, and one rolled back can run again.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { rollbackCompaction, runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type CompactionOperation, pendingCompactions, readCompactionPlan, startCompaction } from '../../lib/timeline/compaction-plan.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, price DOUBLE, amount DECIMAL(10,2), day DATE, at TIMESTAMP, ts BIGINT, dt STRING';
const row = (id: number, ts: number, tag: string) => ({
  id,
  name: `n${id}-${tag}`,
  price: id * 1.5,
  amount: `${id}.25`,
  day: `2024-01-0${(id % 9) + 1}`,
  at: `2024-02-0${(id % 9) + 1}T10:00:00.123456Z`,
  ts,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const options = (operation: string, extra: Record<string, string> = {}) => ({
  ...mergeOnReadWriteOptions(),
  'hoodie.table.name': 'mor_c',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'false',
  ...extra,
});
const PROPS = new Map([['hoodie.compact.inline.max.delta.commits', '3']]);
const config = compactionConfigFrom(PROPS, 'test');

async function open(path: string): Promise<HudiTable> {
  return HudiTable.open(openStorage(path));
}
const lockOf = (table: HudiTable) => lockProviderFor(table.config.properties, table.config.name, table.storage);

async function ours(path: string, queryType?: QueryType): Promise<Row[]> {
  return (await readSnapshot(await open(path), { includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows;
}
async function spark(hudi: HudiHarness, path: string, queryType?: QueryType): Promise<Row[]> {
  return (await hudi.read(path, { options: queryType === undefined ? {} : { 'hoodie.datasource.query.type': queryType } })).rows;
}
const withoutFileName = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));
const sortOps = (ops: readonly CompactionOperation[]) =>
  [...ops].sort((a, b) => `${a.partitionPath}/${a.fileId}`.localeCompare(`${b.partitionPath}/${b.fileId}`));

describe('merge-on-read compaction: ours and Hudi 0.15 agree', () => {
  let hudi: HudiHarness;
  let root: string;
  let table: string;
  let before0: Row[];

  before(async () => {
    hudi = await startHudi();
    root = tempDir('mor-compact-');
    table = join(root, 'ours');
    await hudi.write(table, { schema: SCHEMA, rows: [1, 2, 3, 4, 5, 6].map((id) => row(id, 1, 'ins')), options: options('insert') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(1, 2, 'up1'), row(2, 2, 'up1'), row(4, 2, 'up1')], options: options('upsert') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(3, 3, 'del')], options: options('delete') });
    await hudi.write(table, { schema: SCHEMA, rows: [row(5, 4, 'up2'), row(1, 4, 'up2')], options: options('upsert') });
    for (const name of ['hudi', 'crash', 'cli']) cpSync(table, join(root, name), { recursive: true });
    before0 = await spark(hudi, table);
  });

  after(async () => {
    await hudi?.close();
  });

  it("plans the operations Hudi's run_compaction schedules on a copy of the same table", async () => {
    const mine = await scheduleCompaction(await open(table), config, { lock: lockOf(await open(table)), properties: PROPS });
    assert.ok(mine, 'scheduled: 3 delta commits since the start');
    const hudiCopy = join(root, 'hudi');
    await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${hudiCopy}', options => 'hoodie.compact.inline.max.delta.commits=3')`);
    const [theirs] = pendingCompactions((await open(hudiCopy)).timeline);
    assert.ok(theirs, 'Hudi scheduled a compaction');
    const theirPlan = await readCompactionPlan(openStorage(hudiCopy), theirs.time);
    assert.deepEqual(sortOps(mine.plan.operations), sortOps(theirPlan.operations));
    assert.deepEqual({ ...mine.plan, operations: [] }, { ...theirPlan, operations: [] });
    assert.equal(mine.plan.operations.length, 2, "both partitions' file groups have logs");
  });

  it('after our compaction Spark reads the same snapshot, and read-optimized equals it', async () => {
    const current = await open(table);
    const [pending] = pendingCompactions(current.timeline);
    const result = await runCompaction(current, pending!.time, { lock: lockOf(current), properties: PROPS });
    assert.equal(result.outcome, 'committed');
    assert.equal(result.writeStats.length, 2);
    const snapshot = await spark(hudi, table);
    assert.deepEqual(withoutFileName(snapshot), withoutFileName(before0));
    const ro = await spark(hudi, table, 'read_optimized');
    assert.deepEqual(canonicalRows(ro), canonicalRows(snapshot), 'every file group was compacted: the base files hold the snapshot');
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(snapshot));
    assert.deepEqual(canonicalRows(await ours(table, 'read_optimized')), canonicalRows(ro));
    assert.ok(
      snapshot.every((r) => String(r['_hoodie_file_name']).endsWith(`_${pending!.time}.parquet`)),
      'records name the compacted base files',
    );
  });

  it('Spark writes and compacts on top of our compaction', async () => {
    await hudi.write(table, { schema: SCHEMA, rows: [row(1, 9, 'up3'), row(2, 9, 'up3')], options: options('upsert') });
    await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${table}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
    await hudi.sql(`CALL run_compaction(op => 'run', path => '${table}')`);
    const t = await open(table);
    assert.equal(t.timeline.completed().filter((i) => i.action === 'commit').length, 2, "ours and Spark's compactions");
    const snapshot = await sameAsSpark(hudi, table);
    assert.equal(snapshot.find((r) => Number(r['id']) === 1)?.['name'], 'n1-up3');
    await sameAsSpark(hudi, table, 'read_optimized');
  });

  it('a compaction that crashed after writing some output is resumed from its plan; a rolled-back one runs again', async () => {
    const crash = join(root, 'crash');
    const first = await open(crash);
    const scheduled = await scheduleCompaction(first, config, { lock: lockOf(first), properties: PROPS });
    assert.ok(scheduled);
    // The crash: inflight, and a torn output of the first operation.
    const storage = openStorage(crash);
    await startCompaction(storage, scheduled.instantTime);
    const op = scheduled.plan.operations[0]!;
    writeFileSync(join(crash, op.partitionPath, `${op.fileId}_0-9-9_${scheduled.instantTime}.parquet`), 'torn');
    // Rolled back: the torn file goes, the plan stays requested.
    const rolledBack = await rollbackCompaction(await open(crash), scheduled.instantTime, { lock: lockOf(first) });
    assert.equal(rolledBack.deleted.length, 1);
    assert.equal(pendingCompactions((await open(crash)).timeline)[0]?.state, 'REQUESTED');
    // Crash again, then resume.
    await startCompaction(storage, scheduled.instantTime);
    writeFileSync(join(crash, op.partitionPath, `${op.fileId}_0-9-9_${scheduled.instantTime}.parquet`), 'torn');
    const resumed = await runCompaction(await open(crash), scheduled.instantTime, { lock: lockOf(first), properties: PROPS });
    assert.equal(resumed.resumed, true);
    assert.equal(resumed.outcome, 'committed');
    const rows = await sameAsSpark(hudi, crash);
    assert.deepEqual(withoutFileName(rows), withoutFileName(before0));
  });

  it("on a table with Hudi's metadata table: our compaction keeps it (Hudi's validator), Spark reads the same rows", async () => {
    const mdt = join(root, 'mdt');
    const mdtOptions = (operation: string) => options(operation, { 'hoodie.table.name': 'mor_m', 'hoodie.metadata.enable': 'true' });
    await hudi.write(mdt, { schema: SCHEMA, rows: [1, 2, 3, 4].map((id) => row(id, 1, 'ins')), options: mdtOptions('insert') });
    await hudi.write(mdt, { schema: SCHEMA, rows: [row(1, 2, 'up'), row(2, 2, 'up')], options: mdtOptions('upsert') });
    const beforeRows = await spark(hudi, mdt);
    const t = await open(mdt);
    const scheduled = await scheduleCompaction(t, config, { lock: lockOf(t), force: true, properties: PROPS });
    assert.ok(scheduled);
    const result = await runCompaction(await open(mdt), scheduled.instantTime, { lock: lockOf(t), properties: PROPS });
    assert.ok(result.metadataTable?.deltaCommit !== undefined, 'a metadata-table deltacommit for the compaction');
    const report = await hudi.validateMetadataTable(mdt, ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups']);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(
      Object.entries(report.checks)
        .filter(([, check]) => check.status !== 'passed')
        .map(([name, check]) => `${name}: ${check.details}`),
      [],
    );
    const afterRows = await sameAsSpark(hudi, mdt);
    assert.deepEqual(withoutFileName(afterRows), withoutFileName(beforeRows));
  });

  it('the CLI: compact --mode scheduleAndExecute, show-compaction, and refusals', () => {
    const cli = join(root, 'cli');
    const props = join(root, 'compact.properties');
    writeFileSync(props, 'hoodie.compact.inline.max.delta.commits=10\n');
    const notDue = runCli(['compact', cli, '--mode', 'schedule', '--props', props]);
    assert.equal(notDue.code, 0, notDue.stderr);
    assert.match(notDue.stderr, /not scheduling: 4 delta commit\(s\)/);
    const scheduled = runCli(['compact', cli, '--mode', 'schedule', '--props', props, '--force']);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const shown = runCli(['show-compaction', cli, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const [plan] = jsonLines(shown.stdout);
    assert.ok(plan !== undefined, shown.stdout);
    assert.equal((plan['operations'] as unknown[]).length, 2);
    const run = runCli(['compact', cli, '--mode', 'execute', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const [summary] = jsonLines(run.stdout);
    assert.ok(summary !== undefined, run.stdout);
    assert.equal((summary['runs'] as { outcome: string }[])[0]?.outcome, 'committed');
    assert.match(runCli(['show-compaction', cli]).stdout, /no pending compaction/);
    const bad = runCli(['compact', cli, '--mode', 'sometimes']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--mode sometimes is not a compaction mode/);
  });
});

async function sameAsSpark(hudi: HudiHarness, path: string, queryType?: QueryType): Promise<Row[]> {
  const mine = await ours(path, queryType);
  assert.deepEqual(canonicalRows(mine), canonicalRows(await spark(hudi, path, queryType)), `${path} ${queryType ?? 'snapshot'}`);
  return mine;
}
