/**
 * This project's own per-instant files — a clustering's group results and the serverless run claim — kept in
 * Hudi's auxiliary folder: `.hoodie/.aux/hudi-serverless/clustering/<instant>/`.
 *
 * Not in the marker folder `.hoodie/.temp/<instant>/`: Hudi's marker-based rollback takes every file there for a
 * marker and parses its extension as an IOType (`IOType.valueOf("json")` throws), so one foreign file makes Hudi
 * unable to roll the instant back. Hudi only lists `.aux` itself, for instant files by extension
 * (HoodieTimelineArchiver's aux clean-up), never this subfolder.
 *
 * The folder goes wherever the marker folder goes (commit, rollback), so a result never outlives the files it names.
 */
import { rm } from 'node:fs/promises';
import type { Storage } from '../storage/port.js';
import { METAFOLDER } from '../table-config.js';
import { assertInstantTime, deleteMarkerDir } from './markers.js';

/** `.hoodie/.aux/hudi-serverless`: everything of ours under Hudi's auxiliary folder. */
export const WORK_ROOT = `${METAFOLDER}/.aux/hudi-serverless`;

/** `.hoodie/.aux/hudi-serverless/clustering/<instant>` */
export function clusteringWorkDir(instantTime: string): string {
  assertInstantTime(instantTime);
  return `${WORK_ROOT}/clustering/${instantTime}`;
}

/** Remove an instant's work folder (its objects, and the empty folder on a local disk). */
export async function deleteClusteringWorkDir(storage: Storage, instantTime: string): Promise<void> {
  const dir = clusteringWorkDir(instantTime);
  const objects = await storage.listRecursive(dir);
  await storage.delete(objects.map((object) => object.path));
  const localDir = storage.localPath?.(dir);
  if (localDir !== undefined) await rm(localDir, { recursive: true, force: true });
}

/** What an instant leaves behind once it completed or was rolled back: its marker folder and its work folder. */
export async function deleteInstantScratch(storage: Storage, instantTime: string): Promise<void> {
  await deleteClusteringWorkDir(storage, instantTime);
  await deleteMarkerDir(storage, instantTime);
}
