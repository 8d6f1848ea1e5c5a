/**
 * The shapes ingestion works with: the landing bucket it reads from (its port), the request for one landed object
 * version, what handling it came to, and the lines of the errors file.
 */
import type { InputFormat } from '../engine/write.js';
import type { Storage } from '../storage/port.js';

/** The landing bucket, as ingestion needs it (landing-bucket.ts builds one over a Storage). */
export interface LandingBucket {
  readonly bucket: string;
  uriOf(key: string): string;
  /** Download `key` to `localFile` if it is still the version with this ETag; false when it changed or is gone. */
  downloadVersion(key: string, etag: string, localFile: string): Promise<boolean>;
  put(key: string, body: Uint8Array | string): Promise<void>;
  uploadFile(key: string, localFile: string): Promise<void>;
}

/** Where log lines go (a Powertools Logger fits); the core logs nothing without one. */
export interface IngestLog {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
}

export interface IngestRequest {
  readonly source: LandingBucket;
  readonly key: string;
  /** The version's ETag, as in the S3 event (quotes are ignored). */
  readonly etag: string;
  readonly table: Storage;
  /** Hudi write properties (hoodie.*); they also create the table when it does not exist. */
  readonly tableProperties: ReadonlyMap<string, string>;
  /** Key prefix in the landing bucket for rejected records and objects, e.g. `errors/`. */
  readonly errorPrefix: string;
  /** Format of keys without a known extension; without it such objects are rejected. */
  readonly defaultFormat?: InputFormat;
  readonly tempDir?: string;
  /** The per-object claim: lease (default 20 s), how long to wait for another delivery (default 60 s), poll. */
  readonly claim?: ClaimOptions;
  readonly log?: IngestLog;
  readonly now?: () => Date;
}

export interface ClaimOptions {
  readonly leaseMs?: number;
  readonly waitMs?: number;
  readonly pollMs?: number;
}

export type IngestOutcome =
  /** Written (or nothing left to write after rejecting bad records). */
  | 'ingested'
  /** Handled before, by this or an earlier delivery. */
  | 'duplicate'
  /** Unreadable or refused as a whole: copied to the error prefix with the reason. */
  | 'failed'
  /** The key holds another version now (or none); that version's own event ingests it. */
  | 'superseded';

export interface IngestResult {
  readonly outcome: IngestOutcome;
  /** `<bucket>/<key>#<etag>` */
  readonly source: string;
  /** For a duplicate: what the first handling did. */
  readonly originalOutcome?: Exclude<IngestOutcome, 'duplicate'>;
  readonly instantTime?: string;
  /**
   * How many objects the commit took, when more than one (a batch, ingestObjects): `inserted`, `updated` and
   * `deleted` are then the whole commit's, shared by its objects (count them once per instant).
   */
  readonly commitObjects?: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly badRecords: number;
  /** Key of the errors file (bad records) or of the error description (failed object) in the landing bucket. */
  readonly errorsKey?: string;
  readonly reason?: string;
  /** A duplicate found through the commit marker (an earlier attempt committed, then died). */
  readonly recovered?: boolean;
}

/** What handling an object (not a duplicate delivery) came to. */
export type HandledResult = IngestResult & { readonly outcome: Exclude<IngestOutcome, 'duplicate'> };

/** One rejected record, a line of `<key>.errors.jsonl`. `line` is 1-based; `row` the 0-based data row (CSV, Parquet). */
export interface ErrorLine {
  readonly line?: number;
  readonly row?: number;
  readonly reason: string;
  readonly record?: string;
  readonly truncated?: boolean;
}

/** Several landed objects of one landing bucket for one table, to ingest in as few commits as their size allows. */
export interface IngestBatchRequest extends Omit<IngestRequest, 'key' | 'etag'> {
  /**
   * firstDelivery: the event is known never to have been delivered before (an SQS message received once): its
   * object is then most likely new, and its done record is looked at only once it is claimed (which is always looked
   * at), not before as well. Leave it out when not known: a redelivered batch then ends at one read per object.
   */
  readonly objects: readonly { readonly key: string; readonly etag: string; readonly firstDelivery?: boolean }[];
  /** Most bytes of good records per commit (default: INGEST_BATCH_MAX_BYTES in tableProperties, else its default). */
  readonly maxBatchBytes?: number;
}

/** What became of one object of a batch: its result, or the error that leaves it for a retry. */
export type BatchObjectResult =
  | { readonly key: string; readonly etag: string; readonly result: IngestResult }
  | { readonly key: string; readonly etag: string; readonly error: Error };
