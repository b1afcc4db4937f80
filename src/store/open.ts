import type { Config } from '../config/load.ts';
import { prepareDatabaseFiles } from './files.ts';
import type { Store } from './port/index.ts';
import { openSqliteStore } from './sqlite/index.ts';
import { withTokenCache } from './token-cache.ts';

/** The store the configuration names, with its token cache; `warn` hears of database files that others may read. */
export function openStore(config: Config, warn: (message: string) => void = () => {}): Store {
  for (const message of prepareDatabaseFiles(config.store.path, config.store.secretKeyFile)) warn(message);
  const driver = openSqliteStore({ path: config.store.path, busyTimeoutMs: config.store.busyTimeoutMs });
  return withTokenCache(driver, { size: config.store.tokenCacheSize });
}
