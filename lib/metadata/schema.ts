/**
 * HoodieMetadataRecord, the one Avro record of every metadata-table partition, as Hudi 0.14/0.15 compiles it
 * (hudi-common/src/main/avro/HoodieMetadata.avsc), in Java's `Schema.toString()` key order: its JSON text is the
 * `schema` extraMetadata of every metadata-table deltacommit. Log blocks and base files carry it behind Hudi's five
 * `_hoodie_*` meta fields (HoodieAvroUtils.addMetadataFields), which is the SCHEMA header of each HFile data block.
 *
 * Values are written with avsc's wrapped unions (`{ "org.apache.hudi.avro.model.LongWrapper": { value } }`,
 * `{ string: … }`): the column-stats min/max unions hold eleven record branches, which bare values cannot tell apart.
 */
import type avro from 'avsc';
import { avroType } from '../log-format/index.js';

export const HOODIE_METADATA_RECORD_SCHEMA = {
  type: 'record',
  name: 'HoodieMetadataRecord',
  namespace: 'org.apache.hudi.avro.model',
  doc: 'A record saved within the Metadata Table',
  fields: [
    { name: 'key', type: { type: 'string', 'avro.java.string': 'String' } },
    { name: 'type', type: 'int', doc: 'Type of the metadata record' },
    {
      name: 'filesystemMetadata',
      type: [
        'null',
        {
          type: 'map',
          values: {
            type: 'record',
            name: 'HoodieMetadataFileInfo',
            fields: [
              { name: 'size', type: 'long', doc: 'Size of the file' },
              {
                name: 'isDeleted',
                type: 'boolean',
                doc: 'True if this file has been deleted',
              },
            ],
          },
          'avro.java.string': 'String',
        },
      ],
      doc: 'Contains information about partitions and files within the dataset',
    },
    {
      name: 'BloomFilterMetadata',
      type: [
        'null',
        {
          type: 'record',
          name: 'HoodieMetadataBloomFilter',
          doc: 'Data file bloom filter details',
          fields: [
            {
              name: 'type',
              type: { type: 'string', 'avro.java.string': 'String' },
              doc: 'Bloom filter type code',
            },
            {
              name: 'timestamp',
              type: { type: 'string', 'avro.java.string': 'String' },
              doc: 'Instant timestamp when this metadata was created/updated',
            },
            {
              name: 'bloomFilter',
              type: 'bytes',
              doc: 'Bloom filter binary byte array',
            },
            {
              name: 'isDeleted',
              type: 'boolean',
              doc: 'Bloom filter entry valid/deleted flag',
            },
          ],
        },
      ],
      doc: 'Metadata Index of bloom filters for all data files in the user table',
      default: null,
    },
    {
      name: 'ColumnStatsMetadata',
      type: [
        'null',
        {
          type: 'record',
          name: 'HoodieMetadataColumnStats',
          doc: 'Data file column statistics',
          fields: [
            {
              name: 'fileName',
              type: ['null', { type: 'string', 'avro.java.string': 'String' }],
              doc: 'File name for which this column statistics applies',
              default: null,
            },
            {
              name: 'columnName',
              type: ['null', { type: 'string', 'avro.java.string': 'String' }],
              doc: 'Column name for which this column statistics applies',
              default: null,
            },
            {
              name: 'minValue',
              type: [
                'null',
                {
                  type: 'record',
                  name: 'BooleanWrapper',
                  doc: "A record wrapping boolean type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'boolean' }],
                },
                {
                  type: 'record',
                  name: 'IntWrapper',
                  doc: "A record wrapping int type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'int' }],
                },
                {
                  type: 'record',
                  name: 'LongWrapper',
                  doc: "A record wrapping long type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'long' }],
                },
                {
                  type: 'record',
                  name: 'FloatWrapper',
                  doc: "A record wrapping float type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'float' }],
                },
                {
                  type: 'record',
                  name: 'DoubleWrapper',
                  doc: "A record wrapping double type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'double' }],
                },
                {
                  type: 'record',
                  name: 'BytesWrapper',
                  doc: "A record wrapping bytes type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'bytes' }],
                },
                {
                  type: 'record',
                  name: 'StringWrapper',
                  doc: "A record wrapping string type to be able to be used it w/in Avro's Union",
                  fields: [
                    {
                      name: 'value',
                      type: { type: 'string', 'avro.java.string': 'String' },
                    },
                  ],
                },
                {
                  type: 'record',
                  name: 'DateWrapper',
                  doc: "A record wrapping Date logical type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'int' }],
                },
                {
                  type: 'record',
                  name: 'DecimalWrapper',
                  doc: "A record wrapping Decimal logical type to be able to be used it w/in Avro's Union",
                  fields: [
                    {
                      name: 'value',
                      type: {
                        type: 'bytes',
                        logicalType: 'decimal',
                        precision: 30,
                        scale: 15,
                      },
                    },
                  ],
                },
                {
                  type: 'record',
                  name: 'TimeMicrosWrapper',
                  doc: "A record wrapping Time-micros logical type to be able to be used it w/in Avro's Union",
                  fields: [
                    {
                      name: 'value',
                      type: { type: 'long', logicalType: 'time-micros' },
                    },
                  ],
                },
                {
                  type: 'record',
                  name: 'TimestampMicrosWrapper',
                  doc: "A record wrapping Timestamp-micros logical type to be able to be used it w/in Avro's Union",
                  fields: [{ name: 'value', type: 'long' }],
                },
              ],
              doc: 'Minimum value in the range. Based on user data table schema, we can convert this to appropriate type',
              default: null,
            },
            {
              name: 'maxValue',
              type: [
                'null',
                'BooleanWrapper',
                'IntWrapper',
                'LongWrapper',
                'FloatWrapper',
                'DoubleWrapper',
                'BytesWrapper',
                'StringWrapper',
                'DateWrapper',
                'DecimalWrapper',
                'TimeMicrosWrapper',
                'TimestampMicrosWrapper',
              ],
              doc: 'Maximum value in the range. Based on user data table schema, we can convert it to appropriate type',
              default: null,
            },
            {
              name: 'valueCount',
              type: ['null', 'long'],
              doc: 'Total count of values',
              default: null,
            },
            {
              name: 'nullCount',
              type: ['null', 'long'],
              doc: 'Total count of null values',
              default: null,
            },
            {
              name: 'totalSize',
              type: ['null', 'long'],
              doc: 'Total storage size on disk',
              default: null,
            },
            {
              name: 'totalUncompressedSize',
              type: ['null', 'long'],
              doc: 'Total uncompressed storage size on disk',
              default: null,
            },
            {
              name: 'isDeleted',
              type: 'boolean',
              doc: 'Column range entry valid/deleted flag',
            },
          ],
        },
      ],
      doc: 'Metadata Index of column statistics for all data files in the user table',
      default: null,
    },
    {
      name: 'recordIndexMetadata',
      type: [
        'null',
        {
          type: 'record',
          name: 'HoodieRecordIndexInfo',
          fields: [
            {
              name: 'partitionName',
              type: ['null', { type: 'string', 'avro.java.string': 'String' }],
              doc: 'Refers to the partition name the record belongs to',
              default: null,
            },
            {
              name: 'fileIdHighBits',
              type: ['null', 'long'],
              doc: 'Refers to high 64 bits if the fileId is based on UUID format. \nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). \nFileID format is {UUID}-{fileIndex}.',
              default: null,
            },
            {
              name: 'fileIdLowBits',
              type: ['null', 'long'],
              doc: 'Refers to low 64 bits if the fileId is based on UUID format. \nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). \nFileID format is {UUID}-{fileIndex}.',
              default: null,
            },
            {
              name: 'fileIndex',
              type: ['null', 'int'],
              doc: 'Index representing file index which is used to re-construct UUID based fileID. Applicable when the fileId is based on UUID format. \nA UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). \nFileID format is {UUID}-{fileIndex}.',
              default: null,
            },
            {
              name: 'fileId',
              type: ['null', { type: 'string', 'avro.java.string': 'String' }],
              doc: 'Represents fileId of the location where record belongs to. When the encoding is 1, fileID is stored in raw string format.',
              default: null,
            },
            {
              name: 'instantTime',
              type: ['null', 'long'],
              doc: 'Epoch time in millisecond representing the commit time at which record was added',
              default: null,
            },
            {
              name: 'fileIdEncoding',
              type: 'int',
              doc: 'Represents fileId encoding. Possible values are 0 and 1. O represents UUID based fileID, and 1 represents raw string format of the fileId. \nWhen the encoding is 0, reader can deduce fileID from fileIdLowBits, fileIdLowBits and fileIndex.',
              default: 0,
            },
          ],
        },
      ],
      doc: 'Metadata Index that contains information about record keys and their location in the dataset',
      default: null,
    },
  ],
} as const;

