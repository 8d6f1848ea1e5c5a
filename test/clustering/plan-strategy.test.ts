import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type ClusteringConfig, DEFAULT_CLUSTERING_CONFIG } from '../../lib/clustering/config.js';
import {
  buildClusteringGroupsForPartition,
  buildClusteringPlan,
  buildGroupMetrics,
  type FileSliceInput,
  filterPartitions,
  getEligibleSlices,
  numberOfOutputFileGroups,
  requiredCommitsSinceLastClustering,
  shouldSchedule,
} from '../../lib/clustering/plan-strategy.js';
import { HudiError } from '../../lib/errors.js';
import type { ClusteringPlan, ClusteringPlanGroup } from '../../lib/timeline/clustering-plan.js';
import { fileGroupKey } from '../../lib/timeline/file-group-key.js';
import { readOfficial } from '../helpers/avro-official.js';
import { committedTable, expectedOf, instantOfFile } from '../helpers/fixtures.js';

const MIB = 1024 * 1024;

const configWith = (overrides: Partial<ClusteringConfig>): ClusteringConfig => ({ ...DEFAULT_CLUSTERING_CONFIG, ...overrides });

function slice(fileId: string, baseFileSize: number, partitionPath = 'p'): FileSliceInput {
  const folder = partitionPath === '' ? '' : `${partitionPath}/`;
  return {
    fileId,
    partitionPath,
    baseFilePath: `s3://bucket/table/${folder}${fileId}_0-1-2_20240101000000000.parquet`,
    baseFileSize,
    instantTime: '20240101000000000',
  };
}

/** Each group as its file ids and numOutputFileGroups, for compact expectations. */
const summary = (groups: readonly ClusteringPlanGroup[]) =>
  groups.map((group) => ({ ids: group.slices.map((info) => info.fileId), out: group.numOutputFileGroups }));

describe('scheduling', () => {
  it('schedules once completed commits reach maxCommits (Hudi skips while maxCommits > commits)', () => {
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 3, maxCommits: 4 }), false);
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 4, maxCommits: 4 }), true);
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 5, maxCommits: 4 }), true);
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 0, maxCommits: 0 }), true);
  });

  it('schedules anyway when forced', () => {
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 0, maxCommits: 4, force: true }), true);
    assert.equal(shouldSchedule({ completedCommitsSinceLastClustering: 0, maxCommits: 4, force: false }), false);
  });

  it('takes the threshold Hudi checks for the enabled clustering modes', () => {
    // Neither inline nor async: Hudi's standalone job does not wait.
    assert.equal(requiredCommitsSinceLastClustering(DEFAULT_CLUSTERING_CONFIG), 0);
    assert.equal(requiredCommitsSinceLastClustering(configWith({ asyncClusteringEnabled: true, asyncMaxCommits: 6 })), 6);
    assert.equal(requiredCommitsSinceLastClustering(configWith({ scheduleInlineClustering: true, asyncMaxCommits: 3 })), 3);
    assert.equal(requiredCommitsSinceLastClustering(configWith({ inlineClustering: true, inlineMaxCommits: 2 })), 2);
    // Both checks run in Hudi, so the larger threshold holds.
    assert.equal(
      requiredCommitsSinceLastClustering(configWith({ inlineClustering: true, inlineMaxCommits: 2, asyncClusteringEnabled: true, asyncMaxCommits: 5 })),
      5,
    );
  });
});

