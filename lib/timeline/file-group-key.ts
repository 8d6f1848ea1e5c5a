/**
 * One key per file group (partition path and file id), for sets and maps: plans on the timeline, the archived
 * history and the file-system view all name file groups this way.
 */
export function fileGroupKey(partitionPath: string, fileId: string): string {
  return `${partitionPath}\u0000${fileId}`;
}
