// The store contract, OnceStore and IdempotencyStore: single-use ids, spent once across every
// instance sharing the store; Idempotency-Keys, claimed once, then replayed to the same content.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, MINUTE, T0, hash, itWithStore, type OpenStore } from './fixture.ts';

/** A claim at `now` locked for a minute and remembered for an hour. */
const times = (now: number) => ({ lockedUntil: now + MINUTE, expiresAt: now + HOUR });
/** An answer's bytes as the caller gives them: any bytes, not only text. */
const BODY = Buffer.from([0x7b, 0x00, 0xff, 0x80, 0x0a, 0x7d]);

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

  describe('idempotency', () => {
    it('of ten claims of a key at once, exactly one is claimed; the others find it busy', async ({ store }) => {
      const key = hash();
      const content = hash();
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.idempotency.claim(key, content, T0, times(T0))));
      assert.deepEqual(claims.map((c) => c.kind).sort(), ['busy', 'busy', 'busy', 'busy', 'busy', 'busy', 'busy', 'busy', 'busy', 'claimed']);
      assert.deepEqual(await store.idempotency.claim(hash(), content, T0, times(T0)), { kind: 'claimed' }, 'another key');
    });

    it('the same content gets busy while claimed, then the answer stored; other content is a mismatch, claimed or done', async ({ store }) => {
      const key = hash();
      const [content, other] = [hash(), hash()];
      assert.deepEqual(await store.idempotency.claim(key, content, T0, times(T0)), { kind: 'claimed' });
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + 1, times(T0 + 1)), { kind: 'busy' });
      assert.deepEqual(await store.idempotency.claim(key, other, T0 + 1, times(T0 + 1)), { kind: 'mismatch' });
      await store.idempotency.complete(key, { status: 201, body: BODY });
      for (const at of [T0 + 2, T0 + 2 * MINUTE]) assert.deepEqual(await store.idempotency.claim(key, content, at, times(at)), { kind: 'replay', status: 201, body: BODY });
      assert.deepEqual(await store.idempotency.claim(key, other, T0 + 2, times(T0 + 2)), { kind: 'mismatch' });
      await store.idempotency.release(key);
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + 3, times(T0 + 3)), { kind: 'replay', status: 201, body: BODY }, 'a late release leaves a stored answer');
    });

    it('a claim whose lock has lapsed (its instance stopped) is claimed again by the same content, never by other content', async ({ store }) => {
      const key = hash();
      const [content, other] = [hash(), hash()];
      assert.deepEqual(await store.idempotency.claim(key, content, T0, times(T0)), { kind: 'claimed' });
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + MINUTE - 1, times(T0 + MINUTE - 1)), { kind: 'busy' });
      assert.deepEqual(await store.idempotency.claim(key, other, T0 + MINUTE, times(T0 + MINUTE)), { kind: 'mismatch' });
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + MINUTE, times(T0 + MINUTE)), { kind: 'claimed' }, 'lockedUntil <= now');
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + MINUTE + 1, times(T0 + MINUTE + 1)), { kind: 'busy' }, 'locked anew');
      await store.idempotency.complete(key, { status: 200, body: BODY });
      assert.deepEqual(await store.idempotency.claim(key, content, T0 + 3 * MINUTE, times(T0 + 3 * MINUTE)), { kind: 'replay', status: 200, body: BODY });
    });

    it('release forgets a claim: the next claim, of any content, is claimed', async ({ store }) => {
      const key = hash();
      assert.deepEqual(await store.idempotency.claim(key, hash(), T0, times(T0)), { kind: 'claimed' });
      await store.idempotency.release(key);
      assert.deepEqual(await store.idempotency.claim(key, hash(), T0 + 1, times(T0 + 1)), { kind: 'claimed' });
      await store.idempotency.release(hash());
    });

    it('completing a key nobody claims stores nothing', async ({ store }) => {
      const key = hash();
      await store.idempotency.complete(key, { status: 201, body: BODY });
      assert.deepEqual(await store.idempotency.claim(key, hash(), T0, times(T0)), { kind: 'claimed' });
    });

    it('a key is remembered until expiresAt, through a purge and a reopening, and forgotten after', async ({ store, opened }) => {
      const [claimed, done] = [hash(), hash()];
      const content = hash();
      assert.deepEqual(await store.idempotency.claim(claimed, content, T0, times(T0)), { kind: 'claimed' });
      assert.deepEqual(await store.idempotency.claim(done, content, T0, times(T0)), { kind: 'claimed' });
      await store.idempotency.complete(done, { status: 201, body: BODY });
      await store.purgeExpired(T0 + HOUR - 1);
      let current = store;
      if (opened.reopen !== undefined) {
        await store.close();
        current = await opened.reopen();
      }
      const at = T0 + HOUR - 1;
      assert.deepEqual(await current.idempotency.claim(done, hash(), at, times(at)), { kind: 'mismatch' }, 'remembered by the store, not the process');
      assert.deepEqual(await current.idempotency.claim(done, content, at, times(at)), { kind: 'replay', status: 201, body: BODY });
      assert.deepEqual(await current.idempotency.claim(claimed, content, at, times(at)), { kind: 'claimed' }, 'its lock lapsed long ago');
      // At expiresAt, forgotten, whether a purge removed the key yet or not.
      assert.deepEqual(await current.idempotency.claim(done, hash(), T0 + HOUR, times(T0 + HOUR)), { kind: 'claimed' });
      await current.purgeExpired(T0 + 2 * HOUR + 1);
      assert.deepEqual(await current.idempotency.claim(claimed, hash(), T0 + 2 * HOUR + 1, times(T0 + 2 * HOUR + 1)), { kind: 'claimed' }, 'purged');
    });
  });
}
