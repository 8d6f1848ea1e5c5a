/**
 * A Storage rooted at a folder of another one: the metadata table (`.hoodie/metadata`) seen as a table of its own,
 * so code written for a table root (the cleaner's executor) runs on it unchanged. Paths in and out are relative to
 * the folder; the inner storage's deleteMany and localPath are kept.
 */
import type { DeleteManyOptions, DeleteManyResult, Storage, StoredObject } from './port.js';

export function prefixedStorage(inner: Storage, folder: string): Storage {
  const prefix = `${folder.replace(/\/+$/, '')}/`;
  const inside = (path: string): string => `${prefix}${path}`;
  const outside = (object: StoredObject): StoredObject => ({
    ...object,
    path: object.path.startsWith(prefix) ? object.path.slice(prefix.length) : object.path,
  });
  const view: Storage = {
    uri: inner.uriOf(folder),
    uriOf: (path) => inner.uriOf(inside(path)),
    get: (path) => inner.get(inside(path)),
    getRange: (path, start, end) => inner.getRange(inside(path), start, end),
    head: async (path) => {
      const object = await inner.head(inside(path));
      return object === undefined ? undefined : outside(object);
    },
    put: (path, body) => inner.put(inside(path), body),
    putIfAbsent: (path, body) => inner.putIfAbsent(inside(path), body),
    uploadFile: (path, localFile, options) => inner.uploadFile(inside(path), localFile, options),
    downloadFile: (path, localFile) => inner.downloadFile(inside(path), localFile),
    listDir: async (dir) => {
      const listed = await inner.listDir(inside(dir));
      return { files: listed.files.map(outside), dirs: listed.dirs.map((d) => (d.startsWith(prefix) ? d.slice(prefix.length) : d)) };
    },
    listRecursive: async (dir) => (await inner.listRecursive(inside(dir))).map(outside),
    delete: (paths) => inner.delete(paths.map(inside)),
  };
  // The optional methods are taken once and called with `inner` as `this`, as inner.method(...) would.
  const { withRequestCounter, localPath, deleteMany, getVersioned, putConditional } = inner;
  if (getVersioned !== undefined) view.getVersioned = (path) => getVersioned.call(inner, inside(path));
  if (putConditional !== undefined) view.putConditional = (path, body, condition) => putConditional.call(inner, inside(path), body, condition);
  if (withRequestCounter !== undefined) view.withRequestCounter = (counter) => prefixedStorage(withRequestCounter.call(inner, counter), folder);
  if (localPath !== undefined) view.localPath = (path) => localPath.call(inner, inside(path));
  if (deleteMany !== undefined) {
    view.deleteMany = async (paths: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> => {
      const result = await deleteMany.call(inner, paths.map(inside), options);
      const strip = (path: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path);
      return { deleted: result.deleted.map(strip), failed: result.failed.map((f) => ({ path: strip(f.path), reason: f.reason })) };
    };
  }
  return view;
}
