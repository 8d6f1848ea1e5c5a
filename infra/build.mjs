// Bundles each Lambda handler and the CLI with esbuild into dist/.
// DuckDB's native binding cannot be bundled: it stays external and ships with the package (or a Lambda layer).
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const handlers = existsSync(join(root, 'functions'))
  ? readdirSync(join(root, 'functions')).filter((f) => f.endsWith('.ts')).map((f) => join(root, 'functions', f))
  : [];
const entryPoints = {
  cli: join(root, 'lib/cli/main.ts'),
  ...Object.fromEntries(handlers.map((file) => [`functions/${basename(file, '.ts')}`, file])),
  ...(existsSync(join(root, 'infra/demo.ts')) ? { demo: join(root, 'infra/demo.ts') } : {}),
};

await build({
  entryPoints,
  outdir: join(root, 'dist'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  sourcemap: true,
  logLevel: 'warning',
  external: ['@duckdb/node-api', '@duckdb/node-bindings', '@duckdb/node-bindings-*'],
  // ESM bundles of CommonJS dependencies (the AWS SDK) need a require().
  banner: { js: "import { createRequire as __hsCreateRequire } from 'node:module'; const require = __hsCreateRequire(import.meta.url);" },
});
console.log(`built ${Object.keys(entryPoints).length} bundles into dist/`);
