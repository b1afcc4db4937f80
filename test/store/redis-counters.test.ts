// What only the Redis driver's counters have: a server that can be down, and keys that expire by
// themselves. The counting itself is the store contract's (test/store/contract/counters.ts).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { StoreUnavailable, USAGE_KEPT_MS, type WindowOf } from '../../src/store/port/index.ts';
import { RedisCounters, RedisUsage } from '../../src/store/redis/counters.ts';
import { RedisDb } from '../../src/store/redis/db.ts';
import { RedisThrottles } from '../../src/store/redis/throttles.ts';
import { hasRedis, startRedis, startRedisCluster, type RedisServer } from '../redis-server.ts';
import { consumeQuota, consumeRolling, spike } from './contract/counters.ts';
import { use } from './contract/fixture.ts';

const skip = !hasRedis() && 'redis-server is not installed';
const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const DAY = 86_400_000;
/** An hour's start, as usage is counted by. */
const HOUR0 = T0 - (T0 % 3_600_000);
const minute: WindowOf = (now) => {
  const start = now - (now % MINUTE);
  return { start, end: start + MINUTE };
};
/** Longer than any wait this file expects: a call that has not settled by then hangs. */
const BOUND_MS = 5_000;

async function withRedis(fn: (server: RedisServer, db: RedisDb) => Promise<void>): Promise<void> {
  const server = await startRedis();
  const db = new RedisDb({ connection: { kind: 'server', url: server.url }, keyPrefix: 'test:', timeoutMs: 500 });
  try {
    await fn(server, db);
  } finally {
    await db.close();
    await server.close();
  }
}

/** How `promise` settles, or 'pending' when it has not within the bound. */
async function settled(promise: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise((resolve) => (timer = setTimeout(resolve, BOUND_MS, 'pending')));
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (err: unknown) => err,
      ),
      bound,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('RedisCounters', { skip }, () => {
  it('rejects with StoreUnavailable while Redis is down, without hanging, and counts again once it is back, on the same connection', async () => {
    await withRedis(async (server, db) => {
      const counters = new RedisCounters(db);
      assert.deepEqual(await consumeQuota(counters, 'quota|a', 5, minute, T0), { allowed: true, limit: 5, remaining: 4, resetAt: T0 + 40_000, retryAt: T0 + 40_000 });
      await server.stop();
      const down = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 1));
      assert.ok(down instanceof StoreUnavailable, `rejected with StoreUnavailable, got ${String(down)}`);
      await server.start();
      // Until the client has reconnected (its next attempt is at most a second away), calls fail as above.
      const deadline = Date.now() + BOUND_MS;
      let back: unknown = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 2));
      while (back instanceof StoreUnavailable && Date.now() < deadline) {
        await sleep(50);
        back = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 2));
      }
      // The restarted server kept nothing (no persistence), its scripts included: they are loaded again.
      assert.deepEqual(back, { value: { allowed: true, limit: 5, remaining: 4, resetAt: T0 + 40_000, retryAt: T0 + 40_000 } });
      assert.deepEqual(await spike(counters, 'spike|a', 100, 1, T0), { allowed: true, retryAfterMs: 0, refillMs: 100 });
    });
  });

  it('on a Cluster: rejects with StoreUnavailable while no node is up, without hanging or counting later, and counts again once they are back', async () => {
    const cluster = await startRedisCluster();
    const db = new RedisDb({ connection: { kind: 'cluster', urls: cluster.seeds.map((s) => `redis://127.0.0.1:${s.port}`) }, keyPrefix: 'test:', timeoutMs: 500 });
    try {
      const counters = new RedisCounters(db);
      assert.deepEqual(await consumeQuota(counters, 'quota|a', 5, minute, T0), { allowed: true, limit: 5, remaining: 4, resetAt: T0 + 40_000, retryAt: T0 + 40_000 });
      await Promise.all(cluster.nodes.map((node) => node.stop()));
      for (let i = 0; i < 2; i++) {
        const down = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 1));
        assert.ok(down instanceof StoreUnavailable, `rejected with StoreUnavailable, got ${String(down)}`);
      }
      await Promise.all(cluster.nodes.map((node) => node.start()));
      const deadline = Date.now() + BOUND_MS;
      let back: unknown = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 2));
      while (back instanceof StoreUnavailable && Date.now() < deadline) {
        await sleep(50);
        back = await settled(consumeQuota(counters, 'quota|a', 5, minute, T0 + 2));
      }
      // The nodes kept nothing: a count of 1 shows that the calls refused while they were down were not sent once they were back.
      assert.deepEqual(back, { value: { allowed: true, limit: 5, remaining: 4, resetAt: T0 + 40_000, retryAt: T0 + 40_000 } });
    } finally {
      await db.close();
      await cluster.close();
    }
  });

  it('every key it writes expires: a quota window one window after its end, an arrival time once passed, usage and its index after USAGE_KEPT_MS, attempts after a day', async () => {
    await withRedis(async (_server, db) => {
      const counters = new RedisCounters(db);
      await consumeQuota(counters, 'quota|calendar', 5, minute, T0);
      await consumeRolling(counters, 'quota|rolling', 5, MINUTE, T0);
      await spike(counters, 'spike|a', 1000 / 30, 3, T0);
      await new RedisUsage(db).add([use('app-1', 'list', '2xx', HOUR0, 1)]);
      await new RedisThrottles(db).countAttempts([{ account: 'a@example.com', rule: { free: 1, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: DAY } }], T0);
      // Each time to live as set, less the milliseconds since (well under a second): a calendar
      // window one window past its end, a rolling one two windows, an arrival time a second past.
      const expected = {
        'q:quota|calendar': 40_000 + MINUTE,
        'q:quota|rolling': 2 * MINUTE,
        's:spike|a': 34 + 1000,
        'u:{app-1}': USAGE_KEPT_MS,
        [`u:{app-1}:${HOUR0}`]: USAGE_KEPT_MS,
        '{uh}:hours': USAGE_KEPT_MS,
        [`{uh}:${HOUR0}`]: USAGE_KEPT_MS,
        '{t}a:a@example.com': DAY,
      };
      for (const [key, ttl] of Object.entries(expected)) {
        const left = await db.client.pttl(key);
        assert.ok(left <= ttl && left > ttl - 1000, `${key}: ${left} ms left of ${ttl}`);
      }
    });
  });

  it("since adds in an app's hourly totals counted before routes and status classes were; a report leaves them out; deleting the app deletes them", async () => {
    await withRedis(async (_server, db) => {
      const usage = new RedisUsage(db);
      await db.client.hset('u:app-1', String(HOUR0), '4', String(HOUR0 + 3_600_000), '1');
      await usage.add([use('app-1', 'list', '2xx', HOUR0, 3)]);
      assert.deepEqual(await usage.since('app-1', HOUR0), [
        { hour: HOUR0, count: 7 },
        { hour: HOUR0 + 3_600_000, count: 1 },
      ]);
      assert.deepEqual(await usage.report({ fromHour: HOUR0, toHour: HOUR0 + 2 * 3_600_000 }), [use('app-1', 'list', '2xx', HOUR0, 3)]);
      await usage.deleteOfApp('app-1');
      assert.deepEqual(await usage.since('app-1', 0), []);
      assert.deepEqual(await db.client.keys('*'), ['test:{uh}:hours'], 'only the index of hours is left, which names no app');
    });
  });
});
