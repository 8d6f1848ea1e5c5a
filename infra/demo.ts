/**
 * `npm start`: the serverless clustering end to end on this machine. Bundled to dist/demo.mjs and run under
 * infra/with-local-stack.mjs (moto S3 + DynamoDB Local):
 * 1. a bucket and a DynamoDB lock table;
 * 2. a copy-on-write table of many small files: seed-004 users partitioned by dt, one small commit after another;
 * 3. the real state machine (infra/state-machine.asl.json) under aws-local-stepfunctions, its tasks bound to the
 *    bundled Lambda handlers (dist/functions/*.mjs), z-ordering the data by two columns;
 * 4. the before/after report: files and sizes per partition, a row check, data skipping, and what the run would
 *    cost on AWS.
 * Options: --commits N (40) --rows N per commit (250) --days N = partitions (4) --parallelism N (4)
 * --sort-columns a,b (birthday,createTime) --layout z-order|hilbert|linear.
 */

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { generateUsers, writeJsonLines } from '../lib/cli/generate.js';
import { type ClusteringReport, formatClusteringReport } from '../lib/clustering/report.js';
import { clusteringReportPath } from '../lib/clustering/report-html.js';
import { DYNAMODB_LOCK_PROVIDER, dynamoDbClientFromEnv, ensureLockTable } from '../lib/lock/index.js';
import { readSnapshot } from '../lib/read/reader.js';
import { formatCostEstimate } from '../lib/serverless/aws/cost.js';
import { describeTableServices, type TableServicesOutput } from '../lib/serverless/executions/run-output.js';
import { formatProgressEvent, runStateMachineLocally } from '../lib/serverless/local/index.js';
import type { CommitStepOutput } from '../lib/serverless/steps/clustering/commit.js';
import { openStorage, s3ClientFromEnv } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { writeBatch } from '../lib/writer/write-client.js';
import { canonicalRow, elapsed, functionBreakdown, mb, sameMultiset, say } from './demo-report.js';

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '40' },
    rows: { type: 'string', default: '250' },
    days: { type: 'string', default: '4' },
    parallelism: { type: 'string', default: '4' },
    'sort-columns': { type: 'string', default: 'birthday,createTime' },
    layout: { type: 'string', default: 'z-order' },
  },
});
const COMMITS = Number(values.commits);
const ROWS = Number(values.rows);
const DAYS = Number(values.days);
const PARALLELISM = Number(values.parallelism);
const MIB = 1024 * 1024;

interface PartitionFiles {
  readonly files: number;
  readonly bytes: number;
}

async function filesPerPartition(table: HudiTable): Promise<Map<string, PartitionFiles>> {
  const view = await (await table.reload()).fileSystemView();
  const byPartition = new Map<string, PartitionFiles>();
  for (const file of view.latestBaseFiles()) {
    const partition = file.path.slice(0, file.path.lastIndexOf('/'));
    const seen = byPartition.get(partition) ?? { files: 0, bytes: 0 };
    byPartition.set(partition, { files: seen.files + 1, bytes: seen.bytes + file.size });
  }
  return byPartition;
}

/** The rows as a sorted list of canonical JSON lines (a multiset to compare). */
async function rowMultiset(table: HudiTable): Promise<string[]> {
  const snapshot = await readSnapshot(await table.reload());
  return snapshot.rows.map(canonicalRow).sort();
}

