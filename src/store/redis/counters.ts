// Quota and spike-arrest counts and hourly usage on Redis. Each count is one key and each check
// one script, so a limit holds exactly across every instance and runs on Redis Cluster. The
// scripts decide; the figures of the answer (remaining, reset, retry) are worked out here with
// the formulas the in-memory table uses (src/store/counter-table.ts), from what the script saw.
// Time is always the caller's `now`; a key's TTL is relative (it only cleans up).
import { rollingRetryAt, rollingUsed, type Counters, type QuotaResult, type SpikeResult, type UsageCount, type UsageStore, type WindowOf } from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

const quotaKey = (key: string) => `q:${key}`;
const spikeKey = (key: string) => `s:${key}`;
const usageKey = (appId: string) => `u:${appId}`;
/** Hourly usage is kept a week; the portal shows the last 24 hours. */
const USAGE_KEPT_MS = 7 * 86_400_000;

// ARGV: limit, window start, window end, now, TTL ms. A window that has ended is replaced by the
// one given; a refused call is not counted. Returns allowed (1/0), the count, the window's end.
const CALENDAR = `
local saved = redis.call('HMGET', KEYS[1], 'start', 'end', 'count')
local start, stop, count = tonumber(saved[1]), tonumber(saved[2]), tonumber(saved[3])
if not stop or tonumber(ARGV[4]) >= stop then start, stop, count = tonumber(ARGV[2]), tonumber(ARGV[3]), 0 end
if count >= tonumber(ARGV[1]) then return { 0, count, stop } end
redis.call('HSET', KEYS[1], 'start', start, 'end', stop, 'count', count + 1)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return { 1, count + 1, stop }
`;

// ARGV: limit, size, now, TTL ms. Two fixed windows weigh as CounterTable.consumeRolling weighs
// them (the same floating-point steps); `now` is an integer, so the window's start is one. Returns allowed (1/0), the current window's count before
// this call, the previous window's count, the current window's start.
const ROLLING = `
local limit, size, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local start = now - (now % size)
local saved = redis.call('HMGET', KEYS[1], 'start', 'count', 'previous')
local savedStart, count, previous = tonumber(saved[1]), tonumber(saved[2]) or 0, tonumber(saved[3]) or 0
-- An instance whose clock is behind counts in the newest window, never back in an older one.
if savedStart and start < savedStart then start = savedStart end
if savedStart ~= start then
  if savedStart == start - size then previous = count else previous = 0 end
  count = 0
end
local used = math.ceil(previous * (1 - (now - start) / size) - 1e-9) + count
if used >= limit then return { 0, count, previous, start } end
redis.call('HSET', KEYS[1], 'start', start, 'count', count + 1, 'previous', previous)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { 1, count, previous, start }
`;

// ARGV: interval ms (fractional), burst, now. GCRA on the key's theoretical arrival time, kept
// with every digit of the double. Returns allowed (1/0) and, refused, the wait in ms (a string:
// Redis would cut a fraction off a number).
const SPIKE = `
local interval, now = tonumber(ARGV[1]), tonumber(ARGV[3])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
if tat - tolerance > now then return { 0, string.format('%.17g', tat - tolerance - now) } end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.17g', next), 'PX', math.ceil(next - now) + 1000)
return { 1, '0' }
`;

// ARGV: how long hours are kept, then hour/count pairs. When an hour is new, the hours a week
// older than it go: an app that is never quiet for a week would otherwise keep every hour.
const ADD_USAGE = `
local kept, newest = tonumber(ARGV[1]), nil
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then newest = math.max(newest or 0, tonumber(ARGV[i])) end
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
if newest then
  for _, hour in ipairs(redis.call('HKEYS', KEYS[1])) do
    if tonumber(hour) < newest - kept then redis.call('HDEL', KEYS[1], hour) end
  end
end
redis.call('PEXPIRE', KEYS[1], kept)
return 1
`;

const PASS: SpikeResult = Object.freeze({ allowed: true, retryAfterMs: 0 });

