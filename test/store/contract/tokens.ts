// The store contract, TokenStore: access tokens (read through the cache), revocation (RFC 7009),
// refresh token rotation, purgeExpired, and durability across close and reopen.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, MINUTE, T0, hash, itWithStore, rotation, token, type OpenStore } from './fixture.ts';

export function tokensContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('access tokens', () => {
    it('saves and finds an access token', async ({ store, seed }) => {
      const f = await seed({ app: 'shop' });
      const record = token(f);
      await store.tokens.saveTokens([record]);
      const active = await store.cache.findAccessToken(record.hash, T0 + MINUTE);
      assert.ok(active);
      assert.ok(Buffer.isBuffer(active.hash));
      assert.deepEqual(active, { ...record, appName: 'shop', developerEmail: 'dev@example.com' });
      // Found again (a driver may answer from a cache now).
      assert.deepEqual(await store.cache.findAccessToken(record.hash, T0 + 2 * MINUTE), active);
      assert.equal(await store.cache.findAccessToken(hash(), T0 + MINUTE), undefined, 'unknown hash');
    });

    it('saves concurrent calls, each durable when its promise resolves', async ({ store, seed, found }) => {
      const f = await seed();
      const records = Array.from({ length: 5 }, () => [token(f), token(f, { kind: 'refresh' })]);
      await Promise.all(records.map((r) => store.tokens.saveTokens(r)));
      for (const [access] of records) assert.ok(await found(access!.hash));
    });

    it('saves the records of one call all or none', async ({ store, seed, found }) => {
      const f = await seed();
      const existing = token(f);
      await store.tokens.saveTokens([existing]);
      const fresh = token(f);
      await assert.rejects(store.tokens.saveTokens([fresh, { ...token(f), hash: existing.hash }]), 'a duplicate hash is refused');
      assert.equal(await found(fresh.hash), false, 'nothing of the refused call was written');
      assert.ok(await found(existing.hash));
    });

    it("one call's failure does not fail another call made at the same time", async ({ store, seed, found }) => {
      const f = await seed();
      const existing = token(f);
      await store.tokens.saveTokens([existing]);
      const innocent = token(f);
      const [bad, good] = await Promise.allSettled([store.tokens.saveTokens([{ ...token(f), hash: existing.hash }]), store.tokens.saveTokens([innocent])]);
      assert.equal(bad.status, 'rejected');
      assert.equal(good.status, 'fulfilled', good.status === 'rejected' ? String(good.reason) : '');
      assert.ok(await found(innocent.hash));
    });

    it('keeps a null subject null', async ({ store, seed }) => {
      const f = await seed();
      const record = token(f, { subject: null, scope: '' });
      await store.tokens.saveTokens([record]);
      const active = await store.cache.findAccessToken(record.hash, T0 + MINUTE);
      assert.equal(active?.subject, null);
      assert.equal(active?.scope, '');
    });

    it('does not find a token once it expired', async ({ store, seed, found }) => {
      const f = await seed();
      const cached = token(f);
      const fresh = token(f);
      await store.tokens.saveTokens([cached, fresh]);
      assert.ok(await found(cached.hash, cached.expiresAt - 1));
      assert.equal(await store.cache.findAccessToken(cached.hash, cached.expiresAt), undefined, 'expired at expiresAt (after a hit)');
      assert.equal(await store.cache.findAccessToken(cached.hash, cached.expiresAt + HOUR), undefined);
      assert.equal(await store.cache.findAccessToken(fresh.hash, fresh.expiresAt), undefined, 'expired at expiresAt (first lookup)');
      assert.ok(await found(fresh.hash, fresh.expiresAt - 1));
    });

    it('does not find a refresh token', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { access, refresh } = await grant(f);
      assert.ok(await found(access.hash));
      assert.equal(await store.cache.findAccessToken(refresh.hash, T0 + MINUTE), undefined);
    });

    it('does not find a token once its credential is revoked', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const other = await seed({ app: 'other' });
      const { access } = await grant(f);
      const { access: unaffected } = await grant(other);
      assert.ok(await found(access.hash));
      assert.ok(await found(unaffected.hash));
      await store.apps.revokeCredential(f.key, T0 + MINUTE);
      assert.equal(await found(access.hash), false);
      assert.ok(await found(unaffected.hash), "another app's token is still valid");
    });

    it('disabling an app revokes the tokens issued until then: they stay revoked when it is enabled again', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { access } = await grant(f);
      assert.ok(await found(access.hash));
      await store.apps.setAppStatus(f.app.id, 'disabled', T0 + MINUTE);
      assert.equal(await found(access.hash), false);
      await store.apps.setAppStatus(f.app.id, 'active', T0 + MINUTE);
      assert.equal(await found(access.hash), false, 'not found again once the app is active');
      const { access: fresh } = await grant(f, { issuedAt: T0 + MINUTE + 1 });
      assert.ok(await found(fresh.hash), 'a token issued after enabling works');
    });

    it('disabling a developer revokes the tokens of all their apps, for good', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const second = await seed({ app: 'second' });
      const other = await seed({ email: 'other@example.com', app: 'other' });
      const { access } = await grant(f);
      const { access: sameDeveloper } = await grant(second);
      const { access: unaffected } = await grant(other);
      for (const t of [access, sameDeveloper, unaffected]) assert.ok(await found(t.hash));
      await store.accounts.setDeveloperStatus(f.developer.email, 'disabled', T0 + MINUTE);
      assert.equal(await found(access.hash), false);
      assert.equal(await found(sameDeveloper.hash), false, 'every app of the developer');
      assert.ok(await found(unaffected.hash));
      await store.accounts.setDeveloperStatus(f.developer.email, 'active', T0 + MINUTE);
      assert.equal(await found(access.hash), false, 'not found again once the developer is active');
      assert.equal(await found(sameDeveloper.hash), false);
      assert.ok(await found(unaffected.hash));
    });
  });

  describe('revocation (RFC 7009)', () => {
    it("revokes the token's family, its refresh and access tokens, for its own app only", async ({ store, seed, grant, found }) => {
      const f = await seed();
      const other = await seed({ app: 'other' });
      const { access, refresh } = await grant(f);
      const sibling = await grant(f);
      assert.ok(await found(access.hash), 'cached');
      assert.equal(await store.tokens.revokeToken(refresh.hash, other.app.id, T0), false, "another app's token");
      assert.ok(await found(access.hash));
      assert.equal(await store.tokens.revokeToken(hash(), f.app.id, T0), false, 'unknown');
      assert.equal(await store.tokens.revokeToken(refresh.hash, f.app.id, T0), true);
      assert.equal(await found(access.hash), false, 'the access token of the family');
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE)), { ok: false, reason: 'invalid' });
      assert.ok(await found(sibling.access.hash), 'another grant of the same app');
      assert.equal(await store.tokens.revokeToken(sibling.access.hash, f.app.id, T0), true, 'an access token revokes its family too');
      assert.equal(await found(sibling.access.hash), false);
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, sibling.refresh, T0 + MINUTE))).ok, false);
    });
  });

  describe('refresh token rotation', () => {
    it('rotates: saves the new access and refresh tokens and returns the previous one', async ({ store, seed, grant }) => {
      const f = await seed({ app: 'shop' });
      const { refresh } = await grant(f);
      const now = T0 + 10 * MINUTE;
      const req = rotation(f, refresh, now);
      const result = await store.tokens.rotateRefreshToken(req);
      assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read orders:write' });
      if (result.ok) assert.ok(Buffer.isBuffer(result.previous.hash));

      const access = await store.cache.findAccessToken(req.accessHash, now + 1);
      assert.deepEqual(access, {
        hash: req.accessHash,
        kind: 'access',
        appId: f.app.id,
        key: f.key,
        product: refresh.product,
        scope: refresh.scope,
        subject: refresh.subject,
        family: refresh.family,
        issuedAt: now,
        expiresAt: req.accessExpiresAt,
        appName: 'shop',
        developerEmail: 'dev@example.com',
      });
      assert.equal(await store.cache.findAccessToken(req.refreshHash, now + 1), undefined, 'the new refresh token is not an access token');

      // The new refresh token was saved: it rotates in turn.
      const next = await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, now + MINUTE), hash: req.refreshHash });
      assert.equal(next.ok, true);
      if (next.ok) {
        assert.ok(next.previous.hash.equals(req.refreshHash));
        assert.equal(next.previous.kind, 'refresh');
        assert.equal(next.previous.family, refresh.family);
        assert.equal(next.previous.issuedAt, now);
        assert.equal(next.previous.expiresAt, req.refreshExpiresAt);
      }
    });

    it('redeems without a refresh successor (an authorization code of a product without refresh_token): the access token only; a second use revokes it', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { refresh } = await grant(f);
      const { refreshHash, refreshExpiresAt: _, ...request } = rotation(f, refresh, T0 + MINUTE);
      assert.equal((await store.tokens.rotateRefreshToken(request)).ok, true);
      assert.ok(await found(request.accessHash, T0 + MINUTE + 1), 'the access token is saved');
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + MINUTE), hash: refreshHash }), { ok: false, reason: 'invalid' }, 'no refresh token was saved');
      const { refreshHash: __, refreshExpiresAt: ___, ...again } = rotation(f, refresh, T0 + MINUTE);
      assert.deepEqual(await store.tokens.rotateRefreshToken(again), { ok: false, reason: 'reused' });
      assert.equal(await found(request.accessHash, T0 + MINUTE + 2), false, 'what the code gave is revoked');
    });

    it('spent, and presented again after its own expiry while its successors live (a code of a minute): still reuse, revoking them, through a purge', async ({ store, seed, found }) => {
      const f = await seed();
      const code = token(f, { kind: 'refresh', expiresAt: T0 + MINUTE });
      await store.tokens.saveTokens([code]);
      const { refreshHash: _r, refreshExpiresAt: _e, ...redeem } = rotation(f, code, T0 + 1000);
      assert.equal((await store.tokens.rotateRefreshToken(redeem)).ok, true);
      await store.purgeExpired(T0 + 2 * MINUTE);
      const { refreshHash: _r2, refreshExpiresAt: _e2, ...again } = rotation(f, code, T0 + 2 * MINUTE);
      assert.deepEqual(await store.tokens.rotateRefreshToken(again), { ok: false, reason: 'reused' });
      assert.equal(await found(redeem.accessHash, T0 + 2 * MINUTE), false, 'what it gave is revoked');
    });

    it('a second use within reuseGraceMs is refused without revoking; after it, the family is revoked', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { refresh } = await grant(f);
      const first = rotation(f, refresh, T0 + MINUTE);
      assert.equal((await store.tokens.rotateRefreshToken(first)).ok, true);
      const again = (now: number) => store.tokens.rotateRefreshToken({ ...rotation(f, refresh, now), reuseGraceMs: 10_000 });
      assert.deepEqual(await again(T0 + MINUTE + 9_999), { ok: false, reason: 'invalid' });
      assert.ok(await found(first.accessHash, T0 + MINUTE + 9_999), 'the family lives on within the grace');
      assert.deepEqual(await again(T0 + MINUTE + 10_000), { ok: false, reason: 'reused' });
      assert.equal(await found(first.accessHash, T0 + MINUTE + 10_001), false);
    });

    it('a second use of a rotated refresh token revokes the whole family', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { access: original, refresh } = await grant(f);
      const unrelated = await grant(f);
      const first = rotation(f, refresh, T0 + MINUTE);
      assert.equal((await store.tokens.rotateRefreshToken(first)).ok, true);
      assert.ok(await found(first.accessHash, T0 + 2 * MINUTE));
      assert.ok(await found(original.hash, T0 + 2 * MINUTE));

      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + 3 * MINUTE)), { ok: false, reason: 'reused' });
      assert.equal(await found(first.accessHash, T0 + 4 * MINUTE), false, 'the new access token is revoked');
      assert.equal(await found(original.hash, T0 + 4 * MINUTE), false, 'the first access token is revoked');
      assert.deepEqual(
        await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 5 * MINUTE), hash: first.refreshHash }),
        { ok: false, reason: 'invalid' },
        'the new refresh token is revoked',
      );
      assert.ok(await found(unrelated.access.hash, T0 + 4 * MINUTE), 'another family is untouched');
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, unrelated.refresh, T0 + 6 * MINUTE))).ok, true);
    });

    it('refuses a refresh token of another app, without consuming it', async ({ store, seed, grant }) => {
      const f = await seed();
      const other = await seed({ app: 'other' });
      const { refresh } = await grant(f);
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + MINUTE), appId: other.app.id }), { ok: false, reason: 'invalid' });
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + 2 * MINUTE))).ok, true);
    });

    it('refuses an expired refresh token', async ({ store, seed, grant }) => {
      const f = await seed();
      const { refresh } = await grant(f);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt)), { ok: false, reason: 'invalid' });
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt + HOUR)), { ok: false, reason: 'invalid' });
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt - 1))).ok, true);
    });

    it('refuses unknown hashes and access tokens', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { access } = await grant(f);
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, access, T0 + MINUTE), hash: hash() }), { ok: false, reason: 'invalid' });
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, access, T0 + MINUTE)), { ok: false, reason: 'invalid' });
      assert.ok(await found(access.hash), 'the access token presented as a refresh token is still valid');
    });

    it('narrows the scope', async ({ store, seed, grant }) => {
      const f = await seed();
      const { refresh } = await grant(f, { scope: 'orders:read orders:write' });
      const req = rotation(f, refresh, T0 + MINUTE, ['orders:read']);
      const result = await store.tokens.rotateRefreshToken(req);
      assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read' });
      assert.equal((await store.cache.findAccessToken(req.accessHash, T0 + 2 * MINUTE))?.scope, 'orders:read');
      // The narrowed refresh token cannot widen back.
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 3 * MINUTE, ['orders:write']), hash: req.refreshHash }), { ok: false, reason: 'scope' });
      const none = await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 4 * MINUTE, []), hash: req.refreshHash });
      assert.deepEqual(none.ok && none.scope, '');
    });

    it('refuses a wider scope without consuming the refresh token', async ({ store, seed, grant }) => {
      const f = await seed();
      const { refresh } = await grant(f, { scope: 'orders:read' });
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE, ['orders:read', 'orders:write'])), { ok: false, reason: 'scope' });
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE, ['orders:admin'])), { ok: false, reason: 'scope' });
      const result = await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + 2 * MINUTE));
      assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read' }, 'not consumed, so not a reuse');
    });

    it('refuses a refresh token issued through a revoked credential', async ({ store, seed, grant }) => {
      const f = await seed();
      const { refresh } = await grant(f);
      await store.apps.revokeCredential(f.key, T0 + 2);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE)), { ok: false, reason: 'invalid' });
    });
  });

  describe('purgeExpired', () => {
    it('removes expired tokens and returns how many', async ({ store, seed, found }) => {
      const f = await seed();
      const now = T0 + 2 * HOUR;
      const expiredAccess = token(f, { expiresAt: now - 1 });
      const expiringNow = token(f, { expiresAt: now });
      const expiredRefresh = token(f, { kind: 'refresh', expiresAt: now - HOUR });
      const live = token(f, { expiresAt: now + 1 });
      const liveRefresh = token(f, { kind: 'refresh', expiresAt: now + HOUR });
      await store.tokens.saveTokens([expiredAccess, expiringNow, expiredRefresh, live, liveRefresh]);
      assert.equal(await store.purgeExpired(now), 3);
      assert.equal(await store.purgeExpired(now), 0);
      assert.ok(await found(live.hash, now));
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, liveRefresh, now))).ok, true);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, expiredRefresh, now - 2 * HOUR)), { ok: false, reason: 'invalid' }, 'purged');
      assert.equal(await store.cache.findAccessToken(expiredAccess.hash, now - 2 * HOUR), undefined, 'purged');
    });

    it('returns 0 on an empty store', async ({ store }) => {
      assert.equal(await store.purgeExpired(T0), 0);
    });
  });

  describe('durability', () => {
    it('keeps everything across close and reopen', async ({ store, opened, seed, grant }, t) => {
      const reopen = opened.reopen;
      if (reopen === undefined) {
        t.skip('the driver is not durable');
        return;
      }
      const f = await seed({ app: 'shop' });
      const revoked = await seed({ app: 'revoked' });
      await store.apps.revokeCredential(revoked.key, T0 + 2);
      await store.apps.setAppStatus(f.app.id, 'disabled', T0 + 2);
      const { access, refresh } = await grant(f, { issuedAt: T0 + 3 });
      const developers = await store.accounts.listDevelopers();
      const apps = await store.apps.listApps();
      // A save still in flight when the store closes is written (or refused), never lost silently.
      const late = token(f, { issuedAt: T0 + 3 });
      const saving = store.tokens.saveTokens([late]);
      await store.close();
      await saving;

      const again = await reopen();
      assert.deepEqual(await again.accounts.listDevelopers(), developers);
      assert.deepEqual(await again.apps.listApps(), apps);
      const client = await again.cache.findClient(f.key);
      assert.ok(client?.secretHash.equals(f.secretHash));
      assert.equal((await again.cache.findClient(revoked.key))?.credential.status, 'revoked');
      assert.equal(await again.cache.findAccessToken(access.hash, T0 + MINUTE), undefined, 'the app is still disabled');
      await again.apps.setAppStatus(f.app.id, 'active', T0 + 4);
      assert.deepEqual(await again.cache.findAccessToken(access.hash, T0 + MINUTE), { ...access, appName: 'shop', developerEmail: 'dev@example.com' });
      assert.ok(await again.cache.findAccessToken(late.hash, T0 + MINUTE), 'the save made just before close');
      const rotated = await again.tokens.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE));
      assert.deepEqual(rotated, { ok: true, previous: refresh, scope: refresh.scope });
    });
  });
}
