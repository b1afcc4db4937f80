// Quota and spike-arrest counts in one SharedArrayBuffer: the same table serves one thread or
// every worker thread of the gateway, so counts are exact across workers. A check takes the
// table's lock (Atomics) for well under a microsecond. The SQLite driver keeps its quota windows
// in the database (src/store/sqlite/counters.ts) so a restart does not reset them.
import { rollingRetryAt, rollingUsed, type CounterCheck, type CounterResult, type Counters, type QuotaResult, type SpikeResult, type WindowOf } from './port/counters.ts';

/** One quota counter: the calls counted in [start, end), and in the window just before (rolling quotas). */
export interface QuotaWindow {
  key: string;
  start: number;
  end: number;
  count: number;
  previous: number;
}

// Per slot: the key's two 32-bit hashes (0, 0: empty) in `keys`; window start, window end,
// count, previous window's count, GCRA arrival time, and a dirty flag in `data`.
const FIELDS = 6;
const [START, END, COUNT, PREVIOUS, TAT, DIRTY] = [0, 1, 2, 3, 4, 5] as const;
const MAX_PROBES = 64;

/** Two independent 32-bit hashes of a string (FNV-1a, and a multiplicative one), never both zero. */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a | 0, b | 1 | 0];
}

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

export class CounterTable implements Counters {
  readonly buffer: SharedArrayBuffer;
  readonly #lock: Int32Array;
  readonly #keys: Int32Array;
  readonly #data: Float64Array;
  readonly #mask: number;

  /** A new table of `slots` (a power of two) entries, or a view of another thread's `buffer`. */
  constructor(source: { slots: number } | { buffer: SharedArrayBuffer }) {
    const slots = 'slots' in source ? source.slots : (source.buffer.byteLength - 8) / (8 * FIELDS + 8);
    if (!Number.isInteger(slots) || slots < 64 || (slots & (slots - 1)) !== 0) throw new TypeError('CounterTable: slots must be a power of two ≥ 64');
    this.buffer = 'buffer' in source ? source.buffer : new SharedArrayBuffer(8 + slots * (8 * FIELDS + 8));
    this.#lock = new Int32Array(this.buffer, 0, 2);
    this.#data = new Float64Array(this.buffer, 8, slots * FIELDS);
    this.#keys = new Int32Array(this.buffer, 8 + slots * 8 * FIELDS, slots * 2);
    this.#mask = slots - 1;
  }

  /** Whether a key found no slot since the last call (a flag in the shared buffer, so any thread's miss counts). */
  takeFull(): boolean {
    return Atomics.exchange(this.#lock, 1, 0) === 1;
  }

  #takeLock(): void {
    while (Atomics.compareExchange(this.#lock, 0, 0, 1) !== 0) {
      // Another thread holds it for a few hundred nanoseconds.
    }
  }

  #unlock(): void {
    Atomics.store(this.#lock, 0, 0);
  }

  #locked<T>(fn: () => T): T {
    this.#takeLock();
    try {
      return fn();
    } finally {
      this.#unlock();
    }
  }

  /** The slot of a key: found, or claimed (an empty one, or one whose counts have all expired). */
  #slot(a: number, b: number, now: number): number {
    let free = -1;
    for (let probe = 0; probe < MAX_PROBES; probe++) {
      const i = (a + probe) & this.#mask;
      const ka = this.#keys[2 * i]!;
      const kb = this.#keys[2 * i + 1]!;
      if (ka === a && kb === b) return i;
      const d = i * FIELDS;
      const empty = ka === 0 && kb === 0;
      if (free === -1 && (empty || this.#expired(d, now))) free = i;
      if (empty) break;
    }
    if (free === -1) return -1;
    this.#keys[2 * free] = a;
    this.#keys[2 * free + 1] = b;
    this.#data.fill(0, free * FIELDS, free * FIELDS + FIELDS);
    return free;
  }

  /**
   * Takes the lock and finds the key's data offset, or -1 (and raises the full flag) when the
   * table has no slot for it; the caller releases the lock. No closures: this runs per call.
   */
  #acquire(key: string, now: number): number {
    const [a, b] = hashes(key);
    this.#takeLock();
    const i = this.#slot(a, b, now);
    if (i === -1) Atomics.store(this.#lock, 1, 1);
    return i === -1 ? -1 : i * FIELDS;
  }

  /** A slot nothing refers to any more: its window and the one after it ended, its arrival time passed. */
  #expired(d: number, now: number): boolean {
    const data = this.#data;
    return data[DIRTY + d] === 0 && 2 * data[END + d]! - data[START + d]! <= now && data[TAT + d]! <= now;
  }

  /**
   * The calls a quota key has counted in the window holding `now`, without counting one: for a
   * rolling window of `rollingSize` ms, estimated as consumeRolling does. 0 for a key never seen.
   */
  used(key: string, now: number, rollingSize?: number): number {
    const [a, b] = hashes(key);
    const data = this.#data;
    this.#takeLock();
    try {
      for (let probe = 0; probe < MAX_PROBES; probe++) {
        const i = (a + probe) & this.#mask;
        const ka = this.#keys[2 * i]!;
        const kb = this.#keys[2 * i + 1]!;
        if (ka === 0 && kb === 0) return 0;
        if (ka !== a || kb !== b) continue;
        const d = i * FIELDS;
        if (rollingSize === undefined) return now < data[END + d]! && now >= data[START + d]! ? data[COUNT + d]! : 0;
        const start = now - (now % rollingSize);
        const count = data[START + d] === start ? data[COUNT + d]! : 0;
        const previous = data[START + d] === start ? data[PREVIOUS + d]! : data[START + d] === start - rollingSize ? data[COUNT + d]! : 0;
        return rollingUsed(previous, count, now, start, rollingSize);
      }
      return 0;
    } finally {
      this.#unlock();
    }
  }

