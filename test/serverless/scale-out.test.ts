// Inline or Distributed Map (lib/serverless/steps/scale-out.ts): the threshold, the concurrency bound, and the manifest the
// Distributed Map's ItemReader reads (written to moto S3 for an S3 table; never for a table on a local disk).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HudiError } from '../../lib/errors.js';
import {
  chooseMap,
  groupManifestPath,
  LAMBDA_CONCURRENCY_ENV,
  mapConcurrency,
  SERVERLESS_CLUSTERING_KEYS,
  scaleOutSettings,
} from '../../lib/serverless/steps/scale-out.js';
import { openStorage } from '../../lib/storage/index.js';
import { tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';

const KEY = SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups.key;
const INSTANT = '20260101120000000';
const groups = (count: number) => Array.from({ length: count }, (_, index) => ({ index }));

test('settings: the threshold from the properties, the Lambda share from the environment, one error naming each bad value', () => {
  assert.deepEqual(scaleOutSettings(new Map(), {}), { inlineMapMaxGroups: 40, lambdaConcurrency: undefined });
  assert.deepEqual(scaleOutSettings(new Map([[KEY, '3']]), { [LAMBDA_CONCURRENCY_ENV]: '25' }), { inlineMapMaxGroups: 3, lambdaConcurrency: 25 });
  assert.throws(
    () => scaleOutSettings(new Map([[KEY, '0']]), {}),
    (error: unknown) => error instanceof HudiError && error.message.includes(KEY),
  );
  assert.throws(
    () => scaleOutSettings(new Map(), { [LAMBDA_CONCURRENCY_ENV]: 'many' }),
    (error: unknown) => error instanceof HudiError && error.message.includes(LAMBDA_CONCURRENCY_ENV),
  );
  assert.equal(mapConcurrency(15, { inlineMapMaxGroups: 40, lambdaConcurrency: undefined }), 15);
  assert.equal(mapConcurrency(500, { inlineMapMaxGroups: 40, lambdaConcurrency: 100 }), 100);
});

test('an S3 table: up to the threshold inline with no manifest; beyond it a manifest of the groups and the Distributed Map', async () => {
  const storage = openStorage(await s3TablePath('scale-out'));
  const settings = scaleOutSettings(new Map([[KEY, '3']]), {});
  assert.deepEqual(await chooseMap(storage, INSTANT, groups(3), settings), { mapMode: 'INLINE' });
  assert.equal(await storage.head(groupManifestPath(INSTANT)), undefined);
  const chosen = await chooseMap(storage, INSTANT, [{ index: 0 }, { index: 2 }, { index: 5 }, { index: 7 }], settings);
  assert.equal(chosen.mapMode, 'DISTRIBUTED');
  assert.equal(`s3://${chosen.manifest!.bucket}/${chosen.manifest!.key}`, storage.uriOf(groupManifestPath(INSTANT)));
  assert.deepEqual(JSON.parse(Buffer.from(await storage.get(groupManifestPath(INSTANT))).toString('utf8')), [
    { index: 0 },
    { index: 2 },
    { index: 5 },
    { index: 7 },
  ]);
});

test('a table on a local disk stays inline, with a note saying why', async () => {
  const storage = openStorage(tempDir('scale-out-local-'));
  const chosen = await chooseMap(storage, INSTANT, groups(5), scaleOutSettings(new Map([[KEY, '3']]), {}));
  assert.equal(chosen.mapMode, 'INLINE');
  assert.match(chosen.note ?? '', /reads its items from S3 only/);
  assert.equal(await storage.head(groupManifestPath(INSTANT)), undefined);
});
