/**
 * The README stays true: its configuration reference is exactly what the code reads, and its two commands exist.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { CONFIG_BEGIN, CONFIG_END, configReference } from '../lib/docs/config-reference.js';
import { REPO_ROOT } from './helpers/fixtures.js';

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
