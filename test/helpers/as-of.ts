/**
 * As-of (time-travel) reads on both sides, for comparing where Spark and we read or refuse: the rows read, in
 * canonical form, or the refusal's message.
 */
import { TimeTravelError } from '../../lib/errors.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, HudiHarnessError } from './hudi.js';

export type AsOfAnswer = string[] | { refused: string };

/** Spark's read as of `asOf` (metadata table off), or the error Spark threw. */
export async function sparkAsOf(hudi: HudiHarness, path: string, asOf: string, queryType?: QueryType): Promise<AsOfAnswer> {
  const options = {
    'hoodie.metadata.enable': 'false',
    'as.of.instant': asOf,
    ...(queryType === undefined ? {} : { 'hoodie.datasource.query.type': queryType }),
  };
  try {
    return canonicalRows((await hudi.read(path, { options })).rows);
  } catch (error) {
    if (!(error instanceof HudiHarnessError)) throw error;
    return { refused: error.message };
  }
}

/** Our read as of `asOf` (meta fields included), or the TimeTravelError's message. */
export async function ourAsOf(path: string, asOf: string, queryType?: QueryType): Promise<AsOfAnswer> {
  try {
    const table = await HudiTable.open(openStorage(path));
    return canonicalRows((await readSnapshot(table, { asOf, includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows);
  } catch (error) {
    if (!(error instanceof TimeTravelError)) throw error;
    return { refused: error.message };
  }
}