export class RedisCounters implements Counters {
  readonly #db: RedisDb;
  readonly #calendar: Script;
  readonly #rolling: Script;
  readonly #spike: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#calendar = db.script('gatewayQuotaCalendar', 1, CALENDAR);
    this.#rolling = db.script('gatewayQuotaRolling', 1, ROLLING);
    this.#spike = db.script('gatewaySpikeArrest', 1, SPIKE);
  }

  async consumeQuota(key: string, limit: number, windowOf: WindowOf, now: number): Promise<QuotaResult> {
    const w = windowOf(now);
    // Kept one interval past its end, as the table keeps a window a rolling quota may read.
    const ttl = Math.max(1, w.end - now) + (w.end - w.start);
    const [allowed, count, end] = (await this.#calendar([quotaKey(key)], [limit, w.start, w.end, now, ttl])) as [number, number, number];
    return allowed === 1 ? { allowed: true, limit, remaining: limit - count, resetAt: end, retryAt: end } : { allowed: false, limit, remaining: 0, resetAt: end, retryAt: end };
  }

  async consumeRolling(key: string, limit: number, size: number, now: number): Promise<QuotaResult> {
    const [allowed, count, previous, start] = (await this.#rolling([quotaKey(key)], [limit, size, now, 2 * size])) as [number, number, number, number];
    const end = start + size;
    if (allowed !== 1) return { allowed: false, limit, remaining: 0, resetAt: end, retryAt: rollingRetryAt(previous, count, limit, start, size) };
    return { allowed: true, limit, remaining: limit - rollingUsed(previous, count, now, start, size) - 1, resetAt: end, retryAt: end };
  }

  async spike(key: string, intervalMs: number, burst: number, now: number): Promise<SpikeResult> {
    const [allowed, wait] = (await this.#spike([spikeKey(key)], [intervalMs, burst, now])) as [number, string];
    return allowed === 1 ? PASS : { allowed: false, retryAfterMs: Number(wait) };
  }

  async used(key: string, now: number, rollingSize?: number): Promise<number> {
    const [start, end, count, previous] = (await this.#db.run(this.#db.client.hmget(quotaKey(key), 'start', 'end', 'count', 'previous'))).map((v) =>
      v === null ? undefined : Number(v),
    );
    if (start === undefined || count === undefined) return 0;
    if (rollingSize === undefined) return end !== undefined && now < end && now >= start ? count : 0;
    const current = now - (now % rollingSize);
    const inWindow = start === current ? count : 0;
    const before = start === current ? (previous ?? 0) : start === current - rollingSize ? count : 0;
    return rollingUsed(before, inWindow, now, current, rollingSize);
  }
}

export class RedisUsage implements UsageStore {
  readonly #db: RedisDb;
  readonly #add: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#add = db.script('gatewayAddUsage', 1, ADD_USAGE);
  }

  async add(counts: readonly UsageCount[]): Promise<void> {
    const byApp = new Map<string, (string | number)[]>();
    for (const c of counts) {
      let args = byApp.get(c.appId);
      if (args === undefined) byApp.set(c.appId, (args = [USAGE_KEPT_MS]));
      args.push(String(c.hour), c.count);
    }
    // Issued together, so auto-pipelining sends them in one round trip.
    await Promise.all([...byApp].map(([appId, args]) => this.#add([usageKey(appId)], args)));
  }

  async since(appId: string, fromHour: number): Promise<UsageCount[]> {
    const hours = await this.#db.run(this.#db.client.hgetall(usageKey(appId)));
    return Object.entries(hours)
      .map(([hour, count]) => ({ appId, hour: Number(hour), count: Number(count) }))
      .filter((c) => c.hour >= fromHour)
      .sort((a, b) => a.hour - b.hour);
  }

  /** The app is being deleted: its counts go with it. */
  async deleteOfApp(appId: string): Promise<void> {
    await this.#db.run(this.#db.client.del(usageKey(appId)));
  }
}
