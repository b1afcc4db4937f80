// Quota and spike-arrest counts, and usage per app, route, status class and hour, on Redis. Each
// count is one key and the checks of a call one script, so a limit holds exactly across every instance. The script decides; the
// figures of the answer (remaining, reset, retry) are worked out here with the formulas the
// in-memory table uses (src/store/counter-table.ts), from what the script saw. Time is always
// the caller's `now`; a key's TTL is relative (it only cleans up).
import {
  rollingRetryAt,
  rollingUsed,
  type CounterCheck,
  type CounterResult,
  type Counters,
  type HourCount,
  type StatusClass,
  type UsageCount,
  type UsageFilter,
  type UsageStore,
  LATENCY_BUCKETS,
  USAGE_KEPT_MS,
} from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

const quotaKey = (key: string) => `q:${key}`;
const spikeKey = (key: string) => `s:${key}`;

// Usage: an app's keys share the hash tag of its id, so that one script adds its counts on a
// Cluster too; the index of which apps have counts in which hour is under `{uh}`, so that a
// report reads the hours it covers and never scans the keyspace.
/** An app's calls per hour, every route and status class together (hour → calls): what `since` reads, and the hours the app has rows in. */
const totalsKey = (appId: string) => `u:{${appId}}`;
/** An app's rows of one hour: `c:<status class>:<route>` → calls, `p:<status class>:<route>` → the calls' product. */
const rowsKey = (appId: string, hour: number | string) => `u:{${appId}}:${hour}`;
/** The hours with counts, a sorted set by hour. */
const HOURS_KEY = '{uh}:hours';
/** The apps with counts in one hour, a set. */
const appsInKey = (hour: number | string) => `{uh}:${hour}`;
/**
 * An app's hourly totals as counted before routes and status classes were: `since` adds them in,
 * a report leaves them out, and they expire USAGE_KEPT_MS after the upgrade at the latest.
 */
const legacyKey = (appId: string) => `u:${appId}`;

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
//   every digit of the double. Answers allowed (1/0), the wait in ms of a refused call (0 when
//   allowed), and the TAT's lead over now after the call (strings: Redis would cut a fraction off
//   a number).
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
  if tat - tolerance > now then return { 0, string.format('%.17g', tat - tolerance - now), string.format('%.17g', tat - now) } end
  local next = tat + interval
  redis.call('SET', key, string.format('%.17g', next), 'PX', math.ceil(next - now) + 1000)
  return { 1, '0', string.format('%.17g', next - now) }
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

// KEYS[1]: the app's totals; then its rows of each hour counted. ARGV[1]: how long hours are
// kept; then six per count: the index in KEYS of its rows, its hour, its field (status class and
// route), its product, its calls, and their durations (the buckets with calls, as bucket=count
// pairs joined by commas: 'l<bucket>:' fields). When an hour is new, the hours older than it by
// more than that go from the totals (an app that is never quiet for so long would otherwise keep
// every hour there); a key of rows expires that long after its last count.
const ADD_USAGE = `
local kept, newest = tonumber(ARGV[1]), nil
for i = 2, #ARGV, 6 do
  local rows, hour, field, count = KEYS[tonumber(ARGV[i])], ARGV[i + 1], ARGV[i + 2], ARGV[i + 4]
  redis.call('HINCRBY', rows, 'c:' .. field, count)
  redis.call('HSET', rows, 'p:' .. field, ARGV[i + 3])
  for bucket, calls in string.gmatch(ARGV[i + 5], '(%d+)=(%d+)') do
    redis.call('HINCRBY', rows, 'l' .. bucket .. ':' .. field, calls)
  end
  if redis.call('HEXISTS', KEYS[1], hour) == 0 then newest = math.max(newest or 0, tonumber(hour)) end
  redis.call('HINCRBY', KEYS[1], hour, count)
end
if newest then
  for _, hour in ipairs(redis.call('HKEYS', KEYS[1])) do
    if tonumber(hour) < newest - kept then redis.call('HDEL', KEYS[1], hour) end
  end
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], kept) end
return 1
`;

// KEYS[1]: the hours; then the apps of each hour counted. ARGV[1]: how long hours are kept; then
// per hour: the hour, how many apps, and their ids. Hours older than the newest by more than that go.
const INDEX_USAGE = `
local kept, at, newest = tonumber(ARGV[1]), 2, 0
for i = 2, #KEYS do
  local hour, apps = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  redis.call('ZADD', KEYS[1], hour, ARGV[at])
  for a = at + 2, at + 1 + apps do redis.call('SADD', KEYS[i], ARGV[a]) end
  redis.call('PEXPIRE', KEYS[i], kept)
  newest = math.max(newest, hour)
  at = at + 2 + apps
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', newest - kept))
redis.call('PEXPIRE', KEYS[1], kept)
return 1
`;

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
      const [allowed, wait, refill] = reply as [number, string, string];
      return { allowed: allowed === 1, retryAfterMs: Number(wait), refillMs: Number(refill) };
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

/** One app's counts of a batch, as ADD_USAGE takes them. */
interface AppBatch {
  keys: string[];
  args: (string | number)[];
  /** The index in `keys` of each hour's rows. */
  rowsAt: Map<number, number>;
}

