// The store contract, UsageStore and QuotaStore: hourly usage per app, and quota windows.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, MINUTE, T0, itWithStore, type OpenStore } from './fixture.ts';

export function countersContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('usage', () => {
    it('adds calls per app and hour, and lists them from an hour on', async ({ store }) => {
      await store.usage.add([{ appId: 'a', hour: T0, count: 2 }, { appId: 'a', hour: T0 + HOUR, count: 1 }, { appId: 'b', hour: T0, count: 5 }]);
      await store.usage.add([{ appId: 'a', hour: T0, count: 3 }]);
      assert.deepEqual(await store.usage.since('a', T0), [{ appId: 'a', hour: T0, count: 5 }, { appId: 'a', hour: T0 + HOUR, count: 1 }]);
      assert.deepEqual(await store.usage.since('a', T0 + 1), [{ appId: 'a', hour: T0 + HOUR, count: 1 }]);
      assert.deepEqual(await store.usage.since('c', 0), []);
    });
  });

  describe('quota windows', () => {
    it('saves and loads windows, overwriting by key, and purges them one interval after they end', async ({ store }) => {
      const w = (key: string, start: number, count: number, previous = 0) => ({ key, start, end: start + MINUTE, count, previous });
      await store.quotas.save([w('a', T0, 3, 7), w('b', T0, 1)]);
      await store.quotas.save([w('a', T0, 4, 7)]);
      const byKey = (list: { key: string }[]) => [...list].sort((x, y) => x.key.localeCompare(y.key));
      assert.deepEqual(byKey(await store.quotas.load(T0 + 1)), [w('a', T0, 4, 7), w('b', T0, 1)]);
      // Ended, but still the previous window of a rolling quota.
      assert.equal((await store.quotas.load(T0 + MINUTE + 1)).length, 2);
      await store.purgeExpired(T0 + 2 * MINUTE);
      assert.deepEqual(await store.quotas.load(T0), []);
    });
  });
}
