/**
 * Real Apache Hudi for tests: a client of test/hudi/harness.py, one SparkSession (Hudi 0.15 on Spark 3.5.1,
 * local[2]) per harness, reused across the tests of a file. It writes tables with Hudi's datasource, reads them
 * (snapshot, as-of, with or without the metadata table), runs Hudi's own services through SQL `CALL`s, validates
 * the metadata table with Hudi's classes, and reads through hudi-rs, the second independent reader.
 *
 * The toolchain (a Python virtualenv and the jars) is installed by `node infra/hudi-toolchain.mjs`, which `npm test`
 * runs first; a missing toolchain is an error naming that command, never a skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Row } from '../../lib/engine/row-format.js';
import { REPO_ROOT, tempDir } from './paths.js';

const TOOLCHAIN_DIR = process.env['HUDI_TOOLCHAIN_DIR'] ?? join(REPO_ROOT, '.cache/hudi-toolchain');
const HARNESS = join(REPO_ROOT, 'test/hudi/harness.py');
const INSTALL_HINT = 'install it with `node infra/hudi-toolchain.mjs` (`npm test` does this on first use)';

interface ToolchainSpec {
  maven: { artifact: string; role: string }[];
}

export type JarRole = 'hudi-spark-bundle' | 'hudi-spark-bundle-1.0.2' | 'hudi-spark-bundle-1.1.1' | 'hadoop-aws' | 'aws-java-sdk-bundle';

/** The Hudi releases the harness runs, one JVM (one Spark bundle) per harness: never two bundles on a classpath. */
export const HUDI_VERSIONS = ['0.15.0', '1.0.2', '1.1.1'] as const;
export type HudiVersion = (typeof HUDI_VERSIONS)[number];
const BUNDLE_ROLE: Record<HudiVersion, JarRole> = { '0.15.0': 'hudi-spark-bundle', '1.0.2': 'hudi-spark-bundle-1.0.2', '1.1.1': 'hudi-spark-bundle-1.1.1' };

/** Paths of the installed toolchain; throws naming the install command when something is missing. */
export function hudiToolchain(): { python: string; jars: Record<string, string> } {
  const spec = JSON.parse(readFileSync(join(REPO_ROOT, 'test/hudi/toolchain.json'), 'utf8')) as ToolchainSpec;
  const python = join(TOOLCHAIN_DIR, 'venv/bin/python');
  const jars: Record<string, string> = {};
  for (const { artifact, role } of spec.maven) {
    const [, artifactId, version] = artifact.split(':');
    jars[role] = join(TOOLCHAIN_DIR, 'jars', `${artifactId}-${version}.jar`);
  }
  const missing = [python, ...Object.values(jars)].filter((file) => !existsSync(file));
  if (missing.length > 0) throw new Error(`the real-Hudi toolchain is not installed (missing ${missing.join(', ')}): ${INSTALL_HINT}`);
  return { python, jars };
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
 * beyond 2^53 as strings, other objects as their toString().
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
  | { call: string; on: JavaExpression; args?: readonly JavaExpression[] };

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

/** Start a harness (a JVM with Hudi); close it in an `after` hook. */
export async function startHudi(options: HarnessOptions = {}): Promise<HudiHarness> {
  const toolchain = hudiToolchain();
  const workDir = tempDir('hudi-harness-');
  mkdirSync(join(workDir, 'spark-local'), { recursive: true });
  const jars = [
    toolchain.jars[BUNDLE_ROLE[options.hudiVersion ?? '0.15.0']]!,
    ...(options.s3 ? [toolchain.jars['hadoop-aws']!, toolchain.jars['aws-java-sdk-bundle']!] : []),
  ];
  const config = {
    jars,
    timezone: options.timezone ?? 'UTC',
    workDir,
    s3: options.s3 ? s3Config() : null,
    conf: options.conf ?? {},
  };
  const logFile = join(workDir, 'spark.log');
  const log = createWriteStream(logFile);
  const child: ChildProcess = spawn(toolchain.python, [HARNESS], {
    cwd: workDir,
    env: { ...process.env, HUDI_HARNESS_CONFIG: JSON.stringify(config), PYSPARK_PYTHON: toolchain.python, SPARK_LOCAL_IP: '127.0.0.1' },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const answers = createInterface({ input: child.stdio[3] as Readable });
  const waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  let exited: Error | undefined;
  const tail = (): string => {
    try {
      return readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => !/^\s+at /.test(line))
        .slice(-15)
        .join('\n');
    } catch {
      return '';
    }
  };
  answers.on('line', (line) => {
    const answer = JSON.parse(line) as Answer;
    const pending = waiting.get(answer.id);
    waiting.delete(answer.id);
    pending?.resolve(answer);
  });
  child.once('exit', (code, signal) => {
    exited = new Error(`the Hudi harness exited (${signal ?? `code ${code}`}); its log ${logFile} ends:\n${tail()}`);
    for (const pending of waiting.values()) pending.reject(exited);
    waiting.clear();
  });

  const ready = await new Promise<Answer>((resolve, reject) => {
    waiting.set(0, { resolve, reject });
  });
  if (!ready.ok) throw new Error(`the Hudi harness could not start Spark: ${ready.error?.message}\n${ready.error?.detail ?? ''}\nlog ${logFile}:\n${tail()}`);

  let nextId = 1;
  const call = async <T>(op: string, request: Record<string, unknown>): Promise<T> => {
    if (exited !== undefined) throw exited;
    const id = nextId++;
    const answer = await new Promise<Answer>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      (child.stdin as Writable).write(`${JSON.stringify({ id, op, ...request })}\n`);
    });
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
    jvmStatic: (className, method, args) => call<unknown>('jvm_static', { class: className, method, args }),
    jvmEval: (expression) => call<unknown>('jvm_eval', { expression }),
    close: async () => {
      if (exited !== undefined) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await call('shutdown', {}).catch(() => undefined);
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await gone;
      clearTimeout(timer);
      log.end();
    },
  };
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
