/**
 * Errors a user can act on: each names what is wrong (and where) and how to fix it.
 * The CLI prints `message` alone on one line; the stack only with --verbose.
 */
export class HudiError extends Error {
  /** What is wrong, without the location and fix the message adds. */
  readonly problem: string;
  /** The file or object the problem is in, when there is one. */
  readonly location: string | undefined;
  /** What the user can do about it. */
  readonly fix: string | undefined;

  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    const where = options.location ? `${options.location}: ` : '';
    const how = options.fix ? ` (${options.fix})` : '';
    super(`${where}${problem}${how}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HudiError';
    this.problem = problem;
    this.location = options.location;
    this.fix = options.fix;
  }
}

/**
 * The input of a write is refused before anything is written: a value, record or column the table cannot take as
 * it is. `location` is the input file.
 */
export class InputError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, options);
    this.name = 'InputError';
  }
}

/**
 * The batch's columns (or struct fields) have names a Hudi table cannot hold: not a valid Avro name, equal to another
 * one but for case, or a Hudi meta field's name in another case. Refused before anything is written; `columns` are
 * the offending names as paths (`a.b` for a struct field).
 */
export class ColumnNameError extends InputError {
  readonly columns: readonly string[];

  constructor(problem: string, columns: readonly string[], options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'ColumnNameError';
    this.columns = columns;
  }
}

/**
 * The batch nests struct, list or map types deeper than a table takes (`limit`, lib/table/schema.ts
 * MAX_NESTING_DEPTH): refused before anything is written. `path` leads to the deepest value, `depth` is its level.
 */
export class NestingDepthError extends InputError {
  readonly path: string;
  readonly depth: number;
  readonly limit: number;

  constructor(path: string, depth: number, limit: number, options: { location?: string; fix?: string } = {}) {
    super(`column "${path}" is nested ${depth} levels deep, beyond the ${limit} levels a table takes (MAX_NESTING_DEPTH)`, options);
    this.name = 'NestingDepthError';
    this.path = path;
    this.depth = depth;
    this.limit = limit;
  }
}

/**
 * A Lambda function was invoked with an event it does not handle (not an object, or without the fields it needs):
 * refused before anything is read or written. `location` names the event.
 */
export class EventError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'EventError';
  }
}

/** The table's layout or version is one this build does not handle. */
export class UnsupportedTableError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'UnsupportedTableError';
  }
}

/**
 * The lock service could not be reached (a DynamoDB error that is neither a missing table nor access denied): the
 * operation did nothing irreversible and can be retried. Serverless steps report it as Hudi.Transient.
 */
export class LockUnavailableError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, options);
    this.name = 'LockUnavailableError';
  }
}

/**
 * The table has Hudi's metadata table, which this build does not update yet: committing anything would leave it
 * stale (see lib/metadata/guard.ts).
 */
export class MetadataTableError extends UnsupportedTableError {
  /** hoodie.table.metadata.partitions */
  readonly partitions: readonly string[];
  /** hoodie.table.metadata.partitions.inflight: partitions being built (async indexer, or a bootstrap under way). */
  readonly inflightPartitions: readonly string[];

  constructor(problem: string, partitions: readonly string[], inflightPartitions: readonly string[], options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'MetadataTableError';
    this.partitions = partitions;
    this.inflightPartitions = inflightPartitions;
  }
}

/** Another writer created the same object first (conditional create lost). */
export class AlreadyExistsError extends HudiError {
  constructor(location: string) {
    super('already exists', { location, fix: 'another writer created it first; retry with a new instant' });
    this.name = 'AlreadyExistsError';
  }
}

/** A conditional write's precondition failed: the object is another version than named, or exists (S3's 412). */
export class PreconditionFailedError extends HudiError {
  constructor(location: string) {
    super('changed since it was read', { location, fix: 'another writer replaced it first; read it again' });
    this.name = 'PreconditionFailedError';
  }
}

/** A write lost a race or touched file groups another instant changed. */
export class ConflictError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'ConflictError';
  }
}

/**
 * A rollback asked for an instant that is completed: rolling it back would be a restore. Healing failed writes meets
 * it when a write it took for failed completed while the healer waited for the lock: that write was alive after all.
 */
export class InstantCompletedError extends HudiError {
  constructor(message: string, options: { location?: string; fix?: string } = {}) {
    super(message, options);
    this.name = 'InstantCompletedError';
  }
}

/**
 * A write's own instant stopped being inflight before the write could commit: another writer rolled it back (Hudi's
 * failed-writes cleaning took it for dead) or removed its timeline files. Nothing of the write is visible.
 */
export class InstantRolledBackError extends ConflictError {
  readonly instantTime: string;
  /** The rollback instant that names it, when there is one. */
  readonly rollbackInstant: string | undefined;

  constructor(instantTime: string, what: string, options: { rollbackInstant?: string; location?: string; fix?: string } = {}) {
    super(`write ${instantTime} cannot commit: ${what}`, {
      ...(options.location === undefined ? {} : { location: options.location }),
      ...(options.fix === undefined ? {} : { fix: options.fix }),
    });
    this.name = 'InstantRolledBackError';
    this.instantTime = instantTime;
    this.rollbackInstant = options.rollbackInstant;
  }
}

/**
 * The table's version or timeline layout changed while a run worked on it: a Hudi 1.x writer upgraded it in place
 * (or a downgrade ran). The run stops before it commits; Hudi's upgrade rolls back the writes it finds pending.
 */
export class TableVersionChangedError extends ConflictError {
  constructor(
    readonly from: { readonly version: number; readonly timelineLayoutVersion: number },
    readonly to: { readonly version: number; readonly timelineLayoutVersion: number },
    options: { location?: string } = {},
  ) {
    super(
      `the table changed from version ${from.version} (timeline layout ${from.timelineLayoutVersion}) to version ${to.version} (timeline layout ${to.timelineLayoutVersion}) while this run worked on it: another writer upgraded or downgraded it`,
      {
        ...options,
        fix: `nothing was committed (the other writer's upgrade rolls back pending writes); run it again: the next run opens the table at version ${to.version}`,
      },
    );
    this.name = 'TableVersionChangedError';
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An object or file that should be there is not. */
export class NotFoundError extends HudiError {
  constructor(location: string, fix?: string) {
    super('not found', fix === undefined ? { location } : { location, fix });
    this.name = 'NotFoundError';
  }
}

/**
 * A file that the table's timeline says a completed write produced, and that is still the latest of its file group,
 * is not in storage: reading would silently give fewer rows or an older version, and writing would build on that.
 * `location` is the file; `instantTime` the write that produced it.
 */
export class MissingFileError extends HudiError {
  readonly path: string;
  readonly instantTime: string;
  /** Every missing file, with the instant that wrote it. */
  readonly missing: readonly { readonly path: string; readonly instantTime: string }[];

