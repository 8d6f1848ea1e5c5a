// Many tables, one deployment (lib/serverless/aws/registry.ts): three tables in two buckets on moto, registered in one
// S3 document with their own schedules and properties; one scheduled trigger tick fans out over the two that are
// due, and their runs (the real ASL under aws-local-stepfunctions, the bundled handlers, each resolving its table
// from the registry) cluster them; the third is left alone. A commit event or a step for an unregistered table is
// refused with an UnregisteredTableError.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { UnregisteredTableError } from '../../lib/errors.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import { isDue, parseRegistry, registryFromEnv, tableOfKey } from '../../lib/serverless/aws/registry.js';
import { sfnClientFromEnv } from '../../lib/serverless/aws/sfn-client.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { lambdaContext, loadBundledHandler, startLocalStepFunctionsEndpoint } from '../../lib/serverless/local/index.js';
import { StepFunctionsStarter, triggerWithRegistry } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { tempDir } from '../helpers/fixtures.js';
import { testBucket } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { createSmallFilesTable, type SmallFilesTable } from '../helpers/small-files-table.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const quiet = { info: () => undefined, warn: () => undefined };

let functionsDir: string;
let lockTable: string;
let base: SmallFilesTable;

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-registry');
  // Six commits: past the trigger's default threshold (hoodie.clustering.async.max.commits=4), so a due table clusters.
  base = await createSmallFilesTable({ dir: tempDir('registry-base-'), partitions: 2, commits: 6, rowsPerFile: 20 });
});

after(async () => {
  await dropLockTable(lockTable);
});

