/**
 * What clustering a TiB costs on AWS (not a test), from figures measured in the same run, beside Amazon S3 Tables.
 *
 *   npm run bench:cost -- [--group-mb 200] [--layouts no-sort,linear] [--cpu-s-per-gb no-sort:small=1.2,linear:large=6]
 *                         [--s3-mb-per-s 150] [--first-byte-ms 30]
 *
 * 1. Measured: CPU seconds per GB of input of executeGroup (stage, order, write with Hudi footers, upload to a local
 *    table) for each layout, on a group of --group-mb MB of realistic-width rows (about 250 bytes a row) made of
 *    5 MB files ("small") and of 100 MB files ("large"), with the engine settings execute-group's Lambda gets
 *    (lambdaEngineOptions of the template's memory), the input files with Hudi's default bloom filter in their
 *    footers. --cpu-s-per-gb gives figures instead (bench:clustering's).
 * 2. Modelled, for three table shapes (30,000 files of 5 MB; 1,000 of 100 MB; 100 of 1 GB), every file rewritten:
 *    - the groups the planner makes (buildClusteringGroupsForPartition under the default config, capped to what one
 *      execute-group can take, capGroupBytes), each one execute-group invocation;
 *    - S3 requests as S3Storage sends them (downloadRequests, uploadRequests: 16 MiB ranges, 64 MiB parts; checked
 *      against moto in test/storage/storage.test.ts), plus each output's marker, each group's result and heartbeats;
 *    - each group's duration: its CPU seconds over the vCPUs its memory buys (one per 1,769 MB), plus its transfers at
 *      --s3-mb-per-s with --first-byte-ms per request (assumptions, not measured: moto says nothing of S3's speed);
 *    - Lambda GB-seconds at the memory and /tmp of the function the plan names (arm64 price): execute-copy-group
 *      for bin-pack of files binary copy takes (lib/clustering/executor.ts), execute-group for the rest; Step
 *      Functions transitions of the state machine's path (infra/state-machine.asl.json: 9 states + two per group,
 *      the Map iteration's Choice of function and its task).
 *    Prices: lib/serverless/executions/cost.ts (PRICES, S3_TABLES_PRICES), each with its source and date.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ClusteringConfig, resolveClusteringConfig } from '../lib/clustering/config.js';
import { executeGroup } from '../lib/clustering/execute.js';
import { binaryCopyRefusal, EXECUTOR_FUNCTION, executorOf } from '../lib/clustering/executor.js';
import { capGroupBytes, lambdaEngineOptions } from '../lib/clustering/job.js';
import { buildClusteringGroupsForPartition, type FileSliceInput } from '../lib/clustering/plan-strategy.js';
import type { GroupExecution } from '../lib/clustering/report.js';
import { schedule } from '../lib/clustering/schedule.js';
import { openParquetEngine } from '../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { PRICES, S3_TABLES_PRICES } from '../lib/serverless/aws/cost.js';
import { FUNCTIONS } from '../lib/serverless/aws/function-settings.js';
import { downloadRequests, openStorage, type RequestCounts, sumRequestCounts, uploadRequests } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { HEARTBEAT_INTERVAL_MS } from '../lib/timeline/heartbeat.js';
import { createSmallFilesTable } from '../test/helpers/small-files-table.js';

const { values: flags } = parseArgs({
  options: {
    'group-mb': { type: 'string', default: '200' },
    layouts: { type: 'string', default: 'no-sort,linear' },
    'cpu-s-per-gb': { type: 'string' },
    's3-mb-per-s': { type: 'string', default: '150' },
    'first-byte-ms': { type: 'string', default: '30' },
  },
});

const MB = 1024 * 1024;
const GB = 1024 * MB;
const TIB = 1024 * GB;
const SORT_COLUMNS = ['birthday', 'createTime'];
/** About 250 bytes of Parquet a row with 230 bytes of filler (bench:clustering's realistic width). */
const NOTES_BYTES = 230;
const BYTES_PER_ROW = 250;
/** hoodie.index.bloom.num_entries, hoodie.index.bloom.fpp, hoodie.bloom.index.filter.dynamic.max.entries defaults. */
const HUDI_DEFAULT_BLOOM = { numEntries: 60_000, fpp: 0.000_000_001, maxEntries: 100_000 };
/** Lambda gives one vCPU per 1,769 MB of memory (AWS Lambda docs, "Memory and computing power"). */
const MB_PER_VCPU = 1769;
/** stageFiles' downloads in flight (lib/read/reader.ts) and uploads of a group (execute.ts): requests in flight at once. */
const DOWNLOADS_IN_FLIGHT = 8;
const UPLOADS_IN_FLIGHT = 4;
/**
 * Requests of a group besides its transfers: the instant and plan read (GET/HEAD), the heartbeat's first write, the
 * result. An estimate; the transfers themselves (a GET per range, a marker and a PUT or the parts per output) are
 * what the adapter counts, and test/serverless/clustering.test.ts holds a run on moto to exactly that.
 */