describe('filterPartitions', () => {
  const days = ['2024/01/03', '2024/01/05', '2024/01/01', '2024/01/04', '2024/01/02'];

  it('NONE keeps every partition in the given order', () => {
    assert.deepEqual(filterPartitions(days, DEFAULT_CLUSTERING_CONFIG), days);
  });

  it('uses partition.selected as given, ignoring the regex and not checking the table has them', () => {
    const config = configWith({ partitionSelected: ['2024/01/09', '2024/01/01'], partitionRegexPattern: '2023/.*' });
    assert.deepEqual(filterPartitions(days, config), ['2024/01/09', '2024/01/01']);
  });

  it("keeps partitions whose whole path matches the regex (Hudi's own test case)", () => {
    const partitions = ['20210718', '20210715', '20210723', '20210716', '20210719', '20210721'];
    assert.deepEqual(filterPartitions(partitions, configWith({ partitionRegexPattern: '2021072.*' })), ['20210723', '20210721']);
    // A partial match is not enough: Java's Pattern.matches anchors both ends.
    assert.deepEqual(filterPartitions(partitions, configWith({ partitionRegexPattern: '0723' })), []);
    assert.deepEqual(filterPartitions(partitions, configWith({ partitionRegexPattern: '2021071[56]|20210723' })), ['20210715', '20210723', '20210716']);
  });

  it('RECENT_DAYS sorts descending, skips skipfromlatest, takes lookback', () => {
    // Sorted descending: 05, 04, 03, 02, 01.
    const recent = (lookbackPartitions: number, skipFromLatestPartitions: number) =>
      filterPartitions(days, configWith({ partitionFilterMode: 'RECENT_DAYS', lookbackPartitions, skipFromLatestPartitions }));
    assert.deepEqual(recent(2, 0), ['2024/01/05', '2024/01/04']); // Hudi's defaults
    assert.deepEqual(recent(2, 1), ['2024/01/04', '2024/01/03']); // skip 05, take 2
    assert.deepEqual(recent(0, 1), ['2024/01/04', '2024/01/03', '2024/01/02', '2024/01/01']); // lookback 0 = all
    assert.deepEqual(recent(10, 0), ['2024/01/05', '2024/01/04', '2024/01/03', '2024/01/02', '2024/01/01']);
    assert.deepEqual(recent(2, 5), []); // skipped past the end
  });

  it('applies the regex before the filter mode', () => {
    const partitions = ['a/1', 'b/3', 'a/2'];
    const config = configWith({ partitionRegexPattern: 'a/.*', partitionFilterMode: 'RECENT_DAYS', lookbackPartitions: 1 });
    // Regex first leaves a/1, a/2; newest of those is a/2 (b/3 would win if the mode ran first).
    assert.deepEqual(filterPartitions(partitions, config), ['a/2']);
  });

  it('applies the filter mode to partition.selected too', () => {
    const config = configWith({ partitionSelected: ['x/1', 'x/3', 'x/2'], partitionFilterMode: 'RECENT_DAYS', lookbackPartitions: 2 });
    assert.deepEqual(filterPartitions([], config), ['x/3', 'x/2']);
  });

  it('SELECTED_PARTITIONS keeps begin <= path <= end in string order, both inclusive', () => {
    const partitions = ['2024/01/01', '2024/01/02', '2024/01/03', '2024/01/04', '2024/01/05', '2024/01/10', '2024/01/3'];
    const selected = (beginPartition: string | undefined, endPartition: string | undefined) =>
      filterPartitions(partitions, configWith({ partitionFilterMode: 'SELECTED_PARTITIONS', beginPartition, endPartition }));
    // '2024/01/10' > '2024/01/04' ('1' > '0' at index 8) and '2024/01/3' > '2024/01/04' ('3' > '0'): string order, not dates.
    assert.deepEqual(selected('2024/01/02', '2024/01/04'), ['2024/01/02', '2024/01/03', '2024/01/04']);
    assert.deepEqual(selected('2024/01/05', undefined), ['2024/01/05', '2024/01/10', '2024/01/3']);
    assert.deepEqual(selected(undefined, '2024/01/01'), ['2024/01/01']);
    assert.deepEqual(selected(undefined, undefined), partitions);
  });

  it('DAY_ROLLING sorts ascending and keeps index % 24 == hour', () => {
    // p00..p29, given shuffled; sorted ascending the index of pNN is NN.
    const partitions = Array.from({ length: 30 }, (_, index) => `p${String(index).padStart(2, '0')}`).reverse();
    const rolling = (hour: number) => filterPartitions(partitions, configWith({ partitionFilterMode: 'DAY_ROLLING' }), hour);
    assert.deepEqual(rolling(5), ['p05', 'p29']); // indexes 5 and 5 + 24
    assert.deepEqual(rolling(0), ['p00', 'p24']);
    assert.deepEqual(rolling(6), ['p06']); // 6 + 24 = 30 is past the end
    assert.deepEqual(rolling(23), ['p23']);
    assert.deepEqual(filterPartitions(['only'], configWith({ partitionFilterMode: 'DAY_ROLLING' }), 1), []);
    assert.throws(() => rolling(24), HudiError);
  });

  it('DAY_ROLLING defaults to the current local hour', () => {
    const partitions = Array.from({ length: 24 }, (_, index) => `h${String(index).padStart(2, '0')}`);
    const before = new Date().getHours();
    const picked = filterPartitions(partitions, configWith({ partitionFilterMode: 'DAY_ROLLING' }));
    const after = new Date().getHours();
    assert.equal(picked.length, 1);
    assert.ok([before, after].includes(Number(picked[0]!.slice(1))));
  });

  it('does not change its input', () => {
    const input = [...days];
    filterPartitions(input, configWith({ partitionFilterMode: 'RECENT_DAYS' }));
    filterPartitions(input, configWith({ partitionFilterMode: 'DAY_ROLLING' }), 0);
    assert.deepEqual(input, days);
  });
});

