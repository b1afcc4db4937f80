// The store contract on the Redis driver, against a redis-server of the test's own and against a
// local three-node Redis Cluster (test/redis-server.ts). Each contract test gets a key prefix of
// its own: a fresh, empty store on the same server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { RedisSettings } from '../../src/store/redis/db.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { withTokenCache } from '../../src/store/token-cache.ts';
import { hasRedis, startRedis, startRedisCluster, type RedisCluster, type RedisServer } from '../redis-server.ts';
import { storeContract, type OpenedStore } from './contract/index.ts';
import { HOUR, rotation, T0, token } from './contract/fixture.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

/** Opens fresh stores on `connection()`, each under a prefix of its own; reopening reads the same prefix. */
function opener(connection: () => RedisSettings['connection'], tokenCacheSize = 100_000): () => Promise<OpenedStore> {
  return async () => {
    const keyPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const open = () => withTokenCache(openRedisStore({ connection: connection(), keyPrefix, timeoutMs: 2000 }), { size: tokenCacheSize });
    const stores: Store[] = [open()];
    return {
      store: stores[0]!,
      reopen: async () => {
        const store = open();
        stores.push(store);
        return store;
      },
      cleanup: async () => {
        for (const store of stores) await store.close();
      },
    };
  };
}

describe('the Redis driver', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(() => server?.close());
  const connection = () => ({ kind: 'server', url: server.url }) as const;
  storeContract('RedisStore', opener(connection));
  storeContract('RedisStore without a token cache (tokenCacheSize 0)', opener(connection, 0));

  test('a spent refresh token presented again and again within the reuse grace leaves no index keys behind (each try once added two, kept a day)', async () => {
    const keyPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const store = withTokenCache(openRedisStore({ connection: connection(), keyPrefix, timeoutMs: 2000 }), { size: 100 });
    try {
      const developer = await store.accounts.createDeveloper({ email: 'grace@example.com', name: 'Grace', now: T0 });
      const key = `key-${randomBytes(6).toString('hex')}`;
      const app = await store.apps.createApp({ developerId: developer.id, name: 'app', product: 'orders', key, secretHash: randomBytes(32), now: T0 + 1 });
      const f = { developer, app, key, secretHash: randomBytes(32) };
      const refresh = token(f, { kind: 'refresh', expiresAt: T0 + 24 * HOUR });
      await store.tokens.saveTokens([refresh]);
      const indexKeys = () =>
        execFileSync('redis-cli', ['-p', String(server.port), '--scan', '--pattern', `${keyPrefix}t:*`], { encoding: 'utf8' })
          .split('\n')
          .filter((k) => k !== '').length;
      assert.equal((await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 1000), reuseGraceMs: 60_000 })).ok, true);
      assert.equal(indexKeys(), 3);
      for (let i = 0; i < 20; i++) {
        assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 2000 + i), reuseGraceMs: 60_000 }), { ok: false, reason: 'invalid' });
      }
      assert.equal(indexKeys(), 3);
      assert.deepEqual(await store.tokens.rotateRefreshToken({ ...rotation(f, refresh, T0 + 120_000), reuseGraceMs: 60_000 }), { ok: false, reason: 'reused' });
      assert.equal(indexKeys(), 3);
    } finally {
      await store.close();
    }
  });

  test('tokens saved before the indexes by app and subject existed (an earlier version) are revoked too: found through the expiries until the last of them expires', async () => {
    const keyPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const open = () => withTokenCache(openRedisStore({ connection: connection(), keyPrefix, timeoutMs: 2000 }), { size: 100 });
    const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(server.port), ...args], { encoding: 'utf8' }).trim();
    const stores = [open()];
    try {
      const store = stores[0]!;
      const developer = await store.accounts.createDeveloper({ email: 'legacy@example.com', name: 'Legacy', now: T0 });
      const fixture = async (name: string) => {
        const key = `key-${randomBytes(6).toString('hex')}`;
        const app = await store.apps.createApp({ developerId: developer.id, name, product: 'orders', key, secretHash: randomBytes(32), now: T0 + 1 });
        return { developer, app, key, secretHash: randomBytes(32) };
      };
      const [one, two] = [await fixture('one'), await fixture('two')];
      const grants = [one, two].map((f) => {
        const access = token(f, { subject: 'alice' });
        return [access, token(f, { subject: 'alice', kind: 'refresh', family: access.family, expiresAt: T0 + 24 * HOUR })];
      });
      for (const records of grants) await store.tokens.saveTokens(records);
      assert.equal(cli('GET', `${keyPrefix}token-indexes`), '0', 'the store held no token when this version first saved one');
      // As an earlier version left them: no index by app or subject.
      cli('DEL', `${keyPrefix}app-families:${one.app.id}`, `${keyPrefix}app-families:${two.app.id}`, `${keyPrefix}subject-families:alice`);
      const now = T0 + 60_000;
      const unscanned = open();
      stores.push(unscanned);
      assert.equal(await unscanned.tokens.revokeAppTokens(one.app.id, now), 0, 'without the scan, nothing is found');

      cli('DEL', `${keyPrefix}token-indexes`);
      const upgraded = open();
      stores.push(upgraded);
      assert.equal(await upgraded.tokens.revokeAppTokens(one.app.id, now), 2);
      assert.equal(cli('GET', `${keyPrefix}token-indexes`), String(T0 + 24 * HOUR), 'the latest expiry of the tokens it found');
      assert.equal(await upgraded.tokens.revokeSubjectTokens('alice', now), 2, "the other app's");
      for (const [access] of grants) assert.equal(await upgraded.cache.findAccessToken(access!.hash, now), undefined);
      assert.equal(await upgraded.tokens.revokeSubjectTokens('alice', now), 0);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  test('an app written before apps had a client type and redirect URIs (an earlier version) reads as confidential, with none', async () => {
    const keyPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const store = withTokenCache(openRedisStore({ connection: connection(), keyPrefix, timeoutMs: 2000 }), { size: 100 });
    const cli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(server.port), ...args], { encoding: 'utf8' }).trim();
    try {
      const developer = await store.accounts.createDeveloper({ email: 'old@example.com', name: 'Old', now: T0 });
      const key = `key-${randomBytes(6).toString('hex')}`;
      const app = await store.apps.createApp({
        developerId: developer.id,
        name: 'old',
        product: 'orders',
        key,
        secretHash: randomBytes(32),
        now: T0 + 1,
        type: 'public',
        redirectUris: ['https://old.example.com/cb'],
      });
      // As an earlier version wrote the row: without either field.
      const { type: _type, redirectUris: _uris, developerEmail: _email, ...row } = app;
      cli('HSET', `${keyPrefix}{c}:apps`, app.id, JSON.stringify({ ...row, revokedAt: null }));
      const read = await store.apps.findAppById(app.id);
      assert.deepEqual(read, { ...app, type: 'confidential', redirectUris: [] });
      assert.deepEqual((await store.cache.findClient(key))?.app, read);
      assert.deepEqual((await store.exportData(T0)).apps, [{ ...row, type: 'confidential', redirectUris: [] }]);
    } finally {
      await store.close();
    }
  });

  test('150 catalog writes at once from three instances (portal logins, each a session) all commit: the writes that lose a race wait a random moment before reading again', async () => {
    const keyPrefix = `test:${randomBytes(6).toString('hex')}:`;
    const stores = [0, 1, 2].map(() => withTokenCache(openRedisStore({ connection: connection(), keyPrefix, timeoutMs: 2000 }), { size: 100 }));
    try {
      const now = Date.now();
      const dev = await stores[0]!.accounts.createDeveloper({ email: 'busy@example.com', name: 'Busy', now, passwordHash: 'hash' });
      const sessions = Array.from({ length: 150 }, (_, i) =>
        stores[i % 3]!.accounts.createSession({ idHash: randomBytes(32), developerId: dev.id, passwordHash: 'hash', now, expiresAt: now + 60_000 }),
      );
      const settled = await Promise.allSettled(sessions);
      assert.deepEqual(
        settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason)),
        [],
      );
      assert.ok(settled.every((s) => s.status === 'fulfilled' && s.value === true));
    } finally {
      for (const store of stores) await store.close();
    }
  });
});

describe('the Redis driver on a Redis Cluster', { skip }, () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(() => cluster?.close());
  storeContract(
    'RedisStore on a Cluster',
    opener(() => ({ kind: 'cluster', urls: cluster.seeds.map((s) => `redis://${s.host}:${s.port}`) })),
  );
});
