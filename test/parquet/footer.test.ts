import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HudiError } from '../../lib/errors.js';
import { encodeFooter, FILE_METADATA, footerKeyValues, readFileFooter, setFooterKeyValues } from '../../lib/parquet/footer.js';
import { isStruct } from '../../lib/parquet/thrift.js';
import { duckdb } from '../helpers/duckdb.js';
import { hudiToolchain } from '../helpers/hudi.js';
import { pyarrowFileInfo, pyarrowRead } from '../helpers/oracle.js';

let workDir: string;
let written: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-footer-test-'));
  written = join(workDir, 'written.parquet');
  await duckdb(
    `COPY (SELECT range::INTEGER AS id, 'key' || range AS key FROM range(5000))
     TO '${written}' (FORMAT parquet, ROW_GROUP_SIZE 2048, KV_METADATA {hoodie_min_record_key: 'key0', 'writer.model.name': 'avro'})`,
  );
});

after(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function footerOf(file: string) {
  const handle = await open(file, 'r');
  try {
    return await readFileFooter(handle, file);
  } finally {
    await handle.close();
  }
}

/** The file's row group count as pyarrow reads it. */
function pyarrowRowGroups(file: string): number {
  const script = 'import sys, pyarrow.parquet as pq; print(pq.read_metadata(sys.argv[1]).num_row_groups)';
  return Number(execFileSync(hudiToolchain().python, ['-c', script, file], { encoding: 'utf8' }).trim());
}

const text = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

describe('Parquet footer', () => {
  test('reads the FileMetaData DuckDB wrote: rows, row groups, schema and key/values', async () => {
    const footer = await footerOf(written);
    assert.equal(footer.metadata.bigint(FILE_METADATA.numRows), 5000n);
    const rowGroups = footer.metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? [];
    assert.ok(rowGroups.length > 1);
    assert.equal(rowGroups.length, pyarrowRowGroups(written));
    // RowGroup field 3 is num_rows; they add up to the file's rows.
    assert.equal(
      rowGroups.reduce((sum, group) => sum + (group.bigint(3) ?? 0n), 0n),
      5000n,
    );
    const names = (footer.metadata.list(FILE_METADATA.schema)?.items.filter(isStruct) ?? []).map((element) => text(element.binary(4)));
    assert.deepEqual(names.slice(1), ['id', 'key']);
    const keyValues = footerKeyValues(footer.metadata);
    assert.equal(text(keyValues.get('hoodie_min_record_key')), 'key0');
    assert.equal(text(keyValues.get('writer.model.name')), 'avro');
    assert.match(text(footer.metadata.binary(FILE_METADATA.createdBy)), /DuckDB/);
  });

  test('encodeFooter gives back the file’s last bytes: FileMetaData, its length, PAR1', async () => {
    const footer = await footerOf(written);
    const bytes = await readFile(written);
    assert.deepEqual(encodeFooter(footer.metadata), bytes.subarray(footer.start));
    assert.equal(bytes.subarray(bytes.length - 4).toString('latin1'), 'PAR1');
  });

  test('setFooterKeyValues adds and overrides entries, keeps the others and the pages', async () => {
    const file = join(workDir, 'patched.parquet');
    await copyFile(written, file);
    const bloom = 'x'.repeat(100_000); // larger than the whole footer was
    await setFooterKeyValues(file, { 'writer.model.name': 'hudi', 'org.apache.hudi.bloomfilter': bloom, hoodie_max_record_key: 'key999' });
    const [info] = pyarrowFileInfo([file]);
    assert.equal(info!.rows, 5000);
    assert.deepEqual(
      { min: info!.kv.hoodie_min_record_key, max: info!.kv.hoodie_max_record_key, model: info!.kv['writer.model.name'] },
      { min: 'key0', max: 'key999', model: 'hudi' },
    );
    assert.equal(text(footerKeyValues((await footerOf(file)).metadata).get('org.apache.hudi.bloomfilter')), bloom);
    const rows = pyarrowRead([file]);
    assert.equal(rows.length, 5000);
    assert.deepEqual(rows[4321], { id: 4321, key: 'key4321' });
    // A shorter footer cuts the file after it.
    await setFooterKeyValues(file, { 'org.apache.hudi.bloomfilter': '' });
    assert.ok((await stat(file)).size < (await stat(written)).size + 1000);
    assert.equal(pyarrowRead([file]).length, 5000);
  });

  test('a file that is not Parquet is named in the error', async () => {
    const cases: [string, Buffer, RegExp][] = [
      ['short.parquet', Buffer.from('PAR1'), /too few for a Parquet file/],
      ['no-magic.parquet', Buffer.alloc(64, 1), /no Parquet magic at the end/],
      [
        'too-long.parquet',
        Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(8), Buffer.from([0xff, 0, 0, 0]), Buffer.from('PAR1')]),
        /footer length 255 is larger than the file/,
      ],
    ];
    for (const [name, bytes, pattern] of cases) {
      const file = join(workDir, name);
      await writeFile(file, bytes);
      await assert.rejects(footerOf(file), (error: unknown) => error instanceof HudiError && error.location === file && pattern.test(error.message), name);
    }
  });
});
