/**
 * Two habits of the code base (issue 39) that no linter checks: a module header says what the module is and why in
 * a few lines (details go next to the code they explain), and comments give reasons, not measured figures (those go
 * stale; the README and the benchmarks' output carry the ones worth keeping).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';
import { REPO_ROOT } from '../helpers/fixtures.js';

const ROOTS = ['lib', 'functions'];
const MAX_HEADER_LINES = 12;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

const files = ROOTS.flatMap((root) => sourceFiles(join(REPO_ROOT, root))).map((path) => ({
  name: relative(REPO_ROOT, path),
  text: readFileSync(path, 'utf8'),
}));

/** The comment opening a file (after a shebang): a block comment or a run of line comments. */
function headerLines(text: string): number {
  const body = text.replace(/^#![^\n]*\n/, '').replace(/^\s*/, '');
  const block = /^\/\*[\s\S]*?\*\//.exec(body);
  if (block) return block[0].split('\n').length;
  const lineComments = /^(?:\/\/[^\n]*(?:\n|$))+/.exec(body);
  return lineComments ? lineComments[0].trimEnd().split('\n').length : 0;
}

/** The comment text of each line: whole comment lines, and what follows ` // ` after code (strings aside, roughly). */
function commentLines(text: string): { line: number; comment: string }[] {
  const found: { line: number; comment: string }[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, index) => {
    const trimmed = raw.trim();
    if (inBlock || trimmed.startsWith('/*')) {
      found.push({ line: index + 1, comment: trimmed });
      inBlock = !trimmed.includes('*/');
      return;
    }
    if (trimmed.startsWith('//')) {
      found.push({ line: index + 1, comment: trimmed });
      return;
    }
    const trailing = raw.indexOf(' // ');
    if (trailing >= 0 && !/['"`]/.test(raw.slice(trailing))) found.push({ line: index + 1, comment: raw.slice(trailing) });
  });
  return found;
}

const UNIT = '(?:ns|µs|us|ms|s|sec|seconds|min|minutes|B|bytes|KB|MB|GB|TB|KiB|MiB|GiB|MB/s|GB/s|%)';
/** What a figure from a run looks like in a comment (constants and defaults are whole numbers without these). */
const MEASURED_FIGURE: readonly RegExp[] = [
  // a fraction with a unit: 0.42 CPU s, 1.3 MB, 13.9 s, 0.9 MB
  new RegExp(String.raw`\b\d+\.\d+\s*(?:CPU\s+)?${UNIT}(?![\w/])`),
  // CPU time, and microseconds, are only ever measured
  /\bCPU s\b|\d\s*µs\b/,
  // a range of results: 1.5–3.1, 0.28-0.30 s, 16.0–16.6
  /\b\d+(?:\.\d+)?\s*[–-]\s*\d+\.\d+\b/,
  // a speed-up or ratio from a run: 6× faster, ~50x slower, 15% faster, 1.3–1.65 × the limit
  /\d\s*(?:[×x]|%|times)\s*(?:faster|slower|more|less|the\b)/i,
  // a run's outcome: measured on / took / peak RSS … with a figure beside it, or a cost with its size
  /\b(?:measured|took|peak RSS)\b[^.;]*\d/i,
  new RegExp(String.raw`\b(?:allocated|costs?)\s+(?:about\s+|~)?\d[\d.,]*\s*${UNIT}(?![\w/])`),
];

/** A quoted example value ('1.8 GiB', the text of a setting) is not a figure. */
function withoutQuotedExamples(comment: string): string {
  return comment.replace(/'[\d.]+\s*[A-Za-z]*'/g, "''");
}

it(`every module header in ${ROOTS.join('/, ')}/ is at most ${MAX_HEADER_LINES} lines`, () => {
  const long = files.filter((file) => headerLines(file.text) > MAX_HEADER_LINES).map((file) => `${file.name} (${headerLines(file.text)} lines)`);
  assert.deepEqual(long, [], 'say what the module is and why in a few lines; move what explains one function next to it');
});

it('no comment carries a measured figure', () => {
  const figures = files.flatMap((file) =>
    commentLines(file.text)
      .filter(({ comment }) => MEASURED_FIGURE.some((pattern) => pattern.test(withoutQuotedExamples(comment))))
      .map(({ line, comment }) => `${file.name}:${line}: ${comment}`),
  );
  assert.deepEqual(figures, [], 'keep the reason, drop the figure (the README or a benchmark says it, if it matters)');
});

it('the figure patterns catch what they are meant to, and leave constants alone', () => {
  const flagged = (comment: string): boolean => MEASURED_FIGURE.some((pattern) => pattern.test(withoutQuotedExamples(comment)));
  for (const measured of [
    'measured copying 1.1 GB between local files, that took 0.42 CPU s',
    'level 1 compresses them 6× faster',
    'BigInt arithmetic is ~50x slower',
    'the layers measured 15% faster on 10,000 files',
    'a VALUES list took 40 µs a row',
    '(0.1 s a million rows)',
    'peak RSS was 1.3–1.65 × the limit',
    'a new one per file allocated 87 MB over 10,000 small files',
  ])
    assert.ok(flagged(measured), measured);
  for (const constant of [
    'the 120 MB max file size (hoodie.parquet.max.file.size)',
    'rewritten every 60 s, expired after 2 × 60 s',
    'Upload parts of 64 MiB: a 1 GB output is 16 parts',
    'KEEP_LATEST_COMMITS keeps max(20, floor(1.2 × hoodie.cleaner.commits.retained)) commits',
    'DeleteObjects, 1,000 keys a request',
    "DuckDB's memory setting text ('1.8 GiB', '512.0 MiB', '2GB') → bytes",
  ])
    assert.ok(!flagged(constant), constant);
});
