/**
 * Real Apache Hudi for tests: a client of test/hudi/harness.py, one SparkSession (Hudi 0.15 on Spark 3.5.1,
 * local[2]) per harness, reused across the tests of a file; the JVM behind it is shared by the files of a test phase
 * that ask for the same options (see startHudi). It writes tables with Hudi's datasource, reads them
 * (snapshot, as-of, with or without the metadata table), runs Hudi's own services through SQL `CALL`s, validates
 * the metadata table with Hudi's classes, and reads through hudi-rs, the second independent reader.
 *
 * The toolchain (a Python virtualenv and the jars) is installed by `node infra/hudi-toolchain.mjs`, which `npm test`
 * runs first; a missing toolchain is an error naming that command, never a skip.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { isSlotServer, processAlive, readPid, slotServerPid } from '../../infra/harness-servers.mjs';
import { INSTALL_COMMAND, toolchainPaths } from '../../infra/hudi-toolchain.mjs';
import type { Row } from '../../lib/engine/row-format.js';
import { REPO_ROOT, tempDir } from './paths.js';

const HARNESS = join(REPO_ROOT, 'test/hudi/harness.py');

export type JarRole = 'hudi-spark-bundle' | 'hudi-spark-bundle-1.0.2' | 'hudi-spark-bundle-1.1.1' | 'hadoop-aws' | 'aws-java-sdk-bundle';
/** Jar sets of test/hudi/toolchain.json: hudi-aws-0.15.0 is Hudi 0.15's DynamoDBBasedLockProvider with its AWS SDK. */
export type JarSetRole = 'hudi-aws-0.15.0';

/** The Hudi releases the harness runs, one JVM (one Spark bundle) per harness: never two bundles on a classpath. */
export const HUDI_VERSIONS = ['0.15.0', '1.0.2', '1.1.1'] as const;
export type HudiVersion = (typeof HUDI_VERSIONS)[number];
const BUNDLE_ROLE: Record<HudiVersion, JarRole> = { '0.15.0': 'hudi-spark-bundle', '1.0.2': 'hudi-spark-bundle-1.0.2', '1.1.1': 'hudi-spark-bundle-1.1.1' };

/** Paths of the installed toolchain; throws naming the install command when something is missing. */
export function hudiToolchain(): { python: string; jars: Record<string, string>; jarSets: Record<string, string[]> } {
  const paths = toolchainPaths();
  const missing = [paths.python, ...Object.values(paths.jars)].filter((file) => !existsSync(file));
  missing.push(...Object.entries(paths.jarSets).flatMap(([role, jars]) => (jars.length === 0 ? [`the jar set ${role}`] : [])));
  if (missing.length > 0) {
    throw new Error(
      `the real-Hudi toolchain is not installed (missing ${missing.join(', ')}): install it with \`${INSTALL_COMMAND}\` (\`npm test\` does this on first use)`,
    );
  }
  return { python: paths.python, jars: paths.jars, jarSets: paths.jarSets };
}

/** Rows and their columns as a reader returned them (canonical JSON values, see lib/engine/row-format.ts). */
export interface RowSet {
  columns: string[];
  rows: Row[];
}

export interface HarnessOptions {
  /** Which Hudi's Spark bundle the JVM loads. Default 0.15.0. */
  hudiVersion?: HudiVersion;
  /** The JVM's default time zone (`-Duser.timezone`); Spark's session zone stays UTC. Default UTC. */
  timezone?: string;
  /** Give Spark moto's (or MinIO's, AWS's) S3 through s3a, from the AWS_* environment. */
  s3?: boolean;
  /** Extra Spark configuration. */
  conf?: Record<string, string>;
  /** Jar sets to add to the bundle (a JVM of their own). */
  jarSets?: readonly JarSetRole[];
  /** Jars a test built itself (e.g. a test-only Java class), after the rest (a JVM of their own). */
  extraJars?: readonly string[];
}

