/**
 * The long run of issue 12's done-when: a table written by us (our writer, our clustering) through `--commits`
 * commits with a clustering after every `--cluster-every`-th, cleaned and archived after every commit at Hudi's
 * defaults (or --props), at table version 6 (or --table-version 8 or 9: the archiver writes the LSM history); at the
 * end the active and archived timelines, the files left against the retention policy, and the rows as Spark (Hudi
 * 0.15, 1.0.2 or 1.1.1 by the table version) and our reader see them, against the rows written.
 *
 *   npm run long-run:services                      # 200 commits, 20 clusterings, 4 partitions, Spark reads at the end
 *   npm run long-run:services -- --commits 60 --cluster-every 6 --no-spark
 *   npm run long-run:services -- --table-version 9 # Hudi 1.1.1 also lists the archived instants, as we do
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readSnapshot } from '../lib/read/reader.js';
import { LocalStorage } from '../lib/storage/local.js';
import { HudiTable } from '../lib/table/table.js';
import { startHudi } from '../test/helpers/hudi.js';
import { hudiArchivedInstants } from '../test/helpers/hudi-1x-history.js';
import { checkRetention, runServicesLongRun } from '../test/helpers/services-long-run.js';
import { rowLines } from '../test/helpers/services-table.js';

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '200' },
    'cluster-every': { type: 'string', default: '10' },
    partitions: { type: 'string', default: '4' },
    'table-version': { type: 'string', default: '6' },
    props: { type: 'string', multiple: true, default: [] },
    'no-spark': { type: 'boolean', default: false },
  },
});

const tableVersion = Number(values['table-version']);
if (tableVersion !== 6 && tableVersion !== 8 && tableVersion !== 9) throw new Error(`--table-version ${values['table-version']}: give 6, 8 or 9`);
const properties = new Map(
  (values.props ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--props ${pair}: give key=value`);
    return [pair.slice(0, at), pair.slice(at + 1)] as [string, string];
  }),
);
// Kept after the run, to look at (its path is printed).
const dir = join(mkdtempSync(join(tmpdir(), 'services-long-run-')), 'services');
const say = (line: string) => process.stdout.write(`${line}\n`);

const run = await runServicesLongRun({
  dir,
  partitions: Number(values.partitions),
  commits: Number(values.commits),
  clusterEvery: Number(values['cluster-every']),
  tableVersion,
  properties,
  onProgress: (line) => say(`  ${line}`),
});
const storage = new LocalStorage(dir);
const opened = await HudiTable.open(storage);
const { timeline } = opened;
const archived = await opened.archivedHistory();
const activeCommits = timeline.completed().filter((instant) => ['commit', 'deltacommit', 'replacecommit'].includes(instant.action)).length;
const retention = checkRetention(run);
const expected = rowLines(run.table.rows.values());
const ours = rowLines((await readSnapshot(await HudiTable.open(storage))).rows as Record<string, unknown>[]);

say(`table ${dir}`);
say(
  `written: ${run.commits.length - run.clusterings} commits and ${run.clusterings} clusterings over ${values.partitions} partitions in ${(run.elapsedMs / 1000).toFixed(0)} s, each followed by a clean and an archive run`,
);
say(
  `services: ${run.cleans} cleans completed, ${run.archivedInstants} instants archived (cleaner ${run.clean.policy}, ${run.clean.commitsRetained} commits retained; keep ${run.archival.minCommits}..${run.archival.maxCommits})`,
);
say(
  `active timeline: ${timeline.instants.length} instants, ${activeCommits} completed commits (hoodie.keep.max.commits=${run.archival.maxCommits}): ${activeCommits <= run.archival.maxCommits ? 'within' : 'OVER'}`,
);
say(
  `archived timeline (${opened.archiveFolder}): ${archived.instants.length} instants, ${archived.instants.filter((instant) => ['commit', 'replacecommit'].includes(instant.action)).length} commits and replacecommits`,
);
say(
  `files: ${retention.dataFiles} base files left; earliest commit to retain ${retention.earliestCommitToRetain ?? 'none'}; ${retention.beyondRetention.length} beyond the retention policy${retention.beyondRetention.length > 0 ? `: ${retention.beyondRetention.slice(0, 10).join(', ')}` : ''}`,
);
say(`rows: ${expected.length} written; our reader ${ours.length}, ${JSON.stringify(ours) === JSON.stringify(expected) ? 'identical' : 'DIFFERENT'}`);
let ok = activeCommits <= run.archival.maxCommits && retention.beyondRetention.length === 0 && JSON.stringify(ours) === JSON.stringify(expected);
if (!values['no-spark']) {
  const hudiVersion = tableVersion === 6 ? '0.15.0' : tableVersion === 8 ? '1.0.2' : '1.1.1';
  const hudi = await startHudi({ hudiVersion });
  try {
    const spark = rowLines((await hudi.read(dir, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows as Record<string, unknown>[]);
    const sparkSame = JSON.stringify(spark) === JSON.stringify(expected);
    say(`rows: Spark (Hudi ${hudiVersion}) ${spark.length}, ${sparkSame ? 'identical' : 'DIFFERENT'}`);
    ok &&= sparkSame;
    if (tableVersion !== 6) {
      // Hudi's ArchivedTimelineV2 over the LSM history, against ours.
      const theirs = (await hudiArchivedInstants(hudi, dir)).map((instant) => `${instant.requestedTime} ${instant.action}`).sort();
      const ours = archived.instants.map((instant) => `${instant.time} ${instant.action}`).sort();
      const historySame = JSON.stringify(theirs) === JSON.stringify(ours);
      say(`archived timeline: Hudi ${hudiVersion} lists ${theirs.length} instants, ${historySame ? 'the same as ours' : 'DIFFERENT from ours'}`);
      ok &&= historySame;
    }
  } finally {
    await hudi.close();
  }
}
say(ok ? 'OK' : 'FAILED');
process.exitCode = ok ? 0 : 1;
