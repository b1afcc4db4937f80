// The store contract, ConsentStore: the scopes a user approved for an app, until they expire,
// per app and subject, replaced by the next consent, through a purge and a reopening.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, MINUTE, T0, itWithStore, type OpenStore } from './fixture.ts';

export function consentsContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('consents', () => {
    it('remembers the scopes per app and subject until they expire; the next consent replaces them', async ({ store, opened }) => {
      assert.deepEqual(await store.consents.findConsent('app-1', 'alice', T0), [], 'none yet');
      await store.consents.saveConsent('app-1', 'alice', ['orders:read', 'profile'], T0, T0 + HOUR);
      assert.deepEqual(await store.consents.findConsent('app-1', 'alice', T0 + MINUTE), ['orders:read', 'profile']);
      assert.deepEqual(await store.consents.findConsent('app-1', 'bob', T0 + MINUTE), [], 'another subject');
      assert.deepEqual(await store.consents.findConsent('app-2', 'alice', T0 + MINUTE), [], 'another app');
      assert.deepEqual(await store.consents.findConsent('app-1', 'alice', T0 + HOUR), [], 'expired at expiresAt');
      await store.consents.saveConsent('app-1', 'alice', ['orders:write'], T0 + MINUTE, T0 + 2 * HOUR);
      assert.deepEqual(await store.consents.findConsent('app-1', 'alice', T0 + HOUR), ['orders:write'], 'replaced, with its own expiry');
      await store.consents.saveConsent('app-1', 'carol', [], T0, T0 + HOUR);
      assert.deepEqual(await store.consents.findConsent('app-1', 'carol', T0), [], 'a consent to no scope');
      await store.purgeExpired(T0 + HOUR);
      assert.deepEqual(await store.consents.findConsent('app-1', 'alice', T0 + HOUR), ['orders:write'], 'a purge keeps what has not expired');
      if (opened.reopen === undefined) return;
      await store.close();
      const reopened = await opened.reopen();
      assert.deepEqual(await reopened.consents.findConsent('app-1', 'alice', T0 + HOUR), ['orders:write'], 'remembered by the store, not the process');
    });
  });
}
