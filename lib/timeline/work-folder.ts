/**
 * Our work folder, `.hoodie/.aux/hudi-serverless/`: state of ours that must not sit in Hudi's marker folder
 * (`.hoodie/.temp/<T>/`, whose every file Hudi's marker-based rollback parses as a marker). Hudi lists `.aux` only for
 * its own instant files, never these subfolders. Clustering keeps its group results and the serverless run claim
 * here, a clean fanned out over several workers its partition shares and their results (`clean/`), a compaction its
 * operations' results (`compaction/`); whatever an
 * instant leaves behind is removed once it completed or was rolled back.
 */
import { rm } from 'node:fs/promises';
import type { Storage } from '../storage/port.js';
import { INSTANT_TIME_PATTERN } from './instant.js';
import { assertInstantTime, deleteMarkerDir } from './markers.js';
import { METAFOLDER } from './meta-folder.js';

/** `.hoodie/.aux/hudi-serverless`: everything of ours under Hudi's auxiliary folder. */
export const WORK_ROOT = `${METAFOLDER}/.aux/hudi-serverless`;

/** `.hoodie/.aux/hudi-serverless/clustering/<instant>` */
export function clusteringWorkDir(instantTime: string): string {
  assertInstantTime(instantTime);
  return `${WORK_ROOT}/clustering/${instantTime}`;
}

/** `.hoodie/.aux/hudi-serverless/clean`: the folders of cleans being planned or executed in shares. */
export const CLEAN_WORK_ROOT = `${WORK_ROOT}/clean`;

/** `.hoodie/.aux/hudi-serverless/clean/<instant>`: the delete shares of clean `<instant>` and their results. */
export function cleanWorkDir(instantTime: string): string {
  assertInstantTime(instantTime);
  return `${CLEAN_WORK_ROOT}/${instantTime}`;
}

/** `.hoodie/.aux/hudi-serverless/compaction/<instant>`: the results of compaction `<instant>`'s operations. */
export function compactionWorkDir(instantTime: string): string {
  assertInstantTime(instantTime);
  return `${WORK_ROOT}/compaction/${instantTime}`;
}

/** A planning id: `plan-<time>-<8 hex>` (a clean has no instant time until its plan is scheduled). */
export const CLEAN_PLANNING_ID = new RegExp(`^plan-${INSTANT_TIME_PATTERN}-[0-9a-f]{8}$`);

/** `.hoodie/.aux/hudi-serverless/clean/plan-<time>-<run>`: the partition shares of a clean being planned, and their results. */
export function cleanPlanningDir(planningId: string): string {
  if (!CLEAN_PLANNING_ID.test(planningId)) throw new Error(`"${planningId}" is not a clean planning id (plan-<instant time>-<8 hex digits>)`);
  return `${CLEAN_WORK_ROOT}/${planningId}`;
}

/** Remove a work folder: its objects, and the empty folder on a local disk. */
export async function deleteWorkDir(storage: Storage, dir: string): Promise<void> {
  const objects = await storage.listRecursive(dir);
  await storage.delete(objects.map((object) => object.path));
  const localDir = storage.localPath?.(dir);
  if (localDir !== undefined) await rm(localDir, { recursive: true, force: true });
}

/** Remove an instant's clustering work folder. */
export async function deleteClusteringWorkDir(storage: Storage, instantTime: string): Promise<void> {
  await deleteWorkDir(storage, clusteringWorkDir(instantTime));
}

/** The folders that hold one work folder per instant (clustering's and compaction's). */
export const INSTANT_WORK_ROOTS = [`${WORK_ROOT}/clustering`, `${WORK_ROOT}/compaction`] as const;

/** What an instant leaves behind once it completed or was rolled back: its marker folder and its work folders. */
export async function deleteInstantScratch(storage: Storage, instantTime: string): Promise<void> {
  await deleteClusteringWorkDir(storage, instantTime);
  await deleteWorkDir(storage, compactionWorkDir(instantTime));
  await deleteMarkerDir(storage, instantTime);
}