/** The five meta fields Hudi puts in front of a record schema (nullable strings, doc "", default null). */
const META_FIELDS = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'].map((name) => ({
  name,
  type: ['null', 'string'],
  doc: '',
  default: null,
}));

/** `HoodieMetadataRecord.getClassSchema().toString()`: the deltacommit's extraMetadata `schema`. */
export const METADATA_RECORD_SCHEMA_TEXT: string = JSON.stringify(HOODIE_METADATA_RECORD_SCHEMA);

/** The writer schema of metadata-table log blocks and base files (the SCHEMA header). */
export const METADATA_RECORD_WRITER_SCHEMA_TEXT: string = JSON.stringify({
  ...HOODIE_METADATA_RECORD_SCHEMA,
  fields: [...META_FIELDS, ...HOODIE_METADATA_RECORD_SCHEMA.fields],
});

/** The avsc type values are encoded with (wrapped unions, bigint longs: record-index UUID halves need 64 bits). */
export function metadataRecordType(): avro.Type {
  return avroType(METADATA_RECORD_WRITER_SCHEMA_TEXT, { wrapUnions: true, longs: 'bigint' }, 'HoodieMetadataRecord schema');
}

/** The avsc type of another writer schema (a block's SCHEMA header), read the same way. */
export function metadataRecordTypeOf(schemaText: string): avro.Type {
  return avroType(schemaText, { wrapUnions: true, longs: 'bigint' }, 'metadata-table block schema');
}
