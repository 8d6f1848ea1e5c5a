#!/usr/bin/env node
// Usage: node infra/build-layer.mjs [arm64|x86_64] [folder]   (default arm64, the template's default Architecture,
//        into build/duckdb-layer; `sam build` runs it through the Makefile for DuckDbLayerArm64 and DuckDbLayerX8664)
//
// Builds a DuckDB Lambda layer: <folder>/nodejs/node_modules holding
// @duckdb/node-api (the version package.json pins) with the Linux glibc binding for the given architecture, whatever
// machine this runs on (npm's --os/--cpu/--libc pick the optional binding package). esbuild cannot bundle the native
// binding, so every function keeps @duckdb/* external and imports it from the layer (/opt/nodejs/node_modules).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ARCHITECTURES = { arm64: 'arm64', x86_64: 'x64' };

const architecture = process.argv[2] ?? 'arm64';
const cpu = ARCHITECTURES[architecture];
if (cpu === undefined) {
  process.stderr.write(`build-layer: architecture must be one of ${Object.keys(ARCHITECTURES).join(', ')}, not ${architecture}\n`);
  process.exit(2);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// The version installed here (package-lock's), so the layer matches what the tests ran; else package.json's range.
let version = packageJson.dependencies?.['@duckdb/node-api'];
try {
  version = JSON.parse(readFileSync(join(root, 'node_modules', '@duckdb', 'node-api', 'package.json'), 'utf8')).version;
} catch {
  // not installed: use the range
}
if (typeof version !== 'string') {
  process.stderr.write('build-layer: package.json has no @duckdb/node-api dependency\n');
  process.exit(1);
}

const layerDir = process.argv[3] === undefined ? join(root, 'build', 'duckdb-layer') : resolve(process.argv[3]);
const nodejsDir = join(layerDir, 'nodejs');
// Only what this script writes: the folder may be SAM's artefacts folder.
rmSync(nodejsDir, { recursive: true, force: true });
rmSync(join(layerDir, 'ARCHITECTURE'), { force: true });
mkdirSync(nodejsDir, { recursive: true });
writeFileSync(
  join(nodejsDir, 'package.json'),
  `${JSON.stringify({ name: 'hudi-serverless-duckdb-layer', private: true, dependencies: { '@duckdb/node-api': version } }, null, 2)}\n`,
);

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(
  npm,
  [
    'install',
    '--omit=dev',
    '--no-audit',
    '--no-fund',
    '--no-package-lock',
    '--prefer-offline',
    '--os=linux',
    `--cpu=${cpu}`,
    '--libc=glibc',
    '--prefix',
    nodejsDir,
  ],
  { stdio: 'inherit' },
);
// npm skips an optional dependency it cannot match silently: make sure the binding for Lambda is there.
const binding = join(nodejsDir, 'node_modules', '@duckdb', `node-bindings-linux-${cpu}`);
try {
  readFileSync(join(binding, 'package.json'));
} catch {
  process.stderr.write(`build-layer: ${binding} was not installed; check that npm supports --os/--cpu/--libc (npm 10+)\n`);
  process.exit(1);
}
writeFileSync(join(layerDir, 'ARCHITECTURE'), `${architecture}\n`);
process.stdout.write(`build-layer: ${layerDir} holds @duckdb/node-api ${version} for linux-${cpu} (deploy with Architecture=${architecture})\n`);
