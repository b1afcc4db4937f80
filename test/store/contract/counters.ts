// The store contract, Counters and UsageStore: quota and spike-arrest counts, as the in-memory
// table counts them (src/store/counter-table.ts, the reference), exact when many calls come at
// once; and usage per app, route, status class and hour.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { CounterTable } from '../../../src/store/counter-table.ts';
import { spikeRemaining, type CounterResult, type Counters, type QuotaResult, type SpikeResult, type UsageCount, type WindowOf } from '../../../src/store/port/index.ts';
import { HOUR, MINUTE, T0, inBucket, itWithStore, use, type OpenStore } from './fixture.ts';

const minute: WindowOf = (now) => ({ start: now - (now % MINUTE), end: now - (now % MINUTE) + MINUTE });

/** The start of an hour (T0 is not one): usage is counted by the hours' starts. */
const H0 = T0 - (T0 % HOUR);

// One check made alone, through Counters.consume.
const first = async (results: CounterResult[] | Promise<CounterResult[]>) => (await results)[0]!;
export const consumeQuota = (c: Counters, key: string, limit: number, windowOf: WindowOf, now: number) => first(c.consume([{ kind: 'calendar', key, limit, windowOf }], now)) as Promise<QuotaResult>;
export const consumeRolling = (c: Counters, key: string, limit: number, size: number, now: number) => first(c.consume([{ kind: 'rolling', key, limit, size }], now)) as Promise<QuotaResult>;
export const spike = (c: Counters, key: string, intervalMs: number, burst: number, now: number) => first(c.consume([{ kind: 'spike', key, intervalMs, burst }], now)) as Promise<SpikeResult>;

/** The same calls made on the store's counters and on a fresh reference table give the same answers. */
async function sameAsTable(counters: Counters, calls: ((c: Counters) => unknown)[]): Promise<void> {
  const table = new CounterTable({ slots: 64 });
  for (const [i, call] of calls.entries()) assert.deepEqual(await call(counters), await call(table), `call ${i}`);
}

