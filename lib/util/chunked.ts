/**
 * Values that can also be walked an array at a time: a loop over an array costs a fraction of an iterator step per
 * value (a million record keys hashed into a bloom filter: tens of milliseconds).
 */
export interface ChunkedIterable<T> extends Iterable<T> {
  chunks(): Iterable<readonly T[]>;
}

export function isChunked<T>(values: Iterable<T>): values is ChunkedIterable<T> {
  return typeof (values as Partial<ChunkedIterable<T>>).chunks === 'function';
}