const GROUP_OVERHEAD: RequestCounts = { get: 4, head: 4, put: 2 };
/** A run's plan, commit, clean check and archive: timeline reads and writes and listings (an estimate, small beside the groups'). */
const RUN_OVERHEAD: RequestCounts = { get: 60, head: 30, put: 20, list: 20 };
/** Plan and commit, each a 1,024 MB Lambda: seconds assumed per run (planning 100,000 files takes under 10 s, issue 13). */
const RUN_STEP_SECONDS = { plan: 10, commit: 10, 'clean-prepare': 2, archive: 2 } as const;
/** WhichServices, Plan, AnythingToCluster, InlineOrDistributed, ExecuteGroups, Commit, CleanPrepare, CleanNext, Archive. */
const FIXED_TRANSITIONS = 9;
/** Each Map iteration: WhichFunction (its Choice) and ExecuteGroup or ExecuteCopyGroup. */
const TRANSITIONS_PER_GROUP = 2;

type Layout = 'no-sort' | 'linear' | 'z-order';
type FileClass = 'small' | 'large';
const layouts = flags.layouts!.split(',').map((layout) => layout.trim()) as Layout[];
for (const layout of layouts) if (!['no-sort', 'linear', 'z-order'].includes(layout)) throw new Error(`unknown layout ${layout}: no-sort, linear or z-order`);

/**
 * The function the plan step sends this shape's groups to (lib/clustering/executor.ts): bin-pack of files whose row
 * groups binary copy takes goes to execute-copy-group, everything else to execute-group.
 */
function executorFor(layout: Layout, fileBytes: number): (typeof EXECUTOR_FUNCTION)[keyof typeof EXECUTOR_FUNCTION] {
  const config = configFor(layout);
  const refusal = binaryCopyRefusal({
    config,
    slicesWithLogs: 0,
    sortColumns: config.sortColumns,
    populateMetaFields: true,
    preserveHoodieMetadata: true,
    averageFileBytes: fileBytes,
  });
  return EXECUTOR_FUNCTION[executorOf(refusal)];
}

