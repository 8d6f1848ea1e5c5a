/**
 * Paths to the shared Hudi fixtures and unzipped copies of the fixture tables for tests.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, tempDir } from './paths.js';

export { REPO_ROOT, tempDir };
export const SHARED = resolve(REPO_ROOT, '../shared');
export const HUDI_FIXTURES = join(SHARED, 'fixtures/hudi');
export const SAMPLE_TABLES = join(HUDI_FIXTURES, 'tables/hudi-rs/crates/test/data/sample_table');

if (!existsSync(HUDI_FIXTURES)) {
  throw new Error(`Hudi fixtures not found at ${HUDI_FIXTURES}: the tests expect the shared/ folder beside the repository`);
}

/** Unzip a fixture zip into a folder, leaving out the zips' macOS `__MACOSX/` copies (not table files). */
export function unzipFixture(zip: string, into: string): void {
  execFileSync('unzip', ['-q', '-o', zip, '-d', into, '-x', '__MACOSX/*']);
}

/** Unzip a fixture zip (path relative to sample_table/, e.g. `cow/v6_nonpartitioned.zip`) and return the table folder. */
export function unzipSampleTable(relativeZip: string, into: string = tempDir()): string {
  unzipFixture(join(SAMPLE_TABLES, relativeZip), into);
  const name = relativeZip.slice(relativeZip.lastIndexOf('/') + 1).replace(/\.zip$/, '');
  return join(into, name);
}