describe('getEligibleSlices', () => {
  it('keeps base files strictly smaller than small.file.limit', () => {
    const limit = 100;
    const slices = [slice('under', 99), slice('at', 100), slice('over', 101), slice('empty', 0)];
    // 99 < 100 yes; 100 < 100 no (Hudi's `<`); 101 no; 0 yes.
    assert.deepEqual(
      getEligibleSlices(slices, new Set(), limit).map((eligible) => eligible.fileId),
      ['under', 'empty'],
    );
  });

  it('leaves out file groups of pending clustering/compaction plans, by partition and file id', () => {
    const slices = [slice('f1', 10, '2024/01/01'), slice('f2', 10, '2024/01/01'), slice('f2', 10, '2024/01/02'), slice('f3', 10, '')];
    // The same keys HudiTable.pendingClusteringFileGroups returns, so its set can be passed as is.
    const pending = new Set([fileGroupKey('2024/01/01', 'f2'), fileGroupKey('', 'f3')]);
    assert.equal(pending.has(fileGroupKey('2024/01', '01/f2')), false, 'partition and file id cannot run together');
    // f2 is pending only in 2024/01/01; the same file id in another partition is another file group.
    assert.deepEqual(
      getEligibleSlices(slices, pending, 300 * MIB).map((eligible) => `${eligible.partitionPath}:${eligible.fileId}`),
      ['2024/01/01:f1', '2024/01/02:f2'],
    );
  });
});

