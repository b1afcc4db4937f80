// In-process counters for quota and spike arrest. A single thread runs every check to the end
// before the next begins, so counts are exact without locks. Quota windows are saved to the store
// every second and at shutdown, and loaded at start, so a restart does not reset them.
import type { Logger } from 'pino';
import type { QuotaWindow, Store } from '../store/port.ts';

export interface QuotaResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the window ends. */
  resetAt: number;
  /** Epoch ms from which a refused call would pass. */
  retryAt: number;
}

/** The window a new count opens at `now`. */
export type WindowOf = (now: number) => { start: number; end: number };

export class Counters {
  readonly #quota = new Map<string, QuotaWindow>();
  readonly #dirty = new Set<QuotaWindow>();
  readonly #tat = new Map<string, number>();

  /** Counts a call if the window has room; a refused call is not counted. */
  consumeQuota(key: string, limit: number, windowOf: WindowOf, now: number): QuotaResult {
    let w = this.#quota.get(key);
    if (w === undefined || now >= w.end) {
      w = { key, ...windowOf(now), count: 0, previous: 0 };
      this.#quota.set(key, w);
    }
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetAt: w.end, retryAt: w.end };
    w.count++;
    this.#dirty.add(w);
    return { allowed: true, limit, remaining: limit - w.count, resetAt: w.end, retryAt: w.end };
  }

  /**
   * A rolling window of `size` ms, estimated from two fixed windows: the current one's count plus
   * the previous one's, weighted by how much of it still lies within the last `size` ms (rounded
   * up, so the estimate never admits more than the limit when the previous calls came late).
   */
  consumeRolling(key: string, limit: number, size: number, now: number): QuotaResult {
    const start = now - (now % size);
    let w = this.#quota.get(key);
    if (w === undefined || w.start !== start) {
      const previous = w !== undefined && w.start === start - size ? w.count : 0;
      w = { key, start, end: start + size, count: 0, previous };
      this.#quota.set(key, w);
    }
    const weight = 1 - (now - start) / size;
    const used = Math.ceil(w.previous * weight - 1e-9) + w.count;
    if (used >= limit) {
      // When ceil(previous × weight) + count drops below the limit.
      const retryAt =
        w.count >= limit
          ? w.end + Math.ceil(size * Math.max(0, 1 - (limit - 1) / w.count))
          : start + Math.ceil(size * (1 - (limit - w.count - 1) / w.previous));
      return { allowed: false, limit, remaining: 0, resetAt: w.end, retryAt };
    }
    w.count++;
    this.#dirty.add(w);
    return { allowed: true, limit, remaining: limit - used - 1, resetAt: w.end, retryAt: w.end };
  }

  /**
   * GCRA: one call per `intervalMs` on average, up to `burst` at once. The key's theoretical
   * arrival time (TAT) moves on by `intervalMs` per admitted call.
   */
  spike(key: string, intervalMs: number, burst: number, now: number): { allowed: boolean; retryAfterMs: number } {
    const tolerance = intervalMs * (burst - 1);
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    if (tat - tolerance > now) return { allowed: false, retryAfterMs: tat - tolerance - now };
    this.#tat.set(key, tat + intervalMs);
    return { allowed: true, retryAfterMs: 0 };
  }

  load(windows: readonly QuotaWindow[]): void {
    for (const w of windows) this.#quota.set(w.key, { ...w });
  }

  /** The windows counted in since the last call. */
  takeDirty(): QuotaWindow[] {
    const list = [...this.#dirty].map((w) => ({ ...w }));
    this.#dirty.clear();
    return list;
  }

  /** Forgets ended windows and spent arrival times. */
  sweep(now: number): void {
    // A window is kept one interval past its end: a rolling quota reads it as the previous one.
    for (const [key, w] of this.#quota) if (2 * w.end - w.start <= now && !this.#dirty.has(w)) this.#quota.delete(key);
    for (const [key, tat] of this.#tat) if (tat <= now) this.#tat.delete(key);
  }
}

const FLUSH_EVERY_MS = 1_000;

/** Counters backed by the store: loaded now, saved every second and on close. */
export async function startCounters(store: Store, clock: () => number, logger: Logger): Promise<{ counters: Counters; close(): Promise<void> }> {
  const counters = new Counters();
  counters.load(await store.loadQuotaWindows(clock()));
  const flush = async () => {
    const dirty = counters.takeDirty();
    await store.saveQuotaWindows(dirty);
    counters.sweep(clock());
  };
  const timer = setInterval(() => flush().catch((err: unknown) => logger.error({ err }, 'saving quota counters failed')), FLUSH_EVERY_MS);
  timer.unref();
  return {
    counters,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
