import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  CLUSTERING_KEYS,
  DEFAULT_CLUSTERING_CONFIG,
  envVarForKey,
  FLINK_CLUSTERING_ALIASES,
  JAVA_SIZE_BASED_PLAN_STRATEGY,
  parseProperties,
  resolveClusteringConfig,
  SPARK_SIZE_BASED_PLAN_STRATEGY,
  SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY,
} from '../../lib/clustering/config.js';
import { validateSortColumns } from '../../lib/clustering/sort-columns.js';
import { HudiError } from '../../lib/errors.js';
import { formatJavaProperties, parseJavaProperties } from '../../lib/table/properties.js';
import { ALLOW_UPDATE_STRATEGY, REJECT_UPDATE_STRATEGY } from '../../lib/table/updates-strategy.js';
import { committedTable } from '../helpers/fixtures.js';

/** A hoodie.properties Hudi wrote (0.15 downgrading a table to version 5: the header says 'Updated at'). */
const HUDI_WRITTEN_PROPERTIES = join(committedTable('v5_cow_clustered_pending'), '.hoodie/hoodie.properties');

/** assert.throws for a HudiError whose message contains every fragment. */
function assertHudiError(action: () => unknown, ...fragments: string[]): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof HudiError, `expected a HudiError, got ${String(error)}`);
    for (const fragment of fragments) assert.ok(error.message.includes(fragment), `"${error.message}" should contain "${fragment}"`);
    return true;
  });
}

describe('parseJavaProperties', () => {
  it('reads =, : and whitespace separators, skipping comments and blank lines', () => {
    const text = ['# a comment', '! another comment', '', '   ', 'a=1', 'b: 2', 'c 3', '  d   =   4', 'e:=5', 'f', 'g=', 'h = trailing spaces stay   '].join(
      '\n',
    );
    assert.deepEqual(
      [...parseJavaProperties(text)],
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
        ['d', '4'],
        // Only one separator is eaten: the second becomes part of the value.
        ['e', '=5'],
        ['f', ''],
        ['g', ''],
        ['h', 'trailing spaces stay   '],
      ],
    );
  });

  it('resolves escapes, including \\uXXXX and escaped separators in keys', () => {
    const text = String.raw`key\:with\=seps\ and\ space=v\:1\\2\t\n\u00e9\u4e2d\q`;
    assert.deepEqual([...parseJavaProperties(text)], [['key:with=seps and space', 'v:1\\2\t\n\u00e9\u4e2dq']]);
  });

  it("joins continuation lines, dropping the next line's leading whitespace", () => {
    const text = 'list=a,\\\n    b,\\\r\n\tc\nnext=1\neven=x\\\\\nafter=2';
    assert.deepEqual(
      [...parseJavaProperties(text)],
      [
        ['list', 'a,b,c'],
        ['next', '1'],
        // An even number of backslashes is an escaped backslash, not a continuation.
        ['even', 'x\\'],
        ['after', '2'],
      ],
    );
  });

  it('does not continue comment lines, and treats # after a continuation as data', () => {
    const text = '# comment \\\nkey=value\\\n#not-a-comment\nother=1';
    assert.deepEqual(
      [...parseJavaProperties(text)],
      [
        ['key', 'value#not-a-comment'],
        ['other', '1'],
      ],
    );
  });

  it('handles CR-only and CRLF line ends and a trailing backslash at the end of the text', () => {
    assert.deepEqual(
      [...parseJavaProperties('a=1\rb=2\r\nc=3\\')],
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
      ],
    );
  });

  it('keeps the last value of a repeated key', () => {
    assert.equal(parseJavaProperties('a=1\na=2').get('a'), '2');
  });

  it('refuses a malformed \\u escape, naming the file and line', () => {
    assertHudiError(() => parseJavaProperties('ok=1\n\nbad=\\u12G4', 'job.properties'), 'job.properties:3', '\\u12G4');
  });

  it('reads a real hoodie.properties (escaped colons in the schema)', () => {
    const text = readFileSync(HUDI_WRITTEN_PROPERTIES, 'utf8');
    const properties = parseJavaProperties(text);
    assert.equal(properties.get('hoodie.table.name'), 'v5_cow_clustered_pending');
    assert.equal(properties.get('hoodie.table.partition.fields'), 'dt,hh');
    assert.ok(properties.get('hoodie.table.create.schema')!.startsWith('{"type":"record","name":"v5_cow_clustered_pending_record"'));
    assert.equal(properties.get('hoodie.table.metadata.partitions'), '');
    assert.equal(properties.size, 21);
  });
});