describe('buildClusteringGroupsForPartition', () => {
  // Small numbers keep the arithmetic readable: groups of at most 100 bytes, 40-byte target files.
  const grouping = (overrides: Partial<ClusteringConfig> = {}) => configWith({ maxBytesPerGroup: 100, targetFileMaxBytes: 40, ...overrides });

  it('keeps a slice that brings the group exactly to max.bytes.per.group (Hudi closes only on `>`)', () => {
    // 60: 0 + 60 > 100? no -> [60]. 40: 60 + 40 = 100 > 100? no -> [60, 40] = 100 bytes.
    // Output files: ceil(100 / 40) = ceil(2.5) = 3.
    const groups = buildClusteringGroupsForPartition('p', [slice('a', 60), slice('b', 40)], grouping());
    assert.deepEqual(summary(groups), [{ ids: ['a', 'b'], out: 3 }]);
  });

  it('closes the group when a slice would pass max.bytes.per.group by one byte; that slice opens the next group', () => {
    // 60 -> [60]. 41: 60 + 41 = 101 > 100 -> close [60] (ceil(60/40) = 2 files), 41 starts [41].
    // The last group [41] has one slice; single.group.clustering.enabled (default true) keeps it: ceil(41/40) = 2.
    const groups = buildClusteringGroupsForPartition('p', [slice('a', 60), slice('b', 41)], grouping());
    assert.deepEqual(summary(groups), [
      { ids: ['a'], out: 2 },
      { ids: ['b'], out: 2 },
    ]);
  });

  it('also closes a group at max.files.per.group files (ours), however few bytes they hold', () => {
    // Sizes descending: 9, 8, ... 3; groups of 3 files although 100 bytes would take them all.
    const slices = [3, 4, 5, 6, 7, 8, 9].map((size) => slice(`f${size}`, size));
    const groups = buildClusteringGroupsForPartition('p', slices, grouping({ maxFilesPerGroup: 3 }));
    assert.deepEqual(
      summary(groups).map((group) => group.ids),
      [['f9', 'f8', 'f7'], ['f6', 'f5', 'f4'], ['f3']],
    );
    assert.deepEqual(
      summary(buildClusteringGroupsForPartition('p', slices, grouping())).map((group) => group.ids.length),
      [7],
    );
  });

  it('drops a single-slice last group when single-group clustering is off and there are no sort columns', () => {
    // Same split as above: [60] closed, [41] last. Only the LAST group is checked: the closed [60] stays.
    const noSingle = grouping({ singleGroupClusteringEnabled: false });
    assert.deepEqual(summary(buildClusteringGroupsForPartition('p', [slice('a', 60), slice('b', 41)], noSingle)), [{ ids: ['a'], out: 2 }]);
    assert.deepEqual(buildClusteringGroupsForPartition('p', [slice('only', 10)], noSingle), []);
  });

  it('keeps a single-slice last group when sort columns are set, even with single-group clustering off', () => {
    const sorted = grouping({ singleGroupClusteringEnabled: false, sortColumns: ['ts'] });
    // One slice of 10 bytes: ceil(10 / 40) = 1 output file.
    assert.deepEqual(summary(buildClusteringGroupsForPartition('p', [slice('only', 10)], sorted)), [{ ids: ['only'], out: 1 }]);
  });

  it('keeps a multi-slice last group whatever the single-group settings', () => {
    const noSingle = grouping({ singleGroupClusteringEnabled: false });
    // 10 + 20 = 30 <= 100: one group, ceil(30/40) = 1.
    assert.deepEqual(summary(buildClusteringGroupsForPartition('p', [slice('a', 10), slice('b', 20)], noSingle)), [{ ids: ['b', 'a'], out: 1 }]);
  });

  it('sorts slices by size, largest first, keeping the input order of equal sizes', () => {
    // Sorted: c(30), a(20), d(20), b(10) -> 80 bytes, one group, ceil(80/40) = 2 exactly.
    const groups = buildClusteringGroupsForPartition('p', [slice('a', 20), slice('b', 10), slice('c', 30), slice('d', 20)], grouping());
    assert.deepEqual(summary(groups), [{ ids: ['c', 'a', 'd', 'b'], out: 2 }]);
  });

  it('gives a slice larger than max.bytes.per.group a group of its own', () => {
    // 150: group empty, so no close even though 0 + 150 > 100 -> [150].
    // 30: 150 + 30 > 100 -> close [150] (ceil(150/40) = ceil(3.75) = 4), [30] last (ceil(30/40) = 1).
    const groups = buildClusteringGroupsForPartition('p', [slice('small', 30), slice('big', 150)], grouping());
    assert.deepEqual(summary(groups), [
      { ids: ['big'], out: 4 },
      { ids: ['small'], out: 1 },
    ]);
  });

  it('computes numOutputFileGroups as ceil(group bytes / target.file.max.bytes)', () => {
    assert.equal(numberOfOutputFileGroups(80, 40), 2); // exactly 2 targets
    assert.equal(numberOfOutputFileGroups(81, 40), 3); // one byte over -> one more file
    assert.equal(numberOfOutputFileGroups(1, 40), 1);
    // Hudi's defaults: 2 GiB group / 1 GiB target = 2 files; one more byte = 3.
    assert.equal(numberOfOutputFileGroups(2 * 1024 * MIB, 1024 * MIB), 2);
    assert.equal(numberOfOutputFileGroups(2 * 1024 * MIB + 1, 1024 * MIB), 3);
  });

  it('stops after max.num.groups closed groups; the rest of the partition waits', () => {
    // max 2 groups. Sorted 90, 80, 70, 60.
    // 90 -> [90]. 80: 170 > 100 -> close [90] (1 group), [80]. 70: 150 > 100 -> close [80] (2 groups = max) -> stop.
    // 70 and 60 are in no group.
    const groups = buildClusteringGroupsForPartition(
      'p',
      [slice('s60', 60), slice('s70', 70), slice('s80', 80), slice('s90', 90)],
      grouping({ maxNumGroups: 2 }),
    );
    assert.deepEqual(summary(groups), [
      { ids: ['s90'], out: 3 }, // ceil(90/40) = 3
      { ids: ['s80'], out: 2 }, // ceil(80/40) = 2
    ]);
  });

  it('lets the last group reach max.num.groups', () => {
    // max 2. 90 -> [90]; 80: close [90] (1 group), [80]; end: [80] is the 2nd group.
    const groups = buildClusteringGroupsForPartition('p', [slice('s90', 90), slice('s80', 80)], grouping({ maxNumGroups: 2 }));
    assert.deepEqual(
      summary(groups).map((group) => group.ids),
      [['s90'], ['s80']],
    );
    // max 1: 80 closes [90] -> 1 group = max -> stop; [80] never becomes a group.
    const capped = buildClusteringGroupsForPartition('p', [slice('s90', 90), slice('s80', 80)], grouping({ maxNumGroups: 1 }));
    assert.deepEqual(
      summary(capped).map((group) => group.ids),
      [['s90']],
    );
  });

  it('returns nothing for no slices, and refuses slices of another partition', () => {
    assert.deepEqual(buildClusteringGroupsForPartition('p', [], grouping()), []);
    assert.throws(() => buildClusteringGroupsForPartition('p', [slice('x', 1, 'q')], grouping()), HudiError);
  });

  it("writes slices as Hudi's HoodieSliceInfo", () => {
    const [group] = buildClusteringGroupsForPartition('2024/01/01', [slice('f1', 10, '2024/01/01')], grouping());
    assert.deepEqual(group!.slices, [
      {
        dataFilePath: 's3://bucket/table/2024/01/01/f1_0-1-2_20240101000000000.parquet',
        deltaFilePaths: [],
        fileId: 'f1',
        partitionPath: '2024/01/01',
        bootstrapFilePath: '',
        version: 1,
      },
    ]);
    assert.equal(group!.extraMetadata, null);
    assert.equal(group!.version, 1);
  });
});

