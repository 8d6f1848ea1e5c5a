/**
 * Our DynamoDB lock beside Hudi's own DynamoDBBasedLockProvider (Hudi 0.15's hudi-aws, with the AWS DynamoDB Lock
 * Client it runs on), on one lock table of DynamoDB Local and one partition key:
 * - each side's held lock keeps the other out, and is taken once released (Hudi's provider driven from the JVM);
 * - Spark writers and our writer commit concurrently to one copy-on-write table with the metadata table on, each
 *   through its own provider: every commit that succeeded is read exactly once by Spark and by us, a write that
 *   failed failed as a write conflict and left nothing visible, and Hudi's metadata-table validator agrees with
 *   storage (two writers committing at once would have lost one's metadata-table update).
 *
 * The JVM has the jar set hudi-aws-0.15.0 on its classpath (test/hudi/hudi-aws-0.15.0.pom.xml).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { ConflictError } from '../../lib/errors.js';
import { DYNAMODB_LOCK_PROVIDER, dynamoDbLockFromProperties } from '../../lib/lock/index.js';
import { parseCommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { type HudiHarness, type JavaExpression, startHudi } from '../helpers/hudi.js';
import { ourWrite, parquetFromRows } from '../helpers/interop-writer.js';
import { assertCommittedRowsRead, LOCK_ROUND_COLUMNS, lockRoundRow, lockRoundTableOptions, writeConcurrently } from '../helpers/lock-rounds.js';
import { tempDir } from '../helpers/paths.js';

const HUDI_PROVIDER = 'org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider';
const LOCK_TABLE = `hudi_locks_${randomUUID().slice(0, 8)}`;
const COLUMNS = LOCK_ROUND_COLUMNS;
const SPARK_SCHEMA = 'id BIGINT, name STRING, seq BIGINT, dt STRING';

/** The lock keys both sides read: Hudi's names, one table and partition key. */
function lockProperties(partitionKey: string): Record<string, string> {
  const endpoint = process.env['AWS_ENDPOINT_URL_DYNAMODB'];
  assert.ok(endpoint, 'AWS_ENDPOINT_URL_DYNAMODB (the local stack) is set');
  return {
    'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER,
    'hoodie.write.lock.dynamodb.table': LOCK_TABLE,
    'hoodie.write.lock.dynamodb.partition_key': partitionKey,
    'hoodie.write.lock.dynamodb.region': process.env['AWS_REGION'] ?? 'us-east-1',
    'hoodie.write.lock.dynamodb.endpoint_url': endpoint,
    // Hudi's provider takes its lease from the wait time (a third of it between heartbeats); ours waits that long.
    // Both leases are long enough that no busy machine lets a heartbeat lapse.
    'hoodie.write.lock.wait_time_ms': '20000',
    'hoodie.write.lock.dynamodb.lease_duration_ms': '15000',
  };
}

const MILLISECONDS: JavaExpression = { static: 'java.util.concurrent.TimeUnit.valueOf', args: ['MILLISECONDS'] };

/** Hudi's DynamoDBBasedLockProvider in the harness's JVM, kept under `name`. */
async function hudiLockProvider(hudi: HudiHarness, name: string, properties: Record<string, string>): Promise<void> {
  await hudi.jvmEval({ keep: `${name}-props`, value: { new: 'org.apache.hudi.common.config.TypedProperties' } });
  for (const [key, value] of Object.entries(properties)) await hudi.jvmEval({ call: 'setProperty', on: { kept: `${name}-props` }, args: [key, value] });
  const configuration: JavaExpression = { new: 'org.apache.hudi.common.config.LockConfiguration', args: [{ kept: `${name}-props` }] };
  await hudi.jvmEval({ keep: name, value: { new: HUDI_PROVIDER, args: [configuration, null] } });
}

async function hudiTryLock(hudi: HudiHarness, name: string, waitMs: number): Promise<boolean> {
  return (await hudi.jvmEval({ call: 'tryLock', on: { kept: name }, args: [{ long: String(waitMs) }, MILLISECONDS] })) === true;
}

const row = lockRoundRow;

describe("our DynamoDB lock beside Hudi 0.15's DynamoDBBasedLockProvider", () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-dynamodb-lock-');
  before(async () => {
    hudi = await startHudi({ jarSets: ['hudi-aws-0.15.0'] });
  });
  after(async () => {
    await hudi?.close();
  });

  it("each side's held lock keeps the other out; a released one is taken", async (t) => {
    const started = Date.now();
    const step = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
    const properties = lockProperties('exclusion');
    // Hudi's provider creates the lock table when it is missing, as it does for a first Spark writer.
    await hudiLockProvider(hudi, 'hudi-lock', properties);
    step("Hudi's provider is open");
    const ours = dynamoDbLockFromProperties(new Map(Object.entries(properties)), 'exclusion');

    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 1000), true, "Hudi's provider takes the free lock");
    await assert.rejects(ours.acquire({ waitMs: 3000 }), ConflictError, "ours waits, then refuses: Hudi's holder keeps renewing");
    await hudi.jvmEval({ call: 'unlock', on: { kept: 'hudi-lock' } });
    step("Hudi's provider held the lock and released it");

    const lease = await ours.acquire({ waitMs: 5000 });
    // The lock client waits out our lease before it would steal; our heartbeat renews it meanwhile.
    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 1000), false, "Hudi's provider does not take the lock we hold");
    step('ours held the lock');
    await lease.assertHeld();
    await lease.release();
    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 1000), true, "Hudi's provider takes the lock we released");
    await hudi.jvmEval({ call: 'close', on: { kept: 'hudi-lock' } });
    const again = await ours.acquire({ waitMs: 5000 });
    await again.release();
  });

  it('Spark writers and ours commit concurrently through the two providers: nothing lost, nothing twice', async (t) => {
    const name = 'concurrent';
    const table = join(dir, name);
    const lock = lockProperties(name);
    const options = {
      ...lockRoundTableOptions(name),
      ...lock,
    };
    const expected = new Map<number, Row>();
    const sparkWrite = async (rows: Row[], operation: string): Promise<void> => {
      await hudi.write(table, { schema: SPARK_SCHEMA, rows, options: { ...options, 'hoodie.datasource.write.operation': operation } });
      for (const each of rows) expected.set(Number(each['id']), each);
    };
    await sparkWrite(
      [1, 2, 3, 4].map((id) => row(id, 'spark', 0)),
      'insert',
    );

    const rounds = { sparkRounds: 3, ourRounds: 6 };
    const failures = await writeConcurrently(
      {
        ...rounds,
        sparkWrite: (rows) => sparkWrite(rows, 'upsert'),
        ourWrite: async (rows) => {
          await ourWrite(table, 'upsert', await parquetFromRows(dir, rows, COLUMNS), new Map(Object.entries(options)));
        },
      },
      expected,
    );

    await assertCommittedRowsRead(hudi, table, expected, failures, rounds.sparkRounds + rounds.ourRounds);

    // Who committed when (each writer writes its own partition): the run's interleaving, for the log.
    const commits = readdirSync(join(table, '.hoodie'))
      .filter((file) => /^\d{17}\.commit$/.test(file))
      .sort()
      .map((file) => Object.keys(parseCommitMetadata(readFileSync(join(table, '.hoodie', file), 'utf8'), file).partitionToWriteStats).join('+'));
    t.diagnostic(`commits in instant order: ${commits.join(', ')}; failed: ${failures.join(', ') || 'none'}`);

    const report = await hudi.validateMetadataTable(table);
    assert.ok(report.ok, `Hudi's metadata-table validator: ${report.errors.join('\n')}`);
  });
});
