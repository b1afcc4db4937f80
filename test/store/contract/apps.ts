// The store contract, AppStore: apps and their credentials (what client authentication reads,
// through the cache), bounds and approval, rotation of keys and deletion of apps.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import { StoreError, type App } from '../../../src/store/port/index.ts';
import { HOUR, MINUTE, T0, hash, isConflict, itWithStore, newKey, rotation, use, type OpenStore } from './fixture.ts';

export function appsContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('apps', () => {
    it('creates an app together with its credential', async ({ store, seed }) => {
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
        type: 'confidential',
        redirectUris: [],
      });
      assert.deepEqual(await store.apps.listCredentials(app.id), [{ key, appId: app.id, status: 'approved', expiresAt: null, createdAt: T0 + 1 }]);
      const client = await store.cache.findClient(key);
      assert.ok(client);
      assert.ok(client.secretHash.equals(secretHash));
    });

    it('refuses a duplicate name for the same developer, and writes nothing', async ({ store, seed }) => {
      const { developer, app } = await seed({ app: 'shop' });
      const key = newKey();
      await assert.rejects(store.apps.createApp({ developerId: developer.id, name: 'shop', product: 'hello', key, secretHash: randomBytes(32), now: T0 + 5 }), isConflict);
      assert.deepEqual(await store.apps.listApps(), [app]);
      assert.equal(await store.cache.findClient(key), undefined, 'the credential of the refused app was not written');
      assert.equal(await store.apps.findAppByKey(key), undefined);
      assert.deepEqual(await store.apps.findApp(developer.email, 'shop'), app);
    });

    it('writes no app when its credential cannot be written', async ({ store, seed }) => {
      const { developer, key } = await seed({ app: 'shop' });
      await assert.rejects(store.apps.createApp({ developerId: developer.id, name: 'second', product: 'hello', key, secretHash: randomBytes(32), now: T0 + 5 }));
      assert.equal(await store.apps.findApp(developer.email, 'second'), undefined);
      assert.equal((await store.apps.listApps()).length, 1);
    });

    it('allows the same app name for another developer', async ({ store, seed }) => {
      const mine = await seed({ email: 'a@example.com', app: 'shop' });
      const theirs = await seed({ email: 'b@example.com', app: 'shop' });
      assert.notEqual(mine.app.id, theirs.app.id);
      assert.deepEqual(await store.apps.findApp('a@example.com', 'shop'), mine.app);
      assert.deepEqual(await store.apps.findApp('b@example.com', 'shop'), theirs.app);
    });

    it('finds an app by developer and name, and by key', async ({ store, seed }) => {
      const { app, key } = await seed({ app: 'shop' });
      assert.deepEqual(await store.apps.findApp('dev@example.com', 'shop'), app);
      assert.equal(await store.apps.findApp('dev@example.com', 'other'), undefined);
      assert.equal(await store.apps.findApp('other@example.com', 'shop'), undefined);
      assert.deepEqual(await store.apps.findAppByKey(key), app);
      assert.equal(await store.apps.findAppByKey('no-such-key'), undefined);
    });

    it('lists apps, optionally of one developer', async ({ store, seed }) => {
      assert.deepEqual(await store.apps.listApps(), []);
      const a1 = await seed({ email: 'a@example.com', app: 'one' });
      const a2 = await seed({ email: 'a@example.com', app: 'two' });
      const b1 = await seed({ email: 'b@example.com', app: 'one' });
      const byId = (x: App, y: App) => x.id.localeCompare(y.id);
      assert.deepEqual([...(await store.apps.listApps())].sort(byId), [a1.app, a2.app, b1.app].sort(byId));
      assert.deepEqual([...(await store.apps.listApps({}))].sort(byId), [a1.app, a2.app, b1.app].sort(byId));
      assert.deepEqual([...(await store.apps.listApps({ developerEmail: 'a@example.com' }))].sort(byId), [a1.app, a2.app].sort(byId));
      assert.deepEqual(await store.apps.listApps({ developerEmail: 'b@example.com' }), [b1.app]);
      assert.deepEqual(await store.apps.listApps({ developerEmail: 'nobody@example.com' }), []);
    });

    it('creates a public app with its redirect URIs, in the order given, and reads them back everywhere', async ({ store }) => {
      const developer = await store.accounts.createDeveloper({ email: 'spa@example.com', name: 'Spa', now: T0 });
      const key = newKey();
      const redirectUris = ['https://spa.example.com/callback', 'http://127.0.0.1/cb', 'com.example.app:/oauth'];
      const app = await store.apps.createApp({ developerId: developer.id, name: 'spa', product: 'orders', key, secretHash: hash(), now: T0, type: 'public', redirectUris });
      assert.equal(app.type, 'public');
      assert.deepEqual(app.redirectUris, redirectUris);
      assert.deepEqual(await store.apps.findAppById(app.id), app);
      assert.deepEqual(await store.apps.findAppByKey(key), app);
      assert.deepEqual(await store.apps.findApp(developer.email, 'spa'), app);
      assert.deepEqual(await store.apps.listApps({ developerEmail: developer.email }), [app]);
      assert.deepEqual((await store.cache.findClient(key))?.app, app);
      const confidential = await store.apps.createApp({
        developerId: developer.id,
        name: 'web',
        product: 'orders',
        key: newKey(),
        secretHash: hash(),
        now: T0,
        redirectUris: ['https://web.example.com/cb'],
      });
      assert.equal(confidential.type, 'confidential');
      assert.deepEqual(confidential.redirectUris, ['https://web.example.com/cb']);
    });

    it("replaces an app's redirect URIs; a client read through the cache is read again with them", async ({ store, seed }) => {
      const { app, key } = await seed();
      assert.deepEqual((await store.cache.findClient(key))?.app.redirectUris, [], 'cached');
      const uris = ['https://b.example.com/cb', 'https://a.example.com/cb'];
      assert.deepEqual(await store.apps.setRedirectUris(app.id, uris, T0 + 2), { ...app, redirectUris: uris });
      assert.deepEqual((await store.cache.findClient(key))?.app.redirectUris, uris);
      assert.deepEqual(await store.apps.findAppById(app.id), { ...app, redirectUris: uris });
      assert.deepEqual(await store.apps.setRedirectUris(app.id, [], T0 + 3), app);
      assert.deepEqual((await store.cache.findClient(key))?.app.redirectUris, []);
      assert.equal(await store.apps.setRedirectUris('no-such-app', uris, T0 + 4), undefined);
    });

    it('sets and clears how an app authenticates with a certificate; a cached client is read again with it', async ({ store, seed }) => {
      const { app, key } = await seed();
      assert.equal((await store.cache.findClient(key))?.app.certificateAuth, undefined, 'cached');
      const selfSigned = {
        method: 'self_signed_tls_client_auth' as const,
        certificates: [
          { thumbprint: 'A'.repeat(43), subject: 'CN=app', expiresAt: T0 + 1000 },
          { thumbprint: 'B'.repeat(43), subject: '', expiresAt: null },
        ],
      };
      assert.deepEqual(await store.apps.setCertificateAuth(app.id, selfSigned, T0 + 2), { ...app, certificateAuth: selfSigned });
      assert.deepEqual((await store.cache.findClient(key))?.app.certificateAuth, selfSigned);
      const pki = { method: 'tls_client_auth' as const, subject: { san: 'dns' as const, value: 'client.example.com' } };
      assert.deepEqual(await store.apps.setCertificateAuth(app.id, pki, T0 + 3), { ...app, certificateAuth: pki });
      assert.deepEqual(await store.apps.findAppById(app.id), { ...app, certificateAuth: pki });
      assert.deepEqual(await store.apps.setCertificateAuth(app.id, undefined, T0 + 4), app);
      assert.equal((await store.cache.findClient(key))?.app.certificateAuth, undefined);
      assert.equal(await store.apps.setCertificateAuth('no-such-app', pki, T0 + 5), undefined);
    });

    it('disables and re-enables an app', async ({ store, seed }) => {
      const { app, key } = await seed();
      assert.deepEqual(await store.apps.setAppStatus(app.id, 'disabled', T0 + 2), { ...app, status: 'disabled' });
      assert.equal((await store.apps.findAppByKey(key))?.status, 'disabled');
      assert.equal((await store.cache.findClient(key))?.app.status, 'disabled');
      assert.deepEqual(await store.apps.setAppStatus(app.id, 'active', T0 + 3), app);
      assert.equal(await store.apps.setAppStatus('no-such-app', 'disabled', T0 + 4), undefined);
    });
  });

  describe('credentials', () => {
    it('finds a client: credential, app, developer status and secret hash bytes', async ({ store, seed }) => {
      const { developer, app, key, secretHash } = await seed();
      const client = await store.cache.findClient(key);
      assert.ok(client);
      assert.deepEqual(client.credential, { key, appId: app.id, status: 'approved', expiresAt: null, createdAt: T0 + 1 });
      assert.deepEqual(client.app, app);
      assert.equal(client.developerStatus, 'active');
      assert.ok(Buffer.isBuffer(client.secretHash), 'secretHash is a Buffer');
      assert.equal(client.secretHash.length, 32);
      assert.ok(client.secretHash.equals(secretHash));
      assert.equal(await store.cache.findClient('no-such-key'), undefined);

      await store.accounts.setDeveloperStatus(developer.email, 'disabled', T0 + 2);
      assert.equal((await store.cache.findClient(key))?.developerStatus, 'disabled');
    });

    it('a key presented before it existed is found once this store creates it', async ({ store }) => {
      const key = newKey();
      assert.equal(await store.cache.findClient(key), undefined);
      assert.equal(await store.cache.findClient(key), undefined, 'asked twice');
      const dev = await store.accounts.createDeveloper({ email: 'late@example.com', name: 'Late', now: T0 });
      await store.apps.createApp({ developerId: dev.id, name: 'late', product: 'orders', key, secretHash: hash(), now: T0 });
      assert.equal((await store.cache.findClient(key))?.credential.key, key);
      const rotated = newKey();
      assert.equal(await store.cache.findClient(rotated), undefined);
      const app = (await store.apps.findAppByKey(key))!;
      await store.apps.rotateCredential({ appId: app.id, key: rotated, secretHash: hash(), now: T0, overlapUntil: T0 + HOUR });
      assert.equal((await store.cache.findClient(rotated))?.credential.key, rotated);
    });

    it('revokes a credential once', async ({ store, seed }) => {
      const { app, key } = await seed();
      assert.equal(await store.apps.revokeCredential(key, T0 + 2), true);
      assert.equal(await store.apps.revokeCredential(key, T0 + 3), false);
      assert.equal(await store.apps.revokeCredential('no-such-key', T0 + 3), false);
      assert.equal((await store.cache.findClient(key))?.credential.status, 'revoked');
      assert.deepEqual(
        (await store.apps.listCredentials(app.id)).map((c) => c.status),
        ['revoked'],
      );
      assert.deepEqual(await store.apps.listCredentials('no-such-app'), []);
    });

    it('a client read through the cache is read again once its app is disabled or its key revoked', async ({ store, seed }) => {
      const { app, key } = await seed();
      assert.equal((await store.cache.findClient(key))?.app.status, 'active', 'cached');
      await store.apps.setAppStatus(app.id, 'disabled', T0 + 2);
      assert.equal((await store.cache.findClient(key))?.app.status, 'disabled');
      assert.equal((await store.cache.findClient(key))?.credential.status, 'approved', 'cached again');
      await store.apps.revokeCredential(key, T0 + 3);
      assert.equal((await store.cache.findClient(key))?.credential.status, 'revoked');
    });
  });

  describe('bounds and approval of apps', () => {
    it("refuses an app beyond the developer's bound, atomically", async ({ store, seed }) => {
      const f = await seed();
      const create = (name: string, max: number) => store.apps.createApp({ developerId: f.developer.id, name, product: 'orders', key: newKey(), secretHash: hash(), now: T0, maxAppsOfDeveloper: max });
      await create('second', 2);
      await assert.rejects(create('third', 2), (err: unknown) => err instanceof StoreError && err.code === 'limit');
      assert.equal((await store.apps.listApps({ developerEmail: f.developer.email })).length, 2, 'nothing written');
      await create('third', 3);
    });

    it('creates a pending app; approving it lets its key through, at once', async ({ store }) => {
      const developer = await store.accounts.createDeveloper({ email: 'p@example.com', name: 'P', now: T0 });
      const key = newKey();
      const app = await store.apps.createApp({ developerId: developer.id, name: 'pending', product: 'orders', key, secretHash: hash(), now: T0, approval: 'pending' });
      assert.equal(app.approval, 'pending');
      assert.equal((await store.cache.findClient(key))?.app.approval, 'pending', 'cached as pending');
      assert.deepEqual(await store.apps.setAppApproval(app.id, 'approved', T0 + 1), { ...app, approval: 'approved' });
      assert.equal((await store.cache.findClient(key))?.app.approval, 'approved', 'the cache was evicted');
      assert.equal(await store.apps.setAppApproval('no-such-app', 'approved', T0 + 1), undefined);
    });

    it('deletes only an active app of an active developer when asked to', async ({ store, seed }) => {
      const f = await seed();
      await store.apps.setAppStatus(f.app.id, 'disabled', T0 + 2);
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + 2, { onlyIfActive: true }), false);
      assert.ok(await store.apps.findAppById(f.app.id), 'still there');
      await store.apps.setAppStatus(f.app.id, 'active', T0 + 2);
      await store.accounts.setDeveloperStatus(f.developer.email, 'disabled', T0 + 2);
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + 2, { onlyIfActive: true }), false, 'developer disabled');
      await store.accounts.setDeveloperStatus(f.developer.email, 'active', T0 + 2);
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + 2, { onlyIfActive: true }), true);
      assert.equal(await store.apps.findAppById(f.app.id), undefined);
    });
  });

  describe('rotation and deletion of apps', () => {
    it('a rotated key and its tokens keep working until the overlap ends; the new key from now on', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const { access } = await grant(f);
      assert.ok(await found(access.hash, T0 + MINUTE), 'cached before the rotation');
      const key = newKey();
      assert.equal(await store.apps.rotateCredential({ appId: f.app.id, key, secretHash: hash(), now: T0 + MINUTE, overlapUntil: T0 + 10 * MINUTE }), true);
      const creds = await store.apps.listCredentials(f.app.id);
      assert.deepEqual(
        creds.map((c) => [c.key, c.status, c.expiresAt]),
        [
          [f.key, 'approved', T0 + 10 * MINUTE],
          [key, 'approved', null],
        ],
      );
      assert.equal((await store.cache.findClient(f.key))?.credential.expiresAt, T0 + 10 * MINUTE, 'the cached client was read again');
      assert.equal((await store.apps.findAppByKey(key))?.id, f.app.id);
      assert.ok(await found(access.hash, T0 + 10 * MINUTE - 1));
      assert.equal(await found(access.hash, T0 + 10 * MINUTE), false, 'the old key ended: its token too');
      // Rotating again never lengthens an overlap already set.
      await store.apps.rotateCredential({ appId: f.app.id, key: newKey(), secretHash: hash(), now: T0 + 2 * MINUTE, overlapUntil: T0 + 60 * MINUTE });
      const again = await store.apps.listCredentials(f.app.id);
      assert.deepEqual(
        again.map((c) => c.expiresAt),
        [T0 + 10 * MINUTE, T0 + 60 * MINUTE, null],
      );
    });

    it("a rotated key's refresh tokens work through the overlap, then not", async ({ store, seed, grant }) => {
      const f = await seed();
      const early = await grant(f);
      const late = await grant(f);
      await store.apps.rotateCredential({ appId: f.app.id, key: newKey(), secretHash: hash(), now: T0, overlapUntil: T0 + 10 * MINUTE });
      assert.equal((await store.tokens.rotateRefreshToken(rotation(f, early.refresh, T0 + 10 * MINUTE - 1))).ok, true);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, late.refresh, T0 + 10 * MINUTE)), { ok: false, reason: 'invalid' });
    });

    it('deletes an app with its credentials, tokens and usage; its tokens stop at once', async ({ store, seed, grant, found }) => {
      const f = await seed();
      const other = await seed({ app: 'other' });
      const { access } = await grant(f);
      const kept = await grant(other);
      assert.ok(await found(access.hash));
      const hour = T0 - (T0 % HOUR);
      await store.usage.add([use(f.app.id, 'orders:list', '2xx', hour, 3), use(other.app.id, 'orders:list', '2xx', hour, 1)]);
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + MINUTE), true);
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + MINUTE), false);
      // A rotation that read the app before it was deleted writes nothing.
      const late = newKey();
      assert.equal(await store.apps.rotateCredential({ appId: f.app.id, key: late, secretHash: hash(), now: T0 + MINUTE, overlapUntil: T0 + HOUR }), false);
      assert.equal(await store.apps.addCredential({ appId: other.app.id, key: late, secretHash: hash(), now: T0 + MINUTE }).then((c) => c?.key), late, 'the key was not taken');
      assert.equal(await found(access.hash), false);
      assert.equal(await store.cache.findClient(f.key), undefined);
      assert.equal(await store.apps.findAppById(f.app.id), undefined);
      assert.deepEqual(await store.usage.since(f.app.id, 0), []);
      assert.deepEqual(await store.usage.report({ fromHour: hour, toHour: hour + HOUR }), [use(other.app.id, 'orders:list', '2xx', hour, 1)], "only the other app's usage is left");
      assert.ok(await found(kept.access.hash), "another app's token");
      assert.deepEqual(
        await store.apps.createApp({ developerId: f.developer.id, name: 'app', product: 'orders', key: newKey(), secretHash: hash(), now: T0 }).then((a) => a.name),
        'app',
        'the name is free again',
      );
    });

    it('deleting an app ends its refresh tokens and forgets its cached client', async ({ store, seed, grant }) => {
      const f = await seed();
      const { refresh } = await grant(f);
      assert.equal((await store.cache.findClient(f.key))?.app.id, f.app.id, 'cached');
      assert.equal(await store.apps.deleteApp(f.app.id, T0 + MINUTE), true);
      assert.equal(await store.cache.findClient(f.key), undefined);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, refresh, T0 + 2 * MINUTE)), { ok: false, reason: 'invalid' });
    });
  });
}
