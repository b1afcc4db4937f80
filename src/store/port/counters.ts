// Counters kept for the gateway's own policies and reports: quota and spike-arrest counts, and
// hourly usage per app.

export interface QuotaResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the window ends. */
  resetAt: number;
  /** Epoch ms from which a refused call would pass. */
  retryAt: number;
}

export interface SpikeResult {
  allowed: boolean;
  /** Milliseconds until a refused call would pass; 0 when allowed. */
  retryAfterMs: number;
  /** Milliseconds until the whole burst is available again (counting this call, when allowed): the TAT's lead over now. */
  refillMs: number;
}

/** How many calls a spike check would still admit at once, after one that answered `result` (see CounterCheck's spike). */
export function spikeRemaining(result: SpikeResult, intervalMs: number, burst: number): number {
  if (!result.allowed) return 0;
  // A call passes while TAT - tolerance <= now; each moves the TAT on by intervalMs. The epsilon
  // keeps a fractional interval's rounding (1000 / 3 ms) from losing a whole call.
  const admitted = Math.floor((intervalMs * (burst - 1) - result.refillMs) / intervalMs + 1e-9) + 1;
  return Math.min(burst, Math.max(0, admitted));
}

/** The window a new count opens at `now`. */
export type WindowOf = (now: number) => { start: number; end: number };

/**
 * One count a call makes:
 * - calendar: counts the call if the calendar window holding `now` has room; a refused call is not counted.
 * - rolling: a window of `size` ms, estimated from two fixed windows: the current one's count plus
 *   the previous one's, weighted by how much of it still lies within the last `size` ms (rounded
 *   up, so the estimate never admits more than the limit when the previous calls came late).
 * - spike: GCRA, one call per `intervalMs` on average, up to `burst` at once; the key's
 *   theoretical arrival time (TAT) moves on by `intervalMs` per admitted call.
 */
export type CounterCheck =
  | { kind: 'calendar'; key: string; limit: number; windowOf: WindowOf }
  | { kind: 'rolling'; key: string; limit: number; size: number }
  | { kind: 'spike'; key: string; intervalMs: number; burst: number };

/** A check's answer: a QuotaResult for a calendar or rolling check, a SpikeResult for a spike check. */
export type CounterResult = QuotaResult | SpikeResult;

/**
 * The counts behind quota and spike arrest, exact across every thread and process that shares
 * the store. A driver may answer without a promise (counts in memory) or with one (counts on a
 * server); a count that cannot be made rejects with StoreUnavailable.
 */
export interface Counters {
  /**
   * Makes the checks in order, as one (a route's quota and spike arrest cost one round trip to a
   * server), and stops at the first refused: the answers are those of the checks made, the last
   * one refused if any. A check after a refused one counts nothing, as if made on its own after it.
   */
  consume(checks: readonly CounterCheck[], now: number): CounterResult[] | Promise<CounterResult[]>;
  /**
   * The calls a quota key has counted in the window holding `now`, without counting one: for a
   * rolling window of `rollingSize` ms, estimated as a rolling check does. 0 for a key never seen.
   */
  used(key: string, now: number, rollingSize?: number): number | Promise<number>;
}

/** A rolling window's calls: the current fixed window's, plus the previous one's weighted by how much of it is still inside (rounded up). */
export function rollingUsed(previous: number, count: number, now: number, start: number, size: number): number {
  return Math.ceil(previous * (1 - (now - start) / size) - 1e-9) + count;
}

/** When a refused rolling-window call would pass: when ceil(previous × weight) + count drops below the limit. */
export function rollingRetryAt(previous: number, count: number, limit: number, start: number, size: number): number {
  const end = start + size;
  return count >= limit ? end + Math.ceil(size * Math.max(0, 1 - (limit - 1) / count)) : start + Math.ceil(size * (1 - (limit - count - 1) / previous));
}

/** How long hourly usage is kept: a month's export (`gateway admin usage export`), and the portal's 30 days, with days to spare. */
export const USAGE_KEPT_MS = 35 * 86_400_000;

/** An answer's status class, as the metrics count them. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

/**
 * The upper bounds, in milliseconds, of the buckets usage counts calls' durations in; the last
 * bucket, past the last bound, holds the slower ones. Percentiles are read from them (p50, p95).
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000];
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/** The bucket of LATENCY_BOUNDS_MS a duration falls in. */
export function latencyBucket(ms: number): number {
  let b = 0;
  while (b < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[b]!) b++;
  return b;
}

/** Calls of one app, through one route, answered with one status class, in one hour (`hour`: epoch ms of the hour's start). */
export interface UsageCount {
  appId: string;
  /** The product of the token the call carried. */
  product: string;
  /** The route's name (an OAuth endpoint's is its path). */
  route: string;
  statusClass: StatusClass;
  hour: number;
  count: number;
  /** The calls by duration, a count per bucket of LATENCY_BOUNDS_MS; fewer than `count` in all for calls counted before durations were. */
  latency: readonly number[];
}

/** Calls of one app in one hour, every route and status class together. */
export interface HourCount {
  hour: number;
  count: number;
}

/** Which counts a report holds: the hours from `fromHour` up to, not including, `toHour`, narrowed to an app, a product or a route. */
export interface UsageFilter {
  fromHour: number;
  toHour: number;
  appId?: string;
  product?: string;
  route?: string;
}

export interface UsageStore {
  /** Adds calls to the counts. */
  add(counts: readonly UsageCount[]): Promise<void>;
  /** The app's hourly counts from `fromHour` on, oldest first; hours without calls are absent. */
  since(appId: string, fromHour: number): Promise<HourCount[]>;
  /** The counts the filter selects, ordered by hour, then app id, route and status class. */
  report(filter: UsageFilter): Promise<UsageCount[]>;
}