function configFor(layout: Layout): ClusteringConfig {
  return resolveClusteringConfig({
    event: layout === 'no-sort' ? {} : { 'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS.join(','), 'hoodie.layout.optimize.strategy': layout },
  }).config;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Measured CPU seconds per GB.

async function measureCpuPerGb(layout: Layout, fileClass: FileClass): Promise<number> {
  const groupBytes = Number(flags['group-mb']) * MB;
  const fileBytes = fileClass === 'small' ? 5 * MB : 100 * MB;
  const files = Math.max(2, Math.round(groupBytes / fileBytes));
  const work = mkdtempSync(join(tmpdir(), 'bench-cost-'));
  try {
    const table = await createSmallFilesTable({
      dir: join(work, 't'),
      partitions: 1,
      commits: files,
      rowsPerFile: Math.ceil(fileBytes / BYTES_PER_ROW),
      notesBytes: NOTES_BYTES,
      // Footers as Hudi's writers leave them (its default bloom filter), so binary copy merges them as on a real table.
      bloom: HUDI_DEFAULT_BLOOM,
    });
    const storage = openStorage(table.dir);
    // One group of all the files, outputs of the default target size.
    const config = { ...configFor(layout), maxBytesPerGroup: 64 * GB };
    const hudiTable = await HudiTable.open(storage, { mode: 'write' });
    const scheduled = await schedule(hudiTable, config, { lock: new StorageLockProvider(storage), force: true });
    if (scheduled === undefined || scheduled.groups.length !== 1) throw new Error(`expected one group, got ${scheduled?.groups.length ?? 0}`);
    const engine = await openParquetEngine(lambdaEngineOptions(FUNCTIONS[executorFor(layout, fileBytes)].memoryMb, join(work, 'scratch')));
    try {
      const cpu = process.cpuUsage();
      const result = await executeGroup(await hudiTable.reload(), scheduled.instantTime, 0, { engine, tempDir: join(work, 'scratch'), config });
      const used = process.cpuUsage(cpu);
      const cpuSeconds = (used.user + used.system) / 1e6;
      console.log(
        `  ${layout.padEnd(8)} ${fileClass.padEnd(5)} group: ${table.files.length} files, ${(table.bytes / MB).toFixed(0)} MB: ${cpuSeconds.toFixed(2)} CPU s, ${(cpuSeconds / (table.bytes / GB)).toFixed(2)} CPU s/GB` +
          ` (${describeExecution(result.report.execution)})`,
      );
      return cpuSeconds / (table.bytes / GB);
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function describeExecution(execution: GroupExecution | undefined): string {
  if (execution === undefined) return 'method not recorded';
  if (execution.method === 'rewrite') return `rewritten: ${execution.reason}`;
  return `binary copy of ${execution.rowGroups} row groups${execution.footersFromKeys === undefined ? '' : `, footers from keys: ${execution.footersFromKeys}`}`;
}

/** `no-sort:small=1.2,linear:large=6` → figures by layout and file class. */
function givenFigures(text: string): Map<string, number> {
  const figures = new Map<string, number>();
  for (const entry of text.split(',')) {
    const match = /^\s*(no-sort|linear|z-order):(small|large)=([0-9.]+)\s*$/.exec(entry);
    if (match === null) throw new Error(`--cpu-s-per-gb entry "${entry}": write layout:small|large=seconds, e.g. linear:large=6`);
    figures.set(`${match[1]}:${match[2]}`, Number(match[3]));
  }
  return figures;
}

// ---------------------------------------------------------------------------------------------------------------
// 2. The model.

interface Shape {
  readonly name: string;
  readonly files: number;
  readonly fileBytes: number;
}

const SHAPES: readonly Shape[] = [
  { name: '30,000 × 5 MB', files: 30_000, fileBytes: 5 * MB },
  { name: '1,000 × 100 MB', files: 1_000, fileBytes: 100 * MB },
  { name: '100 × 1 GB', files: 100, fileBytes: GB },
];

interface RunCost {
  readonly groups: number;
  readonly outputs: number;
  readonly requests: RequestCounts;
  readonly groupSeconds: number;
  /** The memory of the function the groups run in (execute-group or execute-copy-group). */
  readonly memoryMb: number;
  readonly dollars: { readonly s3: number; readonly lambda: number; readonly stepFunctions: number; readonly total: number };
}

const s3MbPerSecond = Number(flags['s3-mb-per-s']);
const firstByteSeconds = Number(flags['first-byte-ms']) / 1000;

const gbSeconds = (seconds: number, memoryMb: number): number => seconds * (memoryMb / 1024);

/** Seconds to move `bytes` in `requests` requests, `inFlight` at once, at the function's bandwidth. */
function transferSeconds(bytes: number, requests: number, inFlight: number): number {
  return bytes / MB / s3MbPerSecond + (requests * firstByteSeconds) / inFlight;
}

function modelRun(shape: Shape, layout: Layout, cpuPerGb: number): RunCost {
  const size = FUNCTIONS[executorFor(layout, shape.fileBytes)];
  const config = capGroupBytes(configFor(layout), size).config;
  const slices: FileSliceInput[] = Array.from({ length: shape.files }, (_, index) => ({
    fileId: `f${index}`,
    partitionPath: '',
    baseFilePath: `s3://bucket/table/f${index}.parquet`,
    baseFileSize: shape.fileBytes,
    instantTime: '20260101000000000',
  }));
  // Every file is rewritten: the group sizes of the planner, whatever small.file.limit would leave out.
  const groups = buildClusteringGroupsForPartition('', slices, { ...config, maxNumGroups: Number.MAX_SAFE_INTEGER, singleGroupClusteringEnabled: true });
  const perGroup: RequestCounts[] = [];
  let groupSeconds = 0;
  let ephemeralGbSeconds = 0;
  let outputs = 0;
  const vcpus = size.memoryMb / MB_PER_VCPU;
  for (const group of groups) {
    const inputBytes = group.slices.length * shape.fileBytes;
    const outputBytes = inputBytes / group.numOutputFileGroups;
    const downloads = sumRequestCounts(group.slices.map(() => downloadRequests(shape.fileBytes)));
    const upload = uploadRequests(outputBytes);
    const uploads = sumRequestCounts(Array.from({ length: group.numOutputFileGroups }, () => upload));
    const seconds =
      transferSeconds(inputBytes, downloads.get ?? 0, DOWNLOADS_IN_FLIGHT) +
      (cpuPerGb * (inputBytes / GB)) / vcpus +
      transferSeconds(inputBytes, (upload.put ?? 0) + (upload.multipartPart ?? 0) + 2 * (upload.multipartCreate ?? 0), UPLOADS_IN_FLIGHT);
    const heartbeats = Math.floor((seconds * 1000) / HEARTBEAT_INTERVAL_MS);
    perGroup.push(sumRequestCounts([downloads, uploads, { put: group.numOutputFileGroups + heartbeats }, GROUP_OVERHEAD]));
    groupSeconds += seconds;
    ephemeralGbSeconds += ((size.ephemeralStorageMb - 512) / 1024) * seconds;
    outputs += group.numOutputFileGroups;
  }
  const requests = sumRequestCounts([...perGroup, RUN_OVERHEAD, { list: Math.ceil(shape.files / 1000) }]);
  const tier1 =
    (requests.put ?? 0) + (requests.list ?? 0) + (requests.multipartCreate ?? 0) + (requests.multipartPart ?? 0) + (requests.multipartComplete ?? 0);
  const tier2 = (requests.get ?? 0) + (requests.head ?? 0);
  const s3 = tier1 * PRICES.s3Tier1Request + tier2 * PRICES.s3Tier2Request;
  const stepSeconds = Object.values(RUN_STEP_SECONDS).reduce((sum, seconds) => sum + seconds, 0);
  const lambda =
    (gbSeconds(groupSeconds, size.memoryMb) + stepSeconds * (FUNCTIONS.plan.memoryMb / 1024)) * PRICES.lambdaGbSecond.arm64 +
    ephemeralGbSeconds * PRICES.lambdaEphemeralGbSecond +
    (groups.length + Object.keys(RUN_STEP_SECONDS).length) * PRICES.lambdaRequest;
  const stepFunctions = (FIXED_TRANSITIONS + TRANSITIONS_PER_GROUP * groups.length) * PRICES.stateTransition;
  return {
    groups: groups.length,
    outputs,
    requests,
    groupSeconds,
    memoryMb: size.memoryMb,
    dollars: { s3, lambda, stepFunctions, total: s3 + lambda + stepFunctions },
  };
}

/** S3 Tables' compaction of the same bytes and objects (its price per object processed and per GB processed). */
function s3TablesPerTib(shape: Shape, layout: Layout): number {
  const objects = TIB / shape.fileBytes;
  const perGb = layout === 'no-sort' ? S3_TABLES_PRICES.binPackPerGb : S3_TABLES_PRICES.sortPerGb;
  return (objects / 1000) * S3_TABLES_PRICES.per1000Objects + (TIB / GB) * perGb;
}

// ---------------------------------------------------------------------------------------------------------------

// The path the model bills: the state names it counts must be the state machine's.
const asl = JSON.parse(readFileSync(new URL('../infra/state-machine.asl.json', import.meta.url), 'utf8')) as {
  States: Record<string, { ItemProcessor?: { States: Record<string, unknown> } }>;
};
for (const state of ['WhichServices', 'Plan', 'AnythingToCluster', 'InlineOrDistributed', 'ExecuteGroups', 'Commit', 'CleanPrepare', 'CleanNext', 'Archive']) {
  if (asl.States[state] === undefined) throw new Error(`state ${state} is not in infra/state-machine.asl.json: update FIXED_TRANSITIONS`);
}
for (const state of ['WhichFunction', 'ExecuteGroup', 'ExecuteCopyGroup']) {
  if (asl.States.ExecuteGroups?.ItemProcessor?.States[state] === undefined) throw new Error(`ExecuteGroups has no ${state} state: update the model`);
}

const given = flags['cpu-s-per-gb'] === undefined ? undefined : givenFigures(flags['cpu-s-per-gb']);
const cpuPerGb = new Map<string, number>();
console.log(
  given === undefined
    ? `measuring CPU s per GB (execute-group: ${FUNCTIONS['execute-group'].memoryMb} MB; bin-pack of files binary copy takes: execute-copy-group, ${FUNCTIONS['execute-copy-group'].memoryMb} MB; ${lambdaEngineOptions(FUNCTIONS['execute-group'].memoryMb).threads} thread):`
    : 'CPU s per GB as given:',
);
for (const layout of layouts) {
  for (const fileClass of ['small', 'large'] as const) {
    const key = `${layout}:${fileClass}`;
    const figure = given?.get(key) ?? (given === undefined ? await measureCpuPerGb(layout, fileClass) : undefined);
    if (figure === undefined) throw new Error(`--cpu-s-per-gb lacks ${key}`);
    if (given !== undefined) console.log(`  ${key} ${figure}`);
    cpuPerGb.set(key, figure);
  }
}

const usd = (amount: number): string => `$${amount.toFixed(amount < 0.1 ? 3 : 2)}`;
console.log(
  `\nper TiB clustered (${PRICES.region} list prices as of ${PRICES.asOf}, arm64; S3 Tables as of ${S3_TABLES_PRICES.asOf}); ` +
    `transfers at ${s3MbPerSecond} MB/s and ${flags['first-byte-ms']} ms a request (assumed)`,
);
console.log('shape            layout    fn MB  groups/TiB  requests/TiB (GET, PUT+parts)  GB-s/TiB    S3      Lambda  SFN     total   S3 Tables  ours/S3T');
for (const shape of SHAPES) {
  for (const layout of layouts) {
    const figure = cpuPerGb.get(`${layout}:${shape.fileBytes <= 5 * MB ? 'small' : 'large'}`)!;
    const run = modelRun(shape, layout, figure);
    const scale = TIB / (shape.files * shape.fileBytes);
    const perTib = (value: number): number => value * scale;
    const gets = (run.requests.get ?? 0) + (run.requests.head ?? 0);
    const puts = (run.requests.put ?? 0) + (run.requests.multipartPart ?? 0) + (run.requests.multipartCreate ?? 0) + (run.requests.multipartComplete ?? 0);
    const groupGbSeconds = gbSeconds(run.groupSeconds, run.memoryMb);
    const theirs = s3TablesPerTib(shape, layout);
    const total = perTib(run.dollars.total);
    console.log(
      `${shape.name.padEnd(16)} ${layout.padEnd(8)} ${String(run.memoryMb).padStart(5)}  ${perTib(run.groups).toFixed(0).padStart(10)}  ` +
        `${`${perTib(gets).toFixed(0)}, ${perTib(puts).toFixed(0)}`.padStart(29)}  ${perTib(groupGbSeconds).toFixed(0).padStart(8)}  ` +
        `${usd(perTib(run.dollars.s3)).padStart(6)}  ${usd(perTib(run.dollars.lambda)).padStart(6)}  ${usd(perTib(run.dollars.stepFunctions)).padStart(6)}  ` +
        `${usd(total).padStart(6)}  ${usd(theirs).padStart(9)}  ${(total / theirs).toFixed(2).padStart(8)}`,
    );
  }
}
console.log(
  '\ntargets (issue 13): ≤ $1/TiB sort and ≤ $0.5/TiB bin-pack on 100 × 1 GB; ≤ 1/5 of S3 Tables (ours/S3T ≤ 0.20) on 30,000 × 5 MB.\n' +
    '(bin-pack = no-sort; S3 Tables bills sort and z-order alike. The 1 GB files are already at the target size: Hudi would not pick them\n' +
    ' for bin-pack, the model rewrites them to price the bytes.)',
);
