/**
 * For the serverless tests: fresh bundles of the Lambda handlers, S3 tables copied up from a local template table
 * and back down for the independent reader, and a DynamoDB lock table per test file.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbClientFromEnv, ensureLockTable } from '../../lib/lock/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { REPO_ROOT } from './fixtures.js';
import { independentLatestBaseFiles, pyarrowRead } from './oracle.js';

/**
 * `sam build`'s output (.aws-sam/build: <Function>/<name>.mjs and the DuckDB layers), rebuilt by infra/sam-build.mjs
 * when a source, the template or the Makefile is newer: the state-machine tests run the artefact `sam deploy` ships.
 */
export function ensureBundles(): string {
  execFileSync(process.execPath, [join(REPO_ROOT, 'infra', 'sam-build.mjs'), '--if-stale'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return SAM_BUILD_DIR;
}

export const SAM_BUILD_DIR = join(REPO_ROOT, '.aws-sam', 'build');

function localFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** Upload the local table's files that `include` accepts (all by default), in parallel. */
export async function uploadFiles(localDir: string, storage: Storage, include: (path: string) => boolean = () => true): Promise<void> {
  await Promise.all(
    localFiles(localDir)
      .filter(include)
      .map((path) => storage.uploadFile(path, join(localDir, path))),
  );
}

/** Copy a table from storage into a local folder (the independent reader needs local files). */
export async function downloadTable(storage: Storage, dir: string): Promise<void> {
  const objects = await storage.listRecursive('');
  await Promise.all(objects.map((object) => storage.downloadFile(object.path, join(dir, object.path))));
}

/** The rows of the table's latest base files, read by pyarrow, as sorted JSON lines without `_hoodie_file_name`. */
export function oracleRows(dir: string): string[] {
  return pyarrowRead(independentLatestBaseFiles(dir))
    .map((row) => {
      const { _hoodie_file_name: _ignored, ...rest } = row;
      return JSON.stringify(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b))));
    })
    .sort();
}

/** A lock table of its own for a test file (DynamoDB Local). */
export async function createLockTable(prefix: string): Promise<string> {
  const name = `${prefix}-${randomUUID().slice(0, 8)}`;
  await ensureLockTable(dynamoDbClientFromEnv(), name);
  return name;
}

/** Drop a lock table {@link createLockTable} made (none when undefined: its `before` failed first); errors ignored. */
export async function dropLockTable(name: string | undefined): Promise<void> {
  if (name === undefined) return;
  await dynamoDbClientFromEnv()
    .send(new DeleteTableCommand({ TableName: name }))
    .catch(() => undefined);
}