describe('formatJavaProperties', () => {
  it('escapes : = \\ # ! and non-ASCII as Java does, and writes header comments', () => {
    const text = formatJavaProperties(
      new Map([
        ['hoodie.table.create.schema', '{"a":"b=c"}'],
        ['path', 'C:\\data'],
        ['key with space', ' leading space, inner space'],
        ['unicode', 'é中😀'],
        ['control', 'tab\tnl\ncr\rff\f\u0001'],
        ['marks', '#!'],
      ]),
      ['Updated at 2024-01-01T00:00:00Z', 'Mon Jan 01 00:00:00 UTC 2024'],
    );
    assert.equal(
      text,
      [
        '#Updated at 2024-01-01T00:00:00Z',
        '#Mon Jan 01 00:00:00 UTC 2024',
        'hoodie.table.create.schema={"a"\\:"b\\=c"}',
        'path=C\\:\\\\data',
        'key\\ with\\ space=\\ leading space, inner space',
        // Surrogate pairs are escaped unit by unit, hex upper-case.
        'unicode=\\u00E9\\u4E2D\\uD83D\\uDE00',
        'control=tab\\tnl\\ncr\\rff\\f\\u0001',
        'marks=\\#\\!',
        '',
      ].join('\n'),
    );
  });

  it('continues a multi-line comment with # and escapes non-ASCII in it', () => {
    assert.equal(formatJavaProperties([], ['one\ntwo\r\n!three', 'é']), '#one\n#two\n!three\n#\\u00E9\n');
  });

  it('round-trips through parseJavaProperties', () => {
    const entries = new Map([
      ['a:b=c d', 'x = y : z \\ é 中 😀 #!'],
      ['empty', ''],
      [' lead', '  two leading spaces'],
    ]);
    assert.deepEqual(parseJavaProperties(formatJavaProperties(entries, ['header'])), entries);
  });

  it('reproduces a real hoodie.properties after its two date comments', () => {
    const text = readFileSync(HUDI_WRITTEN_PROPERTIES, 'utf8');
    const [first, second, ...body] = text.split('\n');
    const header = [first!.slice(1), second!.slice(1)];
    assert.equal(formatJavaProperties(parseJavaProperties(text), header), [first, second, ...body].join('\n'));
  });
});

