// The store contract, SigningKeyStore: the gateway's signing keys, shared by every instance; a key
// is added only after the key the caller saw last, so that instances rotating at once add one.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Change } from '../../../src/store/port/index.ts';
import { MINUTE, T0, itWithStore, signingKey, type OpenStore } from './fixture.ts';

export function signingKeysContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('signing keys', () => {
    it('adds a key after the one seen last, and only then: of ten adds at once after the same key, one wins', async ({ store }) => {
      assert.deepEqual(await store.signingKeys.listSigningKeys(), []);
      const first = signingKey(T0);
      assert.equal(await store.signingKeys.addSigningKey(first, 'gwk_not-there'), false, 'none yet: only after null');
      assert.equal(await store.signingKeys.addSigningKey(first, null), true);
      assert.equal(await store.signingKeys.addSigningKey(signingKey(T0), null), false, 'someone added one');
      const tries = await Promise.all(Array.from({ length: 10 }, () => store.signingKeys.addSigningKey(signingKey(T0 + MINUTE), first.kid)));
      assert.equal(tries.filter((added) => added).length, 1, String(tries));
      const keys = await store.signingKeys.listSigningKeys();
      assert.equal(keys.length, 2);
      assert.deepEqual(keys[0], first, 'every field as written, the private key byte for byte');
      assert.ok(Buffer.isBuffer(keys[0]!.privateKey));
    });

    it('lists by activation then kid; the latest compared is the latest unrevoked key', async ({ store }) => {
      const a = signingKey(T0);
      const b = signingKey(T0 + 2 * MINUTE);
      const c = signingKey(T0 + MINUTE, { algorithm: 'EdDSA' });
      assert.equal(await store.signingKeys.addSigningKey(a, null), true);
      assert.equal(await store.signingKeys.addSigningKey(b, a.kid), true);
      // c activates before b, but is added after b, the latest.
      assert.equal(await store.signingKeys.addSigningKey(c, b.kid), true);
      assert.deepEqual(
        (await store.signingKeys.listSigningKeys()).map((k) => k.kid),
        [a.kid, c.kid, b.kid],
      );
      assert.equal(await store.signingKeys.revokeSigningKey(b.kid, T0 + 3 * MINUTE), true);
      assert.equal(await store.signingKeys.revokeSigningKey(b.kid, T0 + 4 * MINUTE), false, 'once');
      assert.equal(await store.signingKeys.revokeSigningKey('gwk_unknown', T0), false);
      assert.equal((await store.signingKeys.listSigningKeys()).find((k) => k.kid === b.kid)!.revokedAt, T0 + 3 * MINUTE);
      const d = signingKey(T0 + 5 * MINUTE);
      assert.equal(await store.signingKeys.addSigningKey(d, b.kid), false, 'a revoked key is never the latest');
      assert.equal(await store.signingKeys.addSigningKey(d, c.kid), true);
      for (const k of [a, c, d]) assert.equal(await store.signingKeys.revokeSigningKey(k.kid, T0), true);
      assert.equal(await store.signingKeys.addSigningKey(signingKey(T0), null), true, 'every key revoked: after none');
    });

    it('deletes keys; every add, revocation and deletion is a signing-key change naming the kid', async ({ store }) => {
      const heard: Change[] = [];
      store.changes.listen((change) => heard.push(change));
      const a = signingKey(T0);
      const b = signingKey(T0 + MINUTE);
      await store.signingKeys.addSigningKey(a, null);
      await store.signingKeys.addSigningKey(b, a.kid);
      await store.signingKeys.revokeSigningKey(b.kid, T0);
      await store.signingKeys.deleteSigningKeys([a.kid, 'gwk_unknown']);
      assert.deepEqual(
        (await store.signingKeys.listSigningKeys()).map((k) => k.kid),
        [b.kid],
      );
      const named = heard.filter((c) => c.kind === 'signing-key').map((c) => (c as { ref: string }).ref);
      // A driver may also tell of a change it only tried (Redis tells before it knows the outcome).
      assert.deepEqual([...new Set(named)].slice(0, 2), [a.kid, b.kid]);
      assert.ok(named.filter((k) => k === b.kid).length >= 2, 'added, then revoked');
      assert.ok(named.filter((k) => k === a.kid).length >= 2, 'added, then deleted');
    });
  });
}