export function countersContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('usage', () => {
    it("adds calls across adds, per app, route, status class and hour; since sums an app's routes and classes per hour", async ({ store }) => {
      await store.usage.add([use('a', 'list', '2xx', H0, 2), use('a', 'list', '4xx', H0, 1), use('a', 'get', '2xx', H0 + HOUR, 1), use('b', 'list', '2xx', H0, 5)]);
      await store.usage.add([use('a', 'list', '2xx', H0, 3)]);
      await store.usage.add([]);
      assert.deepEqual(await store.usage.since('a', H0), [
        { hour: H0, count: 6 },
        { hour: H0 + HOUR, count: 1 },
      ]);
      assert.deepEqual(await store.usage.since('a', H0 + 1), [{ hour: H0 + HOUR, count: 1 }]);
      assert.deepEqual(await store.usage.since('b', 0), [{ hour: H0, count: 5 }]);
      assert.deepEqual(await store.usage.since('c', 0), []);
      assert.deepEqual(await store.usage.report({ fromHour: H0, toHour: H0 + HOUR, appId: 'a' }), [use('a', 'list', '2xx', H0, 5), use('a', 'list', '4xx', H0, 1)]);
    });

    it("durations: each count's buckets added across adds, bucket by bucket, and reported with it", async ({ store }) => {
      const spread = [1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
      await store.usage.add([use('a', 'list', '2xx', H0, 4, 'orders', spread), use('a', 'list', '5xx', H0, 1, 'orders', inBucket(9, 1))]);
      await store.usage.add([use('a', 'list', '2xx', H0, 2, 'orders', inBucket(2, 2))]);
      assert.deepEqual(await store.usage.report({ fromHour: H0, toHour: H0 + HOUR }), [
        use('a', 'list', '2xx', H0, 6, 'orders', [1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        use('a', 'list', '5xx', H0, 1, 'orders', inBucket(9, 1)),
      ]);
      assert.deepEqual(await store.usage.report({ fromHour: H0, toHour: H0 + HOUR, appId: 'a', route: 'list', product: 'orders' }), await store.usage.report({ fromHour: H0, toHour: H0 + HOUR }));
    });

    it('report: by hour, app id, route and status class; the hours from fromHour up to toHour; narrowed by app, product and route', async ({ store }) => {
      // Added out of order, over three hours, two products, and route names as the gateway has them (an OAuth endpoint's is its path).
      const counts = [
        use('b', 'orders:list', '5xx', H0 + 2 * HOUR, 1),
        use('b', '/oauth2/token', '2xx', H0, 4, 'billing'),
        use('a', 'orders:list', '4xx', H0, 2),
        use('a', 'orders:get', '2xx', H0 + HOUR, 7),
        use('a', 'orders:list', '2xx', H0, 3),
        use('b', 'orders:list', '2xx', H0, 1, 'billing'),
        use('a', '/oauth2/token', '4xx', H0 + 2 * HOUR, 1),
        use('c', 'orders:list', '2xx', H0 + 3 * HOUR, 9),
        use('c', 'orders:list', '2xx', H0 - HOUR, 9),
      ];
      await store.usage.add(counts.slice(0, 4));
      await store.usage.add(counts.slice(4));
      const [b5, bToken, a4, aGet, a2, bList, aToken] = counts as [UsageCount, UsageCount, UsageCount, UsageCount, UsageCount, UsageCount, UsageCount];
      const hours = { fromHour: H0, toHour: H0 + 3 * HOUR };
      assert.deepEqual(await store.usage.report(hours), [a2, a4, bToken, bList, aGet, aToken, b5]);
      assert.deepEqual(await store.usage.report({ fromHour: H0 + HOUR, toHour: H0 + 2 * HOUR }), [aGet], 'toHour is not included');
      assert.deepEqual(await store.usage.report({ ...hours, appId: 'a' }), [a2, a4, aGet, aToken]);
      assert.deepEqual(await store.usage.report({ ...hours, product: 'billing' }), [bToken, bList]);
      assert.deepEqual(await store.usage.report({ ...hours, route: 'orders:list' }), [a2, a4, bList, b5]);
      assert.deepEqual(await store.usage.report({ ...hours, appId: 'b', product: 'orders', route: 'orders:list' }), [b5]);
      assert.deepEqual(await store.usage.report({ ...hours, appId: 'nobody' }), []);
      assert.deepEqual(await store.usage.report({ fromHour: H0, toHour: H0 }), []);
    });
  });

  describe('counters', () => {
    it('calendar quota: counts to the limit, refuses without counting, opens a new window when the old one ends', async ({ store }) => {
      const q = (now: number) => (c: Counters) => consumeQuota(c, 'q', 3, minute, now);
      await sameAsTable(store.counters, [q(T0), q(T0 + 1), q(T0 + 2), q(T0 + 3), q(T0 + MINUTE - 1), q(T0 + MINUTE), q(T0 + MINUTE + 5)]);
      const end = minute(T0).end;
      assert.deepEqual(await consumeQuota(store.counters, 'fresh', 1, minute, T0), { allowed: true, limit: 1, remaining: 0, resetAt: end, retryAt: end });
      assert.deepEqual(await consumeQuota(store.counters, 'fresh', 1, minute, T0), { allowed: false, limit: 1, remaining: 0, resetAt: end, retryAt: end });
      assert.equal((await consumeQuota(store.counters, 'other', 3, minute, T0 + MINUTE + 6)).remaining, 2, 'another key counts apart');
    });

    it('rolling quota: the previous window weighs by how much of it is still inside; retryAt as the table says', async ({ store }) => {
      const r =
        (now: number, limit = 10) =>
        (c: Counters) =>
          consumeRolling(c, 'r', limit, MINUTE, now);
      const calls = [...Array.from({ length: 8 }, (_, i) => r(T0 + 1000 * i)), r(T0 + MINUTE + 100), r(T0 + MINUTE + 200), r(T0 + MINUTE + 300), r(T0 + MINUTE + 30_000)];
      calls.push(...Array.from({ length: 6 }, (_, i) => r(T0 + MINUTE + 30_001 + i)), r(T0 + 3 * MINUTE), r(T0 + 3 * MINUTE + 1, 1), r(T0 + 3 * MINUTE + 2, 1));
      await sameAsTable(store.counters, calls);
    });

    it('spike arrest (GCRA): a burst at once, then one call per interval, with the wait of a refused one', async ({ store }) => {
      const s =
        (now: number, interval = 1000 / 30, burst = 3) =>
        (c: Counters) =>
          spike(c, 's', interval, burst, now);
      await sameAsTable(store.counters, [s(T0), s(T0), s(T0), s(T0), s(T0 + 10), s(T0 + 34), s(T0 + 35), s(T0 + 200), s(T0 + 200.5)]);
      assert.deepEqual(await spike(store.counters, 'one', 60_000, 1, T0), { allowed: true, retryAfterMs: 0, refillMs: 60_000 });
      assert.deepEqual(await spike(store.counters, 'one', 60_000, 1, T0 + 1000), { allowed: false, retryAfterMs: 59_000, refillMs: 59_000 });
    });

    it("spike arrest: how many calls the burst still admits (the RateLimit header's r), down to 0 and back as it refills", async ({ store }) => {
      const interval = 250;
      const left = async (now: number) => {
        const result = await spike(store.counters, 'left', interval, 3, now);
        return [result.allowed, spikeRemaining(result, interval, 3), result.refillMs];
      };
      assert.deepEqual(await left(T0), [true, 2, interval]);
      assert.deepEqual(await left(T0), [true, 1, 2 * interval]);
      assert.deepEqual(await left(T0), [true, 0, 3 * interval]);
      assert.deepEqual(await left(T0), [false, 0, 3 * interval]);
      // One interval later one call has come back, and is used.
      assert.deepEqual(await left(T0 + interval), [true, 0, 3 * interval]);
      assert.deepEqual(await left(T0 + 10_000), [true, 2, interval]);
    });

    it('used: what a key has counted now, without counting', async ({ store }) => {
      await sameAsTable(store.counters, [
        (c) => c.used('u', T0),
        (c) => consumeQuota(c, 'u', 5, minute, T0),
        (c) => consumeQuota(c, 'u', 5, minute, T0 + 1),
        (c) => c.used('u', T0 + 2),
        (c) => c.used('u', T0 + MINUTE),
        (c) => consumeRolling(c, 'ru', 5, MINUTE, T0),
        (c) => consumeRolling(c, 'ru', 5, MINUTE, T0 + 1),
        (c) => c.used('ru', T0 + MINUTE + 30_000, MINUTE),
        (c) => c.used('ru', T0 + 3 * MINUTE, MINUTE),
      ]);
    });

    it('checks made as one, in order: the first refused stops them, and a check after it counts nothing', async ({ store }) => {
      const both = (now: number) => (c: Counters) =>
        c.consume(
          [
            { kind: 'calendar', key: 'bq', limit: 2, windowOf: minute },
            { kind: 'spike', key: 'bs', intervalMs: 1000, burst: 1 },
          ],
          now,
        );
      const rolling = (now: number) => (c: Counters) =>
        c.consume(
          [
            { kind: 'spike', key: 'bs2', intervalMs: 1000, burst: 2 },
            { kind: 'rolling', key: 'br', limit: 5, size: MINUTE },
          ],
          now,
        );
      await sameAsTable(store.counters, [
        both(T0),
        both(T0 + 1),
        both(T0 + 1001),
        (c) => spike(c, 'bs', 1000, 1, T0 + 1001),
        rolling(T0),
        rolling(T0),
        rolling(T0),
        (c) => c.used('br', T0 + 1, MINUTE),
      ]);
      const end = minute(T0).end;
      assert.deepEqual(await both(T0 + 2)(store.counters), [{ allowed: false, limit: 2, remaining: 0, resetAt: end, retryAt: end }], 'the quota refused: the spike arrest is not checked');
      assert.deepEqual(await spike(store.counters, 'bs', 1000, 1, T0 + 2002), { allowed: true, retryAfterMs: 0, refillMs: 1000 }, 'the arrival time moved once, for the one call both passed');
      assert.deepEqual(await store.counters.consume([], T0), []);
    });

    it('exact under concurrency: of N + 30 calls at once, N pass, for a quota, a rolling quota and a spike burst', async ({ store }) => {
      const N = 25;
      const passed = async (call: () => unknown) => (await Promise.all(Array.from({ length: N + 30 }, () => call() as Promise<{ allowed: boolean }>))).filter((r) => r.allowed).length;
      assert.equal(await passed(() => consumeQuota(store.counters, 'c', N, minute, T0)), N);
      assert.equal(await passed(() => consumeRolling(store.counters, 'cr', N, MINUTE, T0)), N);
      assert.equal(await passed(() => spike(store.counters, 'cs', 1000, N, T0)), N);
      // A spike burst, then a quota, as one: the N the burst admits are counted by the quota, the 30 it refuses are not.
      const pair = () =>
        store.counters.consume(
          [
            { kind: 'spike', key: 'ps', intervalMs: 1000, burst: N },
            { kind: 'calendar', key: 'pq', limit: 1000, windowOf: minute },
          ],
          T0,
        );
      const answers = await Promise.all(Array.from({ length: N + 30 }, pair));
      assert.equal(answers.filter((a) => a.length === 2 && a.every((r) => r.allowed)).length, N);
      assert.equal(await store.counters.used('pq', T0), N);
    });
  });
}
