// A node:test reporter that writes, once the run ends, each test file's time as JSON: the summed durations of its
// top-level tests and suites (their hooks included), so infra/run-tests.mjs can show which files a phase's time goes
// to. (The runner hands on a file's events only once the files before it have reported, so arrival times say
// nothing.) It says nothing of pass or fail: the spec reporter beside it does.

/** @param {AsyncIterable<{ type: string, data: { file?: string, nesting?: number, details?: { duration_ms?: number } } }>} source */
export default async function* timings(source) {
  /** @type {Map<string, { tests: number, summedMs: number }>} */
  const files = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    if (file === undefined) continue;
    const entry = files.get(file) ?? { tests: 0, summedMs: 0 };
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      entry.tests++;
      entry.summedMs += event.data.details?.duration_ms ?? 0;
    }
    files.set(file, entry);
  }
  const rows = [...files].map(([file, entry]) => ({ file, tests: entry.tests, summedMs: Math.round(entry.summedMs) }));
  yield `${JSON.stringify(rows)}\n`;
}
