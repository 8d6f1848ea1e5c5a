/**
 * The Hudi keys the metadata-table side of a commit reads from the user's write properties (for the README's
 * configuration reference; the code reads them where they are used). Absent keys keep what the table has.
 */
import { BLOOM_FILTER_TYPE_KEY, COLUMN_STATS_COLUMN_LIST_KEY, DEFAULT_BLOOM_FILTER_TYPE } from './convert.js';
import { METADATA_ENABLE_KEY, PARTITION_ENABLE_KEYS } from './disable.js';
import { COMPACT_MAX_DELTA_COMMITS } from './compaction.js';

export const METADATA_TABLE_KEYS: readonly { key: string; defaultValue: string; description: string }[] = [
  {
    key: METADATA_ENABLE_KEY,
    defaultValue: "(the table's)",
    description:
      "false: drop Hudi's metadata table before the commit, as Hudi's writers do (clear hoodie.table.metadata.partitions, delete .hoodie/metadata); otherwise every commit keeps the metadata table the table has (none is created)",
  },
  { key: PARTITION_ENABLE_KEYS.column_stats, defaultValue: "(the table's)", description: 'false: drop the column_stats partition' },
  { key: PARTITION_ENABLE_KEYS.bloom_filters, defaultValue: "(the table's)", description: 'false: drop the bloom_filters partition' },
  { key: PARTITION_ENABLE_KEYS.record_index, defaultValue: "(the table's)", description: 'false: drop the record_index partition' },
  {
    key: COLUMN_STATS_COLUMN_LIST_KEY,
    defaultValue: '(every field)',
    description: "the columns column_stats indexes: the writer schema's fields, meta fields included, unless listed here",
  },
  {
    key: BLOOM_FILTER_TYPE_KEY,
    defaultValue: DEFAULT_BLOOM_FILTER_TYPE,
    description: "the type bloom_filters records for each file (as Hudi records the writer's type)",
  },
  { key: COMPACT_MAX_DELTA_COMMITS.key, defaultValue: COMPACT_MAX_DELTA_COMMITS.defaultText, description: COMPACT_MAX_DELTA_COMMITS.description },
];
