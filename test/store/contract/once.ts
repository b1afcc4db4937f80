// The store contract, OnceStore: single-use ids, spent once across every instance sharing the store.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { MINUTE, T0, hash, itWithStore, type OpenStore } from './fixture.ts';

export function onceContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('once', () => {
    it('spends a single-use id once: of ten tries at once one wins, and it stays spent until it expires, through a purge and a reopening', async ({ store, opened }) => {
      const id = hash();
      const expiresAt = T0 + 2 * MINUTE;
      const tries = await Promise.all(Array.from({ length: 10 }, () => store.once.spendOnce(id, T0, expiresAt)));
      assert.equal(tries.filter((won) => won).length, 1, String(tries));
      assert.equal(await store.once.spendOnce(id, T0 + MINUTE, expiresAt), false, 'spent');
      assert.equal(await store.once.spendOnce(hash(), T0 + MINUTE, expiresAt), true, 'another id');
      await store.purgeExpired(T0 + MINUTE);
      assert.equal(await store.once.spendOnce(id, T0 + MINUTE, expiresAt), false, 'a purge keeps what has not expired');
      if (opened.reopen === undefined) return;
      await store.close();
      const reopened = await opened.reopen();
      assert.equal(await reopened.once.spendOnce(id, T0 + MINUTE, expiresAt), false, 'remembered by the store, not the process');
    });
  });
}