describe('CLUSTERING_KEYS and defaults', () => {
  it("lists every key of seed 000 with Hudi's defaults", () => {
    const defaults = Object.fromEntries(CLUSTERING_KEYS.map((spec) => [spec.key, spec.defaultText]));
    assert.deepEqual(defaults, {
      'hoodie.clustering.inline': 'false',
      'hoodie.clustering.inline.max.commits': '4',
      'hoodie.clustering.schedule.inline': 'false',
      'hoodie.clustering.async.enabled': 'false',
      'hoodie.clustering.async.max.commits': '4',
      'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy',
      'hoodie.clustering.execution.strategy.class': 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy',
      'hoodie.clustering.plan.partition.filter.mode': 'NONE',
      'hoodie.clustering.plan.strategy.daybased.lookback.partitions': '2',
      'hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions': '0',
      'hoodie.clustering.plan.strategy.cluster.begin.partition': '',
      'hoodie.clustering.plan.strategy.cluster.end.partition': '',
      'hoodie.clustering.plan.strategy.partition.regex.pattern': '',
      'hoodie.clustering.plan.strategy.partition.selected': '',
      'hoodie.clustering.plan.strategy.small.file.limit': '314572800',
      'hoodie.clustering.plan.strategy.max.bytes.per.group': '2147483648',
      'hoodie.clustering.plan.strategy.max.num.groups': '30',
      'hoodie.clustering.plan.strategy.target.file.max.bytes': '1073741824',
      'hoodie.clustering.plan.strategy.single.group.clustering.enabled': 'true',
      'hoodie.clustering.plan.strategy.sort.columns': '',
      // Ours, not Hudi's (binary copy's schema evolution key is Hudi 1.1's).
      'hoodie.clustering.plan.strategy.max.files.per.group': '10000',
      'hoodie.clustering.plan.strategy.binary.copy.enable': 'true',
      'hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable': 'false',
      'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '4194304',
      'hoodie.clustering.max.parallelism': '15',
      'hoodie.clustering.group.read.parallelism': '20',
      'hoodie.clustering.updates.strategy': 'org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy',
      'hoodie.clustering.rollback.pending.replacecommit.on.conflict': 'false',
      'hoodie.clustering.preserve.commit.metadata': 'true',
      // Hudi 1.x's (HoodieWriteConfig), read for table versions 8 and 9 only.
      'hoodie.table.services.incremental.enabled': 'true',
      'hoodie.layout.optimize.strategy': 'LINEAR',
      'hoodie.layout.optimize.curve.build.method': 'DIRECT',
      'hoodie.layout.optimize.build.curve.sample.size': '200000',
      'hoodie.layout.optimize.data.skipping.enable': 'true',
      'hoodie.layout.optimize.enable': 'false',
    });
    for (const spec of CLUSTERING_KEYS) {
      assert.ok(spec.description.length > 10 && !spec.description.includes('\n'), `${spec.key} needs a one-line description`);
      assert.equal(spec.envVar, envVarForKey(spec.key));
    }
  });

  it('resolves to a frozen config with the defaults as numbers, enums and lists', () => {
    const { config, warnings } = resolveClusteringConfig();
    assert.deepEqual(warnings, []);
    assert.deepEqual(config, {
      inlineClustering: false,
      inlineMaxCommits: 4,
      scheduleInlineClustering: false,
      asyncClusteringEnabled: false,
      asyncMaxCommits: 4,
      planStrategyClass: SPARK_SIZE_BASED_PLAN_STRATEGY,
      executionStrategyClass: SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY,
      partitionFilterMode: 'NONE',
      lookbackPartitions: 2,
      skipFromLatestPartitions: 0,
      beginPartition: undefined,
      endPartition: undefined,
      partitionRegexPattern: undefined,
      partitionSelected: [],
      smallFileLimitBytes: 314572800,
      maxBytesPerGroup: 2147483648,
      maxNumGroups: 30,
      targetFileMaxBytes: 1073741824,
      singleGroupClusteringEnabled: true,
      sortColumns: [],
      maxParallelism: 15,
      groupReadParallelism: 20,
      updatesStrategyClass: REJECT_UPDATE_STRATEGY,
      rollbackPendingClusteringOnConflict: false,
      preserveCommitMetadata: true,
      incrementalTableServices: true,
      binaryCopyEnabled: true,
      binaryCopySchemaEvolution: false,
      binaryCopyMinRowGroupBytes: 4194304,
      maxFilesPerGroup: 10000,
      layoutOptimizationStrategy: 'linear',
      curveBuildMethod: 'direct',
      buildCurveSampleSize: 200000,
    });
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.sortColumns));
    assert.ok(Object.isFrozen(config.partitionSelected));
    assert.deepEqual(DEFAULT_CLUSTERING_CONFIG, config);
  });

  it("takes Hudi 1.1's binary-copy executor as asking for binary copy, and plans name one Hudi 0.15 runs", () => {
    const { config, warnings } = resolveClusteringConfig({
      event: { 'hoodie.clustering.execution.strategy.class': 'org.apache.hudi.client.clustering.run.strategy.SparkBinaryCopyClusteringExecutionStrategy' },
    });
    assert.equal(config.executionStrategyClass, SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY);
    assert.equal(config.binaryCopyEnabled, true);
    assert.match(warnings.join('\n'), /Hudi 1\.1's/);
    assert.throws(
      () =>
        resolveClusteringConfig({
          event: {
            'hoodie.clustering.execution.strategy.class': 'org.apache.hudi.client.clustering.run.strategy.SparkBinaryCopyClusteringExecutionStrategy',
            'hoodie.clustering.plan.strategy.binary.copy.enable': 'false',
          },
        }),
      /contradicts/,
    );
  });

  it('maps keys to environment variable names', () => {
    assert.equal(envVarForKey('hoodie.clustering.plan.strategy.sort.columns'), 'HOODIE_CLUSTERING_PLAN_STRATEGY_SORT_COLUMNS');
    assert.equal(envVarForKey('hoodie.layout.optimize.strategy'), 'HOODIE_LAYOUT_OPTIMIZE_STRATEGY');
  });
});

