// Rewrites the configuration reference in README.md from the code's key tables: `npm run docs:config`.
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_BEGIN, CONFIG_END, configReference } from '../lib/docs/config-reference.js';

const readme = readFileSync('README.md', 'utf8');
const start = readme.indexOf(CONFIG_BEGIN);
const end = readme.indexOf(CONFIG_END);
if (start < 0 || end < 0) throw new Error('README.md has no config-reference markers');
writeFileSync('README.md', readme.slice(0, start) + configReference() + readme.slice(end + CONFIG_END.length));
console.log('README.md configuration reference updated');
