/**
 * How an upsert merges an incoming record with the stored one: Hudi 0.x's payload classes, from the write's
 * properties or the table's (the writer, compaction and the merge-on-read reader all merge this way).
 */
import { anyText, defineKey } from '../config/index.js';
import { HudiError, UnsupportedTableError } from '../errors.js';
import type { RecordMergeMode } from './config.js';

export const PAYLOAD_CLASS = defineKey({
  key: 'hoodie.datasource.write.payload.class',
  default: 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload',
  parser: anyText,
  description:
    "how an upsert merges with the stored record (unset: the table's hoodie.compaction.payload.class, else this default, as Hudi 0.x). " +
    'OverwriteWithLatestAvroPayload: the incoming record wins; DefaultHoodieRecordPayload: a stored record with a greater precombine value is kept. ' +
    'With either, duplicates within one batch keep the greatest precombine value (the later record on a tie)',
});

/** hoodie.properties' payload class (HoodieTableConfig.PAYLOAD_CLASS_NAME); Hudi 0.14/0.15 stores it for MOR tables only. */
export const TABLE_PAYLOAD_CLASS_KEY = 'hoodie.compaction.payload.class';

/** The payloads this writer merges as Hudi does. */
export const PAYLOAD_CLASSES = {
  overwriteWithLatest: 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload',
  default: 'org.apache.hudi.common.model.DefaultHoodieRecordPayload',
} as const;

export interface RecordPayload {
  readonly className: string;
  /**
   * DefaultHoodieRecordPayload: an incoming record whose precombine value is smaller than the stored record's is
   * dropped. OverwriteWithLatestAvroPayload: the incoming record always replaces the stored one.
   */
  readonly orderingAgainstStored: boolean;
  /** Where the class came from: the write properties, hoodie.properties, or Hudi's default. */
  readonly source: 'write properties' | 'hoodie.properties' | 'default';
}

/**
 * The payload an upsert merges with, as Hudi 0.x resolves it for a datasource write: the writer's payload class,
 * else the table's hoodie.compaction.payload.class, else OverwriteWithLatestAvroPayload (HoodieWriteConfig's
 * default). Classes from the com.uber.hoodie days are read as org.apache.hudi, as Hudi does. Payloads this writer
 * cannot reproduce are refused rather than merged some other way.
 */
export function resolveRecordPayload(
  config: { readonly payloadClass?: string | undefined },
  tableProperties: ReadonlyMap<string, string>,
  tableLocation: string,
): RecordPayload {
  const fromTable = nonEmpty(tableProperties.get(TABLE_PAYLOAD_CLASS_KEY));
  const source: RecordPayload['source'] = config.payloadClass !== undefined ? 'write properties' : fromTable !== undefined ? 'hoodie.properties' : 'default';
  const given = config.payloadClass ?? fromTable ?? PAYLOAD_CLASS.default;
  const className = given.trim().replace(/^com\.uber\.hoodie\./, 'org.apache.hudi.');
  if (className === PAYLOAD_CLASSES.overwriteWithLatest) return { className, orderingAgainstStored: false, source };
  if (className === PAYLOAD_CLASSES.default) return { className, orderingAgainstStored: true, source };
  throw new HudiError(`payload class ${given} is not supported by this writer`, {
    location: source === 'hoodie.properties' ? `${tableLocation} (${TABLE_PAYLOAD_CLASS_KEY})` : PAYLOAD_CLASS.key,
    fix:
      `set ${PAYLOAD_CLASS.key} to ${PAYLOAD_CLASSES.overwriteWithLatest} (Hudi's default: the incoming record wins) or ` +
      `${PAYLOAD_CLASSES.default} (a stored record with a greater precombine value is kept), or write this table with Hudi`,
  });
}

/**
 * How a Hudi 1.x table merges, as a payload: its record merge mode decides (hoodie.record.merge.mode, inferred as
 * recordMergeModeOf does). EVENT_TIME_ORDERING keeps a stored record with a greater ordering value, as
 * DefaultHoodieRecordPayload; COMMIT_TIME_ORDERING lets the latest write win.
 */
export function payloadOfMergeMode(mode: RecordMergeMode): RecordPayload {
  return mode === 'EVENT_TIME_ORDERING'
    ? { className: mode, orderingAgainstStored: true, source: 'hoodie.properties' }
    : { className: mode, orderingAgainstStored: false, source: 'hoodie.properties' };
}

/**
 * The payload a write merges a 1.x table's records with. Only EVENT_TIME_ORDERING writes were proven against Hudi 1.x
 * (how it picks among a batch's duplicates under COMMIT_TIME_ORDERING was not), and a write's own payload class would
 * merge differently from what the table's readers do: both are refused before anything is written.
 */
export function writePayloadOf1xTable(mode: RecordMergeMode, payloadClass: string | undefined, tableLocation: string): RecordPayload {
  if (payloadClass !== undefined) {
    throw new UnsupportedTableError(
      `${PAYLOAD_CLASS.key}=${payloadClass} is not used on a Hudi 1.x table: its record merge mode (${mode}) decides how records merge`,
      {
        location: PAYLOAD_CLASS.key,
        fix: `drop ${PAYLOAD_CLASS.key} from the write properties`,
      },
    );
  }
  if (mode !== 'EVENT_TIME_ORDERING') {
    throw new UnsupportedTableError(`writes to a Hudi 1.x table with record merge mode ${mode} are not supported yet (EVENT_TIME_ORDERING tables are)`, {
      location: `${tableLocation} (hoodie.record.merge.mode)`,
      fix: 'write this table with Hudi 1.x',
    });
  }
  return payloadOfMergeMode(mode);
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}
