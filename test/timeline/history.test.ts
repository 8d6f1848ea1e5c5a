/**
 * lib/timeline/history: Hudi 1.x's timeline history (the LSM tree of archived instants) read from the histories
 * Hudi 1.0.2 and 1.1.1 wrote (test/fixtures/hudi-1x-history/, made by test/hudi/make-1x-history-fixtures.ts),
 * against what Hudi's own ArchivedTimelineV2 reported for them; and every refusal, each naming its file.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TimelineHistoryError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import {
  type ArchivedInstant,
  archivedInstantOfRow,
  checkHistoryColumns,
  historyAsArchivedTimeline,
  historyCompletionTimes,
  historyFolder,
  parseArchiveFileName,
  parseManifest,
  readTimelineHistory,
  serializeManifest,
} from '../../lib/timeline/history/index.js';
import type { HudiArchivedInstant } from '../helpers/hudi-1x-history.js';
import { REPO_ROOT, tempDir } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/hudi-1x-history');
const VERSIONS = ['1.0.2', '1.1.1'] as const;

/** The fixture's `hoodie.properties` keys. */
function properties(version: string): Map<string, string> {
  const lines = readFileSync(join(FIXTURES, version, 'hoodie.properties'), 'utf8').split('\n');
  return new Map(
    lines.filter((line) => line.includes('=') && !line.startsWith('#')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** A table folder holding a copy of the fixture's history where its hoodie.properties places it. */
function tableWithHistory(version: string): { root: string; folder: string } {
  const props = properties(version);
  const folder = historyFolder({ timelinePath: props.get('hoodie.timeline.path'), historyPath: props.get('hoodie.timeline.history.path') });
  const root = tempDir('timeline-history-');
  mkdirSync(join(root, folder), { recursive: true });
  cpSync(join(FIXTURES, version, 'history'), join(root, folder), { recursive: true });
  return { root, folder };
}

function digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')} ${bytes.length}`;
}

/** Our instants in the shape the fixture recorded Hudi's in. */
function asHudiReports(instants: readonly ArchivedInstant[]): HudiArchivedInstant[] {
  return instants.map((instant) => ({
    requestedTime: instant.requestedTime,
    completionTime: instant.completionTime,
    action: instant.action,
    state: 'COMPLETED',
    metadata: instant.metadata === null ? null : digest(instant.metadata.bytes),
  }));
}

async function refusal(root: string, folder: string): Promise<TimelineHistoryError> {
  const error = await readTimelineHistory(openStorage(root), folder).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TimelineHistoryError, `expected a TimelineHistoryError, got ${String(error)}`);
  return error;
}

for (const version of VERSIONS) {
  describe(`the timeline history Hudi ${version} wrote`, () => {
    test('is the archived timeline status and the services read: every archived instant, completed, in order', async () => {
      const { root, folder } = tableWithHistory(version);
      const expected = JSON.parse(readFileSync(join(FIXTURES, version, 'hudi-archived-timeline.json'), 'utf8')) as HudiArchivedInstant[];
      const archived = historyAsArchivedTimeline(await readTimelineHistory(openStorage(root), folder));
      assert.deepEqual(
        archived.instants.map((instant) => [instant.time, instant.completionTime, instant.state]),
        expected.map((instant) => [instant.requestedTime, instant.completionTime, 'COMPLETED']),
      );
      assert.ok(archived.instants.every((instant) => instant.action !== 'clustering'));
      assert.equal(archived.archiveFiles, (await readTimelineHistory(openStorage(root), folder)).manifest.files.length);
      assert.ok(archived.archiveFiles > 0);
    });

    test('gives file slicing the completion time Hudi recorded for every archived instant, and none for others', async () => {
      const { root, folder } = tableWithHistory(version);
      const expected = JSON.parse(readFileSync(join(FIXTURES, version, 'hudi-archived-timeline.json'), 'utf8')) as HudiArchivedInstant[];
      const times = historyCompletionTimes(await readTimelineHistory(openStorage(root), folder));
      assert.ok(expected.length > 0);
      for (const instant of expected) assert.equal(times.completionTime(instant.requestedTime), instant.completionTime, instant.requestedTime);
      assert.equal(times.completionTime('19700101000000000'), undefined);
      const empty = tempDir('timeline-history-none-');
      assert.equal(historyCompletionTimes(await readTimelineHistory(openStorage(empty), folder)).completionTime(expected[0]!.requestedTime), undefined);
    });

    test('lists the archived instants Hudi lists, in its order, with the same metadata bytes', async () => {
      const { root, folder } = tableWithHistory(version);
      assert.equal(folder, '.hoodie/timeline/history');
      const expected = JSON.parse(readFileSync(join(FIXTURES, version, 'hudi-archived-timeline.json'), 'utf8')) as HudiArchivedInstant[];
      const history = await readTimelineHistory(openStorage(root), folder);
      assert.deepEqual(asHudiReports(history.instants), expected);
      assert.equal(history.version, Number(readFileSync(join(root, folder, '_version_'), 'utf8')));
      // Every row came from a file the manifest names, and every named file gave rows.
      const named = history.manifest.files.map((file) => file.fileName).sort();
      assert.deepEqual([...new Set(history.instants.map((instant) => instant.file))].sort(), named);
    });

    test('holds compacted levels: the latest manifest names files above level 0, and the folder has files it does not name', async () => {
      const { root, folder } = tableWithHistory(version);
      const history = await readTimelineHistory(openStorage(root), folder);
      const levels = history.manifest.files.map((file) => parseArchiveFileName(file.fileName)?.level);
      assert.ok(levels.includes(2), `levels ${levels.join(', ')}`);
      const onDisk = (await openStorage(root).listDir(folder)).files
        .map((file) => file.path.slice(folder.length + 1))
        .filter((name) => name.endsWith('.parquet'));
      assert.ok(onDisk.some((name) => !history.manifest.files.some((file) => file.fileName === name)));
    });

    test('decodes each action’s metadata and plan as the Avro record Hudi wrote there', async () => {
      const { root, folder } = tableWithHistory(version);
      const { instants } = await readTimelineHistory(openStorage(root), folder);
      const byAction = (action: string) => instants.filter((instant) => instant.action === action);
      for (const commit of byAction('commit')) {
        assert.equal(commit.metadata?.recordName, 'org.apache.hudi.avro.model.HoodieCommitMetadata');
        assert.equal(commit.metadata?.record['operationType'], 'UPSERT');
        assert.equal(commit.plan, null);
        const stats = commit.metadata?.record['partitionToWriteStats'] as Record<string, { fileId: string }[]>;
        assert.deepEqual(Object.keys(stats).sort(), ['2024-01-01', '2024-01-02']);
      }
      for (const clean of byAction('clean')) {
        assert.equal(clean.metadata?.recordName, 'org.apache.hudi.avro.model.HoodieCleanMetadata');
        assert.equal(clean.plan?.recordName, 'org.apache.hudi.avro.model.HoodieCleanerPlan');
        // What a clean retains starts at an earlier commit than the clean itself.
        assert.ok(String(clean.metadata?.record['earliestCommitToRetain']) < clean.requestedTime);
      }
      const [replace] = byAction('replacecommit');
      assert.ok(replace !== undefined);
      assert.equal(replace.metadata?.recordName, 'org.apache.hudi.avro.model.HoodieReplaceCommitMetadata');
      assert.equal(replace.metadata?.record['operationType'], 'INSERT_OVERWRITE');
      assert.ok(replace.plan !== null);
      assert.ok(byAction('commit').length > 10 && byAction('clean').length > 10);
    });

    test('ignores files the manifest does not name, even unreadable ones', async () => {
      const { root, folder } = tableWithHistory(version);
      const before = await readTimelineHistory(openStorage(root), folder);
      writeFileSync(join(root, folder, '99990101000000000_99990101000000001_0.parquet'), 'not parquet');
      writeFileSync(join(root, folder, 'manifest_1.tmp'), 'not a manifest');
      const after = await readTimelineHistory(openStorage(root), folder);
      assert.deepEqual(asHudiReports(after.instants), asHudiReports(before.instants));
    });

    test('without _version_, takes the highest manifest (as Hudi does while its writer rewrites the file)', async () => {
      const { root, folder } = tableWithHistory(version);
      const before = await readTimelineHistory(openStorage(root), folder);
      rmSync(join(root, folder, '_version_'));
      const after = await readTimelineHistory(openStorage(root), folder);
      assert.equal(after.version, before.version);
      assert.deepEqual(asHudiReports(after.instants), asHudiReports(before.instants));
    });

    test('follows _version_ to an older manifest when it names one', async () => {
      const { root, folder } = tableWithHistory(version);
      const latest = await readTimelineHistory(openStorage(root), folder);
      writeFileSync(join(root, folder, '_version_'), String(latest.version - 1));
      const older = await readTimelineHistory(openStorage(root), folder);
      assert.equal(older.version, latest.version - 1);
      assert.notDeepEqual(older.manifest, latest.manifest);
    });

    test('the manifests parse and print back byte for byte as Jackson printed them', () => {
      const { root, folder } = tableWithHistory(version);
      const latest = Number(readFileSync(join(root, folder, '_version_'), 'utf8'));
      for (const number of [latest - 2, latest - 1, latest]) {
        const text = readFileSync(join(root, folder, `manifest_${number}`), 'utf8');
        assert.equal(serializeManifest(parseManifest(text, `manifest_${number}`)), text);
      }
    });
  });
}

describe('the timeline history’s refusals', () => {
  test('a _version_ that is not a version number, naming the file', async () => {
    for (const content of ['abc', '', '12 ', '0', '-3']) {
      const { root, folder } = tableWithHistory('1.0.2');
      writeFileSync(join(root, folder, '_version_'), content);
      const error = await refusal(root, folder);
      assert.ok(error.location?.endsWith('/_version_'), error.message);
    }
  });

  test('a _version_ naming a manifest that is not there, naming the manifest', async () => {
    const { root, folder } = tableWithHistory('1.0.2');
    writeFileSync(join(root, folder, '_version_'), '99');
    assert.ok((await refusal(root, folder)).location?.endsWith('/manifest_99'));
  });

  test('a malformed manifest, naming it', async () => {
    const bad = [
      '',
      '{"files": [',
      '[]',
      '{"other": []}',
      '{"files": [{"fileName": "../x_1_0.parquet", "fileLen": 3}]}',
      '{"files": [{"fileName": "a_1_0.parquet"}]}',
    ];
    for (const content of bad) {
      const { root, folder } = tableWithHistory('1.1.1');
      const version = readFileSync(join(root, folder, '_version_'), 'utf8');
      writeFileSync(join(root, folder, `manifest_${version}`), content);
      const error = await refusal(root, folder);
      assert.ok(error.location?.endsWith(`/manifest_${version}`), `${JSON.stringify(content)}: ${error.message}`);
    }
  });

  test('a manifest naming a file that is missing or not Parquet, naming the file', async () => {
    const { root, folder } = tableWithHistory('1.1.1');
    const version = readFileSync(join(root, folder, '_version_'), 'utf8');
    const manifest = parseManifest(readFileSync(join(root, folder, `manifest_${version}`), 'utf8'), 'manifest');
    const [first] = manifest.files;
    assert.ok(first !== undefined);
    rmSync(join(root, folder, first.fileName));
    assert.ok((await refusal(root, folder)).location?.endsWith(`/${first.fileName}`));
    writeFileSync(join(root, folder, first.fileName), 'PAR1 not really PAR1');
    assert.ok((await refusal(root, folder)).location?.endsWith(`/${first.fileName}`));
  });

  test('a stray manifest_ name when it must list manifests, naming it', async () => {
    const { root, folder } = tableWithHistory('1.0.2');
    rmSync(join(root, folder, '_version_'));
    writeFileSync(join(root, folder, 'manifest_backup'), '{}');
    assert.ok((await refusal(root, folder)).location?.endsWith('/manifest_backup'));
  });

  test('no history folder is an empty history, as Hudi reads it', async () => {
    const history = await readTimelineHistory(openStorage(tempDir('timeline-history-')), '.hoodie/timeline/history');
    assert.deepEqual(history, { version: -1, manifest: { files: [] }, instants: [] });
  });

  const text = (value: string) => new Uint8Array(Buffer.from(value, 'utf8'));
  const row = (fields: Record<string, Uint8Array | number | null>) => new Map(Object.entries(fields).map(([name, value]) => [name, [value]]));

  test('an unknown action, a row version other than 1, a missing time, by name', () => {
    const good = {
      instantTime: text('20250101000000000'),
      completionTime: text('20250101000000100'),
      action: text('rollback'),
      metadata: null,
      plan: null,
      version: 1,
    };
    assert.equal(archivedInstantOfRow(row(good), 0, 'f', 'f').action, 'rollback');
    const cases: [Record<string, Uint8Array | number | null>, string][] = [
      [{ ...good, action: text('frobnicate') }, 'frobnicate'],
      [{ ...good, version: 2 }, 'row version 2'],
      [{ ...good, completionTime: null }, 'completionTime'],
      [{ ...good, plan: text('Obj\x01') }, 'plan'],
    ];
    for (const [fields, named] of cases) {
      assert.throws(
        () => archivedInstantOfRow(row(fields), 0, 'f', 'history/f'),
        (error: unknown) => error instanceof TimelineHistoryError && error.message.includes(named) && error.location?.startsWith('history/f') === true,
        named,
      );
    }
  });

  test('metadata holding another record than the action’s, naming the record', async () => {
    const { root, folder } = tableWithHistory('1.0.2');
    const { instants } = await readTimelineHistory(openStorage(root), folder);
    const clean = instants.find((instant) => instant.action === 'clean')!;
    const fields = {
      instantTime: text(clean.requestedTime),
      completionTime: text(clean.completionTime),
      action: text('commit'),
      metadata: clean.metadata!.bytes,
      plan: null,
      version: 1,
    };
    assert.throws(
      () => archivedInstantOfRow(row(fields), 0, 'f', 'history/f'),
      (error: unknown) => error instanceof TimelineHistoryError && error.message.includes('HoodieCleanMetadata'),
    );
  });

  test('a column HoodieLSMTimelineInstant does not have, by name', () => {
    const column = (name: string, physicalType: 'BYTE_ARRAY' | 'INT32') => ({
      path: [name],
      name,
      repetition: 'OPTIONAL' as const,
      numChildren: 0,
      physicalType,
    });
    const known = [column('instantTime', 'BYTE_ARRAY'), column('completionTime', 'BYTE_ARRAY'), column('action', 'BYTE_ARRAY'), column('version', 'INT32')];
    checkHistoryColumns(known, 'f');
    assert.throws(
      () => checkHistoryColumns([...known, column('priority', 'INT32')], 'f'),
      (error: unknown) => error instanceof TimelineHistoryError && error.message.includes('priority'),
    );
    assert.throws(
      () => checkHistoryColumns([...known.slice(1)], 'f'),
      (error: unknown) => error instanceof TimelineHistoryError && error.message.includes('instantTime'),
    );
    assert.throws(
      () => checkHistoryColumns([...known.slice(0, 3), column('version', 'BYTE_ARRAY')], 'f'),
      (error: unknown) => error instanceof TimelineHistoryError && error.message.includes('version'),
    );
  });

  test('history placement keys that leave .hoodie/', () => {
    assert.equal(historyFolder({}), '.hoodie/timeline/history');
    assert.equal(historyFolder({ historyPath: 'archive' }), '.hoodie/timeline/archive');
    for (const placement of [{ historyPath: '../x' }, { timelinePath: '' }, { historyPath: 'a//b' }]) {
      assert.throws(() => historyFolder(placement), TimelineHistoryError);
    }
  });
});
