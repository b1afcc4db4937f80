// The store contract, TransferStore: what `gateway admin migrate` reads from one store (the
// catalog, exactly the live tokens, and the signing keys) and writes into a fresh store of the
// same driver, which then answers as the first did. test/store/migrate.test.ts carries it across drivers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import type { App, Change, Developer, ExportedApp, NewApp, SigningKeyRecord, Store, StoreExport, TokenRecord } from '../../../src/store/port/index.ts';
import { HOUR, MINUTE, T0, isConflict, itWithStore, newKey, rotation, signingKey, token, type Fixture, type OpenStore } from './fixture.ts';

/** When the contract exports: after every change the seed makes. */
const NOW = T0 + MINUTE;
/** Portal password hashes as stored; nothing here checks a password against them. */
const KEPT_PASSWORD = 'scrypt$16384$8$1$a2VwdA$a2VwdC1oYXNo';
const NEW_PASSWORD = 'scrypt$16384$8$1$bmV3$bmV3LWhhc2g';

/** What `seedStore` wrote, and what an export at NOW must hold. */
interface Seeded {
  expected: StoreExport;
  /** Each key's fixture, for tokens and clients. */
  shop: Fixture;
  /** The shop's key after the rotation; `shop.key` still works until T0 + HOUR. */
  shopNew: Fixture;
  /** A live grant of the shop's first key, whose refresh token the import must rotate. */
  grant: { access: TokenRecord; refresh: TokenRecord };
  /** Tokens the export must leave out. */
  dead: TokenRecord[];
  /** The signing key that activates last: a key added after it is the next. */
  latestSigningKey: SigningKeyRecord;
}

/**
 * Three developers (verified with a password, an unverified sign-up, a disabled one), apps of
 * every status and approval, a rotated key and a revoked one, tokens live, expired, revoked (by
 * family, by disabling the app or the developer, by revoking the key) and spent by rotation, and
 * signing keys: the one signing, a revoked one, and the next.
 */
