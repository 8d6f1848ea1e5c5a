/**
 * What a writer does after its commit when meta sync is on (Hudi's HoodieSparkSqlWriter runs the sync tools after
 * the commit): sync the table to Glue. The commit stands whatever the sync does, so a failure is reported, not
 * thrown — the next commit's sync starts from the last_commit_time_sync Glue holds and catches up.
 */
import { GlueClient } from '@aws-sdk/client-glue';
import { errorMessage } from '../errors.js';
import type { HudiTable } from '../table/table.js';
import { type GlueSyncConfig, glueSyncConfigFromProperties } from './config.js';
import { type GlueSyncResult, syncGlueCatalog } from './glue.js';

export type CatalogSyncOutcome = { readonly status: 'SYNCED'; readonly result: GlueSyncResult } | { readonly status: 'FAILED'; readonly error: string };

export type Env = Readonly<Record<string, string | undefined>>;

/** A Glue client for `config`: its region and endpoint keys, else AWS_REGION and AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL. */
export function glueClientFor(config: Pick<GlueSyncConfig, 'region' | 'endpoint'>, env: Env = process.env): GlueClient {
  const endpoint = config.endpoint ?? (env['AWS_ENDPOINT_URL_GLUE']?.trim() || env['AWS_ENDPOINT_URL']?.trim() || undefined);
  return new GlueClient({
    region: config.region ?? (env['AWS_REGION']?.trim() || env['AWS_DEFAULT_REGION']?.trim() || 'us-east-1'),
    ...(endpoint === undefined ? {} : { endpoint }),
  });
}

export interface AfterCommitSyncDependencies {
  /** The Glue client for a config (glueClientFor, or one counting its requests). */
  readonly glue: (config: GlueSyncConfig) => GlueClient;
  readonly log: { info(message: string, attributes?: Record<string, unknown>): void; warn(message: string, attributes?: Record<string, unknown>): void };
  readonly now?: Date;
}

/**
 * Sync `table` (re-read after the commit) when `writerProperties` over its hoodie.properties switch meta sync on;
 * undefined when they do not. Never throws: a bad sync key or a failed request is the outcome FAILED.
 */
export async function syncCatalogAfterCommit(
  table: HudiTable,
  writerProperties: ReadonlyMap<string, string>,
  deps: AfterCommitSyncDependencies,
): Promise<CatalogSyncOutcome | undefined> {
  const props = new Map([...table.config.properties, ...writerProperties]);
  let config: GlueSyncConfig | undefined;
  try {
    config = glueSyncConfigFromProperties(props, "the writer's properties");
  } catch (error) {
    // A bad sync key: the commit is done all the same; say so on every commit until it is fixed.
    deps.log.warn('the Glue Data Catalog sync is misconfigured', { error: errorMessage(error) });
    return { status: 'FAILED', error: errorMessage(error) };
  }
  if (config === undefined) return undefined;
  try {
    const result = await syncGlueCatalog(table, config, deps.glue(config), deps.now === undefined ? {} : { now: deps.now });
    deps.log.info('synced the table to the Glue Data Catalog', {
      release: result.release,
      database: result.database,
      table: result.table,
      tables: result.tables.map((synced) => synced.table),
      tableCreated: result.tableCreated,
      schemaChanged: result.schemaChanged,
      partitionsAdded: result.partitionsAdded.length,
      partitionsUpdated: result.partitionsUpdated.length,
      partitionsDropped: result.partitionsDropped.length,
      lastCommitTimeSync: result.lastCommitTimeSync,
    });
    return { status: 'SYNCED', result };
  } catch (error) {
    deps.log.warn("the Glue Data Catalog sync failed; the next commit's sync catches up", { error: errorMessage(error) });
    return { status: 'FAILED', error: errorMessage(error) };
  }
}
