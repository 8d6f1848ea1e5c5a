/**
 * What a clustering run changed, per partition: files, bytes and rows before and after, and a data-skipping figure
 * per sort column — the average fraction of a partition's files whose min/max range contains a value a point query
 * looks for (the files that query must read), over values sampled from the data. Pure functions over plain values;
 * the executor gathers the inputs (footer statistics, sampled values) and stores them with each group's result.
 */
import type { JsonValue } from '../engine/row-format.js';
import { formatRequestCounts, type RequestCounts, sumRequestCounts } from '../storage/request-counts.js';

/** A statistic or sampled value in a form that compares correctly with `<`: numbers, or strings in byte-like order. */
export type ComparableValue = number | string;

/** What a report needs to know about a column's type to compare its values (a Parquet footer's column info). */
export interface ValueTypeInfo {
  readonly physicalType?: string;
  readonly logicalType?: string;
}

/** One data file: its size, rows and each sort column's [min, max] (null when the footer has no usable statistic). */
export interface FileSummary {
  readonly bytes: number;
  readonly rows: number;
  readonly ranges: Readonly<Record<string, readonly [ComparableValue | null, ComparableValue | null]>>;
}

/**
 * How a group's outputs were made: its row groups copied byte for byte, or its rows rewritten (with the reason
 * binary copy was not used).
 */
export type GroupExecution =
  | {
      readonly method: 'binary-copy';
      readonly rowGroups: number;
      /** Set when the outputs' Hudi footers were built from their record keys, not merged from the inputs' footers: why. */
      readonly footersFromKeys?: string;
    }
  | {
      readonly method: 'rewrite';
      readonly reason: string;
      /** Several outputs cut from one sorted file: how (its row groups copied, or each output rewritten from it, and why). */
      readonly split?: string;
      /**
       * Outputs whose bloom filter is the inputs' merged, as full as the one their own keys would make (which lets
       * every key through): their footers needed only their key range.
       */
      readonly saturatedBloomFilters?: number;
      /** A space curve's keys: computed by the engine inside its sort ('engine'), or here and handed to it as ranks. */
      readonly curveKeys?: 'engine' | 'ranks';
    };

/** One clustering group's part of the report: its input files, its output files and values sampled from its rows. */
export interface GroupReportInput {
  readonly groupIndex: number;
  readonly partitionPath: string;
  readonly before: readonly FileSummary[];
  readonly after: readonly FileSummary[];
  /** Per sort column, values sampled from the group's rows (nulls are not looked up). */
  readonly samples: Readonly<Record<string, readonly (ComparableValue | null)[]>>;
  /** Absent in results stored before binary copy existed. */
  readonly execution?: GroupExecution;
  /** The storage requests of the group's transfers (staging, markers, uploads); absent in older results. */
  readonly requests?: RequestCounts;
}

export interface DataSkippingFigure {
  readonly column: string;
  /** Average fraction of the files a point query on a sampled value must read, before and after (0..1). */
  readonly before: number;
  readonly after: number;
  /** How many sampled values the averages are over. */
  readonly samples: number;
}

export interface PartitionReport {
  readonly partitionPath: string;
  readonly filesBefore: number;
  readonly filesAfter: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  readonly rowsBefore: number;
  readonly rowsAfter: number;
  readonly dataSkipping: readonly DataSkippingFigure[];
}

/** How the run's groups were executed: by binary copy, or rewritten, with why binary copy was not used (each reason once). */
export interface ExecutionFigures {
  readonly binaryCopyGroups: number;
  readonly rewrittenGroups: number;
  readonly rewriteReasons: readonly string[];
  /** Rewritten groups whose space-curve keys the engine computed inside its own sort (absent when none). */
  readonly curveKeysInEngine?: number;
}

export interface ClusteringReport {
  readonly instantTime: string;
  readonly layout: string;
  readonly sortColumns: readonly string[];
  readonly groups: number;
  readonly partitions: readonly PartitionReport[];
  readonly totals: Omit<PartitionReport, 'partitionPath'>;
  /** Absent in reports made before binary copy existed. */
  readonly execution?: ExecutionFigures;
  /** Storage requests of the groups' transfers, summed (none on a local disk); absent in reports made before. */
  readonly requests?: RequestCounts;
}

/**
 * What a completed clustering keeps of its report (in its replacecommit, instant.ts): the totals and their shape,
 * without the per-partition figures, which can be many.
 */
export interface ClusteringSummary {
  readonly layout: string;
  readonly sortColumns: readonly string[];
  readonly groups: number;
  readonly partitions: number;
  readonly totals: Omit<PartitionReport, 'partitionPath'>;
}

