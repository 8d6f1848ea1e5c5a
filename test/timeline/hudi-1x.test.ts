/**
 * Timeline layout 2 (Hudi 1.x, table versions 8 and 9) without DuckDB or Spark: the instant file names and commit
 * metadata of tables Hudi 1.0.2 and 1.1.1 wrote (test/fixtures/hudi-1x-tables/, made by
 * test/helpers/hudi-1x-fixtures.ts), against what Hudi's own HoodieActiveTimeline and CommitMetadataSerDeV2 said of
 * them when they were written; the hoodie.properties keys of 1.x and their refusals; file slicing by completion time.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UnsupportedTableError } from '../../lib/errors.js';
import { assertSupported, recordMergeModeOf, type TableConfig, tableConfigFromProperties } from '../../lib/table/config.js';
import { sliceByCompletionTime } from '../../lib/table/file-group.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { CompletionTimes } from '../../lib/timeline/completion-times.js';
import type { Instant } from '../../lib/timeline/instant.js';
import { decodeLayout2CommitMetadata, layout2FileName, parseLayout2FileName, timelineLayout2, timelineLayoutOf } from '../../lib/timeline/layout.js';
import { parseTimelineNames, Timeline } from '../../lib/timeline/timeline.js';
import { HUDI_1X_TABLES, HUDI_1X_VERSIONS, type Hudi1xExpected } from '../helpers/hudi-1x-fixtures.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/hudi-1x-tables');

/** HoodieInstant.toString() */
function hudiToString(instant: Instant): string {
  const pending = instant.state === 'COMPLETED' ? '' : '==>';
  const completion = instant.completionTime === undefined ? '' : `__${instant.completionTime}`;
  return `[${pending}${instant.time}${completion}__${instant.action}__${instant.state}]`;
}

function configOf(text: string): TableConfig {
  return tableConfigFromProperties(parseJavaProperties(text), 'hoodie.properties');
}

for (const version of HUDI_1X_VERSIONS) {
  for (const name of HUDI_1X_TABLES) {
    describe(`Hudi ${version} ${name} fixture`, () => {
      const dir = join(FIXTURES, version, name);
      const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Hudi1xExpected;
      const config = configOf(readFileSync(join(dir, 'hoodie.properties'), 'utf8'));
      const layout = timelineLayoutOf(config);
      const files = readdirSync(join(dir, 'timeline')).sort();

      it('hoodie.properties: the table version, layout 2 under .hoodie/timeline, readable, and written by the writer, cleaner, archiver and clustering, compaction only when merge-on-read', () => {
        assert.equal(config.version, expected.tableVersion);
        assert.equal(config.version, version === '1.0.2' ? 8 : 9);
        assert.equal(config.timelineLayoutVersion, 2);
        assert.equal(config.timelinePath, 'timeline');
        assert.equal(config.timelineHistoryPath, 'history');
        assert.equal(config.initialVersion, config.version);
        assert.equal(layout.version, 2);
        assert.equal(layout.folder, '.hoodie/timeline');
        assert.equal(config.precombineField, 'ts');
        assert.equal(recordMergeModeOf(config, 'f'), 'EVENT_TIME_ORDERING');
        assert.doesNotThrow(() => assertSupported(config, 'f', 'read'));
        // Compaction ('write') runs on merge-on-read only; the writer (delta-write), clustering, the cleaner and the
        // archiver on both types.
        if (config.type === 'MERGE_ON_READ') assert.doesNotThrow(() => assertSupported(config, 'f', 'write'));
        else assert.throws(() => assertSupported(config, 'f', 'write'), UnsupportedTableError, 'write');
        for (const mode of ['delta-write', 'clustering', 'clean', 'archive'] as const) assert.doesNotThrow(() => assertSupported(config, 'f', mode), mode);
      });

      it("names parse to the instants Hudi's active timeline listed, in its order", () => {
        assert.deepEqual(files, expected.timelineFiles);
        const { instants, unreadable } = parseTimelineNames(
          files.map((file) => ({ name: file, modifiedMs: 0 })),
          layout,
        );
        assert.deepEqual(unreadable, []);
        assert.deepEqual(new Timeline(instants, layout).instants.map(hudiToString), expected.instants);
        // Every file name comes back from its instant (InstantFileNameGeneratorV2).
        for (const instant of instants) assert.ok(files.includes(layout2FileName(instant)), layout2FileName(instant));
      });

      it("completed writes' Avro metadata decodes to what Hudi's CommitMetadataSerDeV2 read", () => {
        assert.ok(Object.keys(expected.commits).length >= 4);
        for (const [file, hudi] of Object.entries(expected.commits) as [string, HudiCommitJson][]) {
          const instant = parseLayout2FileName({ name: file, modifiedMs: 0 }, 'UTC')!;
          const ours = decodeLayout2CommitMetadata(readFileSync(join(dir, 'timeline', file)), instant, file);
          assert.equal(ours.operationType, hudi.operationType, file);
          assert.equal(ours.compacted, hudi.compacted, file);
          assert.deepEqual(ours.extraMetadata, hudi.extraMetadata, file);
          assert.deepEqual(ours.partitionToReplaceFileIds, hudi.partitionToReplaceFileIds, file);
          assert.deepEqual(Object.keys(ours.partitionToWriteStats).sort(), Object.keys(hudi.partitionToWriteStats).sort(), file);
          for (const [partition, stats] of Object.entries(hudi.partitionToWriteStats)) {
            const mine = ours.partitionToWriteStats[partition]!;
            assert.equal(mine.length, stats.length, `${file} ${partition}`);
            stats.forEach((stat, index) => {
              for (const field of STAT_FIELDS) assert.deepEqual(mine[index]![field], stat[field], `${file} ${partition}[${index}].${field}`);
            });
          }
        }
      });
    });
  }
}

