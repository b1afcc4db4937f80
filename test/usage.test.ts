// The usage counted in memory (src/usage.ts): per app, route, status class and hour, added to the
// store at each flush, and kept for the next when the store fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../src/log.ts';
import type { Store, UsageCount } from '../src/store/port/index.ts';
import { HOUR_MS, startUsage } from '../src/usage.ts';
import { inBucket } from './store/contract/fixture.ts';

const H0 = 1_699_999_200_000;
const logger = createLogger('silent');

/** A store whose usage.add records each batch, and fails while `failing` is set. */
function recordingStore() {
  const batches: UsageCount[][] = [];
  const state = { failing: false };
  const store = {
    usage: {
      async add(counts: readonly UsageCount[]) {
        if (state.failing) throw new Error('the store is down');
        batches.push([...counts]);
      },
    },
  } as unknown as Store;
  return { store, batches, state };
}

const byKey = (a: UsageCount, b: UsageCount) => `${a.hour} ${a.appId} ${a.route} ${a.statusClass}`.localeCompare(`${b.hour} ${b.appId} ${b.route} ${b.statusClass}`);

test('counts per app, route, status class and hour, with the product of the last call', async () => {
  const { store, batches } = recordingStore();
  const usage = startUsage(store, logger);
  try {
    usage.count('a', 'orders', 'list', '2xx', H0, 3);
    usage.count('a', 'orders', 'list', '2xx', H0 + 1, 3);
    usage.count('a', 'orders', 'list', '4xx', H0 + 2, 3);
    usage.count('a', 'orders', 'get', '2xx', H0 + 3, 3);
    usage.count('b', 'billing', 'list', '5xx', H0 + 4, 3);
    usage.count('a', 'orders', 'list', '2xx', H0 + HOUR_MS, 3);
    usage.count('b', 'billing-v2', 'list', '5xx', H0 + HOUR_MS + 1, 3);
    usage.count('b', 'billing-v2', 'list', '5xx', H0 + HOUR_MS + 2, 3);
    await usage.flush();
    assert.equal(batches.length, 1);
    assert.deepEqual(batches[0]!.sort(byKey), [
      { appId: 'a', product: 'orders', route: 'get', statusClass: '2xx', hour: H0, count: 1, latency: inBucket(2, 1) },
      { appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0, count: 2, latency: inBucket(2, 2) },
      { appId: 'a', product: 'orders', route: 'list', statusClass: '4xx', hour: H0, count: 1, latency: inBucket(2, 1) },
      { appId: 'b', product: 'billing', route: 'list', statusClass: '5xx', hour: H0, count: 1, latency: inBucket(2, 1) },
      { appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0 + HOUR_MS, count: 1, latency: inBucket(2, 1) },
      { appId: 'b', product: 'billing-v2', route: 'list', statusClass: '5xx', hour: H0 + HOUR_MS, count: 2, latency: inBucket(2, 2) },
    ]);
    await usage.flush();
    assert.equal(batches.length, 1, 'nothing new: nothing sent');
    usage.count('a', 'orders', 'list', '2xx', H0 + HOUR_MS + 3, 3);
    await usage.flush();
    assert.deepEqual(batches[1], [{ appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0 + HOUR_MS, count: 1, latency: inBucket(2, 1) }], 'counted from zero after a flush');
  } finally {
    await usage.close();
  }
});

test('durations are counted in the buckets of LATENCY_BOUNDS_MS (up to and including each bound), per status class', async () => {
  const { store, batches } = recordingStore();
  const usage = startUsage(store, logger);
  try {
    for (const ms of [0.4, 1, 1.5, 7, 10_000, 60_000]) usage.count('a', 'orders', 'list', '2xx', H0, ms);
    usage.count('a', 'orders', 'list', '5xx', H0, 7);
    await usage.flush();
    assert.deepEqual(batches[0]!.sort(byKey), [
      { appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0, count: 6, latency: [2, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1] },
      { appId: 'a', product: 'orders', route: 'list', statusClass: '5xx', hour: H0, count: 1, latency: inBucket(3, 1) },
    ]);
  } finally {
    await usage.close();
  }
});

test('a flush the store refuses keeps its counts for the next, each sent once', async () => {
  const { store, batches, state } = recordingStore();
  const usage = startUsage(store, logger);
  try {
    usage.count('a', 'orders', 'list', '2xx', H0, 3);
    state.failing = true;
    await usage.flush();
    usage.count('a', 'orders', 'list', '2xx', H0 + 1, 3);
    state.failing = false;
    await usage.close();
    assert.deepEqual(batches, [
      [
        { appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0, count: 1, latency: inBucket(2, 1) },
        { appId: 'a', product: 'orders', route: 'list', statusClass: '2xx', hour: H0, count: 1, latency: inBucket(2, 1) },
      ],
    ]);
  } finally {
    await usage.close();
  }
});
