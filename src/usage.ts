// Calls per app and hour, counted in memory as the gateway serves and added to the store every
// few seconds (and at close): the developer portal charts them. A worker counts its own calls;
// the store adds every worker's counts up.
import type { Logger } from 'pino';
import type { Store, UsageCount } from './store/port.ts';

const HOUR_MS = 3_600_000;
const FLUSH_EVERY_MS = 5_000;

export interface Usage {
  /** One call of the app, now. */
  count(appId: string, now: number): void;
  /** Adds what was counted to the store. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function startUsage(store: Store, logger: Logger): Usage {
  let counts = new Map<string, UsageCount>();

  async function flush(): Promise<void> {
    if (counts.size === 0) return;
    const batch = [...counts.values()];
    counts = new Map();
    try {
      await store.addUsage(batch);
    } catch (err) {
      logger.error({ err }, 'saving usage counts failed');
    }
  }

  const timer = setInterval(() => void flush(), FLUSH_EVERY_MS);
  timer.unref();
  return {
    count(appId, now) {
      const hour = now - (now % HOUR_MS);
      const id = `${appId}|${hour}`;
      const c = counts.get(id);
      if (c === undefined) counts.set(id, { appId, hour, count: 1 });
      else c.count++;
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
