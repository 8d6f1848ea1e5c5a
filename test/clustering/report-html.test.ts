// A clustering's HTML report: `cluster` (the built CLI) on a table of small files writes
// .reports/clustering/<instant>.html into the table, self-contained, with one chart per partition whose bars are the
// partition's files before and after; the table reads as before (the folder is no partition); and Debian's headless
// Chromium draws the page: the screenshot shows both colours of bars, not a blank page.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { clusteringReportPath, REPORTS_FOLDER } from '../../lib/clustering/report-html.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { countColour, decodePng } from '../helpers/png.js';
import { createSmallFilesTable, type SmallFilesTable } from '../helpers/small-files-table.js';

const BEFORE = '#f59e0b';
const AFTER = '#2563eb';

let base: SmallFilesTable;
let instant: string;
let page: string;
let pagePath: string;

before(async () => {
  base = await createSmallFilesTable({ dir: tempDir('report-html-'), partitions: 3, commits: 8, rowsPerFile: 30 });
  const averageFile = Math.ceil(base.bytes / base.files.length);
  const props = join(tempDir('report-html-props-'), 'clustering.properties');
  writeFileSync(
    props,
    [
      'hoodie.layout.optimize.strategy=z-order',
      'hoodie.clustering.plan.strategy.sort.columns=birthday,createTime',
      `hoodie.clustering.plan.strategy.max.bytes.per.group=${averageFile * 4}`,
      `hoodie.clustering.plan.strategy.target.file.max.bytes=${averageFile * 2}`,
      '',
    ].join('\n'),
  );
  const result = runCli(['cluster', base.dir, '--mode', 'scheduleAndExecute', '--props', props, '--force']);
  assert.equal(result.code, 0, result.stderr);
  const printed = /^HTML report: (.+)$/m.exec(result.stdout);
  assert.ok(printed, `cluster prints where the report went:\n${result.stdout}`);
  const timeline = runCli(['timeline', base.dir, '--json']);
  const completed = jsonLines(timeline.stdout).filter((entry) => entry['action'] === 'replacecommit' && entry['state'] === 'COMPLETED');
  assert.equal(completed.length, 1, timeline.stdout);
  instant = String(completed[0]!['time'] ?? completed[0]!['instant']);
  pagePath = join(base.dir, clusteringReportPath(instant));
  assert.equal(printed[1], pagePath);
  page = readFileSync(pagePath, 'utf8');
});

test('the page is self-contained: no script, nothing fetched', () => {
  assert.equal(clusteringReportPath(instant), `${REPORTS_FOLDER}/${instant}.html`);
  assert.match(page, /^<!doctype html>/);
  assert.doesNotMatch(page, /<script|<link|<img|<iframe|url\(|(src|href)=/i);
  assert.match(page, new RegExp(`<h1>Clustering ${instant}</h1>`));
});

test('each partition has a chart whose bars are its files before and after the clustering', () => {
  const replacecommit = JSON.parse(readFileSync(join(base.dir, '.hoodie', `${instant}.replacecommit`), 'utf8')) as {
    partitionToWriteStats: Record<string, unknown[]>;
    partitionToReplaceFileIds: Record<string, string[]>;
  };
  const sections = page.split('<section>').slice(1);
  const byName = new Map(sections.map((section) => [/<h2>([^<]*)<\/h2>/.exec(section)![1]!, section]));
  assert.ok(byName.has('Whole run'));
  const partitions = Object.keys(replacecommit.partitionToWriteStats).sort();
  assert.equal(partitions.length, base.partitions.length, 'every partition was clustered');
  for (const partition of partitions) {
    const section = byName.get(partition);
    assert.ok(section !== undefined, `a section for ${partition}`);
    const fileChart = /<svg class="chart"[^>]*aria-label="file sizes before and after">(.*?)<\/svg>/s.exec(section)![1]!;
    const bars = (colour: string): number => fileChart.split(`fill="${colour}"`).length - 1;
    assert.equal(bars(BEFORE), replacecommit.partitionToReplaceFileIds[partition]!.length, `${partition}: a bar per replaced file`);
    assert.equal(bars(AFTER), replacecommit.partitionToWriteStats[partition]!.length, `${partition}: a bar per new file`);
    assert.match(section, /aria-label="files a point query reads"/);
    assert.match(section, /<td>birthday: files a point query reads<\/td>/);
  }
});

test('the reports folder is no partition: the table reads and lists as before', () => {
  const rows = runCli(['read', base.dir]);
  assert.equal(rows.code, 0, rows.stderr);
  assert.equal(jsonLines(rows.stdout).length, base.rows);
  const files = runCli(['files', base.dir, '--json']);
  assert.equal(files.code, 0, files.stderr);
  assert.doesNotMatch(files.stdout, /\.reports/);
});

test('headless Chromium draws it: bars of both colours on the screenshot', () => {
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((file) => existsSync(file));
  assert.ok(chromium !== undefined, "Debian's chromium is not installed: apt-get install -y chromium (.ci/run does)");
  const out = tempDir('report-html-shot-');
  const screenshot = join(out, 'report.png');
  const result = spawnSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      '--hide-scrollbars',
      `--user-data-dir=${join(out, 'profile')}`,
      '--window-size=1100,900',
      `--screenshot=${screenshot}`,
      pathToFileURL(pagePath).href,
    ],
    { encoding: 'utf8', timeout: 180_000 },
  );
  assert.ok(existsSync(screenshot), `chromium wrote no screenshot (exit ${result.status}, ${result.signal ?? ''}):\n${result.stderr}`);
  const pixels = decodePng(readFileSync(screenshot));
  assert.deepEqual([pixels.width, pixels.height], [1100, 900]);
  const total = pixels.width * pixels.height;
  const white = countColour(pixels, '#ffffff', 8);
  assert.ok(white < total * 0.97, `the page is not blank (${total - white} of ${total} pixels drawn)`);
  assert.ok(countColour(pixels, BEFORE) > 300, 'the before bars are drawn');
  assert.ok(countColour(pixels, AFTER) > 300, 'the after bars are drawn');
  if (process.env['HUDI_REPORT_SCREENSHOT']) writeFileSync(process.env['HUDI_REPORT_SCREENSHOT'], readFileSync(screenshot));
});
