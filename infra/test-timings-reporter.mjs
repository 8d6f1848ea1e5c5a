// A node:test reporter that writes, once the run ends, JSON: each test file's time (the summed durations of its
// top-level tests and suites, their hooks included), so infra/run-tests.mjs can show which files a phase's time goes
// to, and each failure with its error, so the run's last lines say what failed and why even when only its tail is
// kept. (The runner hands on a file's events only once the files before it have reported, so arrival times say
// nothing.) The spec reporter beside it prints the whole run.

/**
 * @typedef {{ message?: string, cause?: unknown, failureType?: string, code?: string }} TestError
 * @typedef {{ file?: string, name?: string, nesting?: number, details?: { duration_ms?: number, error?: TestError } }} TestData
 */

/** The first lines of a failure's error (the test's own assertion or the hook's error behind node:test's wrapper). */
function describeError(/** @type {TestError | undefined} */ error) {
  if (error === undefined) return 'no error given';
  const cause = /** @type {{ message?: string, stack?: string } | undefined} */ (error.cause);
  const inner = cause !== undefined && typeof cause === 'object' ? (cause.message ?? String(cause)) : String(cause ?? error.message ?? '');
  const kind = error.failureType === undefined ? '' : `[${error.failureType}] `;
  return `${kind}${inner}`.split('\n').slice(0, 12).join('\n');
}

/** @param {AsyncIterable<{ type: string, data: TestData }>} source */
export default async function* timings(source) {
  /** @type {Map<string, { tests: number, summedMs: number }>} */
  const files = new Map();
  /** @type {{ file: string, name: string, error: string }[]} */
  const failures = [];
  for await (const event of source) {
    const file = event.data?.file;
    if (file === undefined) continue;
    const entry = files.get(file) ?? { tests: 0, summedMs: 0 };
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      entry.tests++;
      entry.summedMs += event.data.details?.duration_ms ?? 0;
    }
    if (event.type === 'test:fail') {
      failures.push({ file, name: event.data.name ?? '', error: describeError(event.data.details?.error) });
    }
    files.set(file, entry);
  }
  const rows = [...files].map(([file, entry]) => ({ file, tests: entry.tests, summedMs: Math.round(entry.summedMs) }));
  yield `${JSON.stringify({ files: rows, failures })}\n`;
}
