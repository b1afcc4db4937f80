// The store contract, what the management API needs of the catalog and the tokens: an app's own
// scopes, keys imported from another gateway, deleting a developer with everything of theirs, and
// revoking every token of an app or of a user. A revoked token misses through the cache at once.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'node:test';
import type { App, Store, TokenRecord } from '../../../src/store/port/index.ts';
import { HOUR, MINUTE, T0, hash, isConflict, itWithStore, newKey, rotation, token, use, type Fixture, type OpenStore, type StoreTest } from './fixture.ts';

/** When the tests revoke: every token the fixtures save is issued before and expires after, unless a test says otherwise. */
const NOW = T0 + MINUTE;

/** Every read of an app, each as its own answer: findApp, findAppById, findAppByKey, listApps (by developer) and the client's app through the cache. */
async function appReads(store: Store, app: App, key: string): Promise<unknown[]> {
  return [
    await store.apps.findApp(app.developerEmail, app.name),
    await store.apps.findAppById(app.id),
    await store.apps.findAppByKey(key),
    (await store.apps.listApps({ developerEmail: app.developerEmail })).find((a) => a.id === app.id),
    (await store.apps.listApps()).find((a) => a.id === app.id),
    (await store.cache.findClient(key))?.app,
  ];
}

/** Saves a grant (an access and a refresh token of one family) for `subject`. */
async function grantFor(s: StoreTest, f: Fixture, subject: string | null, overrides: Partial<TokenRecord> = {}) {
  return s.grant(f, { subject, ...overrides });
}

