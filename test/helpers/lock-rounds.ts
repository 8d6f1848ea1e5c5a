/**
 * Spark's upserts and ours side by side on one table, each writer in a partition of its own, under a lock both take:
 * the concurrent rounds of the lock interop tests (DynamoDB, Hudi's storage-based lock), and the reads that must
 * agree after them.
 */
import assert from 'node:assert/strict';
import type { Row } from '../../lib/engine/row-format.js';
import { ConflictError } from '../../lib/errors.js';
import { canonicalRows, type HudiHarness, HudiHarnessError } from './hudi.js';
import { ourRows, project } from './interop-writer.js';

export const LOCK_ROUND_COLUMNS = { id: 'BIGINT', name: 'VARCHAR', seq: 'BIGINT', dt: 'VARCHAR' } as const;

/** A row of `writer`'s round: its partition is the writer's name. */
export const lockRoundRow = (id: number, writer: string, round: number): Row => ({ id, name: `${writer}-${round}-${id}`, seq: round, dt: writer });

/** The write options of a table both sides write under optimistic concurrency, as Hudi's multi-writer setup asks. */
export function lockRoundTableOptions(name: string): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'seq',
    'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
    'hoodie.cleaner.policy.failed.writes': 'LAZY',
    'hoodie.index.bloom.num_entries': '1000',
  };
}

export interface ConcurrentRounds {
  /** Spark's rounds; ours run more, as our writes take a fraction of Spark's time, so more of them span Spark's. */
  readonly sparkRounds: number;
  readonly ourRounds: number;
  readonly sparkWrite: (rows: Row[]) => Promise<void>;
  readonly ourWrite: (rows: Row[]) => Promise<void>;
  /** After each of our rounds (e.g. a service of ours in the middle). */
  readonly afterOurRound?: (round: number) => Promise<void>;
}

/**
 * Run both sides at once; each committed write's rows go into `expected`. A write may fail only by a write
 * conflict (Hudi's ConflictException or HoodieWriteConflict, our ConflictError); the failed rounds are returned.
 */
export async function writeConcurrently(rounds: ConcurrentRounds, expected: Map<number, Row>): Promise<string[]> {
  const failures: string[] = [];
  const side = async (writer: 'spark' | 'ours', count: number, base: number, write: (rows: Row[]) => Promise<void>) => {
    for (let round = 1; round <= count; round++) {
      const rows = [0, 1, 2].map((i) => lockRoundRow(base * round + i, writer, round));
      try {
        await write(rows);
        for (const each of rows) expected.set(Number(each['id']), each);
      } catch (error) {
        const conflict =
          writer === 'spark'
            ? error instanceof HudiHarnessError && /ConflictException|HoodieWriteConflict/.test(error.javaType + error.detail)
            : error instanceof ConflictError;
        assert.ok(conflict, String(error));
        failures.push(`${writer === 'spark' ? 'spark' : 'our'} round ${round}`);
      }
      if (writer === 'ours') await rounds.afterOurRound?.(round);
    }
  };
  await Promise.all([side('spark', rounds.sparkRounds, 100, rounds.sparkWrite), side('ours', rounds.ourRounds, 1000, rounds.ourWrite)]);
  return failures;
}

/** Spark and we read every committed row once, and at least one concurrent write committed; Spark's rows returned. */
export async function assertCommittedRowsRead(
  hudi: HudiHarness,
  table: string,
  expected: ReadonlyMap<number, Row>,
  failures: readonly string[],
  rounds: number,
): Promise<string[]> {
  const columns = Object.keys(LOCK_ROUND_COLUMNS);
  const wanted = canonicalRows([...expected.values()]);
  const sparkRows = canonicalRows(project((await hudi.read(table, { meta: false })).rows, columns));
  const oursRead = canonicalRows(project(await ourRows(table), columns));
  assert.deepEqual(sparkRows, wanted, `Spark reads every committed write once (failed: ${failures.join(', ') || 'none'})`);
  assert.deepEqual(oursRead, wanted, 'we read what Spark reads');
  assert.ok(failures.length < rounds, 'at least one concurrent write committed');
  return sparkRows;
}
