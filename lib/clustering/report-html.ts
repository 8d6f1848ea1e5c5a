/**
 * A clustering run's report as one self-contained HTML page (inline CSS and SVG, no script, nothing fetched): per
 * partition, every file's size before and after as bars on one scale, and the data-skipping figures (the share of a
 * partition's files a point query must read, per sort column). Pure: the commit stores it under REPORTS_FOLDER, a
 * folder of the table outside .hoodie that no Hudi reader lists (a leading dot, no partition metafile).
 */
import type { ClusteringReport, ClusteringReportInput, DataSkippingFigure, PartitionReport } from './report.js';
import { buildClusteringReport } from './report.js';

/** Where a clustering's report goes, relative to the table: `.reports/clustering/<instant>.html`. */
export const REPORTS_FOLDER = '.reports/clustering';

export function clusteringReportPath(instantTime: string): string {
  return `${REPORTS_FOLDER}/${instantTime}.html`;
}

export interface ReportPageContext {
  /** The table, as the user names it (s3://… or a folder). */
  readonly tablePath: string;
  /** When the clustering completed (shown, not computed). */
  readonly completedAt: Date;
}

const MIB = 1024 * 1024;
const BEFORE = '#f59e0b';
const AFTER = '#2563eb';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function megabytes(bytes: number): string {
  return bytes >= 10 * MIB ? `${(bytes / MIB).toFixed(0)} MB` : bytes >= MIB / 10 ? `${(bytes / MIB).toFixed(1)} MB` : `${(bytes / 1024).toFixed(0)} KB`;
}

const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

/** File sizes of one partition, before and after, each sorted largest first. */
function partitionFileSizes(input: ClusteringReportInput): Map<string, { before: number[]; after: number[] }> {
  const sizes = new Map<string, { before: number[]; after: number[] }>();
  for (const group of input.groups) {
    const entry = sizes.get(group.partitionPath) ?? { before: [], after: [] };
    entry.before.push(...group.before.map((file) => file.bytes));
    entry.after.push(...group.after.map((file) => file.bytes));
    sizes.set(group.partitionPath, entry);
  }
  for (const entry of sizes.values()) {
    entry.before.sort((a, b) => b - a);
    entry.after.sort((a, b) => b - a);
  }
  return sizes;
}

/** Bars of file sizes: one row of bars before, one after, on one linear scale (the run's largest file). */
function fileSizeChart(sizes: { before: number[]; after: number[] }, largest: number): string {
  const width = 560;
  const label = 64;
  const rowHeight = 70;
  const plot = width - label - 8;
  const slots = Math.max(sizes.before.length, sizes.after.length, 1);
  const step = plot / slots;
  const barWidth = Math.max(1, Math.min(28, step * 0.8));
  const row = (values: number[], top: number, color: string, name: string): string => {
    const bars = values
      .map((bytes, index) => {
        const height = largest === 0 ? 0 : Math.max(2, (bytes / largest) * (rowHeight - 14));
        const x = label + index * step + (step - barWidth) / 2;
        // Few bars: each labelled with its size (many: the tooltip only).
        const caption =
          slots <= 16
            ? `<text x="${(x + barWidth / 2).toFixed(1)}" y="${(top + rowHeight - height - 3).toFixed(1)}" class="size">${megabytes(bytes)}</text>`
            : '';
        return `<rect x="${x.toFixed(1)}" y="${(top + rowHeight - height).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}" fill="${color}"><title>${megabytes(bytes)}</title></rect>${caption}`;
      })
      .join('');
    const baseline = `<line x1="${label}" x2="${width - 8}" y1="${top + rowHeight}" y2="${top + rowHeight}" stroke="#9ca3af"/>`;
    const caption =
      `<text x="0" y="${top + rowHeight / 2}" class="axis">${name}</text><text x="0" y="${top + rowHeight / 2 + 14}" class="axis">${values.length} file${values.length === 1 ? '' : 's'}</text>` +
      `<text x="0" y="${top + rowHeight / 2 + 28}" class="axis">${megabytes(values.reduce((total, bytes) => total + bytes, 0))}</text>`;
    return caption + bars + baseline;
  };
  const height = rowHeight * 2 + 24;
  return (
    `<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="file sizes before and after">` +
    row(sizes.before, 4, BEFORE, 'before') +
    row(sizes.after, rowHeight + 16, AFTER, 'after') +
    '</svg>'
  );
}

