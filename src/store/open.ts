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

/** The config's `store` section. */
export interface StoreSettings {
  path: string;
  secretKeyFile: string;
  tokenCacheSize: number;
  busyTimeoutMs: number;
}

/** The store the configuration names, with its token cache. */
export function openStore(settings: StoreSettings, options: OpenStoreOptions = {}): Store {
  const warn = options.warn ?? (() => {});
  for (const message of prepareDatabaseFiles(settings.path, settings.secretKeyFile)) warn(message);
  const driver = openSqliteStore({ path: settings.path, busyTimeoutMs: settings.busyTimeoutMs, warn, ...(options.serving && { checkpoints: { signal: options.serving.shared, run: options.serving.maintains } }) });
  return withTokenCache(driver, { size: settings.tokenCacheSize });
}