describe('resolveClusteringConfig sources', () => {
  const file = (text: string) => ({ location: 'clusteringjob.properties', properties: parseProperties(text, 'clusteringjob.properties') });

  it("reads the seed's example clusteringjob.properties", () => {
    const { config, warnings } = resolveClusteringConfig({
      file: file(
        [
          'hoodie.clustering.async.enabled=true  ',
          'hoodie.clustering.async.max.commits=4  ',
          'hoodie.clustering.plan.strategy.target.file.max.bytes=1073741824  ',
          'hoodie.clustering.plan.strategy.small.file.limit=629145600  ',
          'hoodie.clustering.execution.strategy.class=org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy  ',
          'hoodie.clustering.plan.strategy.sort.columns=column1,column2',
        ].join('\n'),
      ),
    });
    assert.deepEqual(warnings, []);
    assert.equal(config.asyncClusteringEnabled, true);
    assert.equal(config.smallFileLimitBytes, 629145600);
    assert.equal(config.executionStrategyClass, SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY);
    assert.deepEqual(config.sortColumns, ['column1', 'column2']);
  });

  it('applies event > env > file > defaults', () => {
    const { config } = resolveClusteringConfig({
      file: file('hoodie.clustering.plan.strategy.max.num.groups=10\nhoodie.clustering.plan.strategy.sort.columns=a\nhoodie.clustering.max.parallelism=3'),
      env: { HOODIE_CLUSTERING_PLAN_STRATEGY_MAX_NUM_GROUPS: '20', HOODIE_CLUSTERING_PLAN_STRATEGY_SORT_COLUMNS: 'b,c' },
      event: { 'hoodie.clustering.plan.strategy.max.num.groups': 40 },
    });
    assert.equal(config.maxNumGroups, 40); // event beats env and file
    assert.deepEqual(config.sortColumns, ['b', 'c']); // env beats file
    assert.equal(config.maxParallelism, 3); // file beats the default 15
    assert.equal(config.maxBytesPerGroup, 2147483648); // default
  });

  it('ignores unrelated and empty environment variables, warns about unknown clustering ones', () => {
    const { config, warnings } = resolveClusteringConfig({
      env: { PATH: '/usr/bin', HOODIE_CLUSTERING_INLINE_MAX_COMMITS: '', HOODIE_CLUSTERING_PLAN_STRATEGY_MAX_GROUPS: '5', AWS_REGION: 'eu-west-1' },
    });
    assert.equal(config.inlineMaxCommits, 4);
    assert.deepEqual(warnings, [
      "environment: unknown clustering variable HOODIE_CLUSTERING_PLAN_STRATEGY_MAX_GROUPS ignored (variables are the key upper-cased with '.' as '_')",
    ]);
  });

  it('accepts event values as strings, numbers, booleans and string lists; skips null', () => {
    const { config } = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.sort.columns': ['city', 'ts'],
        'hoodie.clustering.plan.strategy.partition.selected': ['2024/01/01', '2024/01/02'],
        'hoodie.clustering.plan.strategy.single.group.clustering.enabled': false,
        'hoodie.clustering.plan.strategy.small.file.limit': 1048576,
        'hoodie.clustering.plan.strategy.cluster.begin.partition': null,
      },
    });
    assert.deepEqual(config.sortColumns, ['city', 'ts']);
    assert.deepEqual(config.partitionSelected, ['2024/01/01', '2024/01/02']);
    assert.equal(config.singleGroupClusteringEnabled, false);
    assert.equal(config.smallFileLimitBytes, 1048576);
    assert.equal(config.beginPartition, undefined);
  });

  it('refuses an event value of an unusable type, naming the key', () => {
    assertHudiError(
      () => resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.max.num.groups': { value: 3 } } }),
      'hoodie.clustering.plan.strategy.max.num.groups',
      'Lambda event properties',
    );
  });

  it('trims list entries and drops empty ones', () => {
    const { config } = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': ' begin_lat, begin_lon ,,' } });
    assert.deepEqual(config.sortColumns, ['begin_lat', 'begin_lon']);
  });

  it('reads the older hoodie.datasource.clustering.* names, the hoodie.* name winning', () => {
    assert.equal(resolveClusteringConfig({ event: { 'hoodie.datasource.clustering.inline.enable': 'true' } }).config.inlineClustering, true);
    const { config, warnings } = resolveClusteringConfig({
      event: { 'hoodie.datasource.clustering.async.enable': 'true', 'hoodie.clustering.async.enabled': 'false' },
    });
    assert.equal(config.asyncClusteringEnabled, false);
    assert.deepEqual(warnings, [
      'Lambda event properties: hoodie.datasource.clustering.async.enable ignored because hoodie.clustering.async.enabled is also set',
    ]);
  });
});