describe('table registry', () => {
  test('one scheduled tick clusters the two registered tables that are due, in two buckets; an unregistered table is refused', async () => {
    const s3 = s3ClientFromEnv();
    const bucketA = await testBucket();
    const bucketB = `hudi-registry-${randomUUID().slice(0, 8)}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucketB }));
    const run = randomUUID().slice(0, 8);
    const paths = {
      hourly: `s3://${bucketA}/tables/hourly-${run}`,
      quarterly: `s3://${bucketB}/lake/quarterly-${run}`,
      daily: `s3://${bucketB}/lake/daily-${run}`,
    };
    for (const path of Object.values(paths)) await uploadFiles(base.dir, openStorage(path));
    const registryKey = `config/registry-${run}.json`;
    await s3.send(
      new PutObjectCommand({
        Bucket: bucketA,
        Key: registryKey,
        Body: JSON.stringify({
          tables: [
            { path: paths.hourly, schedule: 'rate(1 hour)', properties: { 'hoodie.clustering.plan.strategy.sort.columns': 'birthday' } },
            { path: paths.quarterly, schedule: 'rate(15 minutes)', properties: { 'hoodie.clustering.plan.strategy.sort.columns': 'createTime' } },
            { path: paths.daily, schedule: 'rate(1 day)' },
          ],
        }),
      }),
    );

    const endpoint = await startLocalStepFunctionsEndpoint({ functionsDir, retryPauseMs: 20 });
    // A deployment with a registry and no TABLE_PATH of its own.
    const environment: Record<string, string> = {
      TABLE_REGISTRY: `s3://${bucketA}/${registryKey}`,
      TRIGGER_SCHEDULE: 'rate(15 minutes)',
      STATE_MACHINE_ARN: endpoint.stateMachineArn,
      AWS_ENDPOINT_URL_SFN: endpoint.endpoint,
      LOCK_TABLE: lockTable,
      CLUSTERING_PROPERTIES: '{}',
    };
    const saved = Object.fromEntries([...Object.keys(environment), 'TABLE_PATH'].map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    delete process.env['TABLE_PATH'];
    try {
      const clients = serviceClientsFromEnv();
      const registry = (await registryFromEnv(process.env, clients.s3))!;
      // 10:00 UTC: a multiple of an hour and of 15 minutes fell in the tick (09:45, 10:00]; a multiple of a day did not.
      const now = new Date('2026-03-02T10:00:00Z');
      assert.deepEqual(
        registry.tables.map((table) => isDue(table, now, 15)),
        [true, true, false],
      );

      const starter = new StepFunctionsStarter(sfnClientFromEnv(process.env), endpoint.stateMachineArn);
      const fired = await triggerWithRegistry({ kind: 'schedule' }, { env: process.env, clients, log: quiet, starter, now: () => now, registry });
      assert.equal(fired.status, 'FANNED_OUT', fired.reason);
      assert.deepEqual(
        fired.tables?.map((table) => [table.tablePath, table.due, table.outcome?.status]),
        [
          [paths.hourly, true, 'STARTED'],
          [paths.quarterly, true, 'STARTED'],
          [paths.daily, false, undefined],
        ],
      );
      await endpoint.settled();
      const executions = endpoint.executions();
      assert.equal(executions.length, 2, 'two runs');
      for (const execution of executions) assert.equal(execution.status, 'SUCCEEDED', `${execution.result?.error}: ${execution.result?.cause}`);
      const sortColumns = new Map(
        executions.map((execution) => {
          const output = execution.result!.output as TableServicesOutput;
          return [output.clustering!.tablePath, output.clustering!.report?.sortColumns];
        }),
      );
      assert.deepEqual(
        sortColumns,
        new Map([
          [paths.hourly, ['birthday']],
          [paths.quarterly, ['createTime']],
        ]),
        "each run used its table's registered properties",
      );
      for (const [path, clustered] of [
        [paths.hourly, 1],
        [paths.quarterly, 1],
        [paths.daily, 0],
      ] as const) {
        const table = await HudiTable.open(openStorage(path));
        assert.equal(table.timeline.completed().filter((instant) => instant.action === 'replacecommit').length, clustered, path);
      }

      // A commit event maps its key to its table; one under no registered table is refused.
      const [, ...dailyKey] = paths.daily.slice('s3://'.length).split('/');
      assert.equal(tableOfKey(registry, bucketB, `${dailyKey.join('/')}/.hoodie/${base.instants.at(-1)}.commit`).path, paths.daily);
      await assert.rejects(
        triggerWithRegistry(
          { kind: 'object-created', bucket: bucketB, key: `lake/unregistered-${run}/.hoodie/20260101000000000.commit` },
          { env: process.env, clients, log: quiet, starter, registry },
        ),
        (error: unknown) =>
          error instanceof UnregisteredTableError &&
          error.tablePath === `s3://${bucketB}/lake/unregistered-${run}` &&
          /is not registered with this deployment/.test(error.message),
      );
      // A step (the bundled plan handler) for an unregistered table: refused before the table is read.
      const plan = await loadBundledHandler('plan', functionsDir);
      await assert.rejects(
        plan({ input: { tablePath: `s3://${bucketB}/lake/unregistered-${run}` }, runId: randomUUID() }, lambdaContext('plan')),
        (error: unknown) => error instanceof Error && /is not registered with this deployment/.test(error.message),
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await endpoint.close();
    }
  });

  test('a registry document with a mistake is refused naming the entry', () => {
    assert.throws(
      () => parseRegistry('{"tables": [{"path": "s3://b/t", "schedule": "every hour"}]}', 's3://c/r.json'),
      /s3:\/\/c\/r\.json tables\[0\]: schedule "every hour" is not a rate expression/,
    );
    assert.throws(() => parseRegistry('{"tables": [{"path": "s3://b/t"}, {"path": "s3://b/t/"}]}', 'r'), /s3:\/\/b\/t is registered twice/);
    assert.throws(() => parseRegistry('{"tables": [{"path": "s3://b/t"}, {"path": "s3://b/t/inner"}]}', 'r'), /s3:\/\/b\/t\/inner lies inside s3:\/\/b\/t/);
    assert.throws(() => parseRegistry('{"tables": [{"path": "/local/table"}]}', 'r'), /is not an s3:\/\/bucket\/prefix table path/);
  });
});