async function seedStore(store: Store): Promise<Seeded> {
  const { accounts, apps, tokens, signingKeys } = store;
  const kept = await accounts.createDeveloper({ email: 'kept@example.com', name: 'Kept', now: T0 });
  assert.equal(await accounts.setPasswordHash(kept.email, KEPT_PASSWORD), true);
  const unverified = await accounts.createDeveloper({ email: 'new@example.com', name: 'New', now: T0 + 1, passwordHash: NEW_PASSWORD, verified: false });
  const gone = await accounts.createDeveloper({ email: 'gone@example.com', name: 'Gone', now: T0 + 2 });

  const secrets = new Map<string, Buffer>();
  const register = async (developer: Developer, name: string, approval: App['approval'] = 'approved', more: Pick<NewApp, 'type' | 'redirectUris'> = {}): Promise<Fixture> => {
    const key = newKey();
    const secretHash = randomBytes(32);
    secrets.set(key, secretHash);
    const app = await apps.createApp({ developerId: developer.id, name, product: 'orders', key, secretHash, now: T0 + 3, approval, ...more });
    return { developer, app, key, secretHash };
  };
  const save = async (...records: TokenRecord[]) => {
    await tokens.saveTokens(records);
    return records;
  };
  const grantOf = async (f: Fixture, overrides: Partial<TokenRecord> = {}) => {
    const access = token(f, overrides);
    const refresh = token(f, { ...overrides, kind: 'refresh', family: access.family, expiresAt: T0 + 24 * HOUR });
    await save(access, refresh);
    return { access, refresh };
  };

  const shop = await register(kept, 'shop');
  const grant = await grantOf(shop);
  // Rotated once: the spent refresh token stays behind, its access token and successors go.
  const rotated = await grantOf(shop);
  const spend = rotation(shop, rotated.refresh, T0 + 30_000);
  assert.equal((await tokens.rotateRefreshToken(spend)).ok, true);
  const successor = { ...rotated.access, issuedAt: spend.now };
  const successors: TokenRecord[] = [
    { ...successor, hash: spend.accessHash, expiresAt: spend.accessExpiresAt },
    { ...successor, hash: spend.refreshHash, kind: 'refresh', expiresAt: spend.refreshExpiresAt },
  ];
  const revokedFamily = await grantOf(shop);
  assert.equal(await tokens.revokeToken(revokedFamily.access.hash, shop.app.id, T0 + 20), true);
  const expired = await save(token(shop, { expiresAt: NOW - 1 }));
  // The shop's first key works until T0 + HOUR, and so do its tokens.
  const newKeyOfShop = newKey();
  secrets.set(newKeyOfShop, randomBytes(32));
  await apps.rotateCredential({ appId: shop.app.id, key: newKeyOfShop, secretHash: secrets.get(newKeyOfShop)!, now: T0 + 5, overlapUntil: T0 + HOUR });
  const shopNew: Fixture = { ...shop, key: newKeyOfShop, secretHash: secrets.get(newKeyOfShop)! };
  const ofNewKey = await grantOf(shopNew, { issuedAt: T0 + 6, subject: null, scope: '' });

  const review = await register(kept, 'review', 'pending');
  // A public app, and a confidential one whose redirect URIs were replaced since.
  const spa = await register(kept, 'spa', 'approved', { type: 'public', redirectUris: ['https://spa.example.com/cb', 'http://127.0.0.1/cb'] });
  const web = await register(kept, 'web', 'approved', { redirectUris: ['https://web.example.com/old'] });
  assert.ok(await apps.setRedirectUris(web.app.id, ['https://web.example.com/a', 'https://web.example.com/b'], T0 + 4));
  // Apps that authenticate with certificates (RFC 8705), of both kinds.
  const pki = await register(kept, 'pki');
  assert.ok(await apps.setCertificateAuth(pki.app.id, { method: 'tls_client_auth', subject: { dn: 'CN=pki,O=Example' } }, T0 + 4));
  const selfSigned = await register(kept, 'self-signed');
  assert.ok(
    await apps.setCertificateAuth(selfSigned.app.id, { method: 'self_signed_tls_client_auth', certificates: [{ thumbprint: 'C'.repeat(43), subject: 'CN=self', expiresAt: T0 + HOUR }] }, T0 + 4),
  );
  const off = await register(kept, 'off');
  const offGrant = await grantOf(off);
  await apps.setAppStatus(off.app.id, 'disabled', T0 + 10);
  // Disabled and enabled again: the tokens from before stay revoked, those issued after live.
  const back = await register(kept, 'back');
  const backBefore = await grantOf(back);
  await apps.setAppStatus(back.app.id, 'disabled', T0 + 10);
  await apps.setAppStatus(back.app.id, 'active', T0 + 11);
  const backAfter = await grantOf(back, { issuedAt: T0 + 20 });
  const cut = await register(kept, 'cut');
  const cutGrant = await grantOf(cut);
  assert.equal(await apps.revokeCredential(cut.key, T0 + 10), true);
  const theirs = await register(gone, 'theirs');
  const theirGrant = await grantOf(theirs);
  await accounts.setDeveloperStatus(gone.email, 'disabled', T0 + 10);

  const signing = signingKey(T0);
  const revokedSigner = signingKey(T0 + 30 * MINUTE);
  const nextSigner = signingKey(T0 + 40 * MINUTE, { createdAt: T0 + 20, algorithm: 'EdDSA' });
  assert.equal(await signingKeys.addSigningKey(signing, null), true);
  assert.equal(await signingKeys.addSigningKey(revokedSigner, signing.kid), true);
  assert.equal(await signingKeys.revokeSigningKey(revokedSigner.kid, T0 + 20), true);
  assert.equal(await signingKeys.addSigningKey(nextSigner, signing.kid), true);

  const exported = (f: Fixture, changes: Partial<ExportedApp> = {}): ExportedApp => {
    const { developerEmail: _email, ...app } = f.app;
    return { ...app, ...changes };
  };
  const credential = (f: Fixture, changes: Partial<StoreExport['credentials'][number]> = {}) => ({
    key: f.key,
    appId: f.app.id,
    status: 'approved' as const,
    expiresAt: null,
    createdAt: T0 + 3,
    secretHash: f.secretHash,
    ...changes,
  });
  return {
    shop,
    shopNew,
    grant,
    latestSigningKey: nextSigner,
    dead: [rotated.refresh, ...Object.values(revokedFamily), ...expired, ...Object.values(offGrant), ...Object.values(backBefore), ...Object.values(cutGrant), ...Object.values(theirGrant)],
    expected: {
      developers: [
        { id: kept.id, email: kept.email, name: 'Kept', status: 'active', createdAt: T0, verifiedAt: T0, passwordHash: KEPT_PASSWORD },
        { id: unverified.id, email: unverified.email, name: 'New', status: 'active', createdAt: T0 + 1, verifiedAt: null, passwordHash: NEW_PASSWORD },
        { id: gone.id, email: gone.email, name: 'Gone', status: 'disabled', createdAt: T0 + 2, verifiedAt: T0 + 2, passwordHash: null },
      ],
      apps: [
        exported(shop),
        exported(review),
        exported(spa),
        exported(web, { redirectUris: ['https://web.example.com/a', 'https://web.example.com/b'] }),
        exported(pki, { certificateAuth: { method: 'tls_client_auth', subject: { dn: 'CN=pki,O=Example' } } }),
        exported(selfSigned, { certificateAuth: { method: 'self_signed_tls_client_auth', certificates: [{ thumbprint: 'C'.repeat(43), subject: 'CN=self', expiresAt: T0 + HOUR }] } }),
        exported(off, { status: 'disabled' }),
        exported(back),
        exported(cut),
        exported(theirs),
      ],
      credentials: [
        credential(shop, { expiresAt: T0 + HOUR }),
        credential(shopNew, { createdAt: T0 + 5 }),
        credential(review),
        credential(spa),
        credential(web),
        credential(pki),
        credential(selfSigned),
        credential(off),
        credential(back),
        credential(cut, { status: 'revoked' }),
        credential(theirs),
      ],
      tokens: [...Object.values(grant), rotated.access, ...successors, ...Object.values(ofNewKey), ...Object.values(backAfter)],
      signingKeys: [signing, { ...revokedSigner, revokedAt: T0 + 20 }, nextSigner],
    },
  };
}

