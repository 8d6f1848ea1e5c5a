/**
 * Per-record checks a write makes before its instant exists: partition paths a reader can find again, and the
 * ordering (precombine) value Hudi requires when it combines records.
 */
import type { KeyGeneratorOptions } from '../table/key-generators.js';

export interface PartitionPathRules
  extends Pick<KeyGeneratorOptions, 'keyGeneratorClass' | 'partitionFields' | 'hiveStylePartitioning' | 'urlEncodePartitioning'> {
  /** Local tables are read in place, and DuckDB expands glob characters in the paths it reads. */
  readonly localStorage: boolean;
}

export interface PartitionPathProblem {
  readonly reason: string;
  readonly fix: string;
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const GLOB_CHARACTER = /[*?[\]{}]/;

/**
 * Why a partition path cannot be written, or undefined. Hudi itself writes every such path, but a folder starting
 * with '.' is skipped as hidden by this package's listing, Hadoop's and Spark's file index (and '..' leaves the
 * table); a '/' inside a Simple or Complex key generator's value makes extra folder levels, so the path no longer
 * says which value belongs to which field; control characters do not survive every store and tool; glob
 * characters make DuckDB expand a local path instead of reading it.
 */
export function partitionPathProblem(partitionPath: string, rules: PartitionPathRules): PartitionPathProblem | undefined {
  if (partitionPath === '') return undefined;
  const segments = partitionPath.split('/');
  const shortName = rules.keyGeneratorClass.slice(rules.keyGeneratorClass.lastIndexOf('.') + 1);
  const encodeFix = rules.urlEncodePartitioning
    ? 'give the record another partition value'
    : 'give the record another partition value, or keep such values in a table created with hoodie.datasource.write.partitionpath.urlencode=true (it escapes "/", control and glob characters as %XX)';
  const valuePaths = shortName === 'SimpleKeyGenerator' || shortName === 'ComplexKeyGenerator';
  if (valuePaths && segments.length !== rules.partitionFields.length) {
    return {
      reason: `partition path "${partitionPath}" has ${segments.length} folder levels for ${rules.partitionFields.length} partition field(s) (${rules.partitionFields.join(', ')}): a partition value holds "/"`,
      fix: encodeFix,
    };
  }
  const empty = segments.findIndex((segment) => segment === '');
  if (empty >= 0) return { reason: `partition path "${partitionPath}" has an empty folder name`, fix: encodeFix };
  const hidden = segments.find((segment) => segment.startsWith('.'));
  if (hidden !== undefined) {
    return {
      reason: `partition path "${partitionPath}" has a folder "${hidden}" starting with ".", which readers skip as hidden${hidden === '..' || hidden === '.' ? ' (and which names no folder of its own)' : ''}`,
      fix: 'give the record another partition value (URL-encoding keeps a leading "." as it is)',
    };
  }
  const control = CONTROL_CHARACTER.exec(partitionPath);
  if (control !== null) {
    return {
      reason: `partition path ${JSON.stringify(partitionPath)} holds the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
      fix: encodeFix,
    };
  }
  if (rules.localStorage) {
    const glob = GLOB_CHARACTER.exec(partitionPath);
    if (glob !== null) {
      return {
        reason: `partition path "${partitionPath}" holds the glob character "${glob[0]}", which DuckDB would expand when reading the local table`,
        fix: encodeFix,
      };
    }
  }
  return undefined;
}

/** Hudi's reason for a record without an ordering value (BaseAvroPayload: "Ordering value is null for record"). */
export function nullOrderingReason(precombineField: string): string {
  return `the precombine field "${precombineField}" is null, so the record has no ordering value (Hudi refuses it: "Ordering value is null")`;
}