describe('Flink clustering.* aliases', () => {
  it('maps Flink options onto the Spark keys, converting small.file.limit from MB', () => {
    const { config, warnings } = resolveClusteringConfig({
      event: {
        'clustering.schedule.enabled': 'true',
        'clustering.delta_commits': '6',
        'clustering.tasks': '8',
        'clustering.plan.strategy.daybased.lookback.partitions': '5',
        'clustering.plan.strategy.daybased.skipfromlatest.partitions': '1',
        'clustering.plan.strategy.cluster.begin.partition': '2024/01/01',
        'clustering.plan.strategy.cluster.end.partition': '2024/01/31',
        'clustering.plan.strategy.partition.regex.pattern': '2024/.*',
        'clustering.plan.strategy.partition.selected': '',
        'clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.FlinkSizeBasedClusteringPlanStrategy',
        'clustering.plan.partition.filter.mode': 'RECENT_DAYS',
        'clustering.plan.strategy.target.file.max.bytes': '536870912',
        // Flink's unit is MB: 600 MB = 600 * 1048576 = 629145600 bytes.
        'clustering.plan.strategy.small.file.limit': '600',
        'clustering.plan.strategy.sort.columns': 'uuid',
        'clustering.plan.strategy.max.num.groups': '12',
      },
    });
    assert.deepEqual(warnings, []);
    assert.equal(config.asyncClusteringEnabled, true);
    assert.equal(config.asyncMaxCommits, 6);
    assert.equal(config.maxParallelism, 8);
    assert.equal(config.lookbackPartitions, 5);
    assert.equal(config.skipFromLatestPartitions, 1);
    assert.equal(config.beginPartition, '2024/01/01');
    assert.equal(config.endPartition, '2024/01/31');
    assert.equal(config.partitionRegexPattern, '2024/.*');
    assert.deepEqual(config.partitionSelected, []); // Flink's '' default means unset
    assert.equal(config.planStrategyClass, 'org.apache.hudi.client.clustering.plan.strategy.FlinkSizeBasedClusteringPlanStrategy');
    assert.equal(config.partitionFilterMode, 'RECENT_DAYS');
    assert.equal(config.targetFileMaxBytes, 536870912);
    assert.equal(config.smallFileLimitBytes, 629145600);
    assert.deepEqual(config.sortColumns, ['uuid']);
    assert.equal(config.maxNumGroups, 12);
  });

  it('documents every Flink option of seed 000', () => {
    const flinkKeys = FLINK_CLUSTERING_ALIASES.map((alias) => alias.flinkKey).sort();
    assert.deepEqual(flinkKeys, [
      'clustering.async.enabled',
      'clustering.delta_commits',
      'clustering.plan.partition.filter.mode',
      'clustering.plan.strategy.class',
      'clustering.plan.strategy.cluster.begin.partition',
      'clustering.plan.strategy.cluster.end.partition',
      'clustering.plan.strategy.daybased.lookback.partitions',
      'clustering.plan.strategy.daybased.skipfromlatest.partitions',
      'clustering.plan.strategy.max.num.groups',
      'clustering.plan.strategy.partition.regex.pattern',
      'clustering.plan.strategy.partition.selected',
      'clustering.plan.strategy.small.file.limit',
      'clustering.plan.strategy.sort.columns',
      'clustering.plan.strategy.target.file.max.bytes',
      'clustering.schedule.enabled',
      'clustering.tasks',
    ]);
    const smallFile = FLINK_CLUSTERING_ALIASES.find((alias) => alias.flinkKey === 'clustering.plan.strategy.small.file.limit')!;
    assert.equal(smallFile.flinkDefault, '600');
    assert.equal(smallFile.unit, 'megabytes');
  });

  it('lets the hoodie.* key beat its Flink alias in the same source, with a warning', () => {
    const { config, warnings } = resolveClusteringConfig({
      file: {
        location: 'job.properties',
        properties: new Map([
          ['clustering.plan.strategy.small.file.limit', '100'],
          ['hoodie.clustering.plan.strategy.small.file.limit', '1000'],
        ]),
      },
    });
    assert.equal(config.smallFileLimitBytes, 1000);
    assert.deepEqual(warnings, [
      'job.properties: clustering.plan.strategy.small.file.limit ignored because hoodie.clustering.plan.strategy.small.file.limit is also set',
    ]);
  });

  it('lets a Flink alias in a higher source beat a hoodie.* key in a lower one', () => {
    const { config } = resolveClusteringConfig({
      file: { location: 'job.properties', properties: new Map([['hoodie.clustering.plan.strategy.max.num.groups', '3']]) },
      event: { 'clustering.plan.strategy.max.num.groups': 7 },
    });
    assert.equal(config.maxNumGroups, 7);
  });

  it('warns that clustering.async.enabled has no effect here', () => {
    const { warnings } = resolveClusteringConfig({ event: { 'clustering.async.enabled': true } });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /clustering\.async\.enabled has no effect here/);
  });

  it('refuses a non-numeric Flink small file limit, naming the Flink key', () => {
    assertHudiError(
      () => resolveClusteringConfig({ event: { 'clustering.plan.strategy.small.file.limit': '600MB' } }),
      'clustering.plan.strategy.small.file.limit="600MB"',
      'megabytes',
    );
  });
});

