/** Our Parquet engine for one piece of test work, closed after it whatever happens. */
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';

export async function withEngine<T>(work: (engine: ParquetEngine) => Promise<T>): Promise<T> {
  const engine = await openParquetEngine();
  try {
    return await work(engine);
  } finally {
    await engine.close();
  }
}
