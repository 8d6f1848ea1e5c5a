/**
 * The README stays true: its configuration reference is exactly what the code reads, and its two commands exist.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { it } from 'node:test';
import { CONFIG_BEGIN, CONFIG_END, configReference } from '../../lib/docs/config-reference.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

it('README configuration reference matches the code (run `npm run docs:config` after changing keys)', () => {
  const start = readme.indexOf(CONFIG_BEGIN);
  const end = readme.indexOf(CONFIG_END);
  assert.ok(start >= 0 && end > start);
  assert.equal(readme.slice(start, end + CONFIG_END.length), configReference());
});

it('README gives the two commands, and package.json defines them', () => {
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /^npm test/m);
  const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.ok(scripts['start'] && scripts['test']);
  assert.match(readFileSync(join(REPO_ROOT, '.ci/run'), 'utf8'), /npm test/);
});

it('README "What is where" names every folder and top-level module of lib/, and every bench script', () => {
  const start = readme.indexOf('## What is where');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const named = new Set([...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  const entries = readdirSync(join(REPO_ROOT, 'lib'), { withFileTypes: true });
  const missing = entries
    .filter((e) => e.name !== 'index.ts' && (e.isDirectory() || e.name.endsWith('.ts')))
    .map((e) => (e.isDirectory() ? `lib/${e.name}/` : `lib/${e.name}`))
    .filter((path) => !named.has(path) && !named.has(path.replace(/\/$/, '')));
  assert.deepEqual(missing, [], 'add a row (or a name in a row) for each to the README\'s "What is where"');
  for (const sub of readdirSync(join(REPO_ROOT, 'lib/serverless'), { withFileTypes: true }).filter((e) => e.isDirectory())) {
    assert.ok(named.has(`lib/serverless/${sub.name}/`), `lib/serverless/${sub.name}/ needs a row`);
  }
  const scripts = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts).filter((s) =>
    s.startsWith('bench:'),
  );
  for (const script of scripts) assert.ok(section.includes(script), `${script} is not listed under bench/`);
});

it('README "What is where" shows the layers of infra/layers.cjs (the dependency check\'s), bottom to top', () => {
  const { LAYERS } = createRequire(import.meta.url)(join(REPO_ROOT, 'infra/layers.cjs')) as { LAYERS: { name: string; rooms: string[] }[] };
  const start = readme.indexOf('## What is where');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const layerOfPath = new Map<string, string>();
  const order: string[] = [];
  let layer = '';
  for (const row of section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| layer'))) {
    const cells = row.split('|').map((cell) => cell.trim());
    if (cells[1] !== '') order.push((layer = cells[1]!));
    for (const m of (cells[2] ?? '').matchAll(/`([^`]+)`/g)) layerOfPath.set(m[1]!.replace(/\/$/, ''), layer);
  }
  assert.deepEqual(
    order.slice(0, LAYERS.length),
    LAYERS.map((l) => l.name),
  );
  for (const { name, rooms } of LAYERS) {
    for (const room of rooms) assert.equal(layerOfPath.get(`lib/${room}`), name, `lib/${room} belongs to the layer "${name}" in the README`);
  }
});