  constructor(problem: string, missing: readonly { readonly path: string; readonly instantTime: string }[], options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'MissingFileError';
    // The first missing file, for callers that report one; empty only if a caller passed no file at all.
    const [first] = missing;
    this.path = first?.path ?? '';
    this.instantTime = first?.instantTime ?? '';
    this.missing = missing;
  }
}

/** The path holds no Hudi table (no `.hoodie/hoodie.properties`, no backup, no metafolder): a writer may create one. */
export class NotAHudiTableError extends HudiError {
  constructor(location: string) {
    super('not a Hudi table: no .hoodie/hoodie.properties here', {
      location,
      fix: 'check the table path, or create a table with `hudi-serverless init <table> --props FILE`',
    });
    this.name = 'NotAHudiTableError';
  }
}

/**
 * Syncing the table to a data catalog (AWS Glue) failed after its commit: the commit stands, and the next sync (after
 * the next commit, from the last_commit_time_sync the catalog holds) catches up. `location` names the catalog table.
 */
export class CatalogSyncError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, options);
    this.name = 'CatalogSyncError';
  }
}

/** A table path that the deployment's table registry does not list: refused before anything is read. */
export class UnregisteredTableError extends HudiError {
  readonly tablePath: string;

  constructor(tablePath: string, options: { location?: string; fix?: string } = {}) {
    super(`table ${tablePath} is not registered with this deployment`, options);
    this.name = 'UnregisteredTableError';
    this.tablePath = tablePath;
  }
}

/**
 * Hudi 1.x's timeline history (the LSM tree of archived instants under `.hoodie/timeline/history/`) holds something
 * this build does not read as Hudi does: a malformed `_version_` or manifest, a file the manifest names that is
 * missing or not an archive file, an unknown action, column or record. `location` names the file.
 */
export class TimelineHistoryError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string; cause?: unknown } = {}) {
    super(problem, options);
    this.name = 'TimelineHistoryError';
  }
}

/**
 * A time-travel read asks for an instant Hudi's readers refuse (TimelineUtils.validateTimestampAsOf, 0.15 and 1.x):
 * at or after a pending write, or before what the newest clean kept. `location` is the instant file that decided it.
 */
export class TimeTravelError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'TimeTravelError';
  }
}
