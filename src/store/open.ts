import type { Config } from '../config/load.ts';
import { prepareDatabaseFiles } from './files.ts';
import type { Store } from './port.ts';
import { SqliteStore } from './sqlite.ts';

/** The store the configuration names; `warn` hears of database files that others may read. */
export function openStore(config: Config, warn: (message: string) => void = () => {}): Store {
  for (const message of prepareDatabaseFiles(config.store.path, config.store.secretKeyFile)) warn(message);
  return new SqliteStore({ path: config.store.path, tokenCacheSize: config.store.tokenCacheSize, busyTimeoutMs: config.store.busyTimeoutMs });
}
