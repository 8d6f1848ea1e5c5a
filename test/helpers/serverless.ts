/**
 * For the serverless tests: fresh bundles of the Lambda handlers, S3 tables copied up from a local template table
 * and back down for the independent reader, and a DynamoDB lock table per test file.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { dynamoDbClientFromEnv, ensureLockTable } from '../../lib/lock/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { REPO_ROOT } from './fixtures.js';
import { independentLatestBaseFiles, pyarrowRead } from './oracle.js';

const HANDLERS = ['plan', 'execute-group', 'commit', 'rollback', 'trigger', 'clean-prepare', 'clean-plan', 'clean-schedule', 'clean-execute', 'clean-complete', 'archive', 'ingest'];

function newestMtime(dir: string, suffix: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix)) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** dist/functions/*.mjs as `npm run build` makes them, rebuilt when a source is newer (the tests bind the bundles). */
export function ensureBundles(): string {
  const functionsDir = join(REPO_ROOT, 'dist', 'functions');
  const sources = Math.max(newestMtime(join(REPO_ROOT, 'lib'), '.ts'), newestMtime(join(REPO_ROOT, 'functions'), '.ts'));
  const oldestBundle = Math.min(
    ...HANDLERS.map((name) => {
      try {
        return statSync(join(functionsDir, `${name}.mjs`)).mtimeMs;
      } catch {
        return 0;
      }
    }),
  );
  if (oldestBundle < sources) execFileSync(process.execPath, [join(REPO_ROOT, 'infra', 'build.mjs')], { stdio: 'pipe' });
  return functionsDir;
}

function localFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** Upload the local table's files that `include` accepts (all by default), in parallel. */
export async function uploadFiles(localDir: string, storage: Storage, include: (path: string) => boolean = () => true): Promise<void> {
  await Promise.all(localFiles(localDir).filter(include).map((path) => storage.uploadFile(path, join(localDir, path))));
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
