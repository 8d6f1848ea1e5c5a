// The published package as a user gets it: `npm pack` (of a copy built as its prepack builds: the bundles and the types), the tarball
// installed into a fresh project elsewhere, then `npx hudi-serverless` (help, and a table written and read, which
// loads DuckDB's native binding from the installed dependencies), the library imported at run time, and its types
// checked by TypeScript in the user's project. The tarball holds no development files.
import assert from 'node:assert/strict';
import { execFileSync, type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// This Node (22) first on PATH, so npm, npx and the CLI's `#!/usr/bin/env node` run on it.
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};

let tarball: string;
let entries: string[];
let project: string;

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const devVersion = (name: string): string => {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
};

before(() => {
  // What prepack does (npm run build, npm run build:types), into a copy of the package's root: the repository's
  // dist/ stays as it is for the tests running next to this one.
  const root = tempDir('package-root-');
  for (const file of ['package.json', 'README.md', 'infra/state-machine.asl.json', 'infra/compaction-state-machine.asl.json'])
    cpSync(join(REPO_ROOT, file), join(root, file));
  ok(run(process.execPath, [join(REPO_ROOT, 'infra', 'build.mjs'), '--outdir', join(root, 'dist')], REPO_ROOT), 'infra/build.mjs');
  ok(
    run(
      process.execPath,
      [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.types.json', '--outDir', join(root, 'dist', 'types')],
      REPO_ROOT,
    ),
    'tsc -p tsconfig.types.json',
  );
  const prepack = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['prepack'];
  assert.equal(prepack, 'npm run build && npm run build:types', 'prepack builds what this copy holds');
  const packed = tempDir('package-tarball-');
  const output = ok(run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', packed], root), 'npm pack');
  const report = JSON.parse(output) as Array<{ filename: string }>;
  tarball = join(packed, report[0]!.filename);
  entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((entry) => entry.replace(/^package\//, ''));

  project = tempDir('package-user-');
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'a-user-project', private: true, type: 'module' }, null, 2)}\n`);
  // The dependencies come from npm's cache when the repository's own install put them there.
  ok(
    run(
      npm,
      ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `typescript@${devVersion('typescript')}`, `@types/node@${devVersion('@types/node')}`],
      project,
    ),
    'npm install <tarball>',
  );
});

test('the tarball holds the CLI, the library and its types, the handlers and the state machine, and no development files', () => {
  for (const wanted of [
    'package.json',
    'README.md',
    'dist/cli.mjs',
    'dist/index.mjs',
    'dist/types/index.d.ts',
    'dist/functions/plan.mjs',
    'dist/functions/execute-group.mjs',
    'infra/state-machine.asl.json',
    'infra/compaction-state-machine.asl.json',
  ]) {
    assert.ok(entries.includes(wanted), `${wanted} is in the tarball`);
  }
  const development = entries.filter(
    (entry) =>
      /^(test|bench|functions|lib|\.cache|\.aws-sam|build|node_modules)\//.test(entry) ||
      (entry.startsWith('infra/') && !['infra/state-machine.asl.json', 'infra/compaction-state-machine.asl.json'].includes(entry)) ||
      /\.map$|\.ts$/.test(entry.replace(/\.d\.ts$/, '.d')) ||
      ['dist/demo.mjs', 'Makefile', 'samconfig.toml', 'template.yaml', 'tsconfig.json', 'tsconfig.types.json', 'package-lock.json', '.ci/run'].includes(entry),
  );
  assert.deepEqual(development, [], 'development files in the tarball');
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'hudi-serverless', 'package.json'), 'utf8')) as {
    devDependencies?: unknown;
    bin: Record<string, string>;
  };
  assert.deepEqual(manifest.bin, { 'hudi-serverless': 'dist/cli.mjs' });
});

test('npx hudi-serverless works from the installed tarball: help, and a table written and read back with DuckDB', () => {
  const help = ok(run('npx', ['--no-install', 'hudi-serverless', '--help'], project), 'npx hudi-serverless --help');
  for (const command of ['init', 'write', 'read', 'cluster', 'clean', 'archive', 'generate'])
    assert.match(help, new RegExp(`^ {2}${command} `, 'm'), `help lists ${command}`);

  writeFileSync(
    join(project, 'users.properties'),
    [
      'hoodie.table.name=users',
      'hoodie.datasource.write.recordkey.field=id',
      'hoodie.datasource.write.partitionpath.field=dt',
      'hoodie.datasource.write.precombine.field=createTime',
      '',
    ].join('\n'),
  );
  ok(run('npx', ['--no-install', 'hudi-serverless', 'generate', '--out', 'users.jsonl', '--count', '25', '--seed', '7'], project), 'generate');
  ok(run('npx', ['--no-install', 'hudi-serverless', 'init', 'users-table', '--props', 'users.properties'], project), 'init');
  ok(run('npx', ['--no-install', 'hudi-serverless', 'write', 'users-table', '--input', 'users.jsonl', '--props', 'users.properties'], project), 'write');
  const rows = ok(run('npx', ['--no-install', 'hudi-serverless', 'read', 'users-table'], project), 'read')
    .trim()
    .split('\n');
  const written = readFileSync(join(project, 'users.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { id: unknown }).id);
  assert.deepEqual(rows.map((line) => (JSON.parse(line) as { id: unknown }).id).sort(), written.sort());
});

test("the library imports at run time and its types check in the user's project", () => {
  // Run time: the package's entry point reads the table the CLI wrote.
  writeFileSync(
    join(project, 'count.mjs'),
    [
      "import { HudiTable, openStorage, readSnapshot } from 'hudi-serverless';",
      "const table = await HudiTable.open(openStorage('users-table'));",
      'const snapshot = await readSnapshot(table);',
      'console.log(JSON.stringify({ name: table.config.name, rows: snapshot.rows.length }));',
      '',
    ].join('\n'),
  );
  assert.deepEqual(JSON.parse(ok(run(process.execPath, ['count.mjs'], project), 'node count.mjs')), { name: 'users', rows: 25 });

  // Types: strict, with the declarations checked too (skipLibCheck off); the @ts-expect-error lines fail the check
  // if the types were missing (everything `any`).
  writeFileSync(
    join(project, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions: { target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, include: ['check.ts'] }, null, 2)}\n`,
  );
  writeFileSync(
    join(project, 'check.ts'),
    [
      "import { HudiError, HudiTable, openStorage, readSnapshot, writeBatch, type Snapshot, type Storage, type WriteResult } from 'hudi-serverless';",
      "const storage: Storage = openStorage('users-table');",
      'const table: HudiTable = await HudiTable.open(storage);',
      'const snapshot: Snapshot = await readSnapshot(table, { includeMetaFields: true });',
      'const columns: string[] = snapshot.columns;',
      'const name: string = table.config.name;',
      "const result: WriteResult = await writeBatch(storage, { input: { file: 'users.jsonl', format: 'jsonl' }, operation: 'upsert' });",
      'export const used = [columns, name, result, HudiError];',
      '// @ts-expect-error: a Storage, not a path',
      "await HudiTable.open('users-table');",
      '// @ts-expect-error: no such option',
      'await readSnapshot(table, { asOff: "1" });',
      '// @ts-expect-error: no such operation',
      "await writeBatch(storage, { input: { file: 'users.jsonl', format: 'jsonl' }, operation: 'merge' });",
      '',
    ].join('\n'),
  );
  ok(run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], project), 'tsc in the user project');
});
