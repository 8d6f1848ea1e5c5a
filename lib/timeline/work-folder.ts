/**
 * Our work folder, `.hoodie/.aux/hudi-serverless/`: state of ours that must not sit in Hudi's marker folder
 * (`.hoodie/.temp/<T>/`, whose every file Hudi's marker-based rollback parses as a marker). Hudi lists `.aux` only for
 * its own instant files, never these subfolders. Clustering keeps its group results and the serverless run claim
 * here; whatever an instant leaves behind is removed once it completed or was rolled back.
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

