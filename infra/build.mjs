// Bundles the Lambda handlers, the CLI and the demo with esbuild.
//   node infra/build.mjs [--outdir DIR]           every bundle into dist/ (the CLI, the library, the demos, dist/functions/*)
//   node infra/build.mjs --sam-function <Name> <dir>   one handler for `sam build` (the Makefile's build-<Name>Function
//                                                  target: <Name> is the logical id without "Function", e.g.
//                                                  ExecuteGroup → functions/execute-group.ts → <dir>/execute-group.mjs)
// DuckDB's native binding cannot be bundled: it stays external and ships with the package (or the Lambda layer).

import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** One set of esbuild options for dist/ and for SAM's artefacts, so the tested bundle is the deployed one. */
const COMMON = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  outExtension: { '.js': '.mjs' },
  sourcemap: true,
  logLevel: 'warning',
  // @duckdb/node-api's JavaScript is bundled (lib/engine/duckdb.ts loads it on first use); its binding cannot be.
  external: ['@duckdb/node-bindings', '@duckdb/node-bindings-*'],
  // ESM bundles of CommonJS dependencies (the AWS SDK) need a require().
  banner: { js: "import { createRequire as __hsCreateRequire } from 'node:module'; const require = __hsCreateRequire(import.meta.url);" },
};

const args = process.argv.slice(2);
if (args[0] === '--sam-function') {
  const [, name, outdir] = args;
  // PlanFunction → plan, ExecuteGroupFunction → execute-group.
  const handler = (name ?? '').replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  const entry = join(root, 'functions', `${handler}.ts`);
  if (name === undefined || outdir === undefined || !existsSync(entry)) {
    process.stderr.write(
      `build: --sam-function needs a logical id whose handler exists (functions/${handler}.ts) and an output folder; got ${args.slice(1).join(' ')}\n`,
    );
    process.exit(2);
  }
  await build({ ...COMMON, entryPoints: { [handler]: entry }, outdir });
  console.log(`built ${handler} into ${outdir}`);
} else {
  // --outdir DIR: the same bundles elsewhere (test/repository/package.test.ts packs a copy without touching dist/).
  const outdirAt = args.indexOf('--outdir');
  const outdir = outdirAt >= 0 && args[outdirAt + 1] !== undefined ? args[outdirAt + 1] : join(root, 'dist');
  const handlers = existsSync(join(root, 'functions'))
    ? readdirSync(join(root, 'functions'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(root, 'functions', f))
    : [];
  const entryPoints = {
    cli: join(root, 'lib/cli/main.ts'),
    // The package's library entry (its types: npm run build:types).
    index: join(root, 'lib/index.ts'),
    ...Object.fromEntries(handlers.map((file) => [`functions/${basename(file, '.ts')}`, file])),
    ...(existsSync(join(root, 'infra/demo.ts')) ? { demo: join(root, 'infra/demo.ts') } : {}),
    ...(existsSync(join(root, 'infra/demo-stream.ts')) ? { 'demo-stream': join(root, 'infra/demo-stream.ts') } : {}),
  };
  await build({ ...COMMON, entryPoints, outdir });
  console.log(`built ${Object.keys(entryPoints).length} bundles into ${outdir}`);
}