export interface WriteRequest {
  /** Spark DDL of the rows, e.g. `id BIGINT, name STRING, ts TIMESTAMP, dt STRING`. */
  schema: string;
  rows: readonly Record<string, unknown>[];
  /** Hudi datasource options (hoodie.table.name, hoodie.datasource.write.*, ...). */
  options: Record<string, string>;
  /** Spark save mode; Hudi's datasource treats overwrite as recreating the table. Default append. */
  mode?: 'append' | 'overwrite';
}

export interface ReadRequest {
  /** Hudi read options, e.g. `{ 'as.of.instant': T, 'hoodie.metadata.enable': 'true' }`. */
  options?: Record<string, string>;
  /** Keep the `_hoodie_*` columns (default true). */
  meta?: boolean;
  /** A Spark SQL filter applied to the read. */
  where?: string;
}

/**
 * A Java value for {@link HudiHarness.jvmEval} and jvmStatic's arguments: JSON values as they are (small integers
 * become int, larger ones long), or typed values and calls. Results come back as JSON: byte[] as base64, integers
 * beyond 2^53 as strings, other objects as their toString(). Kept values live as long as the harness's JVM.
 */
export type JavaExpression =
  | string
  | number
  | boolean
  | null
  | readonly JavaExpression[]
  | { long: string }
  | { double: string }
  | { float: string }
  | { byte: number }
  | { bytes: string }
  | { byteArrays: readonly string[] }
  | { longArray: readonly string[] }
  | { static: string; args?: readonly JavaExpression[] }
  | { call: string; on: JavaExpression; args?: readonly JavaExpression[] }
  /** A new object of a class, e.g. `{ new: 'org.apache.hudi.common.config.TypedProperties' }`. */
  | { new: string; args?: readonly JavaExpression[] }
  /** Keep a value in the harness under a name (the value is returned too), and use it in a later request. */
  | { keep: string; value: JavaExpression }
  | { kept: string };

export interface ValidationCheck {
  status: 'passed' | 'failed' | 'not-enabled';
  details: string;
  counts?: Record<string, number>;
}

export interface ValidationReport {
  ok: boolean;
  checks: Record<string, ValidationCheck>;
  errors: string[];
}

/** Hudi (Java) said no: its exception class and message chain. */
export class HudiHarnessError extends Error {
  constructor(
    readonly op: string,
    readonly javaType: string,
    message: string,
    readonly detail: string,
  ) {
    super(`${op}: ${message}${detail ? `\n${detail}` : ''}`);
    this.name = 'HudiHarnessError';
  }
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: { type: string; message: string; detail: string };
}

/** One record for Hudi's HFile writer: the record key and the Avro binary of the record (base64). */
export interface HFileWriteRecord {
  key: string;
  value: string;
}

export interface HFileWriteRequest {
  /** The Avro schema of the records (JSON text); a field `key` is emptied in the values, as Hudi does. */
  schema: string;
  /** Records in ascending key order (Hudi's writer refuses anything else). */
  records: readonly HFileWriteRecord[];
  blockSize?: number;
  compression?: 'GZ' | 'NONE';
  /** HBase's `hfile.index.block.max.size`: small values make a multi-level block index. */
  indexBlockMaxSize?: number;
}

export interface HFileReadRequest {
  /** `native`: hudi-io's reader (the metadata table's default); `hbase`: the shaded HBase reader. */
  reader?: 'native' | 'hbase';
  /** Hand the reader the file's bytes, as log-block HFiles are read. */
  fromBytes?: boolean;
  /** Also read the min/max keys and the bloom filter, asking it about these keys. */
  bloom?: boolean;
  bloomKeys?: readonly string[];
  /** Keys to look up with `getIndexedRecordsByKeysIterator` (a seek per key). */
  lookups?: readonly string[];
}

export interface HFileReadResult {
  schema: string;
  totalRecords: number;
  /** Records in file order, Avro binary (base64) with the key field restored. */
  records: string[];
  minMaxKeys?: [string, string];
  bloomTypeCode?: string;
  bloomContains?: boolean[];
  lookups?: string[];
}

