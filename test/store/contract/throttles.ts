// The store contract, ThrottleStore: attempts counted against accounts, with backoff.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, T0, itWithStore, type OpenStore } from './fixture.ts';

export function throttlesContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('throttles', () => {
    it('counts login attempts per account with backoff: free ones, then doubling delays from the last, capped; all accounts or none', async ({ store }) => {
      const rule = { free: 2, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: HOUR };
      const f = [{ account: 'f', rule }];
      assert.deepEqual(await store.throttles.countAttempts(f, T0), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 10), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 20), { allowed: false, retryAt: T0 + 1010 }, '1 s after the last counted attempt');
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 1010), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 1011), { allowed: false, retryAt: T0 + 3010 }, 'then 2 s');
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 3010), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 3010), { allowed: false, retryAt: T0 + 7010 }, 'then 4 s');
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 7010), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 7010), { allowed: false, retryAt: T0 + 11_010 }, 'capped at 4 s');
      // Two accounts: one that must wait stops the attempt from counting against the other.
      const both = [{ account: 'g', rule }, ...f];
      assert.deepEqual(await store.throttles.countAttempts(both, T0 + 7011), { allowed: false, retryAt: T0 + 11_010 });
      assert.deepEqual(await store.throttles.countAttempts([{ account: 'g', rule }], T0 + 7012), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts([{ account: 'g', rule }], T0 + 7013), { allowed: true }, 'g counted once only');
      await store.throttles.takeBackLoginFailure('f');
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 7011), { allowed: false, retryAt: T0 + 11_010 }, 'one taken back: 4 s still (the 4th delay)');
      await store.throttles.clearLoginFailures('f');
      assert.deepEqual(await store.throttles.countAttempts(f, T0 + 7012), { allowed: true }, 'cleared');
      assert.deepEqual(await store.throttles.countAttempts([{ account: 'g', rule }], T0 + 7013 + HOUR), { allowed: true }, 'a quiet hour: g starts over');
      assert.deepEqual(await store.throttles.countAttempts([{ account: 'g', rule }], T0 + 7014 + HOUR), { allowed: true });
      await store.throttles.takeBackLoginFailure('nobody');
    });

    it('counts an attempt against an account that gates only while another has failures: always counted, holding back only then', async ({ store }) => {
      const ceiling = { free: 1, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: HOUR };
      const own = { free: 5, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: 10_000 };
      const by = (party: string) => [
        { account: `own-${party}`, rule: own },
        { account: 'shared', rule: ceiling, gatesOnlyIfFailing: `own-${party}` },
      ];
      assert.deepEqual(await store.throttles.countAttempts(by('a'), T0), { allowed: true });
      assert.deepEqual(await store.throttles.countAttempts(by('a'), T0 + 1), { allowed: false, retryAt: T0 + 1000 }, 'a has failed: the ceiling holds it back');
      assert.deepEqual(await store.throttles.countAttempts(by('b'), T0 + 2), { allowed: true }, 'b is clean: admitted past the ceiling');
      assert.deepEqual(await store.throttles.countAttempts(by('a'), T0 + 3), { allowed: false, retryAt: T0 + 2002 }, "b's attempt counted against the ceiling: 2 s from it");
      assert.deepEqual(await store.throttles.countAttempts(by('b'), T0 + 4), { allowed: false, retryAt: T0 + 2002 }, 'b has failed now too');
      await store.throttles.takeBackLoginFailure('own-b');
      assert.deepEqual(await store.throttles.countAttempts(by('b'), T0 + 5), { allowed: true }, "b's only attempt taken back: clean again");
      await store.throttles.clearLoginFailures('own-b');
      assert.deepEqual(await store.throttles.countAttempts(by('b'), T0 + 6), { allowed: true }, 'b cleared: clean again');
      assert.deepEqual(await store.throttles.countAttempts(by('a'), T0 + 10_000), { allowed: true }, "a quiet spell of a's own window: a is clean again");
      assert.deepEqual(await store.throttles.countAttempts(by('a'), T0 + 10_001), { allowed: false, retryAt: T0 + 10_000 + 4000 }, 'the ceiling kept counting: capped at 4 s');
      await assert.rejects(store.throttles.countAttempts([{ account: 'shared', rule: ceiling, gatesOnlyIfFailing: 'own-c' }], T0 + 10_002), {
        name: 'TypeError',
        message: "gatesOnlyIfFailing: 'own-c' is not an account of this call",
      });
    });
  });
}
