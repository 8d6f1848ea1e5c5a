/**
 * Start-up of every bundled function and of the CLI (not a test): what a cold Lambda and a user's command pay before
 * any work, and a first and a warm invocation of the steps that can run on a local table.
 *
 *   npm run build && npm run bench:startup -- [--runs 5] [--baseline DIR]
 *
 * Each bundle of dist/functions is imported in a fresh plain-Node process (bench/lambda-invoke.mjs): the import is
 * Lambda's init phase. `plan` and `archive` are then invoked on a tiny local table (written here by
 * the CLI) once cold and twice warm. The CLI's `status`, `clean`, `archive` run as fresh processes on the same table.
 * --baseline DIR: the same for another build's bundles (e.g. main's, built with `node infra/build.mjs --outdir DIR`
 * inside this repository so that it resolves node_modules), side by side in the same run. Medians with [min–max].
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './median.js';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    baseline: { type: 'string' },
  },
});

const ROOT = join(import.meta.dirname, '..');
const INVOKE = join(import.meta.dirname, 'lambda-invoke.mjs');
/** Steps whose event is just a table: invoked, not only imported. */
const INVOKED: Record<string, object> = {
  plan: {},
  archive: { services: 'clean-archive' },
};

interface Invocation {
  initSeconds: number;
  seconds: number;
  warmSeconds: number[];
  maxRssKb: number;
}

function invoke(bundle: string, name: string, event: object, invocations: number, scratch: string): Invocation {
  const spec = join(scratch, `${name}.json`);
  writeFileSync(
    spec,
    JSON.stringify({ bundle, functionName: name, memoryMb: 1024, timeoutSeconds: 60, event, invocations, environment: { AWS_REGION: 'us-east-1' } }),
  );
  const child = spawnSync(process.execPath, [INVOKE, spec], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (child.status !== 0) throw new Error(`${name} failed (exit ${child.status}): ${child.stderr.slice(-2000)}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Invocation;
}

/** A fresh CLI process: wall seconds, from spawn to exit. */
function cli(dist: string, args: readonly string[]): number {
  const started = performance.now();
  const child = spawnSync(process.execPath, [join(dist, 'cli.mjs'), ...args], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`cli ${args.join(' ')} failed (exit ${child.status}): ${child.stderr}`);
  return (performance.now() - started) / 1000;
}

function summary(values: readonly number[]): string {
  const ms = values.map((value) => value * 1000);
  return `${median(ms).toFixed(0)} [${Math.min(...ms).toFixed(0)}–${Math.max(...ms).toFixed(0)}]`;
}

function main(): void {
  const runs = Number(flags.runs);
  const builds = [
    { name: 'this build', dist: join(ROOT, 'dist') },
    ...(flags.baseline === undefined ? [] : [{ name: 'baseline', dist: resolve(flags.baseline) }]),
  ];
  const scratch = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  try {
    const table = join(scratch, 'table');
    const input = join(scratch, 'rows.jsonl');
    const props = join(scratch, 'table.props');
    writeFileSync(
      props,
      'hoodie.table.name=startup\nhoodie.datasource.write.recordkey.field=id\nhoodie.datasource.write.partitionpath.field=dt\nhoodie.datasource.write.precombine.field=createTime\n',
    );
    cli(builds[0]!.dist, ['generate', '--out', input, '--count', '2000']);
    for (let i = 0; i < 3; i++) cli(builds[0]!.dist, ['write', table, '--input', input, '--operation', 'upsert', '--props', props]);
    const bundles = readdirSync(join(ROOT, 'dist', 'functions'))
      .filter((name) => name.endsWith('.mjs'))
      .map((name) => name.slice(0, -'.mjs'.length))
      .sort();
    console.log(`load ${readFileSync('/proc/loadavg', 'utf8').trim()}; ${runs} runs each; ms, median [min–max]`);
    console.log(`\n| function | ${builds.map((b) => `init (${b.name}) | first invocation | warm invocation | peak RSS MB`).join(' | ')} |`);
    console.log(`|---|${builds.map(() => '---|---|---|---').join('|')}|`);
    for (const name of bundles) {
      const cells = builds.map((build) => {
        const results: Invocation[] = [];
        for (let run = 0; run < runs; run++) {
          const copy = join(scratch, `copy-${run}`);
          cpSync(table, copy, { recursive: true });
          const event = INVOKED[name];
          const bundle = join(build.dist, 'functions', `${name}.mjs`);
          // Not invoked: an import-only spec (the handler is called with no event and its refusal is not timed).
          results.push(event === undefined ? importOnly(bundle, scratch) : invoke(bundle, name, { tablePath: copy, ...event }, 3, scratch));
          rmSync(copy, { recursive: true, force: true });
        }
        const invoked = INVOKED[name] !== undefined;
        return [
          summary(results.map((r) => r.initSeconds)),
          invoked ? summary(results.map((r) => r.seconds)) : '–',
          invoked ? summary(results.flatMap((r) => r.warmSeconds)) : '–',
          median(results.map((r) => r.maxRssKb / 1024)).toFixed(0),
        ].join(' | ');
      });
      console.log(`| ${name} | ${cells.join(' | ')} |`);
    }
    console.log(`\n| CLI command (fresh process, spawn to exit) | ${builds.map((b) => b.name).join(' | ')} |`);
    console.log(`|---|${builds.map(() => '---').join('|')}|`);
    for (const args of [['--help'], ['status', table], ['clean', table, '--props', props], ['archive', table, '--props', props], ['timeline', table]]) {
      const cells = builds.map((build) => summary(Array.from({ length: runs }, () => cli(build.dist, args))));
      console.log(`| ${args[0]} | ${cells.join(' | ')} |`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Lambda's init phase alone: import the bundle in a fresh process. */
function importOnly(bundle: string, scratch: string): Invocation {
  const script = join(scratch, 'import-only.mjs');
  writeFileSync(
    script,
    `const at = performance.now(); await import(${JSON.stringify(pathToFileURL(bundle).href)});\n` +
      'process.stdout.write(JSON.stringify({ initSeconds: (performance.now() - at) / 1000, seconds: 0, warmSeconds: [], maxRssKb: process.resourceUsage().maxRSS }) + "\\n", () => process.exit(0));\n',
  );
  const child = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } });
  if (child.status !== 0) throw new Error(`importing ${bundle} failed: ${child.stderr.slice(-2000)}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Invocation;
}

main();