export interface HudiHarness {
  /** Versions and the JVM zone the harness runs with. */
  readonly info: { spark: string; hudiJars: string[]; tableVersion: number; jvmTimezone: string };
  /** Where Spark's and the JVM's output goes. */
  readonly logFile: string;
  write(path: string, request: WriteRequest): Promise<void>;
  read(path: string, request?: ReadRequest): Promise<RowSet>;
  /** Snapshot reads of many tables with the same columns in one Spark job: `tables[i]` holds the rows of `paths[i]`. */
  readMany(paths: readonly string[], columns: readonly string[], options?: Record<string, string>): Promise<{ columns: string[]; tables: Row[][] }>;
  sql(statement: string): Promise<RowSet>;
  /** A filtered read run to the end: rows returned and files read (the scans' numFiles metric, after data skipping). */
  scanFiles(
    path: string,
    request: { where: string; options?: Record<string, string> },
  ): Promise<{ rows: number; numFiles: number; scans: { node: string; numFiles: number }[] }>;
  hudiRsRead(path: string, options?: { asOf?: string; meta?: boolean }): Promise<RowSet>;
  validateMetadataTable(path: string, checks?: readonly string[]): Promise<ValidationReport>;
  avroSchema(name: string): Promise<unknown>;
  /** Write an HFile with Hudi's HoodieAvroHFileWriter (as the metadata table's base files are written). */
  hfileWrite(path: string, request: HFileWriteRequest): Promise<void>;
  /** Read an HFile with one of Hudi's HFile readers. */
  hfileRead(path: string, request?: HFileReadRequest): Promise<HFileReadResult>;
  /** Read an HFile with hudi-io's HFileReaderImpl (Hudi 1.x's metadata-table reader): keys as text, values base64. */
  hfileReadIo(path: string): Promise<{ count: number; schema: string | null; entries: { key: string; value: string }[] }>;
  /** A public static Java method on the harness's classpath, with JSON arguments (typed values as in {@link JavaExpression}). */
  jvmStatic(className: string, method: string, args: readonly unknown[]): Promise<unknown>;
  /** Evaluate a Java expression tree (static calls, calls on their results, typed values); its value as JSON. */
  jvmEval(expression: JavaExpression): Promise<unknown>;
  close(): Promise<void>;
}

function s3Config(): { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string } {
  const endpoint = process.env['AWS_ENDPOINT_URL_S3'] ?? process.env['AWS_ENDPOINT_URL'];
  const accessKeyId = process.env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = process.env['AWS_SECRET_ACCESS_KEY'];
  if (endpoint === undefined || accessKeyId === undefined || secretAccessKey === undefined) {
    throw new Error('Spark on S3 needs AWS_ENDPOINT_URL_S3 and credentials in the environment: run the tests with `npm test` (it starts moto)');
  }
  return { endpoint, accessKeyId, secretAccessKey, region: process.env['AWS_REGION'] ?? 'us-east-1' };
}

/** How long a client waits for a server's Spark to come up (it takes seconds, minutes on a loaded machine). */
const SERVER_START_TIMEOUT_MS = 15 * 60_000;
/**
 * A shared server with no client for this long exits. Long, so a phase reuses warm JVMs rather than starting new ones
 * (the runner stops them at the phase's end, and {@link makeRoomForServer} stops idle ones when memory runs short);
 * finite, so the servers of a run that crashed do not stay.
 */
const SHARED_IDLE_SECONDS = 900;
/** What one harness JVM may take: its driver heap (1536m) and the JVM's own memory beside it. */
const SERVER_MEMORY_BYTES = 2.5 * 1024 ** 3;
/** Memory the test files, the local stack and the rest of the machine keep beside the servers. */
const RESERVED_MEMORY_BYTES = 6 * 1024 ** 3;

/**
 * How many shared servers may run at once: HUDI_HARNESS_MAX_SERVERS, else as many as the machine's memory holds
 * beside the rest (at least two: one busy, one warm).
 */
function maxServers(): number {
  const asked = Number(process.env['HUDI_HARNESS_MAX_SERVERS']);
  if (Number.isInteger(asked) && asked > 0) return asked;
  return Math.max(2, Math.floor((totalmem() - RESERVED_MEMORY_BYTES) / SERVER_MEMORY_BYTES));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function tailOf(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => !/^\s+at /.test(line))
      .slice(-15)
      .join('\n');
  } catch {
    return '';
  }
}

