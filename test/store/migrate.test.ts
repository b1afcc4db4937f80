// `gateway admin migrate` across drivers, on a SQLite file in a temp dir and a redis-server of the
// test's own: migrateStore carries a store SQLite → Redis → SQLite and each answers as the first
// did; migrate gives a Redis target the source's secret key, under which the signing keys carried
// decrypt, and refuses one used with another.
// (test/store/contract/migration.ts checks each driver's export and import on their own;
// test/e2e/cli.test.ts runs the command.)
import assert from 'node:assert/strict';
import { randomBytes, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { migrate, migrateStore } from '../../src/admin/migrate.ts';
import { AdminError } from '../../src/admin/operations.ts';
import { newSecret, secretHash } from '../../src/crypto.ts';
import { createLogger } from '../../src/log.ts';
import { newSigningKey, openSigningKey } from '../../src/oauth/signing/keys.ts';
import { openStore, type StoreSettings } from '../../src/store/open.ts';
import type { Store, TokenRecord } from '../../src/store/port/index.ts';
import { loadSecretKey } from '../../src/store/secret-key.ts';
import { tempDir } from '../helpers.ts';
import { sorted } from './contract/migration.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';
const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOW = T0 + MINUTE;

const isAdminError = (code: string, message: string) => (err: unknown) => {
  assert.ok(err instanceof AdminError, String(err));
  assert.deepEqual({ code: err.code, message: err.message }, { code, message });
  return true;
};

/**
 * Two developers, three apps (one key rotated: four keys), five live tokens among spent, revoked
 * and expired ones, and two signing keys made as the gateway makes them (one revoked).
 */
async function seed(store: Store, secret: (key: string) => Buffer, secretKey: KeyObject) {
  const dev = await store.accounts.createDeveloper({ email: 'dev@example.com', name: 'Dev', now: T0, passwordHash: 'scrypt$16384$8$1$c2FsdA$aGFzaA' });
  const other = await store.accounts.createDeveloper({ email: 'other@example.com', name: 'Other', now: T0 });
  const app = async (developerId: string, name: string, key: string) => store.apps.createApp({ developerId, name, product: 'orders', key, secretHash: secret(key), now: T0 + 1 });
  const shop = await app(dev.id, 'shop', 'key-shop');
  await app(dev.id, 'admin', 'key-admin');
  await app(other.id, 'theirs', 'key-theirs');
  await store.apps.rotateCredential({ appId: shop.id, key: 'key-shop-2', secretHash: secret('key-shop-2'), now: T0 + 2, overlapUntil: T0 + HOUR });
  const grant = async () => {
    const family = randomBytes(8).toString('hex');
    const base = { appId: shop.id, key: 'key-shop-2', product: 'orders', scope: 'orders:read', subject: 'user-1', family, issuedAt: T0 + 3 };
    const access: TokenRecord = { ...base, hash: randomBytes(48), kind: 'access', expiresAt: T0 + HOUR };
    const refresh: TokenRecord = { ...base, hash: randomBytes(48), kind: 'refresh', expiresAt: T0 + 24 * HOUR };
    await store.tokens.saveTokens([access, refresh]);
    return { access, refresh };
  };
  const live = await grant();
  const rotated = await grant();
  const next = {
    hash: rotated.refresh.hash,
    appId: shop.id,
    now: T0 + 10,
    scope: undefined,
    accessHash: randomBytes(48),
    accessExpiresAt: T0 + HOUR,
    refreshHash: randomBytes(48),
    refreshExpiresAt: T0 + 24 * HOUR,
  };
  assert.equal((await store.tokens.rotateRefreshToken(next)).ok, true);
  const revoked = await grant();
  assert.equal(await store.tokens.revokeToken(revoked.access.hash, shop.id, T0 + 10), true);
  const expired: TokenRecord = { ...live.access, hash: randomBytes(48), family: randomBytes(8).toString('hex'), expiresAt: NOW - 1 };
  await store.tokens.saveTokens([expired]);
  const revokedSigner = await newSigningKey('ES256', secretKey, T0, T0);
  assert.equal(await store.signingKeys.addSigningKey(revokedSigner, null), true);
  assert.equal(await store.signingKeys.revokeSigningKey(revokedSigner.kid, T0 + 4), true);
  assert.equal(await store.signingKeys.addSigningKey(await newSigningKey('EdDSA', secretKey, T0 + 4, T0 + 4), null), true);
  return { shop, live, rotated, revoked, expired };
}

describe('migrating between drivers', { skip }, () => {
  let redis: RedisServer;
  const temp = tempDir();
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.close();
    temp.remove();
  });

  let stores = 0;
  const sqlite = (secretKeyFile?: string): StoreSettings & { driver: 'sqlite' } => {
    const file = path.join(temp.dir, `sqlite-${++stores}`, 'gateway.db');
    return { driver: 'sqlite', path: file, busyTimeoutMs: 2000, secretKeyFile: secretKeyFile ?? `${file}.key`, tokenCacheSize: 0 };
  };
  const onRedis = (secretKeyFile: string): StoreSettings & { driver: 'redis' } => ({
    driver: 'redis',
    connection: { kind: 'server', url: redis.url },
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
    timeoutMs: 2000,
    secretKeyFile,
    tokenCacheSize: 0,
  });

  it('migrateStore: SQLite → Redis → SQLite carries every developer, app, key, live token and signing key, which work as before', async () => {
    const first = sqlite();
    const source = await openStore(first);
    const middle = await openStore(onRedis(first.secretKeyFile));
    const last = await openStore(sqlite(first.secretKeyFile));
    try {
      const seeded = await seed(source, () => randomBytes(32), loadSecretKey(first.secretKeyFile));
      const counts = { developers: 2, apps: 3, credentials: 4, tokens: 5, signingKeys: 2 };
      assert.deepEqual(await migrateStore(source, middle, NOW), counts);
      assert.deepEqual(await migrateStore(middle, last, NOW), counts);

      const data = sorted(await source.exportData(NOW));
      assert.deepEqual(sorted(await middle.exportData(NOW)), data);
      assert.deepEqual(sorted(await last.exportData(NOW)), data);
      for (const store of [middle, last]) {
        assert.deepEqual(await store.accounts.listDevelopers(), await source.accounts.listDevelopers());
        assert.deepEqual(await store.apps.listApps(), await source.apps.listApps());
        assert.deepEqual(await store.signingKeys.listSigningKeys(), await source.signingKeys.listSigningKeys());
        assert.equal(await store.accounts.findPasswordHash('dev@example.com'), 'scrypt$16384$8$1$c2FsdA$aGFzaA');
        for (const key of ['key-shop', 'key-shop-2', 'key-admin', 'key-theirs']) assert.deepEqual(await store.cache.findClient(key), await source.cache.findClient(key));
        for (const { access } of [seeded.live, seeded.rotated]) {
          assert.ok(await store.cache.findAccessToken(access.hash, NOW));
          assert.deepEqual(await store.cache.findAccessToken(access.hash, NOW), await source.cache.findAccessToken(access.hash, NOW));
        }
        for (const access of [seeded.revoked.access, seeded.expired]) assert.equal(await store.cache.findAccessToken(access.hash, NOW), undefined);
      }
      // The refresh token carried twice rotates on the last store.
      const rotation = {
        hash: seeded.live.refresh.hash,
        appId: seeded.shop.id,
        now: NOW,
        scope: undefined,
        accessHash: randomBytes(48),
        accessExpiresAt: NOW + MINUTE,
        refreshHash: randomBytes(48),
        refreshExpiresAt: NOW + HOUR,
      };
      assert.deepEqual(await last.tokens.rotateRefreshToken(rotation), { ok: true, previous: seeded.live.refresh, scope: 'orders:read' });
      assert.ok(await last.cache.findAccessToken(rotation.accessHash, NOW));

      await assert.rejects(migrateStore(source, middle, NOW), isAdminError('store_not_empty', 'the target store is not empty: it holds 2 developers; migrate into an empty store'));
      assert.deepEqual(sorted(await middle.exportData(NOW)), data);
    } finally {
      await Promise.all([source.close(), middle.close(), last.close()]);
    }
  });

  it("migrate: a Redis target gets the source's key file, and one used with another key is refused", async () => {
    const from = sqlite();
    const key = loadSecretKey(from.secretKeyFile);
    const secret = newSecret();
    const source = await openStore(from);
    try {
      await seed(source, () => secretHash(key, secret), key);
    } finally {
      await source.close();
    }
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const { time: _time, ...line } = JSON.parse(chunk.toString('utf8')) as Record<string, unknown>;
        lines.push(line);
        done();
      },
    });
    const deps = { clock: () => NOW, logger: createLogger('info', sink), operator: { kind: 'operator', user: 'test' } as const };

    // A prefix gateways used with another key: refused before anything is written or copied.
    const used = onRedis(path.join(temp.dir, 'used', 'keys', 'gateway.key'));
    const usedStore = await openStore(used);
    try {
      assert.equal(await usedStore.claimSecretKey('the fingerprint of another key'), true);
      await assert.rejects(
        migrate(deps, from, used),
        isAdminError('other_secret_key', `the target store was used with another secret key than ${from.secretKeyFile}: migrate into another store (or key prefix)`),
      );
      assert.equal(existsSync(path.dirname(used.secretKeyFile)), false);
      assert.deepEqual(await usedStore.accounts.listDevelopers(), []);
    } finally {
      await usedStore.close();
    }

    const to = onRedis(path.join(temp.dir, 'redis', 'keys', 'gateway.key'));
    assert.deepEqual(await migrate(deps, from, to), { developers: 2, apps: 3, credentials: 4, tokens: 5, signingKeys: 2, secretKeyFile: to.secretKeyFile, secretKeyCopied: true });
    assert.deepEqual(readFileSync(to.secretKeyFile), readFileSync(from.secretKeyFile));
    assert.equal(statSync(to.secretKeyFile).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(to.secretKeyFile)).mode & 0o777, 0o700);
    assert.deepEqual(lines, [
      {
        level: 30,
        audit: 'store.migrate',
        actor: { kind: 'operator', user: 'test' },
        from: { driver: 'sqlite', path: from.path },
        to: { driver: 'redis', keyPrefix: to.keyPrefix },
        developers: 2,
        apps: 3,
        credentials: 4,
        tokens: 5,
        signingKeys: 2,
        msg: 'store migrated',
      },
    ]);

    const target = await openStore(to);
    try {
      // The secret the app was given still authenticates, under the copied key.
      const client = await target.cache.findClient('key-admin');
      assert.ok(client);
      assert.ok(client.secretHash.equals(secretHash(loadSecretKey(to.secretKeyFile), secret)));
      // And the signing keys decrypt under it, the revoked one still revoked.
      const signingKeys = await target.signingKeys.listSigningKeys();
      assert.deepEqual(
        signingKeys.map((record) => {
          const { kid, algorithm, revokedAt } = openSigningKey(record, loadSecretKey(to.secretKeyFile));
          return { kid, algorithm, revokedAt };
        }),
        signingKeys.map(({ kid, algorithm, revokedAt }) => ({ kid, algorithm, revokedAt })),
      );
      assert.deepEqual(
        signingKeys.map((k) => [k.algorithm, k.revokedAt]),
        [
          ['ES256', T0 + 4],
          ['EdDSA', null],
        ],
      );
    } finally {
      await target.close();
    }
  });
});
