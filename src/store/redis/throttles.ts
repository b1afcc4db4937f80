// Attempts counted against accounts on Redis: one hash per account, all under the hash tag `{t}`,
// so that one script counts an attempt against every account of a call at once, on Cluster too.
// The backoff is nextAttemptAt (src/store/port/throttles.ts), step for step.
import type { AttemptAccount, AttemptResult, ThrottleStore } from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

const accountKey = (account: string) => `{t}a:${account}`;
/** An account's count starts over a day after its last attempt at the latest. */
const ATTEMPTS_KEPT_MS = 86_400_000;

// ARGV[1]: now; then per account: free, base delay, max delay, reset after, and the index (in
// KEYS) of the account it gates on only while that one is failing (0: always). Returns the time
// the attempt would pass (a string), or nothing when it was counted against every account. An
// account's key lives as long as its count can matter: until its count starts over, or its
// longest wait ends.
const COUNT = `
local now = tonumber(ARGV[1])
local counted = {}
for i = 1, #KEYS do
  local o = 1 + (i - 1) * 5
  local free, base, max, reset = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
  local saved = redis.call('HMGET', KEYS[i], 'count', 'first', 'last')
  local count, first, last = tonumber(saved[1]), tonumber(saved[2]), tonumber(saved[3])
  local retry = nil
  if count == nil or now - last >= reset then
    count, first = 0, now
  elseif count >= free then
    retry = last + math.min(max, base * 2 ^ math.min(count - free, 52))
  end
  counted[i] = { count = count, first = first, retry = retry, gate = tonumber(ARGV[o + 5]) }
end
local retryAt = nil
for i = 1, #KEYS do
  local c = counted[i]
  if (c.gate == 0 or counted[c.gate].count > 0) and c.retry and (retryAt == nil or c.retry > retryAt) then retryAt = c.retry end
end
if retryAt and retryAt > now then return string.format('%.17g', retryAt) end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 'count', counted[i].count + 1, 'first', counted[i].first, 'last', now)
  local o = 1 + (i - 1) * 5
  redis.call('PEXPIRE', KEYS[i], math.min(${ATTEMPTS_KEPT_MS}, math.max(tonumber(ARGV[o + 4]), tonumber(ARGV[o + 3]))))
end
return false
`;

const TAKE_BACK = `
local count = redis.call('HGET', KEYS[1], 'count')
if count then redis.call('HSET', KEYS[1], 'count', math.max(tonumber(count) - 1, 0)) end
return 1
`;

export class RedisThrottles implements ThrottleStore {
  readonly #db: RedisDb;
  readonly #count: Script;
  readonly #takeBack: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#count = db.script(COUNT);
    this.#takeBack = db.script(TAKE_BACK);
  }

  async countAttempts(accounts: readonly AttemptAccount[], now: number): Promise<AttemptResult> {
    const gates = accounts.map(({ gatesOnlyIfFailing: other }) => {
      if (other === undefined) return 0;
      const at = accounts.findIndex((a) => a.account === other);
      if (at === -1) throw new TypeError(`gatesOnlyIfFailing: '${other}' is not an account of this call`);
      return at + 1;
    });
    const args = accounts.flatMap(({ rule }, i) => [rule.free, rule.baseDelayMs, rule.maxDelayMs, rule.resetAfterMs, gates[i]!]);
    const retryAt = (await this.#count(
      accounts.map((a) => accountKey(a.account)),
      [now, ...args],
    )) as string | null;
    return retryAt === null ? { allowed: true } : { allowed: false, retryAt: Number(retryAt) };
  }

  async clearLoginFailures(account: string): Promise<void> {
    await this.#db.run(this.#db.client.del(accountKey(account)));
  }

  async takeBackLoginFailure(account: string): Promise<void> {
    await this.#takeBack([accountKey(account)], []);
  }
}