/** What ADD_USAGE and INDEX_USAGE take, for the counts of a batch. */
function usageBatches(counts: readonly UsageCount[]): { byApp: Map<string, AppBatch>; indexKeys: string[]; indexArgs: (string | number)[] } {
  const byApp = new Map<string, AppBatch>();
  const appsIn = new Map<number, Set<string>>();
  for (const c of counts) {
    let app = byApp.get(c.appId);
    if (app === undefined) {
      app = { keys: [totalsKey(c.appId)], args: [USAGE_KEPT_MS], rowsAt: new Map() };
      byApp.set(c.appId, app);
    }
    let at = app.rowsAt.get(c.hour);
    if (at === undefined) {
      at = app.keys.push(rowsKey(c.appId, c.hour));
      app.rowsAt.set(c.hour, at);
    }
    const latency = c.latency.flatMap((calls, b) => (calls > 0 ? [`${b}=${calls}`] : [])).join(',');
    app.args.push(at, String(c.hour), `${c.statusClass}:${c.route}`, c.product, c.count, latency);
    let apps = appsIn.get(c.hour);
    if (apps === undefined) {
      apps = new Set();
      appsIn.set(c.hour, apps);
    }
    apps.add(c.appId);
  }
  const indexKeys = [HOURS_KEY];
  const indexArgs: (string | number)[] = [USAGE_KEPT_MS];
  for (const [hour, apps] of appsIn) {
    indexKeys.push(appsInKey(hour));
    indexArgs.push(String(hour), apps.size, ...apps);
  }
  return { byApp, indexKeys, indexArgs };
}

/** The counts of an app's rows of one hour that `filter` selects. */
function rowsOf(appId: string, hour: number, fields: Record<string, string>, filter: UsageFilter): UsageCount[] {
  const counts: UsageCount[] = [];
  for (const [field, count] of Object.entries(fields)) {
    if (!field.startsWith('c:')) continue;
    // `c:2xx:<route>`: the status class has three characters, and the route is the rest, colons included.
    const statusClass = field.slice(2, 5) as StatusClass;
    const route = field.slice(6);
    const product = fields[`p:${field.slice(2)}`] ?? '';
    if ((filter.route !== undefined && route !== filter.route) || (filter.product !== undefined && product !== filter.product)) continue;
    const latency = Array.from({ length: LATENCY_BUCKETS }, (_, b) => Number(fields[`l${b}:${field.slice(2)}`] ?? 0));
    counts.push({ appId, product, route, statusClass, hour, count: Number(count), latency });
  }
  return counts;
}

/** UTF-16 order, which is SQLite's (bytes of UTF-8) for every name outside the astral planes. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The report's order: hour, app id, route, status class. */
const reportOrder = (a: UsageCount, b: UsageCount) => a.hour - b.hour || compareText(a.appId, b.appId) || compareText(a.route, b.route) || compareText(a.statusClass, b.statusClass);

export class RedisUsage implements UsageStore {
  readonly #db: RedisDb;
  readonly #add: Script;
  readonly #index: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#add = db.script(ADD_USAGE);
    this.#index = db.script(INDEX_USAGE);
  }

  async add(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    const { byApp, indexKeys, indexArgs } = usageBatches(counts);
    // The index first: a count it missed would never be reported, while an app it names whose
    // count then failed reads as no rows.
    await this.#index(indexKeys, indexArgs);
    // Issued together, so auto-pipelining sends them in one round trip.
    await Promise.all([...byApp.values()].map((app) => this.#add(app.keys, app.args)));
  }

  async since(appId: string, fromHour: number): Promise<HourCount[]> {
    const client = this.#db.client;
    const [current, legacy] = await Promise.all([this.#db.run(client.hgetall(totalsKey(appId))), this.#db.run(client.hgetall(legacyKey(appId)))]);
    const byHour = new Map<number, number>();
    for (const totals of [current, legacy]) {
      for (const [hour, count] of Object.entries(totals)) byHour.set(Number(hour), (byHour.get(Number(hour)) ?? 0) + Number(count));
    }
    return [...byHour]
      .filter(([hour]) => hour >= fromHour)
      .sort(([a], [b]) => a - b)
      .map(([hour, count]) => ({ hour, count }));
  }

  async report(filter: UsageFilter): Promise<UsageCount[]> {
    const pairs = filter.appId === undefined ? await this.#appsByHour(filter) : await this.#hoursOfApp(filter.appId, filter);
    const client = this.#db.client;
    const rows = await Promise.all(pairs.map(([appId, hour]) => this.#db.run(client.hgetall(rowsKey(appId, hour)))));
    return pairs.flatMap(([appId, hour], i) => rowsOf(appId, hour, rows[i]!, filter)).sort(reportOrder);
  }

  /** Each app with counts in each hour of the filter's, from the index. */
  async #appsByHour(filter: UsageFilter): Promise<[string, number][]> {
    const client = this.#db.client;
    const hours = (await this.#db.run(client.zrangebyscore(HOURS_KEY, filter.fromHour, `(${filter.toHour}`))).map(Number);
    const apps = await Promise.all(hours.map((hour) => this.#db.run(client.smembers(appsInKey(hour)))));
    return hours.flatMap((hour, i) => apps[i]!.map((appId): [string, number] => [appId, hour]));
  }

  /** The hours of the filter's with counts of the app, from its totals. */
  async #hoursOfApp(appId: string, filter: UsageFilter): Promise<[string, number][]> {
    const hours = (await this.#db.run(this.#db.client.hkeys(totalsKey(appId)))).map(Number);
    return hours.filter((hour) => hour >= filter.fromHour && hour < filter.toHour).map((hour) => [appId, hour]);
  }

  /** The app is being deleted: its counts go with it. */
  async deleteOfApp(appId: string): Promise<void> {
    const client = this.#db.client;
    const hours = await this.#db.run(client.hkeys(totalsKey(appId)));
    // The app's own keys share a hash slot: one DEL on a Cluster too.
    await Promise.all([
      this.#db.run(client.del(totalsKey(appId), ...hours.map((hour) => rowsKey(appId, hour)))),
      this.#db.run(client.del(legacyKey(appId))),
      ...hours.map((hour) => this.#db.run(client.srem(appsInKey(hour), appId))),
    ]);
  }
}