interface HudiCommitJson {
  operationType: string | null;
  compacted: boolean;
  extraMetadata: Record<string, string>;
  partitionToReplaceFileIds?: Record<string, string[]>;
  partitionToWriteStats: Record<string, Record<string, unknown>[]>;
}

const STAT_FIELDS = [
  'fileId',
  'path',
  'prevCommit',
  'numWrites',
  'numDeletes',
  'numUpdateWrites',
  'numInserts',
  'totalWriteBytes',
  'totalWriteErrors',
  'partitionPath',
  'totalLogRecords',
  'totalLogBlocks',
  'totalCorruptLogBlock',
  'totalRollbackBlocks',
  'fileSizeInBytes',
  'minEventTime',
  'maxEventTime',
  'runtimeStats',
  'cdcStats',
  'tempPath',
] as const;

describe('timeline layout 2 names (InstantFileNameParserV2, InstantGeneratorV2)', () => {
  const parse = (name: string, modifiedMs = 0) => parseLayout2FileName({ name, modifiedMs }, 'UTC');
  it('completed, pending and the action-less commit inflight', () => {
    assert.deepEqual(parse('20250101000000000_20250101000001000.deltacommit'), {
      time: '20250101000000000',
      action: 'deltacommit',
      state: 'COMPLETED',
      completionTime: '20250101000001000',
    });
    assert.deepEqual(parse('20250101000000000.inflight'), { time: '20250101000000000', action: 'commit', state: 'INFLIGHT' });
    assert.deepEqual(parse('20250101000000000.clustering.requested'), { time: '20250101000000000', action: 'clustering', state: 'REQUESTED' });
    assert.deepEqual(parse('20250101000000000.compaction.inflight'), { time: '20250101000000000', action: 'compaction', state: 'INFLIGHT' });
  });
  it("a legacy completed name takes its file's modification time as completion time", () => {
    assert.deepEqual(parse('20250101000000000.commit', Date.UTC(2025, 0, 1, 0, 0, 2, 5)), {
      time: '20250101000000000',
      action: 'commit',
      state: 'COMPLETED',
      completionTime: '20250101000002005',
      legacy: true,
    });
    assert.equal(layout2FileName(parse('20250101000000000.commit')!), '20250101000000000.commit');
  });
  it('not instants: a completed compaction name, pending names with a completion time, unknown extensions, checksums', () => {
    for (const name of [
      '20250101000000000.compaction',
      '20250101000000000_20250101000001000.commit.requested',
      '20250101000000000.commit.done',
      '.20250101000000000.commit.crc',
      'history',
      '20250101.commit',
    ]) {
      assert.equal(parse(name), undefined, name);
    }
  });
  it('a loaded timeline refuses an instant-like name it cannot read, and keeps one instant per clustering', () => {
    const layout = timelineLayout2('.hoodie/timeline', 'UTC');
    const { instants, unreadable } = parseTimelineNames(
      ['20250101000000000.clustering.requested', '20250101000000000.clustering.inflight', '20250101000000000_20250101000005000.replacecommit', '2025.bogus'],
      layout,
    );
    assert.deepEqual(unreadable, ['2025.bogus']);
    assert.deepEqual(new Timeline(instants, layout).instants.map(hudiToString), ['[20250101000000000__20250101000005000__replacecommit__COMPLETED]']);
  });
});

