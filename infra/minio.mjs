#!/usr/bin/env node
// Usage: node infra/minio.mjs        builds the MinIO server (if not cached yet) and prints its path
//
// A real MinIO server for the tests that also run against it (`node infra/with-local-stack.mjs --minio …`, the
// MinIO phase of infra/run-tests.mjs). Built from source with `go install github.com/minio/minio@<MINIO_VERSION>`
// from the Go module proxy (Go 1.24+), cached under .cache/minio/<version>/ (or HUDI_MINIO_DIR): a few minutes the
// first time on a fresh machine, nothing after; with Go's module and build caches warm, a fresh clone rebuilds quickly.
// MinIO is a separate program under the AGPL-3.0, run unmodified as a local test server; nothing of it is linked into
// or shipped with this package.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The module version `go install` builds (MinIO tags releases as RELEASE.<date>, so the proxy serves pseudo-versions). */
export const MINIO_VERSION = 'v0.0.0-20260212201848-7aac2a2c5b7c';
export const MINIO_MODULE = 'github.com/minio/minio';
const CACHE_DIR = process.env.HUDI_MINIO_DIR || join(ROOT, '.cache', 'minio');

/** Where the built binary is (whether or not it exists yet). */
export function minioBinaryPath() {
  return join(CACHE_DIR, MINIO_VERSION, 'minio');
}

/**
 * The MinIO binary, built first if it is not cached.
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {string}
 */
export function ensureMinio(options = {}) {
  const log = options.log ?? ((line) => process.stderr.write(`minio: ${line}\n`));
  const binary = minioBinaryPath();
  if (existsSync(binary)) return binary;
  const go = process.env.GO || 'go';
  const version = spawnSync(go, ['version'], { encoding: 'utf8' });
  if (version.status !== 0) {
    throw new Error(`${go} not found: building MinIO needs Go 1.24+ (install it, e.g. \`apt-get install -y golang\`, or set GO to its path)`);
  }
  // Built into a scratch folder and moved into place, so an interrupted build leaves no half binary behind.
  const scratch = join(CACHE_DIR, `${MINIO_VERSION}.partial-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const started = Date.now();
  log(`go install ${MINIO_MODULE}@${MINIO_VERSION} (${version.stdout.trim()}; first time only)`);
  try {
    execFileSync(go, ['install', `${MINIO_MODULE}@${MINIO_VERSION}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // No flags beyond Go's defaults: a build in a fresh clone then reuses Go's build cache of the last one.
      env: { ...process.env, GOBIN: scratch, CGO_ENABLED: '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    const output = /** @type {{ stderr?: Buffer }} */ (error).stderr?.toString().trim().split('\n').slice(-30).join('\n') ?? '';
    throw new Error(`go install ${MINIO_MODULE}@${MINIO_VERSION} failed:\n${output}`, { cause: error });
  }
  mkdirSync(dirname(binary), { recursive: true });
  renameSync(join(scratch, 'minio'), binary);
  rmSync(scratch, { recursive: true, force: true });
  log(`built ${binary} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return binary;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(`${ensureMinio()}\n`);
  } catch (error) {
    process.stderr.write(`minio: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