describe('unknown and deprecated keys', () => {
  it('warns about unknown hoodie.clustering.* / hoodie.layout.optimize* / clustering.* keys with a suggestion, and ignores others', () => {
    const { warnings } = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.max.num.group': '3',
        // Seed 000's spelling of hoodie.layout.optimize.build.curve.sample.size.
        'hoodie.layout.optimizebuild.curve.sample.size': '1000',
        // Seed 000's spelling, without ".strategy".
        'hoodie.clustering.plan.partition.regex.pattern': '.*',
        'clustering.plan.strategy.made.up': 'x',
        'hoodie.parquet.max.file.size': '1',
        'hoodie.table.name': 't',
      },
    });
    assert.deepEqual(warnings, [
      'Lambda event properties: unknown clustering key hoodie.clustering.plan.strategy.max.num.group ignored; did you mean hoodie.clustering.plan.strategy.max.num.groups?',
      'Lambda event properties: unknown clustering key hoodie.layout.optimizebuild.curve.sample.size ignored; did you mean hoodie.layout.optimize.build.curve.sample.size?',
      'Lambda event properties: unknown clustering key hoodie.clustering.plan.partition.regex.pattern ignored; did you mean hoodie.clustering.plan.strategy.partition.regex.pattern?',
      'Lambda event properties: unknown clustering key clustering.plan.strategy.made.up ignored',
    ]);
  });

  it('warns that deprecated layout keys have no effect, but still checks their values', () => {
    const { warnings } = resolveClusteringConfig({ event: { 'hoodie.layout.optimize.enable': 'true' } });
    assert.deepEqual(warnings, ['Lambda event properties: hoodie.layout.optimize.enable is deprecated and has no effect']);
    assertHudiError(
      () => resolveClusteringConfig({ event: { 'hoodie.layout.optimize.data.skipping.enable': 'yes' } }),
      'hoodie.layout.optimize.data.skipping.enable="yes"',
    );
  });

  it("turns Hudi's deprecated planners into a size-based planner plus a filter mode, as Hudi does", () => {
    const recentDays = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.SparkRecentDaysClusteringPlanStrategy',
        'hoodie.clustering.plan.partition.filter.mode': 'NONE',
      },
    });
    assert.equal(recentDays.config.planStrategyClass, SPARK_SIZE_BASED_PLAN_STRATEGY);
    assert.equal(recentDays.config.partitionFilterMode, 'RECENT_DAYS');
    assert.equal(recentDays.warnings.length, 1);
    const selected = resolveClusteringConfig({
      event: { 'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.SparkSelectedPartitionsClusteringPlanStrategy' },
    });
    assert.equal(selected.config.partitionFilterMode, 'SELECTED_PARTITIONS');
    const java = resolveClusteringConfig({
      event: { 'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.JavaRecentDaysClusteringPlanStrategy' },
    });
    assert.equal(java.config.planStrategyClass, JAVA_SIZE_BASED_PLAN_STRATEGY);
    assert.equal(java.config.partitionFilterMode, 'RECENT_DAYS');
  });
});

