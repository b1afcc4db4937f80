// Calls per app and hour, counted in memory as the gateway serves and added to the store every
// few seconds (and at close): the developer portal charts them. A worker counts its own calls;
// the store adds every worker's counts up.
import type { Logger } from 'pino';
import type { Store, UsageCount } from './store/port/index.ts';

export const HOUR_MS = 3_600_000;
const FLUSH_EVERY_MS = 5_000;

export interface Usage {
  /** One call of the app, now. */
  count(appId: string, now: number): void;
  /** Adds what was counted to the store. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function startUsage(store: Store, logger: Logger): Usage {
  // The current hour's counts by app id (no string built per call), and earlier hours' not yet saved.
  let hour = 0;
  let counts = new Map<string, number>();
  let earlier: UsageCount[] = [];

  const collect = () => {
    for (const [appId, count] of counts) earlier.push({ appId, hour, count });
    counts = new Map();
  };

  async function flush(): Promise<void> {
    collect();
    if (earlier.length === 0) return;
    const batch = earlier;
    earlier = [];
    try {
      await store.usage.add(batch);
    } catch (err) {
      // Kept for the next flush: the counts are added, so none may be dropped or sent twice.
      earlier = [...batch, ...earlier];
      logger.error({ err }, 'saving usage counts failed; trying again at the next flush');
    }
  }

  const timer = setInterval(() => void flush(), FLUSH_EVERY_MS);
  timer.unref();
  return {
    count(appId, now) {
      const start = now - (now % HOUR_MS);
      if (start !== hour) {
        collect();
        hour = start;
      }
      counts.set(appId, (counts.get(appId) ?? 0) + 1);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