async function main(): Promise<number> {
  const started = Date.now();
  say('hudi-serverless demo: Hudi clustering on Step Functions + Lambda, run on this machine');
  say(`  S3 ${process.env['AWS_ENDPOINT_URL_S3'] ?? '(AWS)'}   DynamoDB ${process.env['AWS_ENDPOINT_URL_DYNAMODB'] ?? '(AWS)'}`);
  say();

  // 1. Bucket and lock table.
  const bucket = `hudi-demo-${randomUUID().slice(0, 8)}`;
  const lockTable = 'hudi-demo-locks';
  await s3ClientFromEnv().send(new CreateBucketCommand({ Bucket: bucket }));
  await ensureLockTable(dynamoDbClientFromEnv(), lockTable);
  const tablePath = `s3://${bucket}/tables/users`;
  say(`1. bucket s3://${bucket}, DynamoDB lock table ${lockTable}`);

  // 2. Many small commits: small-file handling off, so every commit adds a file to each partition it touches.
  const properties = new Map([
    ['hoodie.table.name', 'users'],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'createTime'],
    ['hoodie.datasource.write.hive_style_partitioning', 'true'],
    ['hoodie.parquet.small.file.limit', '0'],
    ['hoodie.write.lock.provider', DYNAMODB_LOCK_PROVIDER],
    ['hoodie.write.lock.dynamodb.table', lockTable],
  ]);
  const storage = openStorage(tablePath);
  const scratch = await mkdtemp(join(tmpdir(), 'hudi-demo-'));
  const writeStarted = Date.now();
  say(`2. writing ${COMMITS} commits of ${ROWS} seed-004 users each (dt over ${DAYS} days) into ${tablePath}`);
  try {
    for (let commit = 0; commit < COMMITS; commit++) {
      const file = join(scratch, `batch-${commit}.jsonl`);
      await writeJsonLines(file, generateUsers({ count: ROWS, seed: 4 + commit, idStart: 1 + commit * ROWS, days: DAYS, startDate: '2024-01-01' }));
      await writeBatch(storage, { input: { file, format: 'jsonl' }, operation: 'insert', properties });
      if ((commit + 1) % 10 === 0 || commit + 1 === COMMITS) say(`   ${commit + 1}/${COMMITS} commits (${elapsed(writeStarted)})`);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const table = await HudiTable.open(storage);
  const before = await filesPerPartition(table);
  const rowsBefore = await rowMultiset(table);
  say(`   ${[...before.values()].reduce((sum, p) => sum + p.files, 0)} base files, ${rowsBefore.length} rows`);
  say();

  // 3. The state machine.
  const sortColumns = values['sort-columns'];
  const clustering = {
    'hoodie.layout.optimize.strategy': values.layout,
    'hoodie.clustering.plan.strategy.sort.columns': sortColumns,
    // SAMPLE maps each column to its rank among sampled bounds first, so both columns weigh alike in the curve
    // (DIRECT interleaves raw values, and a one-day createTime range would leave the order to birthday alone).
    'hoodie.layout.optimize.curve.build.method': 'SAMPLE',
    // Sized for this small table: about 20 input files per group, each group sorted into 8 files (a group's output
    // files split its curve into ranges, which is what lets a query skip files).
    'hoodie.clustering.plan.strategy.max.bytes.per.group': String(8 * MIB),
    'hoodie.clustering.plan.strategy.target.file.max.bytes': String(1 * MIB),
    'hoodie.clustering.max.parallelism': String(PARALLELISM),
  };
  say(`3. clustering through the state machine: ${values.layout} on ${sortColumns}, up to ${PARALLELISM} groups at once`);
  for (const [key, value] of Object.entries(clustering)) say(`     ${key}=${value}`);
  const run = await runStateMachineLocally(
    { tablePath, properties: clustering },
    {
      environment: { LOCK_TABLE: lockTable },
      onProgress: (event) => {
        const line = formatProgressEvent(event);
        if (line !== undefined) say(`   ${line}`);
      },
    },
  );
  say();
  if (run.status !== 'SUCCEEDED') {
    say(`the execution failed: ${run.error ?? ''}: ${run.cause ?? ''}`);
    return 1;
  }
  const output = run.output as TableServicesOutput;
  const committed: CommitStepOutput | undefined = output.clustering;
  if (committed === undefined) {
    say(`nothing was clustered: ${output.plan !== undefined && 'reason' in output.plan ? output.plan.reason : (output.plan?.status ?? 'no plan')}`);
    return 1;
  }

  // 4. The report.
  const after = await filesPerPartition(table);
  const rowsAfter = await rowMultiset(table);
  say(`4. before → after (replacecommit ${committed.instant}: ${committed.replacedFileGroups} file groups replaced by ${committed.newFiles})`);
  say(`   ${'partition'.padEnd(16)}${'files'.padEnd(12)}size`);
  for (const partition of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const was = before.get(partition) ?? { files: 0, bytes: 0 };
    const is = after.get(partition) ?? { files: 0, bytes: 0 };
    say(`   ${partition.padEnd(16)}${`${was.files} → ${is.files}`.padEnd(12)}${mb(was.bytes)} → ${mb(is.bytes)}`);
  }
  const rowsOk = sameMultiset(rowsBefore, rowsAfter);
  say(`   rows: ${rowsBefore.length} before, ${rowsAfter.length} after — ${rowsOk ? 'the same rows (compared as a multiset)' : 'DIFFERENT'}`);
  if (committed.report !== undefined) {
    say();
    for (const line of formatClusteringReport(committed.report as ClusteringReport)
      .trimEnd()
      .split('\n'))
      say(`   ${line}`);
  }
  say();
  say("   after the commit, the same run cleaned and archived (Hudi's automatic services, at its defaults):");
  for (const line of describeTableServices(output)) say(`   ${line}`);
  say("   (Every base file carries Hudi's bloom filter of hoodie.index.bloom.num_entries=60000 keys, about 430 KB: it is most of these tiny files' size.)");
  if (committed.htmlReport !== undefined && 'uri' in committed.htmlReport) {
    // The commit wrote the page into the table (.reports/clustering/); a local copy to open in a browser.
    const local = join(process.cwd(), '.tmp', 'reports', `clustering-${committed.instant}.html`);
    await storage.downloadFile(clusteringReportPath(committed.instant), local);
    say(`   HTML report: ${local}`);
    say(`     (in the table: ${committed.htmlReport.uri})`);
  } else if (committed.htmlReport !== undefined) {
    say(`   the HTML report was not written: ${committed.htmlReport.error}`);
  }
  say();
  say(
    `5. the run: ${(run.durationMs / 1000).toFixed(1)} s here, ${run.invocations.length} Lambda invocations (durations measured here, ${PARALLELISM} groups at once on this machine's cores)`,
  );
  for (const line of functionBreakdown(run.invocations)) say(line);
  for (const line of formatCostEstimate(run.cost).trimEnd().split('\n')) say(`   ${line}`);
  say();
  say(`done in ${elapsed(started)}`);
  return rowsOk ? 0 : 1;
}

process.exitCode = await main();