/** Per sort column: the share of files a point query reads, before and after, as two bars out of 100%. */
function dataSkippingChart(figures: readonly DataSkippingFigure[]): string {
  if (figures.length === 0) return '<p class="note">No sort columns: no data-skipping figure.</p>';
  const width = 560;
  const label = 120;
  const bar = 14;
  const plot = width - label - 60;
  const rows = figures.map((figure, index) => {
    const top = index * (bar * 2 + 18) + 4;
    const line = (fraction: number, y: number, color: string): string =>
      `<rect x="${label}" y="${y}" width="${(plot * fraction).toFixed(1)}" height="${bar}" fill="${color}"/>` +
      `<text x="${(label + plot * fraction + 6).toFixed(1)}" y="${y + bar - 3}" class="value">${percent(fraction)}</text>`;
    return (
      `<text x="0" y="${top + bar + 4}" class="axis">${escapeHtml(figure.column)}</text>` +
      `<rect x="${label}" y="${top}" width="${plot}" height="${bar * 2 + 2}" fill="#f3f4f6"/>` +
      line(figure.before, top, BEFORE) +
      line(figure.after, top + bar + 2, AFTER)
    );
  });
  const height = figures.length * (bar * 2 + 18) + 4;
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="files a point query reads">${rows.join('')}</svg>`;
}

function figuresTable(figures: Omit<PartitionReport, 'partitionPath'>): string {
  return (
    '<table><tr><th></th><th>before</th><th>after</th></tr>' +
    `<tr><td>files</td><td>${figures.filesBefore}</td><td>${figures.filesAfter}</td></tr>` +
    `<tr><td>bytes</td><td>${megabytes(figures.bytesBefore)}</td><td>${megabytes(figures.bytesAfter)}</td></tr>` +
    `<tr><td>rows</td><td>${figures.rowsBefore}</td><td>${figures.rowsAfter}</td></tr>` +
    figures.dataSkipping
      .map(
        (figure) =>
          `<tr><td>${escapeHtml(figure.column)}: files a point query reads</td><td>${percent(figure.before)}</td><td>${percent(figure.after)}</td></tr>`,
      )
      .join('') +
    '</table>'
  );
}

/** The page. `report` defaults to the one built from `input` (commit passes the one it built). */
export function renderClusteringReportHtml(
  input: ClusteringReportInput,
  context: ReportPageContext,
  report: ClusteringReport = buildClusteringReport(input),
): string {
  const sizes = partitionFileSizes(input);
  const largest = Math.max(0, ...[...sizes.values()].flatMap((entry) => [...entry.before, ...entry.after]));
  const title = `Clustering ${report.instantTime}`;
  const layout = `${report.layout}${report.sortColumns.length > 0 ? ` by ${report.sortColumns.join(', ')}` : ''}`;
  const partitions = report.partitions.map((partition) => {
    const name = partition.partitionPath === '' ? '(non-partitioned)' : partition.partitionPath;
    return (
      `<section><h2>${escapeHtml(name)}</h2><div class="row"><div>${fileSizeChart(sizes.get(partition.partitionPath) ?? { before: [], after: [] }, largest)}` +
      `${dataSkippingChart(partition.dataSkipping)}</div>${figuresTable(partition)}</div></section>`
    );
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111827;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:18px 0 6px}
.meta{color:#4b5563;margin-bottom:12px}.row{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.chart{display:block;margin:4px 0}.axis{font-size:12px;fill:#374151}.value{font-size:11px;fill:#111827}.size{font-size:9px;fill:#374151;text-anchor:middle}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #e5e7eb;text-align:right}td:first-child{text-align:left}
.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:-1px}.note{color:#6b7280}
section{border-top:1px solid #e5e7eb;margin-top:8px}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<div class="meta">${escapeHtml(context.tablePath)} · completed ${escapeHtml(context.completedAt.toISOString())} · ${report.groups} group${report.groups === 1 ? '' : 's'} · layout ${escapeHtml(layout)}
<span class="key"><span style="background:${BEFORE}"></span>before<span style="background:${AFTER}"></span>after</span></div>
<section><h2>Whole run</h2><div class="row"><div>${dataSkippingChart(report.totals.dataSkipping)}</div>${figuresTable(report.totals)}</div></section>
${partitions.join('\n')}
</body></html>
`;
}
