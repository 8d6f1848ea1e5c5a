/**
 * A Storage for the scale benchmarks (bench/scale.ts): what a service writes goes to a local folder (plans, the work
 * folder, archive files, the lock), while the table's data files and timeline are generated on demand from a
 * compact description (a VirtualTree), so a table of millions of files costs the measured process a few bitmaps,
 * not its listings. Deleting a generated file clears its bit; the bits are saved between the processes of one run.
 *
 * Requests are counted as S3 would bill them (a listing per 1,000 keys, a delete per 1,000 keys), and each can wait
 * `latencyMs` (per page or batch) to show where a service awaits one request after another.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlreadyExistsError } from '../../lib/errors.js';
import { mapWithConcurrency } from '../../lib/storage/concurrency.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { DeleteManyOptions, DeleteManyResult, Storage, StoredObject, UploadOptions } from '../../lib/storage/port.js';

/** The files of one generated folder, by index. */
export interface VirtualFolder {
  readonly count: number;
  name(index: number): string;
  size(index: number): number;
  /** The index of a file name, or -1 when the folder has no such generated file. */
  indexOf(name: string): number;
  /** The content (default: empty). */
  bytes?(index: number): Uint8Array;
  /** Last modification (default: 2024-01-01). */
  modifiedMs?(index: number): number;
}

export interface VirtualTree {
  /** Generated sub-folder names directly under `dir`. */
  dirs(dir: string): readonly string[];
  /** The generated folder at `dir`, if any. */
  folder(dir: string): VirtualFolder | undefined;
  /** The generated folders whose contents matter (the timeline's): written once to a content folder (materialize). */
  contentFolders(): readonly string[];
}

/**
 * Write the contents of `tree`'s content folders under `contentDir` (once: a `.complete` marker says it is done),
 * so the measured process reads them as a GET would instead of generating them.
 */
export function materialize(tree: VirtualTree, contentDir: string): void {
  const marker = join(contentDir, '.complete');
  if (existsSync(marker)) return;
  for (const dir of tree.contentFolders()) {
    const folder = tree.folder(dir)!;
    mkdirSync(join(contentDir, dir), { recursive: true });
    for (let index = 0; index < folder.count; index++) {
      const bytes = folder.bytes?.(index);
      if (bytes !== undefined && bytes.length > 0) writeFileSync(join(contentDir, dir, folder.name(index)), bytes);
    }
  }
  writeFileSync(marker, '');
}

export type RequestKind = 'list' | 'get' | 'head' | 'put' | 'delete';

const PAGE = 1_000;
const EMPTY = new Uint8Array(0);
const DEFAULT_MODIFIED = Date.UTC(2024, 0, 1);

function parentOf(path: string): { dir: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? { dir: '', name: path } : { dir: path.slice(0, slash), name: path.slice(slash + 1) };
}

export class SyntheticStorage implements Storage {
  readonly uri: string;
  private readonly local: LocalStorage;
  /** Generated folder → one byte per file: 1 once deleted (or replaced by a written file). */
  private readonly gone = new Map<string, Uint8Array>();
  readonly requests: Record<RequestKind, number> = { list: 0, get: 0, head: 0, put: 0, delete: 0 };
  /** Milliseconds spent generating listings and contents (the synthetic table's cost, not the service's). */
  generatorMs = 0;

  constructor(
    localDir: string,
    private readonly tree: VirtualTree,
    private readonly options: {
      readonly uri?: string;
      readonly latencyMs?: number;
      readonly stateFile?: string;
      /** Where materialize wrote the content folders' files. */
      readonly contentDir?: string;
    } = {},
  ) {
    this.local = new LocalStorage(localDir);
    this.uri = options.uri ?? 's3://bench-bucket/tables/synthetic';
    if (options.stateFile !== undefined) this.load(options.stateFile);
  }

  uriOf(path: string): string {
    return `${this.uri}/${path}`;
  }

  /** The deleted bits, to the state file (the next process of the run loads them). */
  save(): void {
    const file = this.options.stateFile;
    if (file === undefined) return;
    const entries = [...this.gone].map(([dir, bits]) => [dir, Buffer.from(bits).toString('base64')]);
    writeFileSync(file, JSON.stringify(entries));
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    for (const [dir, bits] of JSON.parse(text) as [string, string][]) this.gone.set(dir, new Uint8Array(Buffer.from(bits, 'base64')));
  }