describe('buildGroupMetrics', () => {
  it("sums the group's base files and rounds each total down to whole MB", () => {
    // read = 1572864 + 786432 = 2359296 bytes = 2.25 MB -> 2; write = same bytes -> 2; IO = 2 + 2 = 4.
    assert.deepEqual(buildGroupMetrics([slice('a', 1.5 * MIB), slice('b', 0.75 * MIB)]), {
      TOTAL_LOG_FILES: 0,
      TOTAL_IO_MB: 4,
      TOTAL_IO_READ_MB: 2,
      TOTAL_LOG_FILES_SIZE: 0,
      TOTAL_IO_WRITE_MB: 2,
    });
  });

  it("counts a zero-byte base file's write as hoodie.parquet.max.file.size (120 MB)", () => {
    // read = 0 + 1 MB = 1; write = 125829120 + 1048576 = 126877696 bytes = 121 MB; IO = 122.
    assert.deepEqual(buildGroupMetrics([slice('empty', 0), slice('one', MIB)]), {
      TOTAL_LOG_FILES: 0,
      TOTAL_IO_MB: 122,
      TOTAL_IO_READ_MB: 1,
      TOTAL_LOG_FILES_SIZE: 0,
      TOTAL_IO_WRITE_MB: 121,
    });
  });

  it('lists the metrics in the order Hudi writes them', () => {
    assert.deepEqual(Object.keys(buildGroupMetrics([])), ['TOTAL_LOG_FILES', 'TOTAL_IO_MB', 'TOTAL_IO_READ_MB', 'TOTAL_LOG_FILES_SIZE', 'TOTAL_IO_WRITE_MB']);
  });
});

