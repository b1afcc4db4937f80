// Usage reports: calls per app, product, route and status class per hour, with their durations,
// as src/usage.ts counted them into the store, for the management API (GET /v1/usage), `gateway
// admin usage` and the portal's analytics; and the summary both show (calls by status class and by
// route, error rate, p50 and p95) over the last 24 hours and 30 days.
import { MANAGEMENT_PRODUCT } from './management-clients.ts';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, type StatusClass, type Store } from '../store/port/index.ts';
import { HOUR_MS } from '../usage.ts';

/** The longest report one call may ask for: a month. */
export const MAX_USAGE_RANGE_MS = 31 * 24 * HOUR_MS;

/** The calls of one app through one route in one hour (`hour`: epoch ms of its start), answered with one status class. */
export interface UsageRow {
  hour: number;
  app: string;
  product: string;
  route: string;
  statusClass: StatusClass;
  count: number;
  /** The calls by duration, a count per bucket of LATENCY_BOUNDS_MS. */
  latency: readonly number[];
}

/** The hours that overlap [from, to) (epoch ms), narrowed to an app (its id), a product or a route. */
export interface UsageQuery {
  from: number;
  to: number;
  app?: string;
  product?: string;
  route?: string;
}

/**
 * The rows of the hours that overlap the query's range (which its caller has checked: not empty,
 * at most MAX_USAGE_RANGE_MS), ordered by hour, then app, route and status class. The management
 * clients' own calls are left out: those clients, and their ids, are the gateway's, not the API's.
 */
export async function usageReport(deps: { store: Store }, query: UsageQuery): Promise<UsageRow[]> {
  const { from, to } = query;
  const counts = await deps.store.usage.report({
    fromHour: from - (from % HOUR_MS),
    // The hour holding `to` counts when `to` falls inside it.
    toHour: Math.ceil(to / HOUR_MS) * HOUR_MS,
    ...(query.app === undefined ? {} : { appId: query.app }),
    ...(query.product === undefined ? {} : { product: query.product }),
    ...(query.route === undefined ? {} : { route: query.route }),
  });
  return counts
    .filter((c) => c.product !== MANAGEMENT_PRODUCT)
    .map((c) => ({ hour: c.hour, app: c.appId, product: c.product, route: c.route, statusClass: c.statusClass, count: c.count, latency: c.latency }));
}

/** The windows the summaries cover, ending now. */
export const SUMMARY_WINDOWS = [
  { name: '24h', ms: 24 * HOUR_MS },
  { name: '30d', ms: 30 * 24 * HOUR_MS },
] as const;

/** What a set of rows comes to: the portal shows an app's, `gateway admin usage` a product's. */
export interface UsageSummary {
  calls: number;
  byStatus: Record<StatusClass, number>;
  /** Each route's calls, and its 4xx and 5xx, the busiest first. */
  byRoute: { route: string; calls: number; errors: number }[];
  /** The share of calls answered 4xx or 5xx (0 to 1); 0 without calls. */
  errorRate: number;
  /** Milliseconds, read from the duration buckets; undefined without calls whose duration is known. */
  p50Ms: number | undefined;
  p95Ms: number | undefined;
}

export function summarize(rows: readonly UsageRow[]): UsageSummary {
  const byStatus: Record<StatusClass, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const routes = new Map<string, { route: string; calls: number; errors: number }>();
  const buckets = new Array<number>(LATENCY_BUCKETS).fill(0);
  let calls = 0;
  for (const r of rows) {
    calls += r.count;
    byStatus[r.statusClass] += r.count;
    const route = routes.get(r.route) ?? { route: r.route, calls: 0, errors: 0 };
    routes.set(r.route, route);
    route.calls += r.count;
    if (r.statusClass === '4xx' || r.statusClass === '5xx') route.errors += r.count;
    for (let b = 0; b < LATENCY_BUCKETS; b++) buckets[b]! += r.latency[b] ?? 0;
  }
  return {
    calls,
    byStatus,
    byRoute: [...routes.values()].sort((a, b) => b.calls - a.calls || (a.route < b.route ? -1 : 1)),
    errorRate: calls === 0 ? 0 : (byStatus['4xx'] + byStatus['5xx']) / calls,
    p50Ms: percentile(buckets, 0.5),
    p95Ms: percentile(buckets, 0.95),
  };
}

/**
 * The duration under which a share `q` of the calls took, from their buckets, as Prometheus's
 * histogram_quantile reads a histogram: linearly within the bucket it falls in. A quantile in the
 * last bucket, past the last bound, is that bound (a lower bound of the truth).
 */
export function percentile(buckets: readonly number[], q: number): number | undefined {
  const total = buckets.reduce((sum, n) => sum + n, 0);
  if (total === 0) return undefined;
  const rank = q * total;
  let below = 0;
  for (let b = 0; b < buckets.length; b++) {
    const n = buckets[b]!;
    if (n > 0 && below + n >= rank) {
      if (b >= LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS.at(-1)!;
      const lower = b === 0 ? 0 : LATENCY_BOUNDS_MS[b - 1]!;
      return lower + (LATENCY_BOUNDS_MS[b]! - lower) * ((rank - below) / n);
    }
    below += n;
  }
  return LATENCY_BOUNDS_MS.at(-1)!;
}
