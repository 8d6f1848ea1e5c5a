/**
 * The repository root and temp folders for tests (removed when the test process exits).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp dir, removed at process exit. */
export function tempDir(prefix = 'hudi-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * Every file under a table folder with its size, sorted: compared before and after a refused operation to show that
 * nothing was written (the storage lock's own lease files left out).
 */
export function tableFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => !path.includes('/.hoodie/.serverless-lock/'))
    .map((path) => `${path.slice(dir.length)} ${statSync(path).size}`)
    .sort();
}

/**
 * Every file under a folder with its whole content (hashed), sorted: equal before and after a refused operation
 * only if the table is byte for byte as it was, timeline, markers and locks included. [] when the folder is absent.
 */
export function tableBytes(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => `${relative(dir, path)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`)
    .sort();
}