function startError(answer: Answer, logFile: string): Error {
  return new Error(`the Hudi harness could not start Spark: ${answer.error?.message}\n${answer.error?.detail ?? ''}\nlog ${logFile}:\n${tailOf(logFile)}`);
}

/** Spawn the harness server; its output goes to logFile. A shared server gets its slot as its argument (its name). */
function spawnServer(python: string, config: Record<string, unknown>, logFile: string, detached: boolean, slot?: string): ChildProcess {
  const log = openSync(logFile, 'a');
  try {
    return spawn(python, [HARNESS, ...(slot === undefined ? [] : [slot])], {
      cwd: config['workDir'] as string,
      env: { ...process.env, HUDI_HARNESS_CONFIG: JSON.stringify(config), PYSPARK_PYTHON: python, SPARK_LOCAL_IP: '127.0.0.1' },
      stdio: ['ignore', log, log],
      detached,
    });
  } finally {
    closeSync(log);
  }
}

/** A client's line-oriented connection to a server, open once the server said it is ready (its first line). */
interface Connection {
  socket: Socket;
  ready: Answer;
  lines: ReturnType<typeof createInterface>;
}

/** A connection to the server at socketPath, or undefined while none listens there (or it left before answering). */
function connect(socketPath: string): Promise<Connection | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let settled = false;
    socket.once('connect', () => {
      const lines = createInterface({ input: socket });
      // Socket errors reach the client through 'close' (see startHudi), not readline's re-emitted 'error'.
      lines.on('error', () => undefined);
      lines.once('line', (line) => {
        settled = true;
        resolve({ socket, ready: JSON.parse(line) as Answer, lines });
      });
    });
    socket.once('close', () => {
      if (!settled) resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve(undefined);
      else reject(error);
    });
  });
}

/**
 * A slot's claim: a folder holding the claimant's pid, so one test process at a time uses the slot's server. A claim
 * whose process is gone (a killed test file) is taken over.
 */
function claimSlot(claim: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(claim);
      writeFileSync(join(claim, 'pid'), String(process.pid));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = readPid(join(claim, 'pid'));
      const age = Date.now() - (statSync(claim, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if ((pid > 0 && processAlive(pid)) || (pid === 0 && age < 60_000)) return false;
      rmSync(claim, { recursive: true, force: true });
    }
  }
  return false;
}

/**
 * A connection to a shared server of this configuration under dir (HUDI_HARNESS_DIR, which infra/run-tests.mjs makes
 * for a test phase). Servers are slots `<key>-<n>`: a client claims the lowest free one (so the warmest JVMs get the
 * work), starts its server if none runs, and releases it on close; as many servers run as files use the
 * configuration at once. Files: `.claim/` (the claimant), `.pid`, `.sock` (once it accepts clients), `.log`,
 * `.error` (when Spark could not start).
 */
async function connectShared(
  dir: string,
  python: string,
  config: Record<string, unknown>,
): Promise<{ connection: Connection; logFile: string; release: () => void; state: () => string }> {
  const key = createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16);
  for (;;) {
    for (let slot = 0; slot < 64; slot++) {
      const base = join(dir, `${key}-${slot}`);
      if (!claimSlot(`${base}.claim`)) continue;
      // Once only: a second close() must not free the slot a later claimant (maybe this process) holds by then.
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        // When it was last used: the least recently used idle server is the first stopped for room.
        writeFileSync(`${base}.used`, '');
        rmSync(`${base}.claim`, { recursive: true, force: true });
      };
      try {
        const connection = await slotServer(base, python, config);
        const pid = slotServerPid(base);
        return { connection, logFile: `${base}.log`, release, state: () => serverState(dir, base, pid) };
      } catch (error) {
        release();
        throw error;
      }
    }
    await sleep(250);
  }
}

/**
 * What became of a shared server whose connection closed: whether its process lives, and whether another file
 * stopped it to make room (which must never happen while a client holds its slot).
 */
