// Calls per app, route, status class and hour, with their durations in buckets, counted in memory
// as the gateway serves and added to the store every few seconds (and at close): the developer
// portal charts them, the management API and `gateway admin usage` report them. A worker counts
// its own calls; the store adds every worker's counts up.
import type { Logger } from 'pino';
import { latencyBucket, LATENCY_BUCKETS, type StatusClass, type Store, type UsageCount } from './store/port/index.ts';

export const HOUR_MS = 3_600_000;
const FLUSH_EVERY_MS = 5_000;

export interface Usage {
  /** One call of the app through the route (by name), answered with the status class, now, in `durationMs`; `product` is its token's. */
  count(appId: string, product: string, route: string, statusClass: StatusClass, now: number, durationMs: number): void;
  /** Adds what was counted to the store. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

type ClassAt = 0 | 1 | 2 | 3 | 4;
const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const satisfies readonly StatusClass[];
const CLASS_AT: Readonly<Record<StatusClass, ClassAt>> = { '1xx': 0, '2xx': 1, '3xx': 2, '4xx': 3, '5xx': 4 };
const CLASS_AT_LIST: readonly ClassAt[] = [0, 1, 2, 3, 4];

/** An app's calls through one route in the current hour. */
interface RouteCalls {
  /** The product of the last call's token (an app's calls all carry its product). */
  product: string;
  /** Calls not yet collected, by status class (CLASS_AT). */
  calls: [number, number, number, number, number];
  /** Their durations: LATENCY_BUCKETS counts per status class, one after another. */
  latency: Uint32Array;
}

export function startUsage(store: Store, logger: Logger): Usage {
  // The current hour's counts by app id, then route name: a call of an app and route already
  // counted this hour builds no string and no object. Collecting zeroes the counts in place; a
  // new hour starts with empty maps, so that apps and routes no longer called are let go.
  let hour = 0;
  let counts = new Map<string, Map<string, RouteCalls>>();
  // Earlier counts not yet saved.
  let earlier: UsageCount[] = [];

  const collect = () => {
    for (const [appId, routes] of counts) {
      for (const [route, entry] of routes) {
        for (const at of CLASS_AT_LIST) {
          const count = entry.calls[at];
          if (count === 0) continue;
          const from = at * LATENCY_BUCKETS;
          earlier.push({ appId, product: entry.product, route, statusClass: CLASSES[at], hour, count, latency: [...entry.latency.subarray(from, from + LATENCY_BUCKETS)] });
          entry.calls[at] = 0;
          entry.latency.fill(0, from, from + LATENCY_BUCKETS);
        }
      }
    }
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
    count(appId, product, route, statusClass, now, durationMs) {
      const start = now - (now % HOUR_MS);
      if (start !== hour) {
        collect();
        counts = new Map();
        hour = start;
      }
      let routes = counts.get(appId);
      if (routes === undefined) {
        routes = new Map();
        counts.set(appId, routes);
      }
      let entry = routes.get(route);
      if (entry === undefined) {
        entry = { product, calls: [0, 0, 0, 0, 0], latency: new Uint32Array(CLASS_AT_LIST.length * LATENCY_BUCKETS) };
        routes.set(route, entry);
      }
      const at = CLASS_AT[statusClass];
      entry.product = product;
      entry.calls[at]++;
      entry.latency[at * LATENCY_BUCKETS + latencyBucket(durationMs)]!++;
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
