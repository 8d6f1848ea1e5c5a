/**
 * Ingest's own keys, defined once through the configuration kernel (lib/config).
 */
import { defineKey, javaLong } from '../config/index.js';

/**
 * How many bytes of landed records (decompressed, the good lines only) one ingest commit takes at most: a batch of
 * objects larger than this is split into several commits, never refused. The default suits the template's ingest
 * function (2 GiB of memory and /tmp): the write loads its input into DuckDB and stages data files beside it.
 */
export const INGEST_BATCH_MAX_BYTES = defineKey({
  key: 'hudi-serverless.ingest.batch.max.bytes',
  default: 256 * 1024 * 1024,
  envVar: 'INGEST_BATCH_MAX_BYTES',
  parser: javaLong(1),
  description: 'most bytes of landed records (decompressed) one ingest commit takes; a larger batch of objects is split into several commits',
});
