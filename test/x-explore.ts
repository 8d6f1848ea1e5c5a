import { startHudi } from './helpers/hudi.js';
import { execSync } from 'node:child_process';
const version = (process.argv[2] ?? '1.0.2') as '1.0.2' | '1.1.1';
const base = `/tmp/x1/${version}`;
execSync(`rm -rf ${base}; mkdir -p ${base}`);
const hudi = await startHudi({ hudiVersion: version });
try {
  const schema = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
  const rows = (ids: number[], v: number) => ids.map((id) => ({ id, name: `v${v}-${id}`, ts: v, dt: id % 2 ? '2024-01-01' : '2024-01-02' }));
  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ']) {
    const path = `${base}/${type === 'COPY_ON_WRITE' ? 'cow' : 'mor'}`;
    const options = { 'hoodie.table.name': 't', 'hoodie.datasource.write.recordkey.field': 'id', 'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.precombine.field': 'ts', 'hoodie.datasource.write.table.type': type, 'hoodie.embed.timeline.server': 'false' };
    await hudi.write(path, { schema, rows: rows([1,2,3,4,5,6], 1), options: { ...options, 'hoodie.datasource.write.operation': 'insert' } });
    await hudi.write(path, { schema, rows: rows([2,3,7], 2), options: { ...options, 'hoodie.datasource.write.operation': 'upsert' } });
    await hudi.write(path, { schema, rows: rows([4], 3), options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });
    console.log(type, JSON.stringify((await hudi.read(path, { meta: false })).rows));
  }
} finally { await hudi.close(); }