export function summarizeClusteringReport(report: ClusteringReport): ClusteringSummary {
  return { layout: report.layout, sortColumns: report.sortColumns, groups: report.groups, partitions: report.partitions.length, totals: report.totals };
}

export interface ClusteringReportInput {
  readonly instantTime: string;
  readonly layout: string;
  readonly sortColumns: readonly string[];
  readonly groups: readonly GroupReportInput[];
}

const TIMESTAMP_TEXT = /^([+-]?\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

/**
 * A value as the engine prints it (row-format.ts) → a comparable value. Timestamps (ISO text) become epoch
 * microseconds, decimals and out-of-range integers (text) numbers; dates stay `YYYY-MM-DD` text, which orders
 * correctly. Nested values and binary have no order here (null: the file counts as one a query must read).
 */
export function toComparable(value: JsonValue | undefined, type: ValueTypeInfo | undefined): ComparableValue | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return null;
  // Dates print as YYYY-MM-DD, which orders as text.
  if (type?.logicalType === 'DATE') return value;
  if (type?.logicalType === 'TIMESTAMP') {
    const match = TIMESTAMP_TEXT.exec(value);
    if (match === null) return null;
    const millis = Date.parse(`${match[1]}Z`);
    if (Number.isNaN(millis)) return null;
    return millis * 1000 + Number((match[2] ?? '').padEnd(6, '0').slice(0, 6));
  }
  const numeric = type?.logicalType === 'DECIMAL' || ['INT32', 'INT64', 'FLOAT', 'DOUBLE'].includes(type?.physicalType ?? '');
  if (numeric) {
    const number = Number(value);
    return Number.isNaN(number) && value !== 'NaN' ? null : number;
  }
  if (type?.physicalType === 'BYTE_ARRAY' || type?.physicalType === 'FIXED_LEN_BYTE_ARRAY') {
    // Base64 binary has no useful order; strings are compared as they are.
    return type.logicalType === 'STRING' || type.logicalType === 'ENUM' || type.logicalType === 'JSON' ? value : null;
  }
  return value;
}

/** Whether a point query for `value` must read a file with this [min, max]: unknown statistics mean it must. */
export function rangeContains(range: readonly [ComparableValue | null, ComparableValue | null] | undefined, value: ComparableValue): boolean {
  if (range === undefined) return true;
  const [min, max] = range;
  if (min === null || max === null || typeof min !== typeof value || typeof max !== typeof value) return true;
  return min <= value && value <= max;
}

/** Average over the non-null samples of the fraction of `files` whose range of `column` contains the sample. */
export function dataSkippingFraction(
  files: readonly FileSummary[],
  column: string,
  samples: readonly (ComparableValue | null)[],
): { fraction: number; samples: number } {
  const values = samples.filter((sample): sample is ComparableValue => sample !== null);
  if (values.length === 0 || files.length === 0) return { fraction: 0, samples: 0 };
  let total = 0;
  for (const value of values) {
    let reading = 0;
    for (const file of files) if (rangeContains(file.ranges[column], value)) reading += 1;
    total += reading / files.length;
  }
  return { fraction: total / values.length, samples: values.length };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** Build the run's report: groups of the same partition are taken together (a query reads a partition's files). */