  private async request(kind: RequestKind, count = 1): Promise<void> {
    this.requests[kind] += count;
    const latency = this.options.latencyMs ?? 0;
    // Even without latency a request completes in a later turn of the event loop, as real I/O does (a chain of
    // promises that never yields would starve timers such as the lock's heartbeat).
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency * count));
    else await new Promise((resolve) => setImmediate(resolve));
  }

  /** The generated file at `path` still there: its folder and index. */
  private generated(path: string): { folder: VirtualFolder; dir: string; index: number } | undefined {
    const { dir, name } = parentOf(path);
    const folder = this.tree.folder(dir);
    if (folder === undefined) return undefined;
    const index = folder.indexOf(name);
    if (index < 0 || this.gone.get(dir)?.[index] === 1) return undefined;
    return { folder, dir, index };
  }

  private markGone(dir: string, folder: VirtualFolder, index: number): void {
    let bits = this.gone.get(dir);
    if (bits === undefined) {
      bits = new Uint8Array(folder.count);
      this.gone.set(dir, bits);
    }
    bits[index] = 1;
  }

  private timed<T>(work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.generatorMs += performance.now() - started;
    }
  }

  private objectOf(dir: string, folder: VirtualFolder, index: number): StoredObject {
    const name = folder.name(index);
    return { path: dir === '' ? name : `${dir}/${name}`, size: folder.size(index), modifiedMs: folder.modifiedMs?.(index) ?? DEFAULT_MODIFIED };
  }

  async get(path: string): Promise<Uint8Array> {
    await this.request('get');
    const found = this.timed(() => this.generated(path));
    if (found !== undefined) {
      const { contentDir } = this.options;
      if (contentDir !== undefined && this.tree.contentFolders().includes(found.dir)) {
        try {
          // A fresh array of its own, as S3's client returns (readFileSync's small buffers share 8 KB slabs).
          return new Uint8Array(readFileSync(join(contentDir, path)));
        } catch {
          return EMPTY;
        }
      }
      return this.timed(() => found.folder.bytes?.(found.index) ?? EMPTY);
    }
    return this.local.get(path);
  }

  async getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const bytes = await this.get(path);
    return bytes.subarray(start, Math.min(end, bytes.length));
  }

  async head(path: string): Promise<StoredObject | undefined> {
    await this.request('head');
    const found = this.timed(() => this.generated(path));
    if (found !== undefined) return this.timed(() => this.objectOf(found.dir, found.folder, found.index));
    return this.local.head(path);
  }

  async put(path: string, body: Uint8Array | string): Promise<void> {
    await this.request('put');
    const found = this.generated(path);
    if (found !== undefined) this.markGone(found.dir, found.folder, found.index);
    await this.local.put(path, body);
  }

  async putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    await this.request('put');
    if (this.generated(path) !== undefined) throw new AlreadyExistsError(this.uriOf(path));
    await this.local.putIfAbsent(path, body);
  }

  async uploadFile(path: string, localFile: string, options?: UploadOptions): Promise<void> {
    await this.request('put');
    await this.local.uploadFile(path, localFile, options);
  }

  async downloadFile(path: string, localFile: string): Promise<void> {
    if (this.generated(path) !== undefined) {
      writeFileSync(localFile, await this.get(path));
      return;
    }
    await this.local.downloadFile(path, localFile);
  }

  async listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    const written = await this.local.listDir(dir);
    const listed = this.timed(() => {
      const folder = this.tree.folder(dir);
      const files: StoredObject[] = [];
      if (folder !== undefined) {
        const bits = this.gone.get(dir);
        for (let index = 0; index < folder.count; index++) if (bits?.[index] !== 1) files.push(this.objectOf(dir, folder, index));
      }
      const dirs = [...new Set([...this.tree.dirs(dir), ...written.dirs])].sort();
      return { files: written.files.length === 0 ? files : [...files, ...written.files], dirs };
    });
    await this.request('list', Math.max(1, Math.ceil((listed.files.length + listed.dirs.length) / PAGE)));
    return listed;
  }

  async listRecursive(dir: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    const walk = (folderPath: string): void => {
      const folder = this.tree.folder(folderPath);
      if (folder !== undefined) {
        const bits = this.gone.get(folderPath);
        for (let index = 0; index < folder.count; index++) if (bits?.[index] !== 1) out.push(this.objectOf(folderPath, folder, index));
      }
      for (const sub of this.tree.dirs(folderPath)) walk(folderPath === '' ? sub : `${folderPath}/${sub}`);
    };
    this.timed(() => walk(dir));
    const written = await this.local.listRecursive(dir);
    await this.request('list', Math.max(1, Math.ceil((out.length + written.length) / PAGE)));
    return [...out, ...written];
  }

  async delete(paths: readonly string[]): Promise<void> {
    await this.request('delete', Math.max(1, Math.ceil(paths.length / PAGE)));
    const rest: string[] = [];
    for (const path of paths) {
      const found = this.generated(path);
      if (found !== undefined) this.markGone(found.dir, found.folder, found.index);
      else rest.push(path);
    }
    if (rest.length > 0) await this.local.delete(rest);
  }

  async deleteMany(paths: readonly string[], options: DeleteManyOptions = {}): Promise<DeleteManyResult> {
    const batches: string[][] = [];
    for (let offset = 0; offset < paths.length; offset += PAGE) batches.push(paths.slice(offset, offset + PAGE));
    await mapWithConcurrency(batches, options.concurrency ?? 4, (batch) => this.delete(batch));
    return { deleted: [...paths], failed: [] };
  }
}
