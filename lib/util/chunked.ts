/**
 * Values that can also be walked an array at a time: a loop over an array costs a fraction of an iterator step per
 * value, which shows when a million record keys are hashed into a bloom filter.
 */
export interface ChunkedIterable<T> extends Iterable<T> {
  chunks(): Iterable<readonly T[]>;
}

export function isChunked<T>(values: Iterable<T>): values is ChunkedIterable<T> {
  return typeof (values as Partial<ChunkedIterable<T>>).chunks === 'function';
}
