// `sam build` (infra/sam-build.mjs: the toolchain's SAM CLI, the Makefile's targets) makes what `sam deploy` ships:
// every function's bundle where the built template points, and DuckDB's native binding in a layer per architecture,
// arm64 and x86_64, each the right ELF machine. The local state-machine tests run these same bundles
// (test/helpers/serverless.ts ensureBundles).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { toolchainPaths } from '../../infra/hudi-toolchain.mjs';
import { FUNCTIONS } from '../../lib/serverless/aws/function-settings.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { ensureBundles } from '../helpers/serverless.js';

interface BuiltResource {
  readonly Type: string;
  readonly Condition?: string;
  readonly Properties: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

let buildDir: string;
let resources: Record<string, BuiltResource>;

before(() => {
  buildDir = ensureBundles();
  // SAM writes the built template with long-form intrinsics: plain YAML (the toolchain's PyYAML reads it).
  const python = toolchainPaths().python;
  const script = 'import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))';
  const template = JSON.parse(execFileSync(python, ['-c', script, join(buildDir, 'template.yaml')], { encoding: 'utf8' })) as {
    Resources: Record<string, BuiltResource>;
  };
  resources = template.Resources;
});

/** ELF class, byte order and machine of a file (e_ident[4], e_ident[5], e_machine). */
function elfHeader(file: string): { elf64: boolean; littleEndian: boolean; machine: number } {
  const header = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  assert.equal(header.subarray(0, 4).toString('latin1'), '\x7fELF', `${file} is an ELF file`);
  const littleEndian = header[5] === 1;
  return { elf64: header[4] === 2, littleEndian, machine: littleEndian ? header.readUInt16LE(18) : header.readUInt16BE(18) };
}

// e_machine values of the ELF specification.
const EM_X86_64 = 62;
const EM_AARCH64 = 183;
const LAYERS = [
  { resource: 'DuckDbLayerArm64', architecture: 'arm64', npmCpu: 'arm64', machine: EM_AARCH64, other: 'x64' },
  { resource: 'DuckDbLayerX8664', architecture: 'x86_64', npmCpu: 'x64', machine: EM_X86_64, other: 'arm64' },
] as const;

test('every function of the template is built where the built template points, its handler file first in it', () => {
  const functions = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::Serverless::Function');
  assert.deepEqual(
    functions.map(([name]) => name).sort(),
    Object.values(FUNCTIONS)
      .map((settings) => settings.resource)
      .sort(),
  );
  for (const [name, resource] of functions) {
    assert.equal(resource.Properties['CodeUri'], name, `${name}'s CodeUri is its build folder`);
    const [file, exported] = String(resource.Properties['Handler']).split('.');
    const bundle = join(buildDir, name, `${file}.mjs`);
    assert.ok(existsSync(bundle), `${bundle} (Handler ${String(resource.Properties['Handler'])})`);
    assert.equal(exported, 'handler');
    const code = readFileSync(bundle, 'utf8');
    // DuckDB's JavaScript API is bundled; its native binding comes from the layer: every mention of a DuckDB package
    // is a require of the binding from outside the bundle.
    const mentions = [...code.matchAll(/["']@duckdb\/[^"']*["']/g)].length;
    const imports = [...code.matchAll(/__require\("@duckdb\/node-bindings"\)/g)].length;
    // lib/engine/duckdb.ts's branch for unbundled modules, never taken in a bundle (which has a require).
    const unbundledBranch = [
      ...code.matchAll(/typeof __require === "function" \? require_\w+\(\) : createRequire\(import\.meta\.url\)\("@duckdb\/node-api"\)/g),
    ].length;
    assert.equal(mentions, imports + unbundledBranch, `${name} requires DuckDB's binding from outside the bundle only`);
    if (name === 'ExecuteGroupFunction') assert.ok(imports > 0, 'execute-group requires DuckDB');
    assert.doesNotMatch(code, /node-bindings-linux-(x64|arm64)/, `${name} carries no binding`);
    assert.deepEqual(readdirSync(join(buildDir, name)).sort(), [`${file}.mjs`, `${file}.mjs.map`], `${name} ships its bundle and source map only`);
  }
});

test("the build carries DuckDB's Linux binding for arm64 and for x86_64, each its own ELF machine, in the layer of that Architecture", () => {
  const installed = (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/@duckdb/node-api/package.json'), 'utf8')) as { version: string }).version;
  for (const layer of LAYERS) {
    const resource = resources[layer.resource];
    assert.ok(resource !== undefined, `${layer.resource} in the built template`);
    assert.equal(resource.Type, 'AWS::Serverless::LayerVersion');
    assert.equal(resource.Properties['ContentUri'], layer.resource);
    assert.deepEqual(resource.Properties['CompatibleArchitectures'], [layer.architecture]);
    assert.equal(resource.Condition, layer.architecture === 'arm64' ? 'IsArm64' : 'IsX8664', 'the stack creates only the layer of its Architecture');
    const modules = join(buildDir, layer.resource, 'nodejs', 'node_modules', '@duckdb');
    const api = JSON.parse(readFileSync(join(modules, 'node-api', 'package.json'), 'utf8')) as { version: string };
    assert.equal(api.version, installed, `${layer.resource}'s @duckdb/node-api is the version the tests ran`);
    const binding = join(modules, `node-bindings-linux-${layer.npmCpu}`);
    for (const file of ['duckdb.node', 'libduckdb.so']) {
      assert.deepEqual(elfHeader(join(binding, file)), { elf64: true, littleEndian: true, machine: layer.machine }, `${layer.resource}: ${file}`);
    }
    assert.equal(existsSync(join(modules, `node-bindings-linux-${layer.other}`)), false, `${layer.resource} has no ${layer.other} binding`);
  }
});

test('the functions get the layer of the Architecture parameter', () => {
  const template = readFileSync(join(buildDir, 'template.yaml'), 'utf8');
  assert.match(template, /^ {4}Layers:\n {4}- Fn::If:\n {6}- IsArm64\n {6}- Ref: DuckDbLayerArm64\n {6}- Ref: DuckDbLayerX8664$/m);
  assert.match(readFileSync(join(REPO_ROOT, 'template.yaml'), 'utf8'), /^ {2}IsArm64: !Equals \[!Ref Architecture, arm64\]$/m);
  assert.match(readFileSync(join(REPO_ROOT, 'template.yaml'), 'utf8'), /^ {2}IsX8664: !Equals \[!Ref Architecture, x86_64\]$/m);
});

test("the layer of this machine's architecture loads DuckDB and runs a query", async () => {
  const layer = LAYERS.find((candidate) => candidate.npmCpu === process.arch);
  assert.ok(layer !== undefined, `a layer for ${process.arch}`);
  const entry = join(buildDir, layer.resource, 'nodejs', 'node_modules', '@duckdb', 'node-api');
  const main = (JSON.parse(readFileSync(join(entry, 'package.json'), 'utf8')) as { main: string }).main;
  const duckdb = (await import(pathToFileURL(join(entry, main)).href)) as typeof import('@duckdb/node-api');
  const instance = await duckdb.DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll('select 6 * 7 as answer');
    assert.deepEqual(reader.getRowObjects(), [{ answer: 42 }]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  assert.ok(dirname(entry).startsWith(buildDir));
});
