// Quota and spike-arrest counts and hourly usage on Redis. Each count is one key and the checks
// of a call one script, so a limit holds exactly across every instance. The script decides; the
// figures of the answer (remaining, reset, retry) are worked out here with the formulas the
// in-memory table uses (src/store/counter-table.ts), from what the script saw. Time is always
// the caller's `now`; a key's TTL is relative (it only cleans up).
import { rollingRetryAt, rollingUsed, type CounterCheck, type CounterResult, type Counters, type SpikeResult, type UsageCount, type UsageStore } from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

const quotaKey = (key: string) => `q:${key}`;
const spikeKey = (key: string) => `s:${key}`;
const usageKey = (appId: string) => `u:${appId}`;
/** Hourly usage is kept a week; the portal shows the last 24 hours. */
const USAGE_KEPT_MS = 7 * 86_400_000;

// KEYS: one per check. ARGV: now, then five per check: its kind (c: calendar, r: rolling, s:
// spike) and up to four parameters. The checks run in order and stop at the first refused.
// Returns one answer per check made:
// - calendar (limit, window start, window end, TTL ms): a window that has ended is replaced by
//   the one given; a refused call is not counted. Answers allowed (1/0), the count, the window's end.
// - rolling (limit, size): two fixed windows weigh as CounterTable.consumeRolling weighs them
//   (the same floating-point steps); `now` is an integer, so the window's start is one. Answers
//   allowed (1/0), the current window's count before this call, the previous window's count,
//   the current window's start.
// - spike (interval ms, fractional; burst): GCRA on the key's theoretical arrival time, kept with
//   every digit of the double. Answers allowed (1/0) and, refused, the wait in ms (a string:
//   Redis would cut a fraction off a number).
const COUNT = `
local function calendar(key, limit, from, to, now, ttl)
  local saved = redis.call('HMGET', key, 'start', 'end', 'count')
  local start, stop, count = tonumber(saved[1]), tonumber(saved[2]), tonumber(saved[3])
  if not stop or now >= stop then start, stop, count = from, to, 0 end
  if count >= limit then return { 0, count, stop } end
  redis.call('HSET', key, 'start', start, 'end', stop, 'count', count + 1)
  redis.call('PEXPIRE', key, ttl)
  return { 1, count + 1, stop }
end

local function rolling(key, limit, size, now)
  local start = now - (now % size)
  local saved = redis.call('HMGET', key, 'start', 'count', 'previous')
  local savedStart, count, previous = tonumber(saved[1]), tonumber(saved[2]) or 0, tonumber(saved[3]) or 0
  -- An instance whose clock is behind counts in the newest window, never back in an older one.
  if savedStart and start < savedStart then start = savedStart end
  if savedStart ~= start then
    if savedStart == start - size then previous = count else previous = 0 end
    count = 0
  end
  local used = math.ceil(previous * (1 - (now - start) / size) - 1e-9) + count
  if used >= limit then return { 0, count, previous, start } end
  redis.call('HSET', key, 'start', start, 'count', count + 1, 'previous', previous)
  redis.call('PEXPIRE', key, 2 * size)
  return { 1, count, previous, start }
end

local function spike(key, interval, burst, now)
  local tolerance = interval * (burst - 1)
  local tat = math.max(tonumber(redis.call('GET', key) or '0'), now)
  if tat - tolerance > now then return { 0, string.format('%.17g', tat - tolerance - now) } end
  local next = tat + interval
  redis.call('SET', key, string.format('%.17g', next), 'PX', math.ceil(next - now) + 1000)
  return { 1, '0' }
end

local now, answers = tonumber(ARGV[1]), {}
for i, key in ipairs(KEYS) do
  local at = 2 + (i - 1) * 5
  local kind, p1, p2 = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local answer
  if kind == 'c' then answer = calendar(key, p1, p2, tonumber(ARGV[at + 3]), now, ARGV[at + 4])
  elseif kind == 'r' then answer = rolling(key, p1, p2, now)
  else answer = spike(key, p1, p2, now) end
  answers[i] = answer
  if answer[1] == 0 then break end
end
return answers
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

/** A check's reply: allowed (1/0), then what its kind answers (see COUNT). */
type Reply = readonly unknown[];

/** A check's answer from what the script saw, with the formulas the in-memory table uses. */
function answer(check: CounterCheck, reply: Reply, now: number): CounterResult {
  switch (check.kind) {
    case 'calendar': {
      const { limit } = check;
      const [allowed, count, end] = reply as [number, number, number];
      return allowed === 1 ? { allowed: true, limit, remaining: limit - count, resetAt: end, retryAt: end } : { allowed: false, limit, remaining: 0, resetAt: end, retryAt: end };
    }
    case 'rolling': {
      const { limit, size } = check;
      const [allowed, count, previous, start] = reply as [number, number, number, number];
      const end = start + size;
      if (allowed !== 1) return { allowed: false, limit, remaining: 0, resetAt: end, retryAt: rollingRetryAt(previous, count, limit, start, size) };
      return { allowed: true, limit, remaining: limit - rollingUsed(previous, count, now, start, size) - 1, resetAt: end, retryAt: end };
    }
    case 'spike': {
      const [allowed, wait] = reply as [number, string];
      return allowed === 1 ? PASS : { allowed: false, retryAfterMs: Number(wait) };
    }
  }
}

export class RedisCounters implements Counters {
  readonly #db: RedisDb;
  readonly #count: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#count = db.script(COUNT);
  }

  /**
   * One script for all the checks: on one call of a limited route, one round trip. On a Cluster
   * their keys may live on different nodes: each check is then a script of its own, in turn.
   */
  consume(checks: readonly CounterCheck[], now: number): Promise<CounterResult[]> {
    if (checks.length > 1 && this.#db.cluster) return this.#oneByOne(checks, now);
    const keys: string[] = [];
    const args: (string | number)[] = [now];
    for (const check of checks) {
      switch (check.kind) {
        case 'calendar': {
          const w = check.windowOf(now);
          // Kept one interval past its end, as the table keeps a window a rolling quota may read.
          keys.push(quotaKey(check.key));
          args.push('c', check.limit, w.start, w.end, Math.max(1, w.end - now) + (w.end - w.start));
          break;
        }
        case 'rolling':
          keys.push(quotaKey(check.key));
          args.push('r', check.limit, check.size, '', '');
          break;
        case 'spike':
          keys.push(spikeKey(check.key));
          args.push('s', check.intervalMs, check.burst, '', '');
          break;
      }
    }
    return this.#count(keys, args).then((replies) => (replies as Reply[]).map((reply, i) => answer(checks[i]!, reply, now)));
  }

  async #oneByOne(checks: readonly CounterCheck[], now: number): Promise<CounterResult[]> {
    const results: CounterResult[] = [];
    for (const check of checks) {
      const [result] = await this.consume([check], now);
      results.push(result!);
      if (!result!.allowed) break;
    }
    return results;
  }

  async used(key: string, now: number, rollingSize?: number): Promise<number> {
    const [start, end, count, previous] = (await this.#db.run(this.#db.client.hmget(quotaKey(key), 'start', 'end', 'count', 'previous'))).map((v) => (v === null ? undefined : Number(v)));
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
    this.#add = db.script(ADD_USAGE);
  }

  async add(counts: readonly UsageCount[]): Promise<void> {
    const byApp = new Map<string, (string | number)[]>();
    for (const c of counts) {
      let args = byApp.get(c.appId);
      if (args === undefined) {
        args = [USAGE_KEPT_MS];
        byApp.set(c.appId, args);
      }
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