/** A merge-on-read slice: a base file of `baseFileSize` bytes (none when undefined) and log files of these sizes. */
function morSlice(fileId: string, baseFileSize: number | undefined, logSizes: readonly number[], partitionPath = 'p'): FileSliceInput {
  const base = slice(fileId, baseFileSize ?? 0, partitionPath);
  return {
    ...base,
    baseFilePath: baseFileSize === undefined ? '' : base.baseFilePath,
    logFiles: logSizes.map((size, index) => ({
      path: `s3://bucket/table/${partitionPath}/.${fileId}_20240101000000000.log.${logSizes.length - index}_0-1-2`,
      size,
    })),
  };
}

describe('merge-on-read slices', () => {
  const grouping = (overrides: Partial<ClusteringConfig> = {}) => configWith(overrides);
  it("lists a slice's log files as deltaFilePaths in the slice's order, and an absent base file as ''", () => {
    const [group] = buildClusteringGroupsForPartition('p', [morSlice('f1', 10, [3, 2]), morSlice('f2', undefined, [5])], grouping());
    assert.deepEqual(
      group!.slices.map((info) => [info.fileId, info.dataFilePath, info.deltaFilePaths]),
      [
        ['f2', '', ['s3://bucket/table/p/.f2_20240101000000000.log.1_0-1-2']],
        [
          'f1',
          's3://bucket/table/p/f1_0-1-2_20240101000000000.parquet',
          ['s3://bucket/table/p/.f1_20240101000000000.log.2_0-1-2', 's3://bucket/table/p/.f1_20240101000000000.log.1_0-1-2'],
        ],
      ],
      'the slice of log files only counts as hoodie.parquet.max.file.size, so it sorts first',
    );
  });

  it('groups a slice of log files only as 120 MB (hoodie.parquet.max.file.size), a slice with a base file by that file', () => {
    const groups = buildClusteringGroupsForPartition(
      'p',
      [morSlice('a', MIB, [50 * MIB]), morSlice('logs', undefined, [MIB]), morSlice('b', MIB, [])],
      grouping({ maxBytesPerGroup: 121 * MIB, targetFileMaxBytes: 100 * MIB }),
    );
    // 120 MB + 1 MB fits 121 MB; the next 1 MB does not. The log bytes of `a` do not count.
    assert.deepEqual(summary(groups), [
      { ids: ['logs', 'a'], out: 2 },
      { ids: ['b'], out: 1 },
    ]);
  });

  it('is eligible whatever its log bytes when its base file is under small.file.limit, and always without a base file', () => {
    const slices = [morSlice('small', 10, [10 * MIB]), morSlice('large', 100, []), morSlice('logs', undefined, [10 * MIB])];
    assert.deepEqual(
      getEligibleSlices(slices, new Set(), 50).map((s) => s.fileId),
      ['small', 'logs'],
    );
  });

  it("counts log files and their bytes in the group's metrics (FileSliceMetricUtils)", () => {
    // read = (1.5 MB base + 0.75 MB + 0.5 MB logs) = 2.75 MB -> 2; write = 1.5 MB + 120 MB (no base) = 121.5 -> 121.
    assert.deepEqual(buildGroupMetrics([morSlice('a', 1.5 * MIB, [0.5 * MIB]), morSlice('b', undefined, [0.25 * MIB, 0.5 * MIB])]), {
      TOTAL_LOG_FILES: 3,
      TOTAL_IO_MB: 123,
      TOTAL_IO_READ_MB: 2,
      TOTAL_LOG_FILES_SIZE: 1.25 * MIB,
      TOTAL_IO_WRITE_MB: 121,
    });
  });
});