  consume(checks: readonly CounterCheck[], now: number): CounterResult[] {
    const results: CounterResult[] = [];
    for (const check of checks) {
      const result =
        check.kind === 'calendar'
          ? this.consumeQuota(check.key, check.limit, check.windowOf, now)
          : check.kind === 'rolling'
            ? this.consumeRolling(check.key, check.limit, check.size, now)
            : this.spike(check.key, check.intervalMs, check.burst, now);
      results.push(result);
      if (!result.allowed) break;
    }
    return results;
  }

  /** Counts a call if the window has room; a refused call is not counted. */
  consumeQuota(key: string, limit: number, windowOf: WindowOf, now: number): QuotaResult {
    const d = this.#acquire(key, now);
    const data = this.#data;
    try {
      if (d === -1) return tableFull(limit, now);
      if (now >= data[END + d]!) {
        const w = windowOf(now);
        data[START + d] = w.start;
        data[END + d] = w.end;
        data[COUNT + d] = 0;
        data[PREVIOUS + d] = 0;
      }
      const end = data[END + d]!;
      if (data[COUNT + d]! >= limit) return { allowed: false, limit, remaining: 0, resetAt: end, retryAt: end };
      const count = ++data[COUNT + d]!;
      data[DIRTY + d] = 1;
      return { allowed: true, limit, remaining: limit - count, resetAt: end, retryAt: end };
    } finally {
      this.#unlock();
    }
  }

  /** A rolling window of `size` ms (see CounterCheck). */
  consumeRolling(key: string, limit: number, size: number, now: number): QuotaResult {
    const d = this.#acquire(key, now);
    const data = this.#data;
    try {
      if (d === -1) return tableFull(limit, now);
      const start = now - (now % size);
      if (data[START + d] !== start) {
        data[PREVIOUS + d] = data[START + d] === start - size ? data[COUNT + d]! : 0;
        data[START + d] = start;
        data[END + d] = start + size;
        data[COUNT + d] = 0;
      }
      const count = data[COUNT + d]!;
      const previous = data[PREVIOUS + d]!;
      const end = start + size;
      const used = rollingUsed(previous, count, now, start, size);
      if (used >= limit) {
        return { allowed: false, limit, remaining: 0, resetAt: end, retryAt: rollingRetryAt(previous, count, limit, start, size) };
      }
      data[COUNT + d] = count + 1;
      data[DIRTY + d] = 1;
      return { allowed: true, limit, remaining: limit - used - 1, resetAt: end, retryAt: end };
    } finally {
      this.#unlock();
    }
  }

  /** GCRA: one call per `intervalMs` on average, up to `burst` at once (see CounterCheck). */
  spike(key: string, intervalMs: number, burst: number, now: number): SpikeResult {
    const d = this.#acquire(key, now);
    const data = this.#data;
    try {
      if (d === -1) return PASS;
      const tolerance = intervalMs * (burst - 1);
      const tat = Math.max(data[TAT + d]!, now);
      if (tat - tolerance > now) return { allowed: false, retryAfterMs: tat - tolerance - now, refillMs: tat - now };
      data[TAT + d] = tat + intervalMs;
      return { allowed: true, retryAfterMs: 0, refillMs: tat + intervalMs - now };
    } finally {
      this.#unlock();
    }
  }

  /** Puts saved windows back (their keys are the hashes `takeDirty` gave). */
  load(windows: readonly QuotaWindow[]): void {
    this.#locked(() => {
      for (const w of windows) {
        const a = Number.parseInt(w.key.slice(0, 8), 16) | 0;
        const b = Number.parseInt(w.key.slice(8, 16), 16) | 0;
        const i = this.#slot(a, b, 0);
        if (i === -1) continue;
        const d = i * FIELDS;
        this.#data[START + d] = w.start;
        this.#data[END + d] = w.end;
        this.#data[COUNT + d] = w.count;
        this.#data[PREVIOUS + d] = w.previous;
      }
    });
  }

  /** The windows counted in since the last call, keyed by their hashes. */
  takeDirty(): QuotaWindow[] {
    return this.#locked(() => {
      const out: QuotaWindow[] = [];
      const data = this.#data;
      for (let i = 0; i <= this.#mask; i++) {
        const d = i * FIELDS;
        if (data[DIRTY + d] === 0) continue;
        data[DIRTY + d] = 0;
        out.push({
          key: hex(this.#keys[2 * i]!) + hex(this.#keys[2 * i + 1]!),
          start: data[START + d]!,
          end: data[END + d]!,
          count: data[COUNT + d]!,
          previous: data[PREVIOUS + d]!,
        });
      }
      return out;
    });
  }
}

/** A full table's answer: the call passes, as if nothing were counted. */
const PASS: SpikeResult = Object.freeze({ allowed: true, retryAfterMs: 0, refillMs: 0 });

// A full table is a configuration problem (far more live keys than slots): let calls through
// rather than refuse them all, and say so in the counters' log line.
function tableFull(limit: number, now: number): QuotaResult {
  return { allowed: true, limit, remaining: limit, resetAt: now, retryAt: now };
}

export const DEFAULT_SLOTS = 1 << 17;
