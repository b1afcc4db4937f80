// The contract every store driver must pass. A driver's test file calls `storeContract` with a
// function that opens a fresh, empty store (and, when the driver is durable, a way to reopen it).
// No `.test` suffix: `node --test "test/**/*.test.ts"` must not run this file on its own.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { StoreError, type App, type Developer, type RotateRequest, type Store, type TokenRecord } from '../../src/store/port.ts';

export interface OpenedStore {
  store: Store;
  /** Opens the same data again (after the contract closed `store`); absent for volatile drivers. */
  reopen?: () => Promise<Store>;
  /** Closes whatever is still open and removes the data. */
  cleanup: () => Promise<void>;
}

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function hash(): Buffer {
  return randomBytes(32);
}

function isConflict(err: unknown): boolean {
  assert.ok(err instanceof StoreError, `expected a StoreError, got ${String(err)}`);
  assert.equal(err.code, 'conflict');
  return true;
}

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(name, () => {
    let opened: OpenedStore;
    let store: Store;

    beforeEach(async () => {
      opened = await open();
      store = opened.store;
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    let keyCounter = 0;
    const newKey = () => `key-${++keyCounter}-${randomBytes(6).toString('hex')}`;

    interface Fixture {
      developer: Developer;
      app: App;
      key: string;
      secretHash: Buffer;
    }

    /** A developer (created unless it exists) with one app and its credential. */
    async function seed(options: { email?: string; app?: string; product?: string } = {}): Promise<Fixture> {
      const email = options.email ?? 'dev@example.com';
      const developer = (await store.findDeveloper(email)) ?? (await store.createDeveloper({ email, name: `Dev ${email}`, now: T0 }));
      const key = newKey();
      const secretHash = randomBytes(32);
      const app = await store.createApp({
        developerId: developer.id,
        name: options.app ?? 'app',
        product: options.product ?? 'orders',
        key,
        secretHash,
        now: T0 + 1,
      });
      return { developer, app, key, secretHash };
    }

    function token(f: Fixture, overrides: Partial<TokenRecord> = {}): TokenRecord {
      return {
        hash: hash(),
        kind: 'access',
        appId: f.app.id,
        key: f.key,
        product: f.app.product,
        scope: 'orders:read orders:write',
        subject: 'user-1',
        family: `family-${randomBytes(6).toString('hex')}`,
        issuedAt: T0,
        expiresAt: T0 + HOUR,
        ...overrides,
      };
    }

    /** An access and a refresh token of one family, saved. */
    async function grant(f: Fixture, overrides: Partial<TokenRecord> = {}): Promise<{ access: TokenRecord; refresh: TokenRecord }> {
      const access = token(f, overrides);
      const refresh = token(f, { ...overrides, kind: 'refresh', family: access.family, expiresAt: T0 + 24 * HOUR });
      await store.saveTokens([access, refresh]);
      return { access, refresh };
    }

    function rotation(f: Fixture, refresh: TokenRecord, now: number, scope?: readonly string[]): RotateRequest {
      return {
        hash: refresh.hash,
        appId: f.app.id,
        now,
        scope,
        accessHash: hash(),
        accessExpiresAt: now + HOUR,
        refreshHash: hash(),
        refreshExpiresAt: now + 24 * HOUR,
      };
    }

    async function found(h: Buffer, now = T0 + MINUTE): Promise<boolean> {
      return (await store.findAccessToken(h, now)) !== undefined;
    }

    describe('developers', () => {
      it('creates and finds a developer', async () => {
        const dev = await store.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
        assert.equal(typeof dev.id, 'string');
        assert.ok(dev.id.length > 0);
        assert.deepEqual(dev, { id: dev.id, email: 'ada@example.com', name: 'Ada', status: 'active', verified: true, createdAt: T0 });
        assert.deepEqual(await store.findDeveloper('ada@example.com'), dev);
        assert.equal(await store.findDeveloper('nobody@example.com'), undefined);
      });

      it('refuses a duplicate email with a conflict', async () => {
        const first = await store.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
        await assert.rejects(store.createDeveloper({ email: 'ada@example.com', name: 'Other Ada', now: T0 + 1 }), isConflict);
        assert.deepEqual(await store.listDevelopers(), [first]);
      });

      it('lists developers', async () => {
        assert.deepEqual(await store.listDevelopers(), []);
        const b = await store.createDeveloper({ email: 'b@example.com', name: 'B', now: T0 });
        const a = await store.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 + 1 });
        const listed = await store.listDevelopers();
        assert.deepEqual([...listed].sort((x, y) => x.email.localeCompare(y.email)), [a, b]);
      });

      it('disables and re-enables a developer', async () => {
        const dev = await store.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
        assert.deepEqual(await store.setDeveloperStatus('ada@example.com', 'disabled'), { ...dev, status: 'disabled' });
        assert.equal((await store.findDeveloper('ada@example.com'))?.status, 'disabled');
        assert.deepEqual(await store.setDeveloperStatus('ada@example.com', 'active'), dev);
        assert.equal(await store.setDeveloperStatus('nobody@example.com', 'disabled'), undefined);
      });
    });

    describe('apps', () => {
      it('creates an app together with its credential', async () => {
        const { developer, app, key, secretHash } = await seed({ app: 'shop', product: 'orders' });
        assert.equal(typeof app.id, 'string');
        assert.ok(app.id.length > 0);
        assert.deepEqual(app, {
          id: app.id,
          developerId: developer.id,
          developerEmail: developer.email,
          name: 'shop',
          product: 'orders',
          status: 'active',
          approval: 'approved',
          createdAt: T0 + 1,
        });
        assert.deepEqual(await store.listCredentials(app.id), [{ key, appId: app.id, status: 'approved', expiresAt: null, createdAt: T0 + 1 }]);
        const client = await store.findClient(key);
        assert.ok(client);
        assert.ok(client.secretHash.equals(secretHash));
      });

      it('refuses a duplicate name for the same developer, and writes nothing', async () => {
        const { developer, app } = await seed({ app: 'shop' });
        const key = newKey();
        await assert.rejects(
          store.createApp({ developerId: developer.id, name: 'shop', product: 'hello', key, secretHash: randomBytes(32), now: T0 + 5 }),
          isConflict,
        );
        assert.deepEqual(await store.listApps(), [app]);
        assert.equal(await store.findClient(key), undefined, 'the credential of the refused app was not written');
        assert.equal(await store.findAppByKey(key), undefined);
        assert.deepEqual(await store.findApp(developer.email, 'shop'), app);
      });

      it('writes no app when its credential cannot be written', async () => {
        const { developer, key } = await seed({ app: 'shop' });
        await assert.rejects(store.createApp({ developerId: developer.id, name: 'second', product: 'hello', key, secretHash: randomBytes(32), now: T0 + 5 }));
        assert.equal(await store.findApp(developer.email, 'second'), undefined);
        assert.equal((await store.listApps()).length, 1);
      });

      it('allows the same app name for another developer', async () => {
        const mine = await seed({ email: 'a@example.com', app: 'shop' });
        const theirs = await seed({ email: 'b@example.com', app: 'shop' });
        assert.notEqual(mine.app.id, theirs.app.id);
        assert.deepEqual(await store.findApp('a@example.com', 'shop'), mine.app);
        assert.deepEqual(await store.findApp('b@example.com', 'shop'), theirs.app);
      });

      it('finds an app by developer and name, and by key', async () => {
        const { app, key } = await seed({ app: 'shop' });
        assert.deepEqual(await store.findApp('dev@example.com', 'shop'), app);
        assert.equal(await store.findApp('dev@example.com', 'other'), undefined);
        assert.equal(await store.findApp('other@example.com', 'shop'), undefined);
        assert.deepEqual(await store.findAppByKey(key), app);
        assert.equal(await store.findAppByKey('no-such-key'), undefined);
      });

      it('lists apps, optionally of one developer', async () => {
        assert.deepEqual(await store.listApps(), []);
        const a1 = await seed({ email: 'a@example.com', app: 'one' });
        const a2 = await seed({ email: 'a@example.com', app: 'two' });
        const b1 = await seed({ email: 'b@example.com', app: 'one' });
        const byId = (x: App, y: App) => x.id.localeCompare(y.id);
        assert.deepEqual([...(await store.listApps())].sort(byId), [a1.app, a2.app, b1.app].sort(byId));
        assert.deepEqual([...(await store.listApps({}))].sort(byId), [a1.app, a2.app, b1.app].sort(byId));
        assert.deepEqual([...(await store.listApps({ developerEmail: 'a@example.com' }))].sort(byId), [a1.app, a2.app].sort(byId));
        assert.deepEqual(await store.listApps({ developerEmail: 'b@example.com' }), [b1.app]);
        assert.deepEqual(await store.listApps({ developerEmail: 'nobody@example.com' }), []);
      });

      it('disables and re-enables an app', async () => {
        const { app, key } = await seed();
        assert.deepEqual(await store.setAppStatus(app.id, 'disabled'), { ...app, status: 'disabled' });
        assert.equal((await store.findAppByKey(key))?.status, 'disabled');
        assert.equal((await store.findClient(key))?.app.status, 'disabled');
        assert.deepEqual(await store.setAppStatus(app.id, 'active'), app);
        assert.equal(await store.setAppStatus('no-such-app', 'disabled'), undefined);
      });
    });

    describe('credentials', () => {
      it('finds a client: credential, app, developer status and secret hash bytes', async () => {
        const { developer, app, key, secretHash } = await seed();
        const client = await store.findClient(key);
        assert.ok(client);
        assert.deepEqual(client.credential, { key, appId: app.id, status: 'approved', expiresAt: null, createdAt: T0 + 1 });
        assert.deepEqual(client.app, app);
        assert.equal(client.developerStatus, 'active');
        assert.ok(Buffer.isBuffer(client.secretHash), 'secretHash is a Buffer');
        assert.equal(client.secretHash.length, 32);
        assert.ok(client.secretHash.equals(secretHash));
        assert.equal(await store.findClient('no-such-key'), undefined);

        await store.setDeveloperStatus(developer.email, 'disabled');
        assert.equal((await store.findClient(key))?.developerStatus, 'disabled');
      });

      it('a key presented before it existed is found once this store creates it', async () => {
        const key = newKey();
        assert.equal(await store.findClient(key), undefined);
        assert.equal(await store.findClient(key), undefined, 'asked twice');
        const dev = await store.createDeveloper({ email: 'late@example.com', name: 'Late', now: T0 });
        await store.createApp({ developerId: dev.id, name: 'late', product: 'orders', key, secretHash: hash(), now: T0 });
        assert.equal((await store.findClient(key))?.credential.key, key);
        const rotated = newKey();
        assert.equal(await store.findClient(rotated), undefined);
        const app = (await store.findAppByKey(key))!;
        await store.rotateCredential({ appId: app.id, key: rotated, secretHash: hash(), now: T0, overlapUntil: T0 + HOUR });
        assert.equal((await store.findClient(rotated))?.credential.key, rotated);
      });

      it('revokes a credential once', async () => {
        const { app, key } = await seed();
        assert.equal(await store.revokeCredential(key), true);
        assert.equal(await store.revokeCredential(key), false);
        assert.equal(await store.revokeCredential('no-such-key'), false);
        assert.equal((await store.findClient(key))?.credential.status, 'revoked');
        assert.deepEqual(
          (await store.listCredentials(app.id)).map((c) => c.status),
          ['revoked'],
        );
        assert.deepEqual(await store.listCredentials('no-such-app'), []);
      });
    });

    describe('access tokens', () => {
      it('saves and finds an access token', async () => {
        const f = await seed({ app: 'shop' });
        const record = token(f);
        await store.saveTokens([record]);
        const active = await store.findAccessToken(record.hash, T0 + MINUTE);
        assert.ok(active);
        assert.ok(Buffer.isBuffer(active.hash));
        assert.deepEqual(active, { ...record, appName: 'shop', developerEmail: 'dev@example.com' });
        // Found again (a driver may answer from a cache now).
        assert.deepEqual(await store.findAccessToken(record.hash, T0 + 2 * MINUTE), active);
        assert.equal(await store.findAccessToken(hash(), T0 + MINUTE), undefined, 'unknown hash');
      });

      it('saves concurrent calls, each durable when its promise resolves', async () => {
        const f = await seed();
        const records = Array.from({ length: 5 }, () => [token(f), token(f, { kind: 'refresh' })]);
        await Promise.all(records.map((r) => store.saveTokens(r)));
        for (const [access] of records) assert.ok(await found(access!.hash));
      });

      it('saves the records of one call all or none', async () => {
        const f = await seed();
        const existing = token(f);
        await store.saveTokens([existing]);
        const fresh = token(f);
        await assert.rejects(store.saveTokens([fresh, { ...token(f), hash: existing.hash }]), 'a duplicate hash is refused');
        assert.equal(await found(fresh.hash), false, 'nothing of the refused call was written');
        assert.ok(await found(existing.hash));
      });

      it("one call's failure does not fail another call made at the same time", async () => {
        const f = await seed();
        const existing = token(f);
        await store.saveTokens([existing]);
        const innocent = token(f);
        const [bad, good] = await Promise.allSettled([store.saveTokens([{ ...token(f), hash: existing.hash }]), store.saveTokens([innocent])]);
        assert.equal(bad.status, 'rejected');
        assert.equal(good.status, 'fulfilled', good.status === 'rejected' ? String(good.reason) : '');
        assert.ok(await found(innocent.hash));
      });

      it('keeps a null subject null', async () => {
        const f = await seed();
        const record = token(f, { subject: null, scope: '' });
        await store.saveTokens([record]);
        const active = await store.findAccessToken(record.hash, T0 + MINUTE);
        assert.equal(active?.subject, null);
        assert.equal(active?.scope, '');
      });

      it('does not find a token once it expired', async () => {
        const f = await seed();
        const cached = token(f);
        const fresh = token(f);
        await store.saveTokens([cached, fresh]);
        assert.ok(await found(cached.hash, cached.expiresAt - 1));
        assert.equal(await store.findAccessToken(cached.hash, cached.expiresAt), undefined, 'expired at expiresAt (after a hit)');
        assert.equal(await store.findAccessToken(cached.hash, cached.expiresAt + HOUR), undefined);
        assert.equal(await store.findAccessToken(fresh.hash, fresh.expiresAt), undefined, 'expired at expiresAt (first lookup)');
        assert.ok(await found(fresh.hash, fresh.expiresAt - 1));
      });

      it('does not find a refresh token', async () => {
        const f = await seed();
        const { access, refresh } = await grant(f);
        assert.ok(await found(access.hash));
        assert.equal(await store.findAccessToken(refresh.hash, T0 + MINUTE), undefined);
      });

      it('does not find a token once its credential is revoked', async () => {
        const f = await seed();
        const other = await seed({ app: 'other' });
        const { access } = await grant(f);
        const { access: unaffected } = await grant(other);
        assert.ok(await found(access.hash));
        assert.ok(await found(unaffected.hash));
        await store.revokeCredential(f.key);
        assert.equal(await found(access.hash), false);
        assert.ok(await found(unaffected.hash), "another app's token is still valid");
      });

      it("disabling an app revokes its tokens: they stay revoked when it is enabled again", async () => {
        const f = await seed();
        const { access } = await grant(f);
        assert.ok(await found(access.hash));
        await store.setAppStatus(f.app.id, 'disabled');
        assert.equal(await found(access.hash), false);
        await store.setAppStatus(f.app.id, 'active');
        assert.equal(await found(access.hash), false, 'not found again once the app is active');
        const { access: fresh } = await grant(f);
        assert.ok(await found(fresh.hash), 'a token issued after enabling works');
      });

      it("disabling a developer revokes the tokens of all their apps, for good", async () => {
        const f = await seed();
        const second = await seed({ app: 'second' });
        const other = await seed({ email: 'other@example.com', app: 'other' });
        const { access } = await grant(f);
        const { access: sameDeveloper } = await grant(second);
        const { access: unaffected } = await grant(other);
        for (const t of [access, sameDeveloper, unaffected]) assert.ok(await found(t.hash));
        await store.setDeveloperStatus(f.developer.email, 'disabled');
        assert.equal(await found(access.hash), false);
        assert.equal(await found(sameDeveloper.hash), false, "every app of the developer");
        assert.ok(await found(unaffected.hash));
        await store.setDeveloperStatus(f.developer.email, 'active');
        assert.equal(await found(access.hash), false, 'not found again once the developer is active');
        assert.equal(await found(sameDeveloper.hash), false);
        assert.ok(await found(unaffected.hash));
      });
    });

    describe('revocation (RFC 7009)', () => {
      it("revokes the token's family, its refresh and access tokens, for its own app only", async () => {
        const f = await seed();
        const other = await seed({ app: 'other' });
        const { access, refresh } = await grant(f);
        const sibling = await grant(f);
        assert.ok(await found(access.hash), 'cached');
        assert.equal(await store.revokeToken(refresh.hash, other.app.id, T0), false, "another app's token");
        assert.ok(await found(access.hash));
        assert.equal(await store.revokeToken(hash(), f.app.id, T0), false, 'unknown');
        assert.equal(await store.revokeToken(refresh.hash, f.app.id, T0), true);
        assert.equal(await found(access.hash), false, 'the access token of the family');
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE)), { ok: false, reason: 'invalid' });
        assert.ok(await found(sibling.access.hash), 'another grant of the same app');
        assert.equal(await store.revokeToken(sibling.access.hash, f.app.id, T0), true, 'an access token revokes its family too');
        assert.equal(await found(sibling.access.hash), false);
        assert.equal((await store.rotateRefreshToken(rotation(f, sibling.refresh, T0 + MINUTE))).ok, false);
      });
    });

    describe('refresh token rotation', () => {
      it('rotates: saves the new access and refresh tokens and returns the previous one', async () => {
        const f = await seed({ app: 'shop' });
        const { refresh } = await grant(f);
        const now = T0 + 10 * MINUTE;
        const req = rotation(f, refresh, now);
        const result = await store.rotateRefreshToken(req);
        assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read orders:write' });
        if (result.ok) assert.ok(Buffer.isBuffer(result.previous.hash));

        const access = await store.findAccessToken(req.accessHash, now + 1);
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
        assert.equal(await store.findAccessToken(req.refreshHash, now + 1), undefined, 'the new refresh token is not an access token');

        // The new refresh token was saved: it rotates in turn.
        const next = await store.rotateRefreshToken({ ...rotation(f, refresh, now + MINUTE), hash: req.refreshHash });
        assert.equal(next.ok, true);
        if (next.ok) {
          assert.ok(next.previous.hash.equals(req.refreshHash));
          assert.equal(next.previous.kind, 'refresh');
          assert.equal(next.previous.family, refresh.family);
          assert.equal(next.previous.issuedAt, now);
          assert.equal(next.previous.expiresAt, req.refreshExpiresAt);
        }
      });

      it('a second use within reuseGraceMs is refused without revoking; after it, the family is revoked', async () => {
        const f = await seed();
        const { refresh } = await grant(f);
        const first = rotation(f, refresh, T0 + MINUTE);
        assert.equal((await store.rotateRefreshToken(first)).ok, true);
        const again = (now: number) => store.rotateRefreshToken({ ...rotation(f, refresh, now), reuseGraceMs: 10_000 });
        assert.deepEqual(await again(T0 + MINUTE + 9_999), { ok: false, reason: 'invalid' });
        assert.ok(await found(first.accessHash, T0 + MINUTE + 9_999), 'the family lives on within the grace');
        assert.deepEqual(await again(T0 + MINUTE + 10_000), { ok: false, reason: 'reused' });
        assert.equal(await found(first.accessHash, T0 + MINUTE + 10_001), false);
      });

      it('a second use of a rotated refresh token revokes the whole family', async () => {
        const f = await seed();
        const { access: original, refresh } = await grant(f);
        const unrelated = await grant(f);
        const first = rotation(f, refresh, T0 + MINUTE);
        assert.equal((await store.rotateRefreshToken(first)).ok, true);
        assert.ok(await found(first.accessHash, T0 + 2 * MINUTE));
        assert.ok(await found(original.hash, T0 + 2 * MINUTE));

        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, T0 + 3 * MINUTE)), { ok: false, reason: 'reused' });
        assert.equal(await found(first.accessHash, T0 + 4 * MINUTE), false, 'the new access token is revoked');
        assert.equal(await found(original.hash, T0 + 4 * MINUTE), false, 'the first access token is revoked');
        assert.deepEqual(
          await store.rotateRefreshToken({ ...rotation(f, refresh, T0 + 5 * MINUTE), hash: first.refreshHash }),
          { ok: false, reason: 'invalid' },
          'the new refresh token is revoked',
        );
        assert.ok(await found(unrelated.access.hash, T0 + 4 * MINUTE), 'another family is untouched');
        assert.equal((await store.rotateRefreshToken(rotation(f, unrelated.refresh, T0 + 6 * MINUTE))).ok, true);
      });

      it('refuses a refresh token of another app, without consuming it', async () => {
        const f = await seed();
        const other = await seed({ app: 'other' });
        const { refresh } = await grant(f);
        assert.deepEqual(await store.rotateRefreshToken({ ...rotation(f, refresh, T0 + MINUTE), appId: other.app.id }), { ok: false, reason: 'invalid' });
        assert.equal((await store.rotateRefreshToken(rotation(f, refresh, T0 + 2 * MINUTE))).ok, true);
      });

      it('refuses an expired refresh token', async () => {
        const f = await seed();
        const { refresh } = await grant(f);
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt)), { ok: false, reason: 'invalid' });
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt + HOUR)), { ok: false, reason: 'invalid' });
        assert.equal((await store.rotateRefreshToken(rotation(f, refresh, refresh.expiresAt - 1))).ok, true);
      });

      it('refuses unknown hashes and access tokens', async () => {
        const f = await seed();
        const { access } = await grant(f);
        assert.deepEqual(await store.rotateRefreshToken({ ...rotation(f, access, T0 + MINUTE), hash: hash() }), { ok: false, reason: 'invalid' });
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, access, T0 + MINUTE)), { ok: false, reason: 'invalid' });
        assert.ok(await found(access.hash), 'the access token presented as a refresh token is still valid');
      });

      it('narrows the scope', async () => {
        const f = await seed();
        const { refresh } = await grant(f, { scope: 'orders:read orders:write' });
        const req = rotation(f, refresh, T0 + MINUTE, ['orders:read']);
        const result = await store.rotateRefreshToken(req);
        assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read' });
        assert.equal((await store.findAccessToken(req.accessHash, T0 + 2 * MINUTE))?.scope, 'orders:read');
        // The narrowed refresh token cannot widen back.
        assert.deepEqual(
          await store.rotateRefreshToken({ ...rotation(f, refresh, T0 + 3 * MINUTE, ['orders:write']), hash: req.refreshHash }),
          { ok: false, reason: 'scope' },
        );
        const none = await store.rotateRefreshToken({ ...rotation(f, refresh, T0 + 4 * MINUTE, []), hash: req.refreshHash });
        assert.deepEqual(none.ok && none.scope, '');
      });

      it('refuses a wider scope without consuming the refresh token', async () => {
        const f = await seed();
        const { refresh } = await grant(f, { scope: 'orders:read' });
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE, ['orders:read', 'orders:write'])), { ok: false, reason: 'scope' });
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE, ['orders:admin'])), { ok: false, reason: 'scope' });
        const result = await store.rotateRefreshToken(rotation(f, refresh, T0 + 2 * MINUTE));
        assert.deepEqual(result, { ok: true, previous: refresh, scope: 'orders:read' }, 'not consumed, so not a reuse');
      });

      it('refuses a refresh token issued through a revoked credential', async () => {
        const f = await seed();
        const { refresh } = await grant(f);
        await store.revokeCredential(f.key);
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE)), { ok: false, reason: 'invalid' });
      });
    });

    describe('purgeExpired', () => {
      it('removes expired tokens and returns how many', async () => {
        const f = await seed();
        const now = T0 + 2 * HOUR;
        const expiredAccess = token(f, { expiresAt: now - 1 });
        const expiringNow = token(f, { expiresAt: now });
        const expiredRefresh = token(f, { kind: 'refresh', expiresAt: now - HOUR });
        const live = token(f, { expiresAt: now + 1 });
        const liveRefresh = token(f, { kind: 'refresh', expiresAt: now + HOUR });
        await store.saveTokens([expiredAccess, expiringNow, expiredRefresh, live, liveRefresh]);
        assert.equal(await store.purgeExpired(now), 3);
        assert.equal(await store.purgeExpired(now), 0);
        assert.ok(await found(live.hash, now));
        assert.equal((await store.rotateRefreshToken(rotation(f, liveRefresh, now))).ok, true);
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, expiredRefresh, now - 2 * HOUR)), { ok: false, reason: 'invalid' }, 'purged');
        assert.equal(await store.findAccessToken(expiredAccess.hash, now - 2 * HOUR), undefined, 'purged');
      });

      it('returns 0 on an empty store', async () => {
        assert.equal(await store.purgeExpired(T0), 0);
      });
    });

    describe('durability', () => {
      it('keeps everything across close and reopen', async (t) => {
        const reopen = opened.reopen;
        if (reopen === undefined) {
          t.skip('the driver is not durable');
          return;
        }
        const f = await seed({ app: 'shop' });
        const revoked = await seed({ app: 'revoked' });
        await store.revokeCredential(revoked.key);
        await store.setAppStatus(f.app.id, 'disabled');
        const { access, refresh } = await grant(f);
        const developers = await store.listDevelopers();
        const apps = await store.listApps();
        // A save still in flight when the store closes is written (or refused), never lost silently.
        const late = token(f);
        const saving = store.saveTokens([late]);
        await store.close();
        await saving;

        const again = await reopen();
        assert.deepEqual(await again.listDevelopers(), developers);
        assert.deepEqual(await again.listApps(), apps);
        const client = await again.findClient(f.key);
        assert.ok(client?.secretHash.equals(f.secretHash));
        assert.equal((await again.findClient(revoked.key))?.credential.status, 'revoked');
        assert.equal(await again.findAccessToken(access.hash, T0 + MINUTE), undefined, 'the app is still disabled');
        await again.setAppStatus(f.app.id, 'active');
        assert.deepEqual(await again.findAccessToken(access.hash, T0 + MINUTE), { ...access, appName: 'shop', developerEmail: 'dev@example.com' });
        assert.ok(await again.findAccessToken(late.hash, T0 + MINUTE), 'the save made just before close');
        const rotated = await again.rotateRefreshToken(rotation(f, refresh, T0 + MINUTE));
        assert.deepEqual(rotated, { ok: true, previous: refresh, scope: refresh.scope });
      });
    });

    describe('portal accounts', () => {
      it('creates a developer with a password, or without; sets a password', async () => {
        await store.createDeveloper({ email: 'p@example.com', name: 'P', now: T0 });
        await store.createDeveloper({ email: 'q@example.com', name: 'Q', now: T0, passwordHash: 'hq' });
        assert.equal(await store.findPasswordHash('p@example.com'), null);
        assert.equal(await store.findPasswordHash('q@example.com'), 'hq');
        assert.equal(await store.findPasswordHash('nobody@example.com'), undefined);
        assert.equal(await store.setPasswordHash('p@example.com', 'h1'), true);
        assert.equal(await store.findPasswordHash('p@example.com'), 'h1');
        assert.equal(await store.setPasswordHash('nobody@example.com', 'h'), false);
      });

      it('an invitation sets the password once, before it expires, for its own email only; it ends the sessions', async () => {
        const dev = await store.createDeveloper({ email: 'i@example.com', name: 'I', now: T0, passwordHash: 'h' });
        await store.createDeveloper({ email: 'j@example.com', name: 'J', now: T0 });
        const code = hash();
        assert.equal(await store.setInvitation('nobody@example.com', code, T0 + HOUR), false);
        assert.equal(await store.setInvitation('i@example.com', hash(), T0 + HOUR), true);
        assert.equal(await store.setInvitation('i@example.com', code, T0 + HOUR), true, 'replaces the earlier one');
        const session = hash();
        await store.createSession({ idHash: session, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        assert.equal(await store.acceptInvitation({ email: 'j@example.com', codeHash: code, passwordHash: 'x', now: T0 }), undefined, 'another email');
        assert.equal(await store.acceptInvitation({ email: 'i@example.com', codeHash: hash(), passwordHash: 'x', now: T0 }), undefined, 'another code');
        assert.equal(await store.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'x', now: T0 + HOUR }), undefined, 'expired');
        assert.deepEqual(await store.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'hi', now: T0 + 1 }), dev);
        const unverified = await store.createDeveloper({ email: 'u@example.com', name: 'U', now: T0, passwordHash: 'hu', verified: false });
        await store.setInvitation('u@example.com', code, T0 + HOUR);
        assert.deepEqual(await store.acceptInvitation({ email: 'u@example.com', codeHash: code, passwordHash: 'x', now: T0 + 1 }), { ...unverified, verified: true }, 'an invitation verifies');
        assert.equal(await store.findPasswordHash('i@example.com'), 'hi');
        assert.equal(await store.findSession(session, T0 + 2), undefined, 'sessions ended');
        assert.equal(await store.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'again', now: T0 + 2 }), undefined, 'spent');
        assert.equal(await store.findPasswordHash('j@example.com'), null);
      });

      it('finds a session until it expires, is deleted, or its developer is disabled (which ends it for good)', async () => {
        const dev = await store.createDeveloper({ email: 's@example.com', name: 'S', now: T0, passwordHash: 'h' });
        const [a, b, c] = [hash(), hash(), hash()];
        await store.createSession({ idHash: a, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        await store.createSession({ idHash: b, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        await store.createSession({ idHash: c, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        assert.deepEqual(await store.findSession(a, T0 + 1), dev);
        assert.equal(await store.findSession(a, T0 + HOUR), undefined, 'expired at expiresAt');
        assert.equal(await store.findSession(hash(), T0), undefined);
        await store.deleteSession(a);
        assert.equal(await store.findSession(a, T0 + 1), undefined);
        await store.setDeveloperStatus(dev.email, 'disabled');
        assert.equal(await store.findSession(b, T0 + 1), undefined, 'developer disabled');
        await store.setDeveloperStatus(dev.email, 'active');
        assert.equal(await store.findSession(b, T0 + 1), undefined, 'enabling does not bring it back');
        assert.equal(await store.findSession(c, T0 + 1), undefined);
        const d = hash();
        await store.createSession({ idHash: d, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        await store.deleteSessions(dev.id);
        assert.equal(await store.findSession(d, T0 + 1), undefined);
      });

      it('starts a session only while the password checked is still the developer\'s, and the developer active; finds it only once confirmed', async () => {
        const dev = await store.createDeveloper({ email: 'p@example.com', name: 'P', now: T0, passwordHash: 'h1' });
        const session = (passwordHash: string, developerId = dev.id) => store.createSession({ idHash: hash(), developerId, passwordHash, now: T0, expiresAt: T0 + HOUR });
        assert.equal(await session('h1'), true);
        await store.setPasswordHash('p@example.com', 'h2');
        assert.equal(await session('h1'), false, 'a login checked against the old password, finishing after the change');
        assert.equal(await session('h2'), true);
        assert.equal(await session('h2', 'no-such-id'), false, 'a developer replaced meanwhile');
        await store.setDeveloperStatus('p@example.com', 'disabled');
        assert.equal(await session('h2'), false, 'a disabled developer');
        const unconfirmed = await store.createDeveloper({ email: 'q@example.com', name: 'Q', now: T0, passwordHash: 'h', verified: false });
        const id = hash();
        assert.equal(await store.createSession({ idHash: id, developerId: unconfirmed.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR }), true);
        assert.equal(await store.findSession(id, T0 + 1), undefined, 'not confirmed');
      });

      it('a mailed confirmation link verifies its own developer, once, before it expires; a new one replaces the earlier', async () => {
        const dev = await store.createDeveloper({ email: 'v@example.com', name: 'V', now: T0, passwordHash: 'h', verified: false });
        const other = await store.createDeveloper({ email: 'w@example.com', name: 'W', now: T0, passwordHash: 'h', verified: false });
        assert.equal(dev.verified, false);
        assert.equal((await store.findDeveloper('v@example.com'))?.verified, false);
        const [first, link] = [hash(), hash()];
        await store.saveEmailToken({ hash: first, developerId: dev.id, purpose: 'verify', now: T0, expiresAt: T0 + HOUR });
        await store.saveEmailToken({ hash: link, developerId: dev.id, purpose: 'verify', now: T0, expiresAt: T0 + HOUR });
        assert.equal(await store.confirmEmail({ hash: first, developerId: dev.id, now: T0 + 1 }), undefined, 'replaced');
        assert.equal(await store.confirmEmail({ hash: link, developerId: other.id, now: T0 + 1 }), undefined, "another developer's");
        assert.equal(await store.confirmEmail({ hash: link, developerId: dev.id, now: T0 + HOUR }), undefined, 'expired');
        assert.equal(await store.resetPassword({ hash: link, passwordHash: 'x', now: T0 + 1 }), undefined, 'not a reset link');
        assert.deepEqual(await store.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 1 }), { ...dev, verified: true });
        assert.equal((await store.findDeveloper('v@example.com'))?.verified, true);
        assert.equal(await store.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 2 }), undefined, 'spent');
        assert.equal((await store.findDeveloper('w@example.com'))?.verified, false);
      });

      it('a mailed reset link sets the password once, verifies the developer and ends their sessions', async () => {
        const dev = await store.createDeveloper({ email: 'r@example.com', name: 'R', now: T0, passwordHash: 'old', verified: false });
        const session = hash();
        await store.createSession({ idHash: session, developerId: dev.id, passwordHash: 'old', now: T0, expiresAt: T0 + HOUR });
        const link = hash();
        await store.saveEmailToken({ hash: link, developerId: dev.id, purpose: 'reset', now: T0, expiresAt: T0 + HOUR });
        assert.equal(await store.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 1 }), undefined, 'not a confirmation link');
        assert.equal(await store.resetPassword({ hash: link, passwordHash: 'new', now: T0 + HOUR }), undefined, 'expired');
        assert.equal(await store.findPasswordHash('r@example.com'), 'old');
        assert.deepEqual(await store.resetPassword({ hash: link, passwordHash: 'new', now: T0 + 1 }), { ...dev, verified: true });
        assert.equal(await store.findPasswordHash('r@example.com'), 'new');
        assert.equal(await store.findSession(session, T0 + 2), undefined, 'sessions ended');
        assert.equal(await store.resetPassword({ hash: link, passwordHash: 'again', now: T0 + 2 }), undefined, 'spent');
        assert.equal(await store.findPasswordHash('r@example.com'), 'new');
      });

      it('replaces an unverified developer with its apps, keys, tokens and sessions; never a verified one', async () => {
        const squatter = await store.createDeveloper({ email: 'partner@example.org', name: 'Squatter', now: T0, passwordHash: 'h', verified: false });
        const f = await seed({ email: 'partner@example.org' });
        const { access } = await grant(f);
        assert.ok(await found(access.hash), 'cached before the replacement');
        const session = hash();
        await store.createSession({ idHash: session, developerId: squatter.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
        const fresh = await store.replaceUnverifiedDeveloper({ email: 'partner@example.org', name: 'Partner', now: T0 + 2 });
        assert.ok(fresh);
        assert.notEqual(fresh.id, squatter.id);
        assert.deepEqual(fresh, { id: fresh.id, email: 'partner@example.org', name: 'Partner', status: 'active', verified: true, createdAt: T0 + 2 });
        assert.deepEqual(await store.findDeveloper('partner@example.org'), fresh);
        assert.equal(await store.findPasswordHash('partner@example.org'), null, 'no password: it comes with an invitation');
        assert.deepEqual(await store.listApps({ developerEmail: 'partner@example.org' }), []);
        assert.equal(await store.findClient(f.key), undefined, 'the key is gone');
        assert.equal(await found(access.hash), false, 'its tokens stopped');
        assert.equal(await store.findSession(session, T0 + 3), undefined);
        assert.equal(await store.replaceUnverifiedDeveloper({ email: 'partner@example.org', name: 'Again', now: T0 + 3 }), undefined, 'now verified');
        assert.equal(await store.replaceUnverifiedDeveloper({ email: 'nobody@example.org', name: 'N', now: T0 + 3 }), undefined);
        assert.deepEqual(await store.findDeveloper('partner@example.org'), fresh);
      });

      it('counts login attempts per account with backoff: free ones, then doubling delays from the last, capped; all accounts or none', async () => {
        const rule = { free: 2, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: HOUR };
        const f = [{ account: 'f', rule }];
        assert.deepEqual(await store.countAttempts(f, T0), { allowed: true });
        assert.deepEqual(await store.countAttempts(f, T0 + 10), { allowed: true });
        assert.deepEqual(await store.countAttempts(f, T0 + 20), { allowed: false, retryAt: T0 + 1010 }, '1 s after the last counted attempt');
        assert.deepEqual(await store.countAttempts(f, T0 + 1010), { allowed: true });
        assert.deepEqual(await store.countAttempts(f, T0 + 1011), { allowed: false, retryAt: T0 + 3010 }, 'then 2 s');
        assert.deepEqual(await store.countAttempts(f, T0 + 3010), { allowed: true });
        assert.deepEqual(await store.countAttempts(f, T0 + 3010), { allowed: false, retryAt: T0 + 7010 }, 'then 4 s');
        assert.deepEqual(await store.countAttempts(f, T0 + 7010), { allowed: true });
        assert.deepEqual(await store.countAttempts(f, T0 + 7010), { allowed: false, retryAt: T0 + 11_010 }, 'capped at 4 s');
        // Two accounts: one that must wait stops the attempt from counting against the other.
        const both = [{ account: 'g', rule }, ...f];
        assert.deepEqual(await store.countAttempts(both, T0 + 7011), { allowed: false, retryAt: T0 + 11_010 });
        assert.deepEqual(await store.countAttempts([{ account: 'g', rule }], T0 + 7012), { allowed: true });
        assert.deepEqual(await store.countAttempts([{ account: 'g', rule }], T0 + 7013), { allowed: true }, 'g counted once only');
        await store.takeBackLoginFailure('f');
        assert.deepEqual(await store.countAttempts(f, T0 + 7011), { allowed: false, retryAt: T0 + 11_010 }, 'one taken back: 4 s still (the 4th delay)');
        await store.clearLoginFailures('f');
        assert.deepEqual(await store.countAttempts(f, T0 + 7012), { allowed: true }, 'cleared');
        assert.deepEqual(await store.countAttempts([{ account: 'g', rule }], T0 + 7013 + HOUR), { allowed: true }, 'a quiet hour: g starts over');
        assert.deepEqual(await store.countAttempts([{ account: 'g', rule }], T0 + 7014 + HOUR), { allowed: true });
        await store.takeBackLoginFailure('nobody');
      });

      it('counts an attempt against an account that gates only while another has failures: always counted, holding back only then', async () => {
        const ceiling = { free: 1, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: HOUR };
        const own = { free: 5, baseDelayMs: 1000, maxDelayMs: 4000, resetAfterMs: 10_000 };
        const by = (party: string) => [{ account: `own-${party}`, rule: own }, { account: 'shared', rule: ceiling, gatesOnlyIfFailing: `own-${party}` }];
        assert.deepEqual(await store.countAttempts(by('a'), T0), { allowed: true });
        assert.deepEqual(await store.countAttempts(by('a'), T0 + 1), { allowed: false, retryAt: T0 + 1000 }, 'a has failed: the ceiling holds it back');
        assert.deepEqual(await store.countAttempts(by('b'), T0 + 2), { allowed: true }, 'b is clean: admitted past the ceiling');
        assert.deepEqual(await store.countAttempts(by('a'), T0 + 3), { allowed: false, retryAt: T0 + 2002 }, "b's attempt counted against the ceiling: 2 s from it");
        assert.deepEqual(await store.countAttempts(by('b'), T0 + 4), { allowed: false, retryAt: T0 + 2002 }, 'b has failed now too');
        await store.takeBackLoginFailure('own-b');
        assert.deepEqual(await store.countAttempts(by('b'), T0 + 5), { allowed: true }, "b's only attempt taken back: clean again");
        await store.clearLoginFailures('own-b');
        assert.deepEqual(await store.countAttempts(by('b'), T0 + 6), { allowed: true }, 'b cleared: clean again');
        assert.deepEqual(await store.countAttempts(by('a'), T0 + 10_000), { allowed: true }, "a quiet spell of a's own window: a is clean again");
        assert.deepEqual(await store.countAttempts(by('a'), T0 + 10_001), { allowed: false, retryAt: T0 + 10_000 + 4000 }, 'the ceiling kept counting: capped at 4 s');
        await assert.rejects(store.countAttempts([{ account: 'shared', rule: ceiling, gatesOnlyIfFailing: 'own-c' }], T0 + 10_002), {
          name: 'TypeError',
          message: "gatesOnlyIfFailing: 'own-c' is not an account of this call",
        });
      });
    });

    describe('bounds and approval of apps', () => {
      it('refuses an app beyond the developer\'s bound, atomically', async () => {
        const f = await seed();
        const create = (name: string, max: number) =>
          store.createApp({ developerId: f.developer.id, name, product: 'orders', key: newKey(), secretHash: hash(), now: T0, maxAppsOfDeveloper: max });
        await create('second', 2);
        await assert.rejects(create('third', 2), (err: unknown) => err instanceof StoreError && err.code === 'limit');
        assert.equal((await store.listApps({ developerEmail: f.developer.email })).length, 2, 'nothing written');
        await create('third', 3);
      });

      it('creates a pending app; approving it lets its key through, at once', async () => {
        const developer = await store.createDeveloper({ email: 'p@example.com', name: 'P', now: T0 });
        const key = newKey();
        const app = await store.createApp({ developerId: developer.id, name: 'pending', product: 'orders', key, secretHash: hash(), now: T0, approval: 'pending' });
        assert.equal(app.approval, 'pending');
        assert.equal((await store.findClient(key))?.app.approval, 'pending', 'cached as pending');
        assert.deepEqual(await store.setAppApproval(app.id, 'approved'), { ...app, approval: 'approved' });
        assert.equal((await store.findClient(key))?.app.approval, 'approved', 'the cache was evicted');
        assert.equal(await store.setAppApproval('no-such-app', 'approved'), undefined);
      });

      it('deletes only an active app of an active developer when asked to', async () => {
        const f = await seed();
        await store.setAppStatus(f.app.id, 'disabled');
        assert.equal(await store.deleteApp(f.app.id, { onlyIfActive: true }), false);
        assert.ok(await store.findAppById(f.app.id), 'still there');
        await store.setAppStatus(f.app.id, 'active');
        await store.setDeveloperStatus(f.developer.email, 'disabled');
        assert.equal(await store.deleteApp(f.app.id, { onlyIfActive: true }), false, 'developer disabled');
        await store.setDeveloperStatus(f.developer.email, 'active');
        assert.equal(await store.deleteApp(f.app.id, { onlyIfActive: true }), true);
        assert.equal(await store.findAppById(f.app.id), undefined);
      });
    });

    describe('rotation and deletion of apps', () => {
      it('a rotated key and its tokens keep working until the overlap ends; the new key from now on', async () => {
        const f = await seed();
        const { access } = await grant(f);
        assert.ok(await found(access.hash, T0 + MINUTE), 'cached before the rotation');
        const key = newKey();
        await store.rotateCredential({ appId: f.app.id, key, secretHash: hash(), now: T0 + MINUTE, overlapUntil: T0 + 10 * MINUTE });
        const creds = await store.listCredentials(f.app.id);
        assert.deepEqual(creds.map((c) => [c.key, c.status, c.expiresAt]), [[f.key, 'approved', T0 + 10 * MINUTE], [key, 'approved', null]]);
        assert.equal((await store.findClient(f.key))?.credential.expiresAt, T0 + 10 * MINUTE, 'the cached client was read again');
        assert.equal((await store.findAppByKey(key))?.id, f.app.id);
        assert.ok(await found(access.hash, T0 + 10 * MINUTE - 1));
        assert.equal(await found(access.hash, T0 + 10 * MINUTE), false, 'the old key ended: its token too');
        // Rotating again never lengthens an overlap already set.
        await store.rotateCredential({ appId: f.app.id, key: newKey(), secretHash: hash(), now: T0 + 2 * MINUTE, overlapUntil: T0 + 60 * MINUTE });
        const again = await store.listCredentials(f.app.id);
        assert.deepEqual(again.map((c) => c.expiresAt), [T0 + 10 * MINUTE, T0 + 60 * MINUTE, null]);
      });

      it("a rotated key's refresh tokens work through the overlap, then not", async () => {
        const f = await seed();
        const early = await grant(f);
        const late = await grant(f);
        await store.rotateCredential({ appId: f.app.id, key: newKey(), secretHash: hash(), now: T0, overlapUntil: T0 + 10 * MINUTE });
        assert.equal((await store.rotateRefreshToken(rotation(f, early.refresh, T0 + 10 * MINUTE - 1))).ok, true);
        assert.deepEqual(await store.rotateRefreshToken(rotation(f, late.refresh, T0 + 10 * MINUTE)), { ok: false, reason: 'invalid' });
      });

      it('deletes an app with its credentials, tokens and usage; its tokens stop at once', async () => {
        const f = await seed();
        const other = await seed({ app: 'other' });
        const { access } = await grant(f);
        const kept = await grant(other);
        assert.ok(await found(access.hash));
        await store.addUsage([{ appId: f.app.id, hour: T0, count: 3 }]);
        assert.equal(await store.deleteApp(f.app.id), true);
        assert.equal(await store.deleteApp(f.app.id), false);
        assert.equal(await found(access.hash), false);
        assert.equal(await store.findClient(f.key), undefined);
        assert.equal(await store.findAppById(f.app.id), undefined);
        assert.deepEqual(await store.usage(f.app.id, 0), []);
        assert.ok(await found(kept.access.hash), "another app's token");
        assert.deepEqual(await store.createApp({ developerId: f.developer.id, name: 'app', product: 'orders', key: newKey(), secretHash: hash(), now: T0 }).then((a) => a.name), 'app', 'the name is free again');
      });
    });

    describe('usage', () => {
      it('adds calls per app and hour, and lists them from an hour on', async () => {
        await store.addUsage([{ appId: 'a', hour: T0, count: 2 }, { appId: 'a', hour: T0 + HOUR, count: 1 }, { appId: 'b', hour: T0, count: 5 }]);
        await store.addUsage([{ appId: 'a', hour: T0, count: 3 }]);
        assert.deepEqual(await store.usage('a', T0), [{ appId: 'a', hour: T0, count: 5 }, { appId: 'a', hour: T0 + HOUR, count: 1 }]);
        assert.deepEqual(await store.usage('a', T0 + 1), [{ appId: 'a', hour: T0 + HOUR, count: 1 }]);
        assert.deepEqual(await store.usage('c', 0), []);
      });
    });

    describe('quota windows', () => {
      it('saves and loads windows, overwriting by key, and purges them one interval after they end', async () => {
        const w = (key: string, start: number, count: number, previous = 0) => ({ key, start, end: start + MINUTE, count, previous });
        await store.saveQuotaWindows([w('a', T0, 3, 7), w('b', T0, 1)]);
        await store.saveQuotaWindows([w('a', T0, 4, 7)]);
        const byKey = (list: { key: string }[]) => [...list].sort((x, y) => x.key.localeCompare(y.key));
        assert.deepEqual(byKey(await store.loadQuotaWindows(T0 + 1)), [w('a', T0, 4, 7), w('b', T0, 1)]);
        // Ended, but still the previous window of a rolling quota.
        assert.equal((await store.loadQuotaWindows(T0 + MINUTE + 1)).length, 2);
        await store.purgeExpired(T0 + 2 * MINUTE);
        assert.deepEqual(await store.loadQuotaWindows(T0), []);
      });
    });
  });
}