function serverState(dir: string, base: string, pid: number): string {
  const stopped = readFileSync(join(dir, 'stopped-for-room.log'), { encoding: 'utf8', flag: 'a+' }).split('\n').includes(base);
  return `server ${base} (pid ${pid}) ${isSlotServer(base, pid) ? 'still runs' : 'has exited'}${stopped ? ', and was once stopped to make room' : ''}`;
}

/**
 * Before a new server starts under dir: while as many run as {@link maxServers} allows, stop the least recently used
 * one no client holds (of any configuration). Its slot is claimed first, so no client connects to it meanwhile. When
 * every running server is in use, none is stopped: the test files' concurrency bounds them then.
 */
async function makeRoomForServer(dir: string): Promise<void> {
  const running = readdirSync(dir)
    .filter((name) => name.endsWith('.pid'))
    .map((name) => join(dir, name.slice(0, -'.pid'.length)))
    .filter((base) => slotServerPid(base) > 0);
  const lastUsed = (base: string) => statSync(`${base}.used`, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  let excess = running.length + 1 - maxServers();
  for (const base of running.sort((a, b) => lastUsed(a) - lastUsed(b))) {
    if (excess <= 0) return;
    if (!claimSlot(`${base}.claim`)) continue;
    try {
      await stopServer(base);
      rmSync(`${base}.pid`, { force: true });
      appendFileSync(join(dir, 'stopped-for-room.log'), `${base}\n`);
      excess--;
    } finally {
      rmSync(`${base}.claim`, { recursive: true, force: true });
    }
  }
}

/**
 * Stop a slot's shared server, if one runs there: SIGTERM lets it stop Spark and log its CPU; its process group is
 * killed if it lingers.
 */
async function stopServer(base: string): Promise<void> {
  const pid = slotServerPid(base);
  if (pid === 0) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let waited = 0; waited < 30_000 && isSlotServer(base, pid); waited += 250) await sleep(250);
  if (!isSlotServer(base, pid)) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

/** A connection to a claimed slot's server, started if it is not running. */
async function slotServer(base: string, python: string, config: Record<string, unknown>): Promise<Connection> {
  const [socketPath, pidFile, logFile, errorFile] = ['sock', 'pid', 'log', 'error'].map((ext) => `${base}.${ext}`) as [string, string, string, string];
  const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
  for (;;) {
    const connection = await connect(socketPath);
    if (connection !== undefined) return connection;
    if (Date.now() > deadline) throw new Error(`no Hudi harness came up at ${socketPath}; log ${logFile}:\n${tailOf(logFile)}`);
    const pid = readPid(pidFile);
    if (!isSlotServer(base, pid)) {
      // None running (or one that went idle, or could not start Spark: its error is the answer).
      if (pid !== 0 && existsSync(errorFile)) {
        const answer = JSON.parse(readFileSync(errorFile, 'utf8')) as Answer;
        rmSync(errorFile, { force: true });
        rmSync(pidFile, { force: true });
        throw startError(answer, logFile);
      }
      rmSync(errorFile, { force: true });
      await makeRoomForServer(dirname(base));
      const workDir = mkdtempSync(`${base}-`);
      mkdirSync(join(workDir, 'spark-local'), { recursive: true });
      const child = spawnServer(python, { ...config, workDir, socket: socketPath, idleSeconds: SHARED_IDLE_SECONDS, errorFile }, logFile, true, base);
      writeFileSync(pidFile, String(child.pid));
      child.unref();
    }
    await sleep(250);
  }
}

/**
 * A harness (a SparkSession of its own on a JVM with Hudi); close it in an `after` hook. Under infra/run-tests.mjs
 * (HUDI_HARNESS_DIR set) the JVM is a server shared by every test file asking for the same options, so Spark starts
 * and warms up once per phase; otherwise the file gets a server of its own, stopped when it closes.
 */
export async function startHudi(options: HarnessOptions = {}): Promise<HudiHarness> {
  const toolchain = hudiToolchain();
  const jars = [
    toolchain.jars[BUNDLE_ROLE[options.hudiVersion ?? '0.15.0']]!,
    ...(options.s3 ? [toolchain.jars['hadoop-aws']!, toolchain.jars['aws-java-sdk-bundle']!] : []),
    ...(options.jarSets ?? []).flatMap((role) => toolchain.jarSets[role] ?? []),
    ...(options.extraJars ?? []),
  ];
  const config = {
    jars,
    timezone: options.timezone ?? 'UTC',
    s3: options.s3 ? s3Config() : null,
    conf: options.conf ?? {},
  };
  const sharedDir = process.env['HUDI_HARNESS_DIR'];
  const version = options.hudiVersion ?? '0.15.0';
  const startedAt = Date.now();
  let connection: Connection;
  let logFile: string;
  let release = (): void => undefined;
  let state = (): string => 'a server of this file';
  let own: ChildProcess | undefined;
  if (sharedDir !== undefined && sharedDir !== '') {
    ({ connection, logFile, release, state } = await connectShared(sharedDir, toolchain.python, config));
  } else {
    const workDir = tempDir('hudi-harness-');
    mkdirSync(join(workDir, 'spark-local'), { recursive: true });
    logFile = join(workDir, 'spark.log');
    const socketPath = join(workDir, 'harness.sock');
    const errorFile = join(workDir, 'error.json');
    const child = spawnServer(toolchain.python, { ...config, workDir, socket: socketPath, idleSeconds: 0, errorFile }, logFile, false);
    own = child;
    let connected: Connection | undefined;
    while (connected === undefined) {
      if (child.exitCode !== null || child.signalCode !== null) {
        if (existsSync(errorFile)) throw startError(JSON.parse(readFileSync(errorFile, 'utf8')) as Answer, logFile);
        throw new Error(`the Hudi harness exited (${child.signalCode ?? `code ${child.exitCode}`}); its log ${logFile} ends:\n${tailOf(logFile)}`);
      }
      connected = await connect(socketPath);
      if (connected === undefined) await sleep(250);
    }
    connection = connected;
  }

  const { socket, ready } = connection;
  const waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  let exited: Error | undefined;
  connection.lines.on('line', (line) => {
    const answer = JSON.parse(line) as Answer;
    const pending = waiting.get(answer.id);
    waiting.delete(answer.id);
    pending?.resolve(answer);
  });
  socket.on('error', () => undefined);
  socket.once('close', () => {
    exited = new Error(`the Hudi harness closed the connection: ${state()}; its log ${logFile} ends:\n${tailOf(logFile)}`);
    for (const pending of waiting.values()) pending.reject(exited);
    waiting.clear();
  });
  if (!ready.ok) {
    socket.end();
    release();
    throw startError(ready, logFile);
  }

  recordHarnessTime(sharedDir, version, 'start', Date.now() - startedAt);
  let nextId = 1;
  const call = async <T>(op: string, request: Record<string, unknown>): Promise<T> => {
    if (exited !== undefined) throw exited;
    const id = nextId++;
    const sent = Date.now();
    const answer = await new Promise<Answer>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      socket.write(`${JSON.stringify({ id, op, ...request })}\n`);
    });
    if (op !== 'shutdown') recordHarnessTime(sharedDir, version, op, Date.now() - sent);
    if (!answer.ok) throw new HudiHarnessError(op, answer.error?.type ?? 'unknown', answer.error?.message ?? 'failed', answer.error?.detail ?? '');
    return answer.result as T;
  };

  return {
    info: ready.result as HudiHarness['info'],
    logFile,
    write: async (path, request) => {
      await call('write', { path, ...request });
    },
    read: (path, request = {}) => call<RowSet>('read', { path, ...request }),
    readMany: (paths, columns, readOptions = {}) => call<{ columns: string[]; tables: Row[][] }>('read_many', { paths, columns, options: readOptions }),
    sql: (statement) => call<RowSet>('sql', { statement }),
    scanFiles: (path, request) => call('scan_files', { path, ...request }),
    hudiRsRead: (path, readOptions = {}) =>
      call<RowSet>('hudi_rs_read', { path, ...readOptions, ...(options.s3 ? { storageOptions: hudiRsS3Options() } : {}) }),
    validateMetadataTable: (path, checks) => call<ValidationReport>('validate_metadata_table', { path, ...(checks ? { checks } : {}) }),
    avroSchema: (name) => call<unknown>('avro_schema', { name }),
    hfileWrite: async (path, request) => {
      await call('hfile_write', { path, ...request });
    },
    hfileRead: (path, request = {}) => call<HFileReadResult>('hfile_read', { path, ...request }),
    hfileReadIo: (path) => call<{ count: number; schema: string | null; entries: { key: string; value: string }[] }>('hfile_read_io', { path }),
    jvmStatic: (className, method, args) => call<unknown>('jvm_static', { class: className, method, args }),
    jvmEval: (expression) => call<unknown>('jvm_eval', { expression }),
    close: async () => {
      if (exited === undefined) {
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        await call('shutdown', {}).catch(() => undefined);
        socket.end();
        await closed;
      }
      release();
      // A server of our own exits once its only client has gone; a shared one stays for the phase's next file.
      if (own !== undefined && own.exitCode === null && own.signalCode === null) {
        const gone = new Promise<void>((resolve) => own.once('exit', () => resolve()));
        const timer = setTimeout(() => own.kill('SIGKILL'), 20_000);
        await gone;
        clearTimeout(timer);
      }
    },
  };
}

