/**
 * Creating a new table: `.hoodie/hoodie.properties` for a v6 copy-on-write table, written once.
 */
import { AlreadyExistsError, HudiError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { formatTableProperties, type NewTableOptions, newTableProperties, PROPERTIES_FILE, type TableConfig, tableConfigFromProperties } from './config.js';

export async function createTable(storage: Storage, options: NewTableOptions): Promise<TableConfig> {
  const properties = newTableProperties(options);
  try {
    await storage.putIfAbsent(PROPERTIES_FILE, formatTableProperties(properties));
  } catch (error) {
    if (error instanceof AlreadyExistsError) {
      throw new HudiError('a Hudi table already exists here', { location: storage.uri, fix: 'choose another path, or write to the existing table' });
    }
    throw error;
  }
  return tableConfigFromProperties(properties, storage.uriOf(PROPERTIES_FILE));
}
