import type { Config } from '../config/load.ts';
import type { Store } from './port.ts';
import { SqliteStore } from './sqlite.ts';

/** The store the configuration names. */
export function openStore(config: Config): Store {
  return new SqliteStore({ path: config.store.path, tokenCacheSize: config.store.tokenCacheSize });
}
