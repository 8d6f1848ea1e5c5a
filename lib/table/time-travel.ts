/**
 * Which as-of instants a time-travel read may ask for, as Hudi's Spark readers decide before the file index lists a
 * file (TimelineUtils.validateTimestampAsOf; 0.15.0 for table version 6, 1.0.2 and 1.1.1 for versions 8 and 9 ask
 * the same): earlier than the first pending commit, delta commit or replacecommit that is not a clustering, and not
 * earlier than what the newest completed clean kept (its earliest commit to retain; a clean without one, as by file
 * versions, keeps nothing older than the first completed write). Only the active timeline is asked: an as-of instant
 * older than it passes when no clean on it says otherwise, and the read then slices the files still there (table.ts).
 * The versions differ only in how a pending clustering is told apart, which the timeline layout answers: layout 1
 * reads a pending replacecommit's requested plan (operationType CLUSTER), as 0.15's ClusteringUtils.getClusteringPlan
 * does; layout 2 names it `clustering`, an action the commits timeline does not hold.
 */
import { TimeTravelError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { decodeTimelineAvro } from '../timeline/avro-files.js';
import { readClusteringPlan } from '../timeline/clustering-plan.js';
import { compareInstantTimes, type Instant } from '../timeline/instant.js';
import { instantPath, type Timeline, WRITE_ACTIONS } from '../timeline/timeline.js';

const SEE_TIMELINE = 'see `hudi-serverless timeline`';

/** Refuse an as-of time Hudi's readers refuse on this active timeline, with a TimeTravelError naming why. */
export async function assertTimeTravelAllowed(storage: Storage, timeline: Timeline, asOf: string): Promise<void> {
  const firstPending = await firstPendingWrite(storage, timeline);
  if (firstPending !== undefined && compareInstantTimes(asOf, firstPending.time) >= 0) {
    throw new TimeTravelError(`as of ${asOf} is not earlier than the pending ${firstPending.action} ${firstPending.time}, as Hudi requires`, {
      location: storage.uriOf(instantPath(firstPending, timeline.layout)),
      fix: `read as of an instant before ${firstPending.time}, or complete or roll back that write first`,
    });
  }
  const lastClean = timeline
    .completed()
    .filter((instant) => instant.action === 'clean')
    .at(-1);
  if (lastClean === undefined) return;
  const path = instantPath(lastClean, timeline.layout);
  const location = storage.uriOf(path);
  const bytes = await storage.get(path);
  if (bytes.length === 0) {
    // Hudi fails to read an empty clean's metadata and refuses the read (HoodieTimeTravelException).
    throw new TimeTravelError(`the newest clean ${lastClean.time} has no metadata, so Hudi refuses every time-travel read`, {
      location,
      fix: 'read without --as-of, or let a new clean complete',
    });
  }
  const retain = decodeTimelineAvro('cleanMetadata', bytes, location).earliestCommitToRetain;
  if (retain !== '') {
    if (compareInstantTimes(retain, asOf) > 0) {
      throw new TimeTravelError(`as of ${asOf} is before ${retain}, the earliest commit the newest clean (${lastClean.time}) retained`, {
        location,
        fix: `read as of ${retain} or later (${SEE_TIMELINE}); keep more commits with hoodie.clean.commits.retained to travel further back`,
      });
    }
    return;
  }
  // A clean by file versions records no earliest commit to retain: the first completed write stands for it.
  const firstWrite = timeline.completedWrites()[0];
  if (firstWrite !== undefined && compareInstantTimes(firstWrite.time, asOf) > 0) {
    throw new TimeTravelError(
      `as of ${asOf} is before ${firstWrite.time}, the first completed write on the active timeline, and the newest clean (${lastClean.time}) kept file versions, not commits`,
      { location, fix: `read as of ${firstWrite.time} or later (${SEE_TIMELINE})` },
    );
  }
}

/** getCommitsTimeline().filterInflightsAndRequested() without clusterings (pending compactions are not on it). */
async function firstPendingWrite(storage: Storage, timeline: Timeline): Promise<Instant | undefined> {
  for (const instant of timeline.pending()) {
    if (!WRITE_ACTIONS.has(instant.action)) continue;
    if (instant.action !== timeline.layout.clusteringAction) return instant;
    if ((await readClusteringPlan(storage, instant.time, timeline.layout)) === undefined) return instant;
  }
  return undefined;
}