describe('invalid values', () => {
  const resolveEvent = (event: Record<string, unknown>) => () => resolveClusteringConfig({ event });

  it('refuses non-numbers, naming key, value and the accepted range', () => {
    assertHudiError(
      resolveEvent({ 'hoodie.clustering.plan.strategy.max.num.groups': 'thirty' }),
      'hoodie.clustering.plan.strategy.max.num.groups="thirty"',
      'not a whole number',
      'from 1 to 2147483647',
      'Lambda event properties',
    );
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.target.file.max.bytes': '1.5' }), 'target.file.max.bytes="1.5"');
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.max.bytes.per.group': '1e9' }), 'max.bytes.per.group="1e9"');
  });

  it('refuses negative sizes and counts below their minimum', () => {
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.small.file.limit': '-1' }), 'small.file.limit="-1"', 'is below 0');
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.max.num.groups': 0 }), 'max.num.groups="0"', 'is below 1');
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.target.file.max.bytes': 0 }), 'target.file.max.bytes="0"', 'is below 1');
  });

  it("refuses an int past Java's int range", () => {
    assertHudiError(resolveEvent({ 'hoodie.clustering.async.max.commits': '2147483648' }), 'async.max.commits="2147483648"', 'too large');
  });

  it('clamps a long past 2^53 (Long.MAX_VALUE as "no limit") with a warning', () => {
    const { config, warnings } = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.max.bytes.per.group': '9223372036854775807' } });
    assert.equal(config.maxBytesPerGroup, Number.MAX_SAFE_INTEGER);
    assert.equal(warnings.length, 1);
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.max.bytes.per.group': '9223372036854775808' }), 'too large');
  });

  it('refuses unknown enum values, listing the accepted ones', () => {
    assertHudiError(
      resolveEvent({ 'hoodie.clustering.plan.partition.filter.mode': 'WEEKLY' }),
      'hoodie.clustering.plan.partition.filter.mode="WEEKLY"',
      'NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING',
    );
    assertHudiError(resolveEvent({ 'hoodie.layout.optimize.strategy': 'morton' }), 'hoodie.layout.optimize.strategy="morton"', 'linear, z-order, hilbert');
    assertHudiError(resolveEvent({ 'hoodie.layout.optimize.curve.build.method': 'guess' }), 'DIRECT, SAMPLE');
    assertHudiError(resolveEvent({ 'hoodie.layout.optimize.strategy': 'constructor' }), 'linear, z-order, hilbert');
    assertHudiError(resolveEvent({ 'hoodie.clustering.plan.strategy.single.group.clustering.enabled': 'yes' }), 'true or false');
    assertHudiError(
      resolveEvent({ 'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy' }),
      'SparkConsistentBucketClusteringPlanStrategy',
      SPARK_SIZE_BASED_PLAN_STRATEGY,
    );
    assertHudiError(resolveEvent({ 'hoodie.clustering.updates.strategy': 'Nope' }), REJECT_UPDATE_STRATEGY, ALLOW_UPDATE_STRATEGY);
  });

  it('names the Flink key and the Spark key when the value came through an alias', () => {
    assertHudiError(
      resolveEvent({ 'clustering.plan.partition.filter.mode': 'HOURLY' }),
      'clustering.plan.partition.filter.mode (hoodie.clustering.plan.partition.filter.mode)="HOURLY"',
    );
  });

  it('names the environment as the location', () => {
    assertHudiError(
      () => resolveClusteringConfig({ env: { HOODIE_CLUSTERING_ASYNC_MAX_COMMITS: 'often' } }),
      'environment: hoodie.clustering.async.max.commits="often"',
    );
  });

  it('refuses an invalid partition regex', () => {
    assertHudiError(
      resolveEvent({ 'hoodie.clustering.plan.strategy.partition.regex.pattern': '2024/(' }),
      'partition.regex.pattern="2024/("',
      'regular expression',
    );
  });

  it("refuses inline clustering together with inline scheduling, as Hudi's validate() does", () => {
    assertHudiError(resolveEvent({ 'hoodie.clustering.inline': 'true', 'hoodie.clustering.schedule.inline': 'true' }), 'both true');
  });
});