/** The export in one order, so that two can be compared whole. */
export function sorted(data: StoreExport): StoreExport {
  const by =
    <T>(of: (item: T) => string) =>
    (a: T, b: T) =>
      of(a) < of(b) ? -1 : of(a) > of(b) ? 1 : 0;
  return {
    developers: [...data.developers].sort(by((d) => d.email)),
    apps: [...data.apps].sort(by((a) => a.name)),
    credentials: [...data.credentials].sort(by((c) => c.key)),
    tokens: [...data.tokens].sort(by((t) => t.hash.toString('hex'))),
    signingKeys: [...data.signingKeys].sort(by((k) => k.kid)),
  };
}

export function migrationContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('export and import (gateway admin migrate)', () => {
    it('exports the developers, apps and keys, and exactly the live tokens', async ({ store }) => {
      const seeded = await seedStore(store);
      const data = await store.exportData(NOW);
      assert.deepEqual(sorted(data), sorted(seeded.expected));
      for (const c of data.credentials) assert.ok(Buffer.isBuffer(c.secretHash));
      for (const t of data.tokens) assert.ok(Buffer.isBuffer(t.hash));
      for (const k of data.signingKeys) assert.ok(Buffer.isBuffer(k.privateKey));
    });

    it('imports into an empty store, which then answers as the first did, and exports the same', async ({ store }) => {
      const seeded = await seedStore(store);
      const data = await store.exportData(NOW);
      const fresh = await open();
      try {
        const target = fresh.store;
        const heard: Change[] = [];
        target.changes.listen((change) => heard.push(change));
        await target.importData(data, NOW);
        assert.deepEqual(sorted(await target.exportData(NOW)), sorted(seeded.expected));

        assert.deepEqual(await target.accounts.listDevelopers(), await store.accounts.listDevelopers());
        assert.deepEqual(await target.apps.listApps(), await store.apps.listApps());
        for (const app of seeded.expected.apps) assert.deepEqual(await target.apps.listCredentials(app.id), await store.apps.listCredentials(app.id));
        for (const email of ['kept@example.com', 'new@example.com', 'gone@example.com']) {
          assert.equal(await target.accounts.findPasswordHash(email), await store.accounts.findPasswordHash(email));
        }
        for (const { key } of seeded.expected.credentials) {
          const client = await target.cache.findClient(key);
          assert.ok(client, key);
          assert.deepEqual(client, await store.cache.findClient(key));
        }
        for (const t of seeded.expected.tokens.filter((r) => r.kind === 'access')) {
          const active = await target.cache.findAccessToken(t.hash, NOW);
          assert.ok(active);
          assert.deepEqual(active, await store.cache.findAccessToken(t.hash, NOW));
        }
        for (const t of seeded.dead) {
          if (t.kind === 'access') assert.equal(await target.cache.findAccessToken(t.hash, NOW), undefined);
          else assert.deepEqual(await target.tokens.rotateRefreshToken({ ...rotation(seeded.shop, t, NOW), appId: t.appId }), { ok: false, reason: 'invalid' });
        }

        // A gateway serving the target hears of each key, and its next key follows the last one carried.
        const [signing, revoked] = seeded.expected.signingKeys;
        assert.deepEqual(new Set(heard.flatMap((c) => (c.kind === 'signing-key' ? [c.ref] : []))), new Set(seeded.expected.signingKeys.map((k) => k.kid)));
        assert.deepEqual(await target.signingKeys.listSigningKeys(), await store.signingKeys.listSigningKeys());
        for (const stale of [null, signing!.kid, revoked!.kid]) assert.equal(await target.signingKeys.addSigningKey(signingKey(T0 + 50 * MINUTE), stale), false, String(stale));
        assert.equal(await target.signingKeys.addSigningKey(signingKey(T0 + 50 * MINUTE), seeded.latestSigningKey.kid), true);

        // A migrated refresh token rotates; presented again, it revokes its family, here as there.
        const { access, refresh } = seeded.grant;
        const later = T0 + 2 * MINUTE;
        const req = rotation(seeded.shop, refresh, later);
        assert.deepEqual(await target.tokens.rotateRefreshToken(req), { ok: true, previous: refresh, scope: refresh.scope });
        assert.deepEqual(await target.cache.findAccessToken(req.accessHash, later), {
          ...access,
          hash: req.accessHash,
          issuedAt: later,
          // Cut to the rotated key's overlap.
          expiresAt: T0 + HOUR,
          appName: 'shop',
          developerEmail: 'kept@example.com',
        });
        assert.deepEqual(await target.tokens.rotateRefreshToken(rotation(seeded.shop, refresh, later + MINUTE)), { ok: false, reason: 'reused' });
        assert.equal(await target.cache.findAccessToken(access.hash, later + MINUTE), undefined);
        assert.equal(await target.cache.findAccessToken(req.accessHash, later + MINUTE), undefined);
        // The source knows nothing of it.
        assert.ok(await store.cache.findAccessToken(access.hash, later + MINUTE));
      } finally {
        await fresh.cleanup();
      }
    });

    it('refuses to import into a store that holds a developer, and writes nothing', async ({ store }) => {
      const seeded = await seedStore(store);
      const data = await store.exportData(NOW);
      const fresh = await open();
      try {
        const target = fresh.store;
        const resident = await target.accounts.createDeveloper({ email: 'resident@example.com', name: 'Resident', now: T0 });
        await assert.rejects(target.importData(data, NOW), isConflict);
        assert.deepEqual(await target.accounts.listDevelopers(), [resident]);
        assert.deepEqual(await target.apps.listApps(), []);
        assert.equal(await target.cache.findClient(seeded.shop.key), undefined);
        assert.equal(await target.cache.findAccessToken(seeded.grant.access.hash, NOW), undefined);
        assert.deepEqual(await target.signingKeys.listSigningKeys(), []);
      } finally {
        await fresh.cleanup();
      }
    });

    it('imports the signing keys beside those the target holds; a kid it holds already stays as it is there', async ({ store }) => {
      const seeded = await seedStore(store);
      const data = await store.exportData(NOW);
      const [signing, ...others] = seeded.expected.signingKeys;
      const fresh = await open();
      try {
        const target = fresh.store;
        // A gateway started on the target made its own key; an earlier copy brought one key, revoked there since.
        const own = signingKey(T0 + 10 * MINUTE, { createdAt: T0 + 10 * MINUTE });
        assert.equal(await target.signingKeys.addSigningKey(own, null), true);
        await target.importData({ developers: [], apps: [], credentials: [], tokens: [], signingKeys: [signing!] }, NOW);
        assert.equal(await target.signingKeys.revokeSigningKey(signing!.kid, NOW), true);

        await target.importData(data, NOW);
        const byKid = (keys: SigningKeyRecord[]) => [...keys].sort((a, b) => (a.kid < b.kid ? -1 : 1));
        assert.deepEqual(byKid(await target.signingKeys.listSigningKeys()), byKid([own, { ...signing!, revokedAt: NOW }, ...others]));
      } finally {
        await fresh.cleanup();
      }
    });

    it('exports nothing from an empty store, and imports nothing into one', async ({ store }) => {
      const empty = await store.exportData(NOW);
      assert.deepEqual(empty, { developers: [], apps: [], credentials: [], tokens: [], signingKeys: [] });
      await store.importData(empty, NOW);
      assert.deepEqual(await store.accounts.listDevelopers(), []);
    });
  });
}
