/**
 * A history manifest (`manifest_<N>`): the files of snapshot version N, as HoodieLSMTimelineManifest serializes it
 * with Jackson's default pretty printer — `{"files" : [ {"fileName" : …, "fileLen" : …}, … ]}`. Jackson ignores
 * unknown properties there (@JsonIgnoreProperties(ignoreUnknown = true)), so do we; anything else off-shape is
 * refused naming the file.
 */
import { TimelineHistoryError } from '../../errors.js';

/** HoodieLSMTimelineManifest.LSMFileEntry. */
export interface ManifestEntry {
  readonly fileName: string;
  /** The file's length in bytes when it was added (the compaction's size budget reads it). */
  readonly fileLen: number;
}

export interface HistoryManifest {
  readonly files: readonly ManifestEntry[];
}

const FIX = 'restore the manifest from a backup, or let Hudi rewrite the history by running its archiver';

/** Parse a manifest's text; `location` names the file in errors. */
export function parseManifest(text: string, location: string): HistoryManifest {
  if (text === '') {
    // Hudi reads an empty manifest as no files at all; its writer never writes one, so this is a cut-short write.
    throw new TimelineHistoryError('manifest is empty', { location, fix: FIX });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new TimelineHistoryError(`manifest is not JSON: ${(cause as Error).message}`, { location, fix: FIX, cause });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TimelineHistoryError('manifest is not a JSON object', { location, fix: FIX });
  }
  const files = (json as { files?: unknown }).files;
  if (!Array.isArray(files)) throw new TimelineHistoryError('manifest has no "files" list', { location, fix: FIX });
  const seen = new Set<string>();
  const entries = files.map((entry: unknown, index): ManifestEntry => {
    const fileName = typeof entry === 'object' && entry !== null ? (entry as { fileName?: unknown }).fileName : undefined;
    const fileLen = typeof entry === 'object' && entry !== null ? (entry as { fileLen?: unknown }).fileLen : undefined;
    if (typeof fileName !== 'string' || fileName === '' || fileName.includes('/')) {
      throw new TimelineHistoryError(`manifest entry ${index} has no file name of the history folder (${JSON.stringify(fileName)})`, { location, fix: FIX });
    }
    if (typeof fileLen !== 'number' || !Number.isSafeInteger(fileLen) || fileLen < 0) {
      throw new TimelineHistoryError(`manifest entry ${fileName} has no byte length (${JSON.stringify(fileLen)})`, { location, fix: FIX });
    }
    if (seen.has(fileName)) throw new TimelineHistoryError(`manifest lists ${fileName} twice`, { location, fix: FIX });
    seen.add(fileName);
    return { fileName, fileLen };
  });
  return { files: entries };
}

/**
 * The manifest's text as Hudi writes it (HoodieLSMTimelineManifest.toJsonString: Jackson's
 * writerWithDefaultPrettyPrinter, two-space indents, ` : ` between names and values, no newline at the end).
 */
export function serializeManifest(manifest: HistoryManifest): string {
  if (manifest.files.length === 0) return '{\n  "files" : [ ]\n}';
  const entries = manifest.files.map((file) => `{\n    "fileName" : ${JSON.stringify(file.fileName)},\n    "fileLen" : ${file.fileLen}\n  }`);
  return `{\n  "files" : [ ${entries.join(', ')} ]\n}`;
}
