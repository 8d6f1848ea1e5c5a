/**
 * Writing timeline layout 2 (Hudi 1.x) without Spark: commit metadata we encode holds, field for field, the Avro
 * record Hudi 1.0.2 and 1.1.1 wrote for the same metadata (test/fixtures/hudi-1x-tables/), and a completed instant
 * is named with a completion time later than every time in the folder, once.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConflictError } from '../../lib/errors.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { decodeCommitMetadataAvro } from '../../lib/timeline/avro-files.js';
import { decodeLayout2CommitMetadata, encodeLayout2CommitMetadata, parseLayout2FileName, timelineLayout2 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../../lib/timeline/transitions.js';
import { HUDI_1X_TABLES, HUDI_1X_VERSIONS } from '../helpers/hudi-1x-fixtures.js';
import { REPO_ROOT, tempDir } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/hudi-1x-tables');
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));

describe('layout-2 commit metadata: what we encode is the record Hudi wrote', () => {
  for (const version of HUDI_1X_VERSIONS) {
    for (const name of HUDI_1X_TABLES) {
      const dir = join(FIXTURES, version, name, 'timeline');
      const files = readdirSync(dir).filter(
        (file) => /^\d+_\d+\.(commit|deltacommit|replacecommit)$/.test(file) || /^\d+\.(deltacommit\.)?inflight$/.test(file),
      );
      it(`Hudi ${version} ${name}: ${files.length} commit files re-encode to the same Avro record`, () => {
        assert.ok(files.length >= 5, files.join(', '));
        for (const file of files) {
          const bytes = readFileSync(join(dir, file));
          if (bytes.length === 0) continue;
          const instant = parseLayout2FileName({ name: file, modifiedMs: 0 }, 'UTC')!;
          const action = instant.state === 'COMPLETED' ? instant.action : instant.action === 'commit' ? 'commit' : 'deltacommit';
          const kind = action === 'replacecommit' ? 'replace' : 'commit';
          const metadata = decodeLayout2CommitMetadata(bytes, { ...instant, state: 'COMPLETED', action }, file);
          const ours = encodeLayout2CommitMetadata(metadata, action);
          assert.deepEqual(plain(decodeCommitMetadataAvro(kind, ours, 'ours')), plain(decodeCommitMetadataAvro(kind, bytes, file)), file);
        }
      });
    }
  }
});

describe('layout-2 transitions', () => {
  const layout = timelineLayout2('.hoodie/timeline', 'UTC');

  it('a completed instant carries a completion time later than every time in the folder, and completes once', async () => {
    const root = tempDir('layout-2-transitions-');
    mkdirSync(join(root, '.hoodie', 'timeline'), { recursive: true });
    const storage = new LocalStorage(root);
    // Another writer's instant completed "later" than our clock reads: ours must still come after it.
    await createRequested(storage, layout, '20261206100000000', 'commit');
    await transitionToCompleted(storage, layout, '20261206100000000', 'commit', new Uint8Array(), new Date(Date.UTC(2026, 11, 6, 10, 0, 5)));
    await createRequested(storage, layout, '20261206100001000', 'clean', new Uint8Array([1]));
    await transitionToInflight(storage, layout, '20261206100001000', 'clean', new Uint8Array([1]));
    const clock = new Date(Date.UTC(2026, 11, 6, 10, 0, 2));
    const done = await transitionToCompleted(storage, layout, '20261206100001000', 'clean', new Uint8Array([2]), clock);
    assert.equal(done.completionTime, '20261206100005001');
    assert.ok(readdirSync(join(root, '.hoodie', 'timeline')).includes('20261206100001000_20261206100005001.clean'));
    await assert.rejects(transitionToCompleted(storage, layout, '20261206100001000', 'clean', new Uint8Array([2]), clock), ConflictError);
    const timeline = await loadTimeline(storage, layout);
    assert.deepEqual(
      timeline.completed().map((instant) => `${instant.time}_${instant.completionTime}.${instant.action}`),
      ['20261206100000000_20261206100005000.commit', '20261206100001000_20261206100005001.clean'],
    );
  });
});