/** Waits until `check` holds (a change reaching another instance through Redis's channel takes a moment), for 2 s at most. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return true;
    await sleep(10);
  }
  return false;
}

export function managementContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe("an app's own scopes", () => {
    it('are kept as created and given back by every read; an app created without them has no scopes property', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'ops@example.com', name: 'Ops', now: T0 });
      const create = (name: string, scopes?: readonly string[]) => {
        const key = newKey();
        return store.apps.createApp({ developerId: dev.id, name, product: 'orders', key, secretHash: hash(), now: T0, ...(scopes && { scopes }) }).then((app) => ({ app, key }));
      };
      const limited = await create('limited', ['developers:read', 'apps:write']);
      const none = await create('none', []);
      const plain = await create('plain');
      assert.deepEqual(limited.app.scopes, ['developers:read', 'apps:write']);
      assert.deepEqual(none.app.scopes, [], 'no scope at all is not the same as absent');
      assert.equal('scopes' in plain.app, false);
      for (const { app, key } of [limited, none, plain]) {
        for (const read of await appReads(store, app, key)) assert.deepEqual(read, app);
      }
      for (const read of await appReads(store, plain.app, plain.key)) assert.equal(Object.hasOwn(read as object, 'scopes'), false);
      assert.deepEqual(await store.apps.setAppStatus(limited.app.id, 'disabled', T0 + 1), { ...limited.app, status: 'disabled' }, 'kept through a change');
    });

    it('are carried by export and import (gateway admin migrate), and absent ones stay absent', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'ops@example.com', name: 'Ops', now: T0 });
      const limited = await store.apps.createApp({ developerId: dev.id, name: 'limited', product: 'orders', key: newKey(), secretHash: hash(), now: T0, scopes: ['usage:read'] });
      const plain = await store.apps.createApp({ developerId: dev.id, name: 'plain', product: 'orders', key: newKey(), secretHash: hash(), now: T0 });
      const data = await store.exportData(NOW);
      const exported = new Map(data.apps.map((a) => [a.name, a]));
      assert.deepEqual(exported.get('limited')?.scopes, ['usage:read']);
      assert.equal('scopes' in exported.get('plain')!, false);
      const fresh = await open();
      try {
        await fresh.store.importData(data, NOW);
        assert.deepEqual(await fresh.store.apps.findAppById(limited.id), limited);
        assert.deepEqual(await fresh.store.apps.findAppById(plain.id), plain);
      } finally {
        await fresh.cleanup();
      }
    });
  });

  describe('imported keys', () => {
    it('adds the key to the app, leaving its other keys alone; a client that presented it before authenticates at once', async ({ store, seed }) => {
      const f = await seed();
      const imported = newKey();
      const secretHash = hash();
      assert.equal(await store.cache.findClient(imported), undefined, 'remembered as unknown');
      assert.deepEqual(await store.apps.addCredential({ appId: f.app.id, key: imported, secretHash, now: T0 + 5 }), {
        key: imported,
        appId: f.app.id,
        status: 'approved',
        expiresAt: null,
        createdAt: T0 + 5,
      });
      const client = await store.cache.findClient(imported);
      assert.ok(client, 'found at once');
      assert.ok(client.secretHash.equals(secretHash));
      assert.deepEqual(client.app, f.app);
      assert.deepEqual(await store.apps.findAppByKey(imported), f.app);
      assert.deepEqual(await store.apps.listCredentials(f.app.id), [
        { key: f.key, appId: f.app.id, status: 'approved', expiresAt: null, createdAt: T0 + 1 },
        { key: imported, appId: f.app.id, status: 'approved', expiresAt: null, createdAt: T0 + 5 },
      ]);
      assert.ok((await store.cache.findClient(f.key))?.secretHash.equals(f.secretHash), 'the first key as it was');
    });

    it('refuses a key any app holds, even a revoked one, and writes nothing', async ({ store, seed }) => {
      const f = await seed();
      const other = await seed({ email: 'other@example.com' });
      await store.apps.revokeCredential(other.key, T0 + 2);
      const before = { mine: await store.apps.listCredentials(f.app.id), theirs: await store.apps.listCredentials(other.app.id) };
      await assert.rejects(store.apps.addCredential({ appId: f.app.id, key: other.key, secretHash: hash(), now: T0 + 5 }), isConflict);
      await assert.rejects(store.apps.addCredential({ appId: f.app.id, key: f.key, secretHash: hash(), now: T0 + 5 }), isConflict, 'its own key');
      assert.deepEqual({ mine: await store.apps.listCredentials(f.app.id), theirs: await store.apps.listCredentials(other.app.id) }, before);
      const theirs = await store.cache.findClient(other.key);
      assert.equal(theirs?.app.id, other.app.id);
      assert.ok(theirs.secretHash.equals(other.secretHash));
      assert.equal(theirs.credential.status, 'revoked');
      assert.ok((await store.cache.findClient(f.key))?.secretHash.equals(f.secretHash));
    });

    it('answers undefined for an app that does not exist, and writes nothing', async ({ store, seed }) => {
      const f = await seed();
      const key = newKey();
      assert.equal(await store.apps.addCredential({ appId: 'no-such-app', key, secretHash: hash(), now: T0 + 5 }), undefined);
      assert.equal(await store.cache.findClient(key), undefined);
      assert.equal(await store.apps.findAppByKey(key), undefined);
      assert.equal((await store.apps.addCredential({ appId: f.app.id, key, secretHash: hash(), now: T0 + 6 }))?.key, key, 'the key is still free');
    });
  });

  describe('deleting a developer', () => {
    it('deletes them with their apps, keys, tokens, usage, sessions, mailed links and invitation; their tokens stop at once', async (s) => {
      const { store, seed, found } = s;
      const dev = await store.accounts.createDeveloper({ email: 'leaving@example.com', name: 'Leaving', now: T0, passwordHash: 'h' });
      const first = await seed({ email: dev.email, app: 'first' });
      const second = await seed({ email: dev.email, app: 'second' });
      const staying = await seed({ email: 'staying@example.com', app: 'first' });
      const grants = [await grantFor(s, first, 'alice'), await grantFor(s, second, null)];
      const kept = await grantFor(s, staying, 'alice');
      for (const g of [...grants, kept]) assert.ok(await found(g.access.hash), 'cached before');
      const session = hash();
      assert.equal(await store.accounts.createSession({ idHash: session, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR }), true);
      const link = hash();
      await store.accounts.saveEmailToken({ hash: link, developerId: dev.id, purpose: 'reset', now: T0, expiresAt: T0 + HOUR });
      const invitation = hash();
      assert.equal(await store.accounts.setInvitation(dev.email, invitation, T0 + HOUR), true);
      await store.usage.add([use(first.app.id, 'orders', '2xx', T0 - (T0 % HOUR), 3)]);

      assert.equal(await store.accounts.deleteDeveloper(dev.id, NOW), true);
      assert.equal(await store.accounts.deleteDeveloper(dev.id, NOW), false, 'once');
      assert.equal(await store.accounts.findDeveloper(dev.email), undefined);
      assert.equal(await store.accounts.findDeveloperById(dev.id), undefined);
      assert.deepEqual(
        (await store.accounts.listDevelopers()).map((d) => d.email),
        ['staying@example.com'],
      );
      assert.deepEqual(await store.apps.listApps(), [staying.app]);
      for (const f of [first, second]) {
        assert.equal(await store.apps.findAppById(f.app.id), undefined);
        assert.equal(await store.cache.findClient(f.key), undefined, 'the key is gone');
        assert.deepEqual(await store.apps.listCredentials(f.app.id), []);
      }
      for (const [f, g] of [first, second].map((f, i) => [f, grants[i]!] as const)) {
        assert.equal(await found(g.access.hash), false, 'the cached token stopped');
        assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, g.refresh, NOW)), { ok: false, reason: 'invalid' });
      }
      assert.ok(await found(kept.access.hash), "another developer's token");
      assert.deepEqual(await store.usage.since(first.app.id, 0), []);
      assert.equal(await store.accounts.findSession(session, T0 + 1), undefined);
      assert.equal(await store.accounts.resetPassword({ hash: link, passwordHash: 'x', now: T0 + 1 }), undefined, 'the mailed link is spent');
      assert.equal(await store.tokens.revokeSubjectTokens('alice', NOW), 2, "the deleted app's tokens count for nothing: the other developer's two");

      // The address and the names are free again, and nothing of the old account comes back with them.
      const again = await store.accounts.createDeveloper({ email: dev.email, name: 'Back', now: NOW });
      assert.equal(await store.accounts.acceptInvitation({ email: dev.email, codeHash: invitation, passwordHash: 'x', now: NOW }), undefined, 'the invitation went');
      assert.equal(await store.accounts.findPasswordHash(dev.email), null);
      assert.deepEqual(await store.apps.listApps({ developerEmail: dev.email }), []);
      const app = await store.apps.createApp({ developerId: again.id, name: 'first', product: 'orders', key: newKey(), secretHash: hash(), now: NOW });
      assert.equal(app.name, 'first');
    });

    it('answers false when there is no such developer', async ({ store, seed }) => {
      const f = await seed();
      assert.equal(await store.accounts.deleteDeveloper('no-such-id', NOW), false);
      assert.deepEqual(await store.apps.listApps(), [f.app]);
    });
  });

  describe('revoking every token of an app (its keys stay)', () => {
    it('revokes each family with a live token of the app, access and refresh, and counts the live tokens', async (s) => {
      const { store, seed, grant, found } = s;
      const f = await seed();
      const other = await seed({ app: 'other' });
      const plain = await grant(f);
      // Rotated once: the spent refresh token was worth nothing already; its access token and successors count.
      const rotated = await grant(f);
      const spend = rotation(f, rotated.refresh, T0 + 30_000);
      assert.equal((await store.tokens.rotateRefreshToken(spend)).ok, true);
      const revokedBefore = await grant(f);
      assert.equal(await store.tokens.revokeToken(revokedBefore.access.hash, f.app.id, T0 + 40_000), true);
      const expired = token(f, { expiresAt: NOW });
      await store.tokens.saveTokens([expired]);
      const theirs = await grant(other);
      for (const t of [plain.access.hash, rotated.access.hash, spend.accessHash, theirs.access.hash]) assert.ok(await found(t), 'cached before');

      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW), 2 + 3);
      for (const t of [plain.access.hash, rotated.access.hash, spend.accessHash]) assert.equal(await found(t), false, 'missed through the cache at once');
      for (const refresh of [plain.refresh.hash, spend.refreshHash]) {
        assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, plain.refresh, NOW + 1), hash: refresh }), { ok: false, reason: 'invalid' });
      }
      assert.ok(await found(theirs.access.hash), "another app's token");
      assert.equal((await store.tokens.rotateRefreshToken(rotation(other, theirs.refresh, NOW + 1))).ok, true);
      assert.equal((await store.cache.findClient(f.key))?.credential.status, 'approved', 'the key stays');
      assert.deepEqual(await store.apps.findAppById(f.app.id), f.app, 'the app stays');

      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW + 1), 0, 'nothing left');
      const later = await grant(f, { issuedAt: NOW + 2, expiresAt: NOW + HOUR });
      assert.ok(await found(later.access.hash, NOW + 3), 'a token issued after works');
      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW + 3), 2);
      assert.equal(await found(later.access.hash, NOW + 4), false);
      assert.equal(await store.tokens.revokeAppTokens('no-such-app', NOW), 0);
    });

    it('counts no token that disabling the app or its developer revoked already', async (s) => {
      const { store, seed, grant } = s;
      const f = await seed();
      const second = await seed({ app: 'second' });
      await grant(f);
      await grant(second);
      await store.apps.setAppStatus(f.app.id, 'disabled', T0 + 10);
      await store.apps.setAppStatus(f.app.id, 'active', T0 + 11);
      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW), 0);
      await grant(f, { issuedAt: T0 + 12 });
      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW), 2, 'those issued after enabling it');
      await store.accounts.setDeveloperStatus(f.developer.email, 'disabled', T0 + 20);
      await store.accounts.setDeveloperStatus(f.developer.email, 'active', T0 + 21);
      assert.equal(await store.tokens.revokeAppTokens(second.app.id, NOW), 0);
    });

    it("stops the token at another instance's cache too", async ({ store, opened, seed, grant }, t) => {
      if (opened.reopen === undefined) {
        t.skip('the driver has one instance');
        return;
      }
      const f = await seed();
      const { access } = await grant(f);
      const other = await opened.reopen();
      assert.ok(await eventually(async () => (await other.cache.findAccessToken(access.hash, NOW)) !== undefined), 'cached there');
      assert.equal(await store.tokens.revokeAppTokens(f.app.id, NOW), 2);
      assert.ok(await eventually(async () => (await other.cache.findAccessToken(access.hash, NOW)) === undefined));
    });
  });

  describe('revoking every token of a user (log out everywhere)', () => {
    it('revokes each family with a live token issued for the subject, of any app, and counts the live tokens', async (s) => {
      const { store, seed, found } = s;
      const f = await seed();
      const other = await seed({ email: 'other@example.com', app: 'other' });
      const off = await seed({ app: 'off' });
      const mine = await grantFor(s, f, 'alice');
      const rotated = await grantFor(s, other, 'alice');
      const spend = rotation(other, rotated.refresh, T0 + 30_000);
      assert.equal((await store.tokens.rotateRefreshToken(spend)).ok, true);
      const disabled = await grantFor(s, off, 'alice');
      await store.apps.setAppStatus(off.app.id, 'disabled', T0 + 40_000);
      const bob = await grantFor(s, f, 'bob');
      const machine = await grantFor(s, f, null);
      const caseDiffers = await grantFor(s, f, 'Alice');
      const expired = token(f, { subject: 'alice', expiresAt: NOW });
      await store.tokens.saveTokens([expired]);
      for (const g of [mine, bob, machine, caseDiffers]) assert.ok(await found(g.access.hash), 'cached before');
      assert.ok(await found(spend.accessHash));

      assert.equal(await store.tokens.revokeSubjectTokens('alice', NOW), 2 + 3);
      assert.equal(await found(mine.access.hash), false, 'missed through the cache at once');
      assert.equal(await found(rotated.access.hash), false);
      assert.equal(await found(spend.accessHash), false);
      assert.deepEqual(await store.tokens.rotateRefreshToken(rotation(f, mine.refresh, NOW + 1)), { ok: false, reason: 'invalid' });
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(other, rotated.refresh, NOW + 1), hash: spend.refreshHash }), { ok: false, reason: 'invalid' });
      for (const g of [bob, machine, caseDiffers]) assert.ok(await found(g.access.hash), 'another subject, or none');
      assert.equal(disabled.access.subject, 'alice');

      assert.equal(await store.tokens.revokeSubjectTokens('alice', NOW + 1), 0, 'nothing left');
      assert.equal(await store.tokens.revokeSubjectTokens('nobody', NOW), 0);
      assert.equal(await store.tokens.revokeSubjectTokens('Alice', NOW + 1), 2);
      assert.equal(await found(caseDiffers.access.hash, NOW + 2), false);
      assert.ok(await found(bob.access.hash, NOW + 2));
    });
  });
}
