import { checkKeyFile, prepareDatabaseFiles } from './files.ts';
import type { Store } from './port/index.ts';
import type { RedisSettings } from './redis/settings.ts';
import { checkpointSignal } from './sqlite/checkpoints.ts';
import { counterTableBuffer, openSqliteStore } from './sqlite/index.ts';
import { withTokenCache } from './token-cache.ts';

export interface OpenStoreOptions {
  /** Hears of database files that others may read, and of background failures. */
  warn?: (message: string) => void;
  /**
   * For a store that serves a gateway: memory the gateway's threads share for the store (from
   * storeShared()), and whether this thread runs the store's background work (a worker of
   * several leaves it to the main thread). Absent for a short-lived command.
   */
  serving?: { shared: StoreShared; maintains: boolean };
}

/** Memory the threads of one gateway share for a SQLite store: the checkpoint signal and the counters' table. */
export interface StoreShared {
  checkpoints: SharedArrayBuffer;
  counters: SharedArrayBuffer;
}

export function storeShared(settings: StoreSettings): StoreShared | undefined {
  return settings.driver === 'sqlite' ? { checkpoints: checkpointSignal(), counters: counterTableBuffer() } : undefined;
}

/** The config's `store` section. */
export type StoreSettings = ({ driver: 'sqlite'; path: string; busyTimeoutMs: number } | ({ driver: 'redis' } & RedisSettings)) & {
  secretKeyFile: string;
  tokenCacheSize: number;
};

/**
 * The store the configuration names, with its token cache. The Redis driver (and ioredis, 18 ms
 * of a start and a megabyte of heap) is loaded only for a config that names it.
 */
export async function openStore(settings: StoreSettings, options: OpenStoreOptions = {}): Promise<Store> {
  const warn = options.warn ?? (() => {});
  if (settings.driver === 'redis') {
    for (const message of checkKeyFile(settings.secretKeyFile)) warn(message);
    const { openRedisStore } = await import('./redis/index.ts');
    return withTokenCache(openRedisStore({ ...settings, warn }), { size: settings.tokenCacheSize });
  }
  for (const message of prepareDatabaseFiles(settings.path, settings.secretKeyFile)) warn(message);
  const shared = options.serving?.shared;
  const driver = openSqliteStore({
    path: settings.path,
    busyTimeoutMs: settings.busyTimeoutMs,
    warn,
    ...(shared !== undefined && {
      checkpoints: { signal: shared.checkpoints, run: options.serving!.maintains },
      counters: { buffer: shared.counters, save: options.serving!.maintains },
    }),
  });
  return withTokenCache(driver, { size: settings.tokenCacheSize });
}
