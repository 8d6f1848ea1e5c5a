/** The last segment of a storage path: `file.parquet` of `partition/file.parquet`. Paths here always use `/`. */
export function fileNameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A folder's own name from a listing's folder path, which may end with `/`: `b` of `a/b/`. */
export function folderNameOf(dir: string): string {
  return fileNameOf(dir.endsWith('/') ? dir.slice(0, -1) : dir);
}

/**
 * A checksum Hadoop's local file system keeps beside each file it writes (`.<name>.crc`); its listings hide them, so
 * Hudi never sees one.
 */
export function isHadoopChecksumFile(fileName: string): boolean {
  return fileName.startsWith('.') && fileName.endsWith('.crc');
}