/** The test file this process runs (node:test runs each file in a process of its own). */
const TEST_FILE = process.argv.find((arg) => arg.endsWith('.test.ts')) ?? 'unknown';

/**
 * Where a phase's Spark time goes: each request's time (and each connection's wait for its server, `start`) appended
 * to the phase's harness dir, which infra/run-tests.mjs sums per request kind and per file when the phase ends.
 */
function recordHarnessTime(dir: string | undefined, version: HudiVersion, op: string, ms: number): void {
  if (dir === undefined || dir === '') return;
  try {
    appendFileSync(join(dir, `timings-${process.pid}.jsonl`), `${JSON.stringify({ file: TEST_FILE, version, op, ms })}\n`);
  } catch {
    // The phase's dir is gone (the run is ending): the figures are a report, never a failure.
  }
}

/** hudi-rs (object_store) options for the same S3 endpoint. */
function hudiRsS3Options(): Record<string, string> {
  const s3 = s3Config();
  return {
    aws_endpoint_url: s3.endpoint,
    aws_access_key_id: s3.accessKeyId,
    aws_secret_access_key: s3.secretAccessKey,
    aws_region: s3.region,
    aws_allow_http: s3.endpoint.startsWith('http:') ? 'true' : 'false',
    aws_virtual_hosted_style_request: 'false',
  };
}