describe('hoodie.properties of version 8 and 9: what is read and what is refused', () => {
  const base = [
    'hoodie.table.name=t',
    'hoodie.table.type=MERGE_ON_READ',
    'hoodie.table.version=8',
    'hoodie.timeline.layout.version=2',
    'hoodie.table.recordkey.fields=id',
    'hoodie.table.precombine.field=ts',
  ];
  const config = (...extra: string[]) => configOf([...base, ...extra].join('\n'));
  const refused = (pattern: RegExp, ...extra: string[]) => assert.throws(() => assertSupported(config(...extra), 'f', 'read'), pattern);

  it('merge modes: stored, or inferred as Hudi infers them', () => {
    assert.equal(recordMergeModeOf(config('hoodie.record.merge.mode=COMMIT_TIME_ORDERING'), 'f'), 'COMMIT_TIME_ORDERING');
    assert.equal(recordMergeModeOf(config(), 'f'), 'EVENT_TIME_ORDERING');
    assert.equal(
      recordMergeModeOf(config('hoodie.compaction.payload.class=org.apache.hudi.common.model.OverwriteWithLatestAvroPayload'), 'f'),
      'COMMIT_TIME_ORDERING',
    );
    assert.equal(recordMergeModeOf(config('hoodie.record.merge.strategy.id=ce9acb64-bde0-424c-9b91-f6ebba25356d'), 'f'), 'COMMIT_TIME_ORDERING');
    assert.equal(recordMergeModeOf(configOf(base.filter((line) => !line.includes('precombine')).join('\n')), 'f'), 'COMMIT_TIME_ORDERING');
    assert.equal(configOf([...base, 'hoodie.table.version=9', 'hoodie.table.ordering.fields=seq'].join('\n')).precombineField, 'seq');
  });

  it("version 9's legacy payload class: what a downgrade restores; a stored merge mode is what readers merge by", () => {
    const overwrite = 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload';
    // Hudi 1.1.1's upgrade of a version 6 merge-on-read table with an ordering field leaves these keys.
    const upgraded = ['hoodie.table.version=9', 'hoodie.record.merge.mode=EVENT_TIME_ORDERING', `hoodie.table.legacy.payload.class=${overwrite}`];
    assert.equal(recordMergeModeOf(config(...upgraded), 'f'), 'EVENT_TIME_ORDERING');
    // Without a stored mode the legacy class decides it, as before; the active payload class must agree with the mode.
    assert.equal(recordMergeModeOf(config('hoodie.table.version=9', `hoodie.table.legacy.payload.class=${overwrite}`), 'f'), 'COMMIT_TIME_ORDERING');
    refused(/does not go with hoodie\.record\.merge\.mode=EVENT_TIME_ORDERING/, ...upgraded, `hoodie.compaction.payload.class=${overwrite}`);
    refused(
      /payload class com\.acme\.MyPayload \(a CUSTOM merge\)/,
      'hoodie.table.version=9',
      'hoodie.record.merge.mode=EVENT_TIME_ORDERING',
      'hoodie.table.legacy.payload.class=com.acme.MyPayload',
    );
  });

  it('refuses, by name, what it does not know', () => {
    refused(/hoodie\.record\.merge\.mode=CUSTOM/, 'hoodie.record.merge.mode=CUSTOM');
    refused(/hoodie\.record\.merge\.mode=NEWEST_WINS is not a record merge mode/, 'hoodie.record.merge.mode=NEWEST_WINS');
    refused(/hoodie\.record\.merge\.mode=CUSTOM/, 'hoodie.compaction.payload.class=com.acme.MyPayload');
    refused(
      /payload class com\.acme\.MyPayload \(a CUSTOM merge\)/,
      'hoodie.record.merge.mode=EVENT_TIME_ORDERING',
      'hoodie.compaction.payload.class=com.acme.MyPayload',
    );
    refused(/payload class com\.acme\.MyPayload/, 'hoodie.record.merge.mode=EVENT_TIME_ORDERING', 'hoodie.table.legacy.payload.class=com.acme.MyPayload');
    refused(
      /hoodie\.record\.merge\.strategy\.id=00000000-0000-0000-0000-000000000000/,
      'hoodie.record.merge.mode=EVENT_TIME_ORDERING',
      'hoodie.record.merge.strategy.id=00000000-0000-0000-0000-000000000000',
    );
    refused(
      /hoodie\.record\.merge\.strategy\.id=abc is not a merge strategy/,
      'hoodie.record.merge.mode=EVENT_TIME_ORDERING',
      'hoodie.record.merge.strategy.id=abc',
    );
    refused(
      /does not go with hoodie\.record\.merge\.mode=EVENT_TIME_ORDERING/,
      'hoodie.record.merge.mode=EVENT_TIME_ORDERING',
      'hoodie.compaction.payload.class=org.apache.hudi.common.model.OverwriteWithLatestAvroPayload',
    );
    refused(/hoodie\.table\.partial\.update\.mode=KEEP_VALUES/, 'hoodie.table.partial.update.mode=KEEP_VALUES');
    refused(/hoodie\.table\.format=iceberg/, 'hoodie.table.format=iceberg');
    refused(/hoodie\.timeline\.path=\.\.\/x/, 'hoodie.timeline.path=../x');
    refused(/hoodie\.timeline\.layout\.version=1 does not go with table version 8/, 'hoodie.timeline.layout.version=1');
    refused(/hoodie\.table\.initial\.version=11/, 'hoodie.table.initial.version=11');
    refused(/table version 10 is not supported/, 'hoodie.table.version=10');
    refused(/table version 7 is not supported for reading/, 'hoodie.table.version=7');
  });
});