export function buildClusteringReport(input: ClusteringReportInput): ClusteringReport {
  const byPartition = new Map<string, GroupReportInput[]>();
  for (const group of input.groups) {
    const groups = byPartition.get(group.partitionPath);
    if (groups) groups.push(group);
    else byPartition.set(group.partitionPath, [group]);
  }
  // Sample-weighted totals: every sampled value counts once, whatever its partition's size.
  const overall = new Map<string, { before: number; after: number; samples: number }>();
  const partitions: PartitionReport[] = [...byPartition.keys()].sort().map((partitionPath) => {
    const groups = byPartition.get(partitionPath)!;
    const before = groups.flatMap((group) => group.before);
    const after = groups.flatMap((group) => group.after);
    const dataSkipping = input.sortColumns.map((column): DataSkippingFigure => {
      const samples = groups.flatMap((group) => group.samples[column] ?? []);
      const was = dataSkippingFraction(before, column, samples);
      const is = dataSkippingFraction(after, column, samples);
      const running = overall.get(column) ?? { before: 0, after: 0, samples: 0 };
      overall.set(column, {
        before: running.before + was.fraction * was.samples,
        after: running.after + is.fraction * is.samples,
        samples: running.samples + was.samples,
      });
      return { column, before: was.fraction, after: is.fraction, samples: was.samples };
    });
    return {
      partitionPath,
      filesBefore: before.length,
      filesAfter: after.length,
      bytesBefore: sum(before.map((file) => file.bytes)),
      bytesAfter: sum(after.map((file) => file.bytes)),
      rowsBefore: sum(before.map((file) => file.rows)),
      rowsAfter: sum(after.map((file) => file.rows)),
      dataSkipping,
    };
  });
  const executions = input.groups.map((group) => group.execution).filter((execution) => execution !== undefined);
  const curveKeysInEngine = executions.filter((execution) => execution.method === 'rewrite' && execution.curveKeys === 'engine').length;
  return {
    instantTime: input.instantTime,
    layout: input.layout,
    sortColumns: [...input.sortColumns],
    groups: input.groups.length,
    execution: {
      binaryCopyGroups: executions.filter((execution) => execution.method === 'binary-copy').length,
      rewrittenGroups: executions.filter((execution) => execution.method === 'rewrite').length,
      rewriteReasons: [...new Set(executions.flatMap((execution) => (execution.method === 'rewrite' ? [execution.reason] : [])))],
      ...(curveKeysInEngine === 0 ? {} : { curveKeysInEngine }),
    },
    requests: sumRequestCounts(input.groups.map((group) => group.requests)),
    partitions,
    totals: {
      filesBefore: sum(partitions.map((p) => p.filesBefore)),
      filesAfter: sum(partitions.map((p) => p.filesAfter)),
      bytesBefore: sum(partitions.map((p) => p.bytesBefore)),
      bytesAfter: sum(partitions.map((p) => p.bytesAfter)),
      rowsBefore: sum(partitions.map((p) => p.rowsBefore)),
      rowsAfter: sum(partitions.map((p) => p.rowsAfter)),
      dataSkipping: input.sortColumns.map((column) => {
        const figure = overall.get(column) ?? { before: 0, after: 0, samples: 0 };
        const samples = figure.samples;
        return { column, before: samples === 0 ? 0 : figure.before / samples, after: samples === 0 ? 0 : figure.after / samples, samples };
      }),
    },
  };
}

const MIB = 1024 * 1024;
const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;
const megabytes = (bytes: number): string => `${(bytes / MIB).toFixed(2)} MB`;

/** The report as text lines for a terminal. */
export function formatClusteringReport(report: ClusteringReport): string {
  const lines = [reportHeadline(report.instantTime, report)];
  for (const partition of report.partitions)
    lines.push(...figureLines(`  ${partition.partitionPath === '' ? '(non-partitioned)' : partition.partitionPath}`, partition));
  lines.push(...figureLines('  total', report.totals));
  const execution = report.execution;
  if (execution !== undefined && execution.binaryCopyGroups + execution.rewrittenGroups > 0) {
    lines.push(
      `  executed: ${execution.binaryCopyGroups} group${execution.binaryCopyGroups === 1 ? '' : 's'} by binary copy of row groups, ` +
        `${execution.rewrittenGroups} rewritten${execution.rewriteReasons.length === 0 ? '' : ` (${execution.rewriteReasons.join('; ')})`}` +
        (execution.curveKeysInEngine === undefined ? '' : `; curve keys computed in the engine's sort for ${execution.curveKeysInEngine}`),
    );
  }
  if (report.requests !== undefined && Object.keys(report.requests).length > 0) lines.push(`  storage requests: ${formatRequestCounts(report.requests)}`);
  return `${lines.join('\n')}\n`;
}

/** A stored summary as text lines, in the report's form (totals only). */
export function formatClusteringSummary(instantTime: string, summary: ClusteringSummary): string {
  const lines = [
    `${reportHeadline(instantTime, summary)}, ${summary.partitions} partition${summary.partitions === 1 ? '' : 's'}`,
    ...figureLines('  total', summary.totals),
  ];
  return `${lines.join('\n')}\n`;
}

function reportHeadline(instantTime: string, shape: Pick<ClusteringSummary, 'groups' | 'layout' | 'sortColumns'>): string {
  return (
    `clustering ${instantTime}: ${shape.groups} group${shape.groups === 1 ? '' : 's'}, layout ${shape.layout}` +
    (shape.sortColumns.length > 0 ? ` by ${shape.sortColumns.join(', ')}` : ', no sort columns')
  );
}

function figureLines(label: string, figures: Omit<PartitionReport, 'partitionPath'>): string[] {
  return [
    `${label}: files ${figures.filesBefore} → ${figures.filesAfter}, ${megabytes(figures.bytesBefore)} → ${megabytes(figures.bytesAfter)}, ` +
      `rows ${figures.rowsBefore} → ${figures.rowsAfter}`,
    ...figures.dataSkipping.map(
      (figure) =>
        `    ${figure.column}: a point query reads ${percent(figure.before)} → ${percent(figure.after)} of the files (${figure.samples} sampled values)`,
    ),
  ];
}