/** Rows without Hudi's `_hoodie_*` columns. */
/**
 * Spark write options every merge-on-read interop table shares: keyed by `id`, precombined by `ts`, no table
 * service inline (each test runs the ones it checks, ours or Hudi's), no timeline server, `parallelism` shuffle tasks
 * for inserts, upserts and deletes. Each test adds its table's name, operation, partitioning and indexes.
 */
export function mergeOnReadWriteOptions(parallelism = 2): Record<string, string> {
  return {
    'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.compact.inline': 'false',
    'hoodie.clean.automatic': 'false',
    'hoodie.archive.automatic': 'false',
    'hoodie.embed.timeline.server': 'false',
    'hoodie.insert.shuffle.parallelism': String(parallelism),
    'hoodie.upsert.shuffle.parallelism': String(parallelism),
    'hoodie.delete.shuffle.parallelism': String(parallelism),
  };
}

export function withoutMetaColumns(rows: readonly Row[]): Row[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !column.startsWith('_hoodie_'))));
}

/** A row as one stable string: keys sorted at every level, so rows compare regardless of column order. */
export function canonicalRow(row: unknown): string {
  const sortKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([k, v]) => [k, sortKeys(v)]),
      );
    }
    return value;
  };
  return JSON.stringify(sortKeys(row));
}

/** Rows as a sorted list of canonical strings: two readers agree when these are deep-equal. */
export function canonicalRows(rows: readonly Row[]): string[] {
  return rows.map(canonicalRow).sort();
}