describe('buildClusteringPlan', () => {
  it('reproduces the plan Hudi 0.15 scheduled (CALL run_clustering) on a generated table, from the same files', async () => {
    const expected = expectedOf('v6_clustering_pending');
    const table = committedTable('v6_clustering_pending');
    const instant = expected.facts?.['clusteringInstant'];
    const hudi = await readOfficial(readFileSync(join(table, '.hoodie', `${instant}.replacecommit.requested`)), 'HoodieRequestedReplaceMetadata');
    const hudiPlan = (hudi.record as { clusteringPlan: ClusteringPlan }).clusteringPlan;
    // The plan names files by the absolute path of the folder Spark wrote in; the inputs are the files on disk.
    const firstPath = hudiPlan.inputGroups[0]!.slices[0]!.dataFilePath;
    const firstFile = expected.fileGroups.flatMap((group) => group.files).find((file) => firstPath.endsWith(`/${file}`));
    assert.ok(firstFile, firstPath);
    const base = firstPath.slice(0, firstPath.length - firstFile.length - 1);
    const latestSlices: FileSliceInput[] = expected.fileGroups.map((group) => {
      const file = group.files.at(-1)!;
      return {
        fileId: group.fileId,
        partitionPath: group.partitionPath,
        baseFilePath: `${base}/${file}`,
        baseFileSize: statSync(join(table, file)).size,
        instantTime: instantOfFile(file),
      };
    });
    assert.equal(latestSlices.length, 6);
    // Partitions in the order Hudi listed them (an input, like the files).
    const listed = [...new Set(hudiPlan.inputGroups.map((group) => group.slices[0]!.partitionPath))];
    assert.deepEqual([...listed].sort(), ['dt=2024-01-01', 'dt=2024-01-02']);
    const partitionPaths = filterPartitions(listed, DEFAULT_CLUSTERING_CONFIG);
    const plan = buildClusteringPlan({ partitionPaths, latestSlices, pendingFileGroupIds: new Set(), config: DEFAULT_CLUSTERING_CONFIG });
    // Each file is far under 1 MB, so every metric is 0.
    assert.deepEqual(plan, hudiPlan);
    // Same field order too, so the JSON text is identical.
    assert.equal(JSON.stringify(plan), JSON.stringify(hudiPlan));
  });

  const twoPartitions = [
    // p1: sorted 90, 80, 30 with max 100: [90] closed, 80 + 30 = 110 > 100 -> [80] closed, [30] last -> 3 groups.
    slice('p1-a', 90, 'p1'),
    slice('p1-b', 80, 'p1'),
    slice('p1-c', 30, 'p1'),
    // p2: 50 + 40 = 90 <= 100 -> one group.
    slice('p2-a', 50, 'p2'),
    slice('p2-b', 40, 'p2'),
    // p3 is not planned.
    slice('p3-a', 10, 'p3'),
  ];
  const planConfig = (overrides: Partial<ClusteringConfig> = {}) => configWith({ maxBytesPerGroup: 100, targetFileMaxBytes: 40, ...overrides });

  it('groups partition by partition in the given order', () => {
    const plan = buildClusteringPlan({ partitionPaths: ['p2', 'p1'], latestSlices: twoPartitions, pendingFileGroupIds: new Set(), config: planConfig() })!;
    assert.deepEqual(summary(plan.inputGroups), [
      { ids: ['p2-a', 'p2-b'], out: 3 }, // ceil(90/40) = 3
      { ids: ['p1-a'], out: 3 }, // ceil(90/40) = 3
      { ids: ['p1-b'], out: 2 }, // ceil(80/40) = 2
      { ids: ['p1-c'], out: 1 }, // ceil(30/40) = 1
    ]);
  });

  it('cuts at max.num.groups across partitions', () => {
    // max 2: p1 alone gives [90], [80] (the 2nd close reaches the cap, 30 waits); p2 gets no group.
    const plan = buildClusteringPlan({
      partitionPaths: ['p1', 'p2'],
      latestSlices: twoPartitions,
      pendingFileGroupIds: new Set(),
      config: planConfig({ maxNumGroups: 2 }),
    })!;
    assert.deepEqual(
      summary(plan.inputGroups).map((group) => group.ids),
      [['p1-a'], ['p1-b']],
    );
    // max 3 with p2 first: p2's one group, then p1's first two of three.
    const three = buildClusteringPlan({
      partitionPaths: ['p2', 'p1'],
      latestSlices: twoPartitions,
      pendingFileGroupIds: new Set(),
      config: planConfig({ maxNumGroups: 3 }),
    })!;
    assert.deepEqual(
      summary(three.inputGroups).map((group) => group.ids),
      [['p2-a', 'p2-b'], ['p1-a'], ['p1-b']],
    );
  });

  it('applies small.file.limit and pending file groups before grouping', () => {
    // Limit 85: p1-a (90) is not small; p2-a is pending. p1: 80 + 30 = 110 > 100 -> [80], [30]. p2: [40].
    const plan = buildClusteringPlan({
      partitionPaths: ['p1', 'p2'],
      latestSlices: twoPartitions,
      pendingFileGroupIds: new Set([fileGroupKey('p2', 'p2-a')]),
      config: planConfig({ smallFileLimitBytes: 85 }),
    })!;
    assert.deepEqual(
      summary(plan.inputGroups).map((group) => group.ids),
      [['p1-b'], ['p1-c'], ['p2-b']],
    );
  });

  it('plans a partition named twice only once', () => {
    const plan = buildClusteringPlan({ partitionPaths: ['p2', 'p2'], latestSlices: twoPartitions, pendingFileGroupIds: new Set(), config: planConfig() })!;
    assert.deepEqual(
      summary(plan.inputGroups).map((group) => group.ids),
      [['p2-a', 'p2-b']],
    );
  });

  it('puts the sort columns in strategyParams and the configured classes and flags in the plan', () => {
    const plan = buildClusteringPlan({
      partitionPaths: ['p2'],
      latestSlices: twoPartitions,
      pendingFileGroupIds: new Set(),
      config: planConfig({ sortColumns: ['city', 'ts'], preserveCommitMetadata: false }),
    })!;
    assert.deepEqual(plan.strategy, {
      strategyClassName: 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy',
      strategyParams: { 'hoodie.clustering.plan.strategy.sort.columns': 'city,ts' },
      version: 1,
    });
    assert.equal(plan.preserveHoodieMetadata, false);
    assert.deepEqual(plan.extraMetadata, {});
    assert.equal(plan.version, 1);
    // A plain value: survives a JSON round trip unchanged.
    assert.deepEqual(JSON.parse(JSON.stringify(plan)), plan);
  });

  it('returns undefined when there is nothing to cluster', () => {
    const none = (partitionPaths: string[], config = planConfig()) =>
      buildClusteringPlan({ partitionPaths, latestSlices: twoPartitions, pendingFileGroupIds: new Set(), config });
    assert.equal(none([]), undefined);
    assert.equal(none(['missing']), undefined);
    // p3 has one slice and single-slice groups are off.
    assert.equal(none(['p3'], planConfig({ singleGroupClusteringEnabled: false })), undefined);
    // Nothing is smaller than 10 bytes.
    assert.equal(none(['p1', 'p2', 'p3'], planConfig({ smallFileLimitBytes: 10 })), undefined);
  });
});
