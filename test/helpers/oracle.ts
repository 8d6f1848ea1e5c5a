/**
 * An independent reader for tests: pyarrow (from the real-Hudi toolchain's Python, see infra/hudi-toolchain.mjs)
 * reads the latest base files directly, without any of our code.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { hudiToolchain } from './hudi.js';

const READ_SCRIPT = `
import json, sys
import pyarrow.parquet as pq
out = []
for path in json.load(sys.stdin):
    for row in pq.read_table(path).to_pylist():
        out.append(row)
print(json.dumps(out, default=str))
`;

export interface OracleFileInfo {
  file: string;
  rows: number;
  /** Arrow types per column, e.g. "timestamp[us, tz=UTC]", "decimal128(10, 5)". */
  schema: Record<string, string>;
  /** Footer key/values except the bloom filter. */
  kv: Record<string, string>;
  /** The Parquet schema as pyarrow prints it (physical and logical types). */
  parquet_schema: string;
}

/** Every row of the given Parquet files, read by pyarrow (values via Python's json with str() for dates, decimals, bytes). */
export function pyarrowRead(files: readonly string[]): Record<string, unknown>[] {
  try {
    const stdout = execFileSync(hudiToolchain().python, ['-c', READ_SCRIPT], {
      input: JSON.stringify(files),
      encoding: 'utf8',
      maxBuffer: 1024 * 1024 * 1024,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return JSON.parse(stdout) as Record<string, unknown>[];
  } catch (error) {
    throw new Error(`pyarrow failed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
  }
}

/** pyarrow's view of each file: row count, Arrow schema, footer key/values, Parquet schema. */
export function pyarrowFileInfo(files: readonly string[]): OracleFileInfo[] {
  const script = `
import json, sys
import pyarrow.parquet as pq
infos = []
for path in json.load(sys.stdin):
    meta = pq.read_metadata(path)
    kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items() if k.decode() != 'org.apache.hudi.bloomfilter'}
    arrow = meta.schema.to_arrow_schema()
    infos.append({"file": path, "rows": meta.num_rows, "schema": {f.name: str(f.type) for f in arrow}, "kv": kv, "parquet_schema": str(meta.schema)})
print(json.dumps(infos))
`;
  const stdout = execFileSync(hudiToolchain().python, ['-c', script], { input: JSON.stringify(files), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(stdout) as OracleFileInfo[];
}

/**
 * The latest base files of a local table, worked out here without lib/: a file counts when its instant has a
 * completed commit or replacecommit file, or is older than every commit on the active timeline (its commit was
 * archived: Hudi's containsOrBeforeTimelineStarts); per file group the newest such file; file groups named by a
 * completed replacecommit's partitionToReplaceFileIds are dropped.
 */
export function independentLatestBaseFiles(tableDir: string): string[] {
  const hoodie = join(tableDir, '.hoodie');
  const completed = new Set<string>();
  const replaced = new Set<string>();
  let firstCommit: string | undefined;
  for (const name of readdirSync(hoodie)) {
    const any = /^(\d{17})\.(commit|replacecommit|inflight|commit\.requested|replacecommit\.requested|replacecommit\.inflight)$/.exec(name);
    if (any && (firstCommit === undefined || any[1]! < firstCommit)) firstCommit = any[1]!;
    const match = /^(\d{17})\.(commit|replacecommit)$/.exec(name);
    if (!match) continue;
    completed.add(match[1]!);
    if (match[2] === 'replacecommit') {
      const metadata = JSON.parse(readFileSync(join(hoodie, name), 'utf8')) as { partitionToReplaceFileIds?: Record<string, string[]> };
      for (const [partition, ids] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) for (const id of ids) replaced.add(`${partition}|${id}`);
    }
  }
  const newest = new Map<string, { instant: string; path: string }>();
  for (const entry of readdirSync(tableDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.parquet')) continue;
    const path = join(entry.parentPath, entry.name);
    const partition = relative(tableDir, entry.parentPath).split(sep).join('/');
    if (partition.startsWith('.hoodie')) continue;
    const [fileId, , instantPart] = entry.name.split('_');
    const instant = instantPart!.replace('.parquet', '');
    const archived = firstCommit !== undefined && instant < firstCommit;
    if ((!completed.has(instant) && !archived) || replaced.has(`${partition}|${fileId}`)) continue;
    const key = `${partition}|${fileId}`;
    const seen = newest.get(key);
    if (seen === undefined || seen.instant < instant) newest.set(key, { instant, path });
  }
  return [...newest.values()].map((v) => v.path).sort();
}
