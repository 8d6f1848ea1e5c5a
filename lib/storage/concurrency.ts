/**
 * Concurrent storage calls that are always awaited together: every call started is settled before the caller goes
 * on, and a failure is reported once, after the others finished. A caller that gave up at the first failure (as
 * `Promise.all` does) would start its rollback while uploads still land, and a rejection nobody awaits yet kills
 * the process (Node's default for unhandled rejections) before any rollback runs.
 */

/**
 * Run `fn` over `items` with at most `limit` calls in flight; results keep the order of `items`.
 * After the first failure no new calls start; the ones in flight are awaited, then the first error is thrown.
 */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  assertLimit(limit);
  const results = new Array<R>(items.length);
  let nextIndex = 0;
  let failure: { error: unknown } | undefined;

  const worker = async (): Promise<void> => {
    while (failure === undefined && nextIndex < items.length) {
      const index = nextIndex++;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };

  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}

/** Await every promise; then throw the first rejection (in time), or return the values in order (typed as Promise.all). */
export async function settleAll<T extends readonly unknown[] | []>(promises: T): Promise<{ -readonly [P in keyof T]: Awaited<T[P]> }> {
  let failure: { error: unknown } | undefined;
  const settled = promises.map((promise) =>
    Promise.resolve(promise).catch((error: unknown) => {
      failure ??= { error };
      return undefined;
    }),
  );
  const values = await Promise.all(settled);
  if (failure !== undefined) throw failure.error;
  return values as { -readonly [P in keyof T]: Awaited<T[P]> };
}

/**
 * Tasks started one by one as their input becomes ready (a writer uploads each file as soon as it is written), at
 * most `limit` at once. `run` waits for a free slot; once a task failed, `run` and `drain` settle the rest and
 * throw the first error, so no new task starts after a failure.
 */
export class BoundedTasks {
  private readonly inFlight = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;

  constructor(private readonly limit: number) {
    assertLimit(limit);
  }

  /** Start `task` once fewer than `limit` run. */
  async run(task: () => Promise<void>): Promise<void> {
    while (this.failure === undefined && this.inFlight.size >= this.limit) await Promise.race(this.inFlight);
    if (this.failure !== undefined) return this.drain();
    // Handled from the start: a failure waits here for run or drain instead of surfacing as an unhandled rejection.
    const settled: Promise<void> = (async () => task())()
      .then(
        () => undefined,
        (error: unknown) => {
          this.failure ??= { error };
        },
      )
      .finally(() => this.inFlight.delete(settled));
    this.inFlight.add(settled);
  }

  /** Wait for every started task; throw the first failure. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    if (this.failure !== undefined) throw this.failure.error;
  }
}

/**
 * At most `limit` holders at once, for whoever shares the instance (every upload of one storage holding a body in
 * memory): `use` waits for a slot, runs `fn`, and hands the slot to the next waiter in arrival order.
 */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    assertLimit(limit);
  }

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.used < this.limit) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, so `used` counts it still.
      const next = this.waiting.shift();
      if (next === undefined) this.used--;
      else next();
    }
  }
}

function assertLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
  }
}