describe('file slicing by completion time (HoodieFileGroup.getBaseInstantTime)', () => {
  const layout = timelineLayout2('.hoodie/timeline', 'UTC');
  /** An instant time at millisecond n of 2025-01-01. */
  const t = (n: number) => `20250101000000${String(n).padStart(3, '0')}`;
  const instant = (time: string, action: Instant['action'], completionTime?: string): Instant =>
    completionTime === undefined ? { time, action, state: 'REQUESTED' } : { time, action, state: 'COMPLETED', completionTime };
  const file = 'f1-0';
  const base = (time: string) => ({ name: `${file}_0-1-2_${time}.parquet`, size: 10 });
  const log = (time: string) => ({ name: `.${file}_${time}.log.1_0-1-2`, size: 5 });

  function slice(instants: Instant[], names: { name: string; size: number }[], pendingCompaction?: string, queryInstant?: string) {
    const timeline = new Timeline(instants, layout);
    const { merged } = sliceByCompletionTime(
      { partitionPath: 'p', files: names },
      {
        timeline,
        completionTimes: new CompletionTimes(timeline, { completionTime: () => undefined }, 'history'),
        queryInstant: queryInstant ?? timeline.instants.filter((i) => i.state === 'COMPLETED' || i.action === 'compaction').at(-1)!.time,
        replacedFileGroups: new Set(),
        pendingCompactions: new Map(pendingCompaction === undefined ? [] : [[`p\u0000${file}`, pendingCompaction]]),
      },
    );
    return merged.map((s) => ({ base: s.baseFile?.instantTime, logs: s.logFiles.map((l) => l.name.baseInstant) }));
  }

  it('a log whose delta commit completed after a compaction was requested joins the compaction; read merged with the slice before it', () => {
    const instants = [instant(t(100), 'deltacommit', t(110)), instant(t(200), 'deltacommit', t(400)), instant(t(300), 'compaction')];
    // The compaction is pending: the merged slice is the first base file with both logs.
    assert.deepEqual(slice(instants, [base(t(100)), log(t(200))], t(300)), [{ base: t(100), logs: [t(200)] }]);
  });

  it('after the compaction completes, that log stays with the compacted base file; as of before it, the old slice reads without it', () => {
    const instants = [instant(t(100), 'deltacommit', t(110)), instant(t(200), 'deltacommit', t(400)), instant(t(300), 'commit', t(350))];
    assert.deepEqual(slice(instants, [base(t(100)), base(t(300)), log(t(200))]), [{ base: t(300), logs: [t(200)] }]);
    assert.deepEqual(slice(instants, [base(t(100)), base(t(300)), log(t(200))], undefined, t(200)), [{ base: t(100), logs: [] }]);
  });

  it('a log completed before the compaction was requested stays in the older slice; a pending one is left out', () => {
    const instants = [
      instant(t(100), 'deltacommit', t(110)),
      instant(t(200), 'deltacommit', t(250)),
      instant(t(300), 'commit', t(350)),
      instant(t(400), 'deltacommit'),
    ];
    assert.deepEqual(slice(instants, [base(t(100)), base(t(300)), log(t(200)), log(t(400))]), [{ base: t(300), logs: [] }]);
    assert.deepEqual(slice(instants, [base(t(100)), base(t(300)), log(t(200))], undefined, t(250)), [{ base: t(100), logs: [t(200)] }]);
  });
});
