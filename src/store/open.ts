import type { Config } from '../config/load.ts';
import { prepareDatabaseFiles } from './files.ts';
import type { Store } from './port/index.ts';
import { checkpointSignal } from './sqlite/checkpoints.ts';
import { openSqliteStore } from './sqlite/index.ts';
import { withTokenCache } from './token-cache.ts';

export interface OpenStoreOptions {
  /** Hears of database files that others may read, and of background failures. */
  warn?: (message: string) => void;
  /**
   * For a store that serves a gateway: memory the gateway's threads share for the store (from
   * storeShared()), and whether this thread runs the store's background work (a worker of
   * several leaves it to the main thread). Absent for a short-lived command.
   */
  serving?: { shared: SharedArrayBuffer; maintains: boolean };
}

/** Memory the threads of one gateway share for their store: SQLite's checkpoint signal. */
export function storeShared(): SharedArrayBuffer {
  return checkpointSignal();
}

/** The store the configuration names, with its token cache. */
export function openStore(config: Config, options: OpenStoreOptions = {}): Store {
  const warn = options.warn ?? (() => {});
  for (const message of prepareDatabaseFiles(config.store.path, config.store.secretKeyFile)) warn(message);
  const driver = openSqliteStore({ path: config.store.path, busyTimeoutMs: config.store.busyTimeoutMs, warn, ...(options.serving && { checkpoints: { signal: options.serving.shared, run: options.serving.maintains } }) });
  return withTokenCache(driver, { size: config.store.tokenCacheSize });
}
