/**
 * Writes `test/fixtures/hudi-1x-history/<version>/`: the LSM history (`.hoodie/timeline/history/`, every file as
 * Hudi left it, unreferenced ones included), `hoodie.properties`, and `hudi-archived-timeline.json` — what Hudi's
 * own ArchivedTimelineV2 reports for that history (see test/helpers/hudi-1x-history.ts), its metadata bytes as
 * SHA-256 digests. Hadoop's `.crc` side files are left out.
 *
 *   node --import tsx test/hudi/make-1x-history-fixtures.ts 1.0.2 1.1.1
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { HUDI_VERSIONS, type HudiVersion, startHudi } from '../helpers/hudi.js';
import { hudiArchivedInstants, writeArchivingTable } from '../helpers/hudi-1x-history.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-history');
/** Enough writes for level-0 files, their compaction into level 1, level 1 into level 2, and cleaned versions. */
const WRITES = 28;

/** `sha256:<hex> <length>`, as the unit test computes it from our bytes. */
function digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')} ${bytes.length}`;
}

for (const version of process.argv.slice(2)) {
  if (!(HUDI_VERSIONS as readonly string[]).includes(version)) throw new Error(`unknown Hudi version ${version}`);
  const hudi = await startHudi({ hudiVersion: version as HudiVersion });
  try {
    const table = join(tempDir('hudi-1x-history-'), 'archived');
    await writeArchivingTable(hudi, table, 'archived', WRITES);
    const out = join(FIXTURES, version);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    // Hadoop's local checksum files (`.<name>.crc`) are no part of the history: S3 has none.
    cpSync(join(table, '.hoodie/timeline/history'), join(out, 'history'), { recursive: true, filter: (file) => !basename(file).endsWith('.crc') });
    cpSync(join(table, '.hoodie/hoodie.properties'), join(out, 'hoodie.properties'));
    const instants = await hudiArchivedInstants(hudi, table);
    // The metadata bytes as their SHA-256 and length: the fixture stays small, and equal bytes still compare equal.
    const summary = instants.map(({ metadata, ...instant }) => ({ ...instant, metadata: metadata === null ? null : digest(Buffer.from(metadata, 'base64')) }));
    writeFileSync(join(out, 'hudi-archived-timeline.json'), `${JSON.stringify(summary, null, 2)}\n`);
    console.log(`${version}: ${instants.length} archived instants`);
  } finally {
    await hudi.close();
  }
}