describe('enum spellings', () => {
  const layout = (value: string) => resolveClusteringConfig({ event: { 'hoodie.layout.optimize.strategy': value } }).config.layoutOptimizationStrategy;

  it("accepts the layout strategy case-insensitively, z-order also as zorder (Hudi's resolveLayoutOptimizationStrategy)", () => {
    assert.equal(layout('LINEAR'), 'linear');
    assert.equal(layout('Z-Order'), 'z-order');
    assert.equal(layout('ZORDER'), 'z-order');
    assert.equal(layout('hilbert'), 'hilbert');
  });

  it('accepts filter modes and curve build methods case-insensitively', () => {
    const { config } = resolveClusteringConfig({
      event: { 'hoodie.clustering.plan.partition.filter.mode': 'day_rolling', 'hoodie.layout.optimize.curve.build.method': 'Sample' },
    });
    assert.equal(config.partitionFilterMode, 'DAY_ROLLING');
    assert.equal(config.curveBuildMethod, 'sample');
  });

  it('accepts booleans case-insensitively', () => {
    assert.equal(resolveClusteringConfig({ event: { 'hoodie.clustering.async.enabled': 'TRUE' } }).config.asyncClusteringEnabled, true);
  });
});

describe('validateSortColumns', () => {
  const withSortColumns = (sortColumns: string) => resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': sortColumns } }).config;

  it('accepts columns the table has', () => {
    validateSortColumns(withSortColumns('city,ts'), ['uuid', 'city', 'ts']);
    validateSortColumns(DEFAULT_CLUSTERING_CONFIG, []);
  });

  it("names the missing column and lists the table's columns (names are case-sensitive)", () => {
    assertHudiError(
      () => validateSortColumns(withSortColumns('city,Ts'), ['uuid', 'city', 'ts']),
      'sort column "Ts" not in the table',
      'hoodie.clustering.plan.strategy.sort.columns',
      'uuid, city, ts',
    );
  });
});
