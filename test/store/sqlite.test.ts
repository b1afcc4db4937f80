// The SQLite driver: the store contract on a real file, with and without the access-token cache, and
// what only SQLite has: several connections to one file (the gateway and `gateway admin`), WAL,
// schema versions.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { USAGE_KEPT_MS, type Change, type Store, type TokenRecord } from '../../src/store/port/index.ts';
import { SqliteDb } from '../../src/store/sqlite/db.ts';
import { openSqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/index.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { TokenCache, withTokenCache } from '../../src/store/token-cache.ts';
import { tempDir } from '../helpers.ts';
import { storeContract, type OpenedStore } from './contract/index.ts';
import { use } from './contract/fixture.ts';

/** Migrations in src/store/sqlite/migrations.ts; raise it together with a new migration. */
const MIGRATION_COUNT = 13;
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

interface Options {
  tokenCacheSize?: number;
  busyTimeoutMs?: number;
}

/** The store as the gateway opens it: the SQLite driver behind the token cache. */
function openSqlite(file: string, options: Options = {}): Store {
  const { tokenCacheSize = 100_000, ...driver } = options;
  return withTokenCache(openSqliteStore({ path: file, ...driver }), { size: tokenCacheSize });
}

function opener(options: Options = {}): () => Promise<OpenedStore> {
  return async () => {
    const temp = tempDir();
    // A folder that does not exist yet: the store creates it.
    const file = path.join(temp.dir, 'data', 'gateway.db');
    const stores: Store[] = [openSqlite(file, options)];
    return {
      store: stores[0]!,
      reopen: async () => {
        const store = openSqlite(file, options);
        stores.push(store);
        return store;
      },
      cleanup: async () => {
        for (const store of stores) await store.close();
        temp.remove();
      },
    };
  };
}

storeContract('SqliteStore', opener());
storeContract('SqliteStore without a token cache (tokenCacheSize 0)', opener({ tokenCacheSize: 0 }));
storeContract('SqliteStore with a one-token cache', opener({ tokenCacheSize: 1 }));

describe('SqliteStore on one file shared with another process', () => {
  let temp: ReturnType<typeof tempDir>;
  let file: string;
  const open: Store[] = [];
  const openStore = (options: Options = {}) => {
    const store = openSqlite(file, options);
    open.push(store);
    return store;
  };

  beforeEach(() => {
    temp = tempDir();
    file = path.join(temp.dir, 'gateway.db');
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    temp.remove();
  });

  /** The gateway's store with one app and a cached access token, and `admin`, a second connection. */
  async function setup(options: Options = {}) {
    const gateway = openStore(options);
    const admin = openStore(options);
    const developer = await gateway.accounts.createDeveloper({ email: 'dev@example.com', name: 'Dev', now: T0 });
    const key = `key-${randomBytes(6).toString('hex')}`;
    const app = await gateway.apps.createApp({ developerId: developer.id, name: 'shop', product: 'orders', key, secretHash: randomBytes(32), now: T0 });
    const access: TokenRecord = {
      hash: randomBytes(32),
      kind: 'access',
      appId: app.id,
      key,
      product: 'orders',
      scope: 'orders:read',
      subject: null,
      family: 'family-1',
      issuedAt: T0,
      expiresAt: T0 + HOUR,
    };
    const refresh: TokenRecord = { ...access, hash: randomBytes(32), kind: 'refresh', expiresAt: T0 + 24 * HOUR };
    await gateway.tokens.saveTokens([access, refresh]);
    assert.ok(await gateway.cache.findAccessToken(access.hash, T0 + 1), 'found, and now cached');
    return { gateway, admin, developer, app, key, access, refresh };
  }

  const stillFound = async (store: Store, token: TokenRecord) => (await store.cache.findAccessToken(token.hash, T0 + 2)) !== undefined;

  it('the token is served from the cache while nothing was revoked', async () => {
    const { gateway, admin, access } = await setup();
    // Behind the store's back (no revision bump): only a cache can still answer.
    const raw = new DatabaseSync(file);
    raw.prepare('DELETE FROM tokens WHERE hash = ?').run(access.hash);
    raw.close();
    await admin.accounts.createDeveloper({ email: 'unrelated@example.com', name: 'Other', now: T0 });
    await sleep(5);
    assert.equal(await stillFound(gateway, access), true, 'an unrelated write elsewhere keeps the cache');
  });

  it('a credential revoked by another connection stops the cached token', async () => {
    const { gateway, admin, key, access } = await setup();
    assert.equal(await admin.apps.revokeCredential(key, T0 + 1), true);
    await sleep(5);
    assert.equal(await stillFound(gateway, access), false);
  });

  it('an app disabled by another connection stops the cached token', async () => {
    const { gateway, admin, app, access } = await setup();
    assert.ok(await admin.apps.setAppStatus(app.id, 'disabled', T0 + 1));
    await sleep(5);
    assert.equal(await stillFound(gateway, access), false);
    assert.ok(await admin.apps.setAppStatus(app.id, 'active', T0 + 1));
    await sleep(5);
    assert.equal(await stillFound(gateway, access), false, 'enabling again does not bring the token back');
  });

  it('a developer disabled by another connection stops the cached token', async () => {
    const { gateway, admin, developer, access } = await setup();
    assert.ok(await admin.accounts.setDeveloperStatus(developer.email, 'disabled', T0 + 1));
    await sleep(5);
    assert.equal(await stillFound(gateway, access), false);
  });

  it('a family revoked through refresh token reuse on another connection stops the cached token', async () => {
    const { gateway, admin, app, access, refresh } = await setup();
    const rotate = (store: Store) =>
      store.tokens.rotateRefreshToken({
        hash: refresh.hash,
        appId: app.id,
        now: T0 + 1,
        scope: undefined,
        accessHash: randomBytes(32),
        accessExpiresAt: T0 + HOUR,
        refreshHash: randomBytes(32),
        refreshExpiresAt: T0 + 24 * HOUR,
      });
    assert.equal((await rotate(gateway)).ok, true);
    assert.ok(await stillFound(gateway, access));
    assert.deepEqual(await rotate(admin), { ok: false, reason: 'reused' });
    await sleep(5);
    assert.equal(await stillFound(gateway, access), false);
  });

  it('a revocation evicts only the tokens it names: another family stays cached', async () => {
    const { gateway, admin, app, key, access } = await setup();
    const bystander: TokenRecord = { ...access, hash: randomBytes(32), family: 'family-2' };
    const reused: TokenRecord = { ...access, hash: randomBytes(32), kind: 'refresh', family: 'family-3', expiresAt: T0 + 24 * HOUR };
    await gateway.tokens.saveTokens([bystander, reused]);
    assert.ok(await stillFound(gateway, bystander), 'cached');
    // Behind the store's back: only a cache can still answer for the bystander.
    const raw = new DatabaseSync(file);
    raw.prepare('DELETE FROM tokens WHERE hash = ?').run(bystander.hash);
    raw.close();
    const rotation = {
      hash: reused.hash,
      appId: app.id,
      scope: undefined,
      accessHash: randomBytes(32),
      accessExpiresAt: T0 + HOUR,
      refreshHash: randomBytes(32),
      refreshExpiresAt: T0 + 24 * HOUR,
    };
    assert.equal((await admin.tokens.rotateRefreshToken({ ...rotation, now: T0 + 1 })).ok, true);
    assert.deepEqual(await admin.tokens.rotateRefreshToken({ ...rotation, now: T0 + 2, accessHash: randomBytes(32), refreshHash: randomBytes(32) }), { ok: false, reason: 'reused' });
    await admin.apps.revokeCredential(`${key}-other`, T0 + 1);
    await sleep(5);
    assert.equal(await stillFound(gateway, bystander), true, 'family-3 revoked, family-2 still cached');
    assert.equal(await stillFound(gateway, access), true);
  });

  it("a client read once follows another connection's changes: disabled, enabled, revoked", async () => {
    const { gateway, admin, app, key } = await setup();
    assert.equal((await gateway.cache.findClient(key))?.app.status, 'active');
    await admin.apps.setAppStatus(app.id, 'disabled', T0 + 1);
    await sleep(5);
    assert.equal((await gateway.cache.findClient(key))?.app.status, 'disabled');
    await admin.apps.setAppStatus(app.id, 'active', T0 + 1);
    await sleep(5);
    assert.equal((await gateway.cache.findClient(key))?.app.status, 'active');
    await admin.apps.revokeCredential(key, T0 + 1);
    await sleep(5);
    assert.equal((await gateway.cache.findClient(key))?.credential.status, 'revoked');
  });

  it('works the same without a cache', async () => {
    const { gateway, admin, key, access } = await setup({ tokenCacheSize: 0 });
    assert.equal(await stillFound(gateway, access), true);
    await admin.apps.revokeCredential(key, T0 + 1);
    assert.equal(await stillFound(gateway, access), false);
  });

  it('saved tokens are visible to the other connection once saveTokens resolves', async () => {
    const { gateway, admin, app, key } = await setup();
    const record: TokenRecord = {
      hash: randomBytes(32),
      kind: 'access',
      appId: app.id,
      key,
      product: 'orders',
      scope: '',
      subject: null,
      family: 'family-2',
      issuedAt: T0,
      expiresAt: T0 + HOUR,
    };
    await gateway.tokens.saveTokens([record]);
    assert.ok(await admin.cache.findAccessToken(record.hash, T0 + 1));
  });

  it('sees data written by the other connection', async () => {
    const { gateway, admin, app } = await setup();
    await admin.apps.setAppStatus(app.id, 'disabled', T0 + 1);
    assert.equal((await gateway.apps.findApp('dev@example.com', 'shop'))?.status, 'disabled');
    assert.equal((await gateway.accounts.listDevelopers()).length, 1);
  });
});

describe('SqliteStore database file', () => {
  let temp: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    temp = tempDir();
    file = path.join(temp.dir, 'gateway.db');
  });
  afterEach(() => temp.remove());

  function pragma(name: string): unknown {
    const db = new DatabaseSync(file);
    try {
      return Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
    } finally {
      db.close();
    }
  }

  it("hears each change once on every connection: its own when made, another's on its next catch-up, one after a rollback too", async () => {
    const gateway = new SqliteDb({ path: file });
    const admin = new SqliteDb({ path: file });
    try {
      const heard: { gateway: Change[]; admin: Change[] } = { gateway: [], admin: [] };
      // A change read back from the table carries its seq too.
      const plain = (c: Change): Change => ('ref' in c ? { kind: c.kind, ref: c.ref } : c);
      gateway.listen((c) => heard.gateway.push(plain(c)));
      admin.listen((c) => heard.admin.push(plain(c)));
      const catchUp = async () => {
        await sleep(2);
        gateway.catchUp();
        admin.catchUp();
      };
      await gateway.write(() => gateway.changed({ kind: 'signing-key', ref: 'k1' }, T0));
      await catchUp();
      assert.deepEqual(heard, { gateway: [{ kind: 'signing-key', ref: 'k1' }], admin: [{ kind: 'signing-key', ref: 'k1' }] });
      // Told at once, then rolled back: the seq is free again, and another connection's row takes it.
      await assert.rejects(
        gateway.write(() => {
          gateway.changed({ kind: 'family', ref: 'rolled-back' }, T0);
          throw new Error('the write fails after its change');
        }),
      );
      await admin.write(() => admin.changed({ kind: 'family', ref: 'f1' }, T0));
      await catchUp();
      assert.deepEqual(heard.gateway.slice(1), [
        { kind: 'family', ref: 'rolled-back' },
        { kind: 'family', ref: 'f1' },
      ]);
      assert.deepEqual(heard.admin.slice(1), [{ kind: 'family', ref: 'f1' }]);
    } finally {
      await gateway.close();
      await admin.close();
    }
  });

  it('is in WAL mode', async () => {
    const store = openSqlite(file);
    try {
      assert.equal(pragma('journal_mode'), 'wal');
    } finally {
      await store.close();
    }
    assert.equal(pragma('journal_mode'), 'wal', 'WAL mode is kept in the file');
  });

  it('records the number of migrations in user_version, and reopens without migrating again', async () => {
    await openSqlite(file).close();
    assert.equal(pragma('user_version'), MIGRATION_COUNT);
    const store = openSqlite(file);
    await store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 });
    await store.close();
    assert.equal(pragma('user_version'), MIGRATION_COUNT);
    const again = openSqlite(file);
    assert.equal((await again.accounts.listDevelopers()).length, 1);
    await again.close();
  });

  it("carries a database of version 6 over: its hourly usage, counted before routes and status classes were, still adds to an app's hours, in no report, until USAGE_KEPT_MS on", async () => {
    const old = new DatabaseSync(file);
    for (const migration of MIGRATIONS.slice(0, 6)) old.exec(migration);
    old.exec('PRAGMA user_version = 6');
    const hour = T0 - (T0 % HOUR);
    const insert = old.prepare('INSERT INTO app_usage (app_id, hour, count) VALUES (?, ?, ?)');
    insert.run('a', hour, 4);
    insert.run('a', hour + HOUR, 1);
    insert.run('b', hour, 2);
    old.close();

    const store = openSqlite(file);
    try {
      await store.usage.add([use('a', 'list', '2xx', hour, 3)]);
      assert.deepEqual(await store.usage.since('a', hour), [
        { hour, count: 7 },
        { hour: hour + HOUR, count: 1 },
      ]);
      assert.deepEqual(await store.usage.report({ fromHour: hour, toHour: hour + 2 * HOUR }), [use('a', 'list', '2xx', hour, 3)]);
      await store.usage.add([use('a', 'list', '2xx', hour + USAGE_KEPT_MS + 24 * HOUR, 1)]);
      await store.purgeExpired(hour + USAGE_KEPT_MS + 2 * HOUR);
      assert.deepEqual(await store.usage.since('a', 0), [{ hour: hour + USAGE_KEPT_MS + 24 * HOUR, count: 1 }], 'USAGE_KEPT_MS on, the old hours are gone');
      assert.deepEqual(await store.usage.since('b', 0), []);
    } finally {
      await store.close();
    }
  });

  it('carries a database of version 8 over: its change feed keeps its rows and its sequence, and takes signing-key changes', async () => {
    const old = new DatabaseSync(file);
    for (const migration of MIGRATIONS.slice(0, 8)) old.exec(migration);
    old.exec('PRAGMA user_version = 8');
    const insert = old.prepare('INSERT INTO revocations (kind, ref, at) VALUES (?, ?, ?)');
    for (let i = 0; i < 5; i++) insert.run('family', `f${i}`, T0);
    // Purged rows leave the sequence where it was: a process that read up to 5 must not read a new row as old.
    old.exec("DELETE FROM revocations WHERE ref IN ('f3', 'f4')");
    old.close();

    const store = openSqlite(file);
    try {
      const heard: Change[] = [];
      store.changes.listen((change) => heard.push(change));
      const key = {
        kid: 'gwk_AAAAAAAAAAAAAAAAAAAAAA',
        algorithm: 'ES256' as const,
        publicJwk: '{}',
        privateKey: Buffer.from([1, 2, 3]),
        createdAt: T0,
        activatesAt: T0,
        revokedAt: null,
      };
      assert.equal(await store.signingKeys.addSigningKey(key, null), true);
      assert.deepEqual(heard, [{ kind: 'signing-key', ref: key.kid }]);
    } finally {
      await store.close();
    }
    const db = new DatabaseSync(file);
    try {
      assert.deepEqual(
        db
          .prepare('SELECT seq, kind, ref FROM revocations ORDER BY seq')
          .all()
          .map((r) => ({ ...r })),
        [
          { seq: 1, kind: 'family', ref: 'f0' },
          { seq: 2, kind: 'family', ref: 'f1' },
          { seq: 3, kind: 'family', ref: 'f2' },
          { seq: 6, kind: 'signing-key', ref: 'gwk_AAAAAAAAAAAAAAAAAAAAAA' },
        ],
      );
    } finally {
      db.close();
    }
  });

  it('carries a database of version 9 over: its apps are confidential, with no redirect URIs', async () => {
    const old = new DatabaseSync(file);
    for (const migration of MIGRATIONS.slice(0, 9)) old.exec(migration);
    old.exec('PRAGMA user_version = 9');
    old.exec(`INSERT INTO developers (id, email, name, status, created_at, verified_at) VALUES ('d1', 'old@example.com', 'Old', 'active', ${T0}, ${T0})`);
    old.exec(`INSERT INTO apps (id, developer_id, name, product, status, approval, created_at) VALUES ('a1', 'd1', 'old', 'orders', 'active', 'approved', ${T0})`);
    old.close();

    const store = openSqlite(file);
    try {
      const app = await store.apps.findAppById('a1');
      assert.equal(app?.type, 'confidential');
      assert.deepEqual(app?.redirectUris, []);
    } finally {
      await store.close();
    }
  });

  it('refuses a database written by a newer gateway, and leaves it as it was', async () => {
    const store = openSqlite(file);
    await store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 });
    await store.close();
    const db = new DatabaseSync(file);
    db.exec(`PRAGMA user_version = ${MIGRATION_COUNT + 1}`);
    db.close();

    assert.throws(() => openSqlite(file), {
      message: `database schema version ${MIGRATION_COUNT + 1} is newer than this gateway (${MIGRATION_COUNT})`,
    });
    assert.equal(pragma('user_version'), MIGRATION_COUNT + 1);
    const check = new DatabaseSync(file);
    assert.deepEqual({ ...check.prepare('SELECT count(*) AS n FROM developers').get() }, { n: 1 });
    check.close();
  });

  it('keeps a spent single-use id with its expiry until a purge reaches that expiry', async () => {
    const store = openSqlite(file);
    const id = randomBytes(16);
    try {
      assert.equal(await store.once.spendOnce(id, T0, T0 + 120_000), true);
      await store.purgeExpired(T0 + 119_999);
      assert.deepEqual(spent(), [{ id_hash: new Uint8Array(id), expires_at: T0 + 120_000 }]);
      await store.purgeExpired(T0 + 120_000);
      assert.deepEqual(spent(), []);
    } finally {
      await store.close();
    }
    function spent(): unknown[] {
      const db = new DatabaseSync(file);
      try {
        return db
          .prepare('SELECT id_hash, expires_at FROM spent_once')
          .all()
          .map((row) => ({ ...row }));
      } finally {
        db.close();
      }
    }
  });

  it('refuses bad options with a TypeError', () => {
    const bad: unknown[] = [{}, { path: '' }, { path: 42 }, { path: file, busyTimeoutMs: -1 }, { path: file, busyTimeoutMs: '10' }];
    for (const options of bad) {
      assert.throws(() => openSqliteStore(options as SqliteStoreOptions), TypeError, JSON.stringify(options));
    }
    for (const size of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10']) {
      // Checked before the cache touches its driver.
      assert.throws(() => new TokenCache(undefined as never, { size: size as number }), TypeError, String(size));
    }
  });

  it('works with tokenCacheSize 0', async () => {
    const store = openSqlite(file, { tokenCacheSize: 0 });
    try {
      const developer = await store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 });
      const app = await store.apps.createApp({ developerId: developer.id, name: 'app', product: 'p', key: 'k', secretHash: randomBytes(32), now: T0 });
      const h = randomBytes(32);
      await store.tokens.saveTokens([{ hash: h, kind: 'access', appId: app.id, key: 'k', product: 'p', scope: '', subject: null, family: 'f', issuedAt: T0, expiresAt: T0 + HOUR }]);
      for (let i = 0; i < 3; i++) assert.equal((await store.cache.findAccessToken(h, T0 + i))?.appName, 'app');
      await store.apps.revokeCredential('k', T0 + 1);
      assert.equal(await store.cache.findAccessToken(h, T0 + 5), undefined);
    } finally {
      await store.close();
    }
  });

  /** The nice value of this process's main thread, and the highest (lowest priority) of its threads (proc(5): field 19 of a thread's stat). */
  const niceOfThreads = () => {
    const nice = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    return { main: nice(String(process.pid)), lowest: Math.max(...readdirSync('/proc/self/task').map(nice)) };
  };

  it('a serving store checkpoints its write-ahead log in a thread: the database file takes the pages its own connection leaves in the log', async () => {
    const store = openSqliteStore({ path: file, checkpoints: { signal: new SharedArrayBuffer(4), run: true } });
    try {
      const developer = await store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 });
      const app = await store.apps.createApp({ developerId: developer.id, name: 'app', product: 'p', key: 'k', secretHash: randomBytes(32), now: T0 });
      const before = statSync(file).size;
      // About 4,000 pages of log: past the thread's restart point (1,000), far below the
      // connection's own bound (20,000), so only the thread can have copied them.
      for (let i = 0; i < 200; i++) {
        const records = Array.from(
          { length: 20 },
          (): TokenRecord => ({
            hash: randomBytes(48),
            kind: 'access',
            appId: app.id,
            key: 'k',
            product: 'p',
            scope: '',
            subject: null,
            family: `f${i}`,
            issuedAt: T0,
            expiresAt: T0 + HOUR,
          }),
        );
        await store.tokens.saveTokens(records);
      }
      for (let waited = 0; statSync(file).size < before + 1_000_000 && waited < 10_000; waited += 50) await sleep(50);
      assert.ok(statSync(file).size >= before + 1_000_000, `the database file grew from ${before} to ${statSync(file).size} bytes`);
      // The checkpoint thread runs at the lowest priority, the thread serving calls at the process's.
      if (process.platform === 'linux') assert.deepEqual(niceOfThreads(), { main: 0, lowest: 19 });
    } finally {
      await store.close();
    }
  });

  it('leaves the write lock to the checkpoint thread while it asks: writes wait in their queue, then commit, or fail after the busy timeout', async () => {
    const signal = new SharedArrayBuffer(4);
    const store = openSqliteStore({ path: file, busyTimeoutMs: 300, checkpoints: { signal, run: false } });
    try {
      Atomics.store(new Int32Array(signal), 0, 1);
      let done = false;
      const created = store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 }).finally(() => (done = true));
      await sleep(100);
      assert.equal(done, false, 'waiting');
      Atomics.store(new Int32Array(signal), 0, 0);
      assert.equal((await created).email, 'a@example.com');
      Atomics.store(new Int32Array(signal), 0, 1);
      await assert.rejects(store.accounts.createDeveloper({ email: 'b@example.com', name: 'B', now: T0 }), { name: 'StoreUnavailable' });
      Atomics.store(new Int32Array(signal), 0, 0);
      assert.deepEqual(
        (await store.accounts.listDevelopers()).map((d) => d.email),
        ['a@example.com'],
      );
    } finally {
      await store.close();
    }
  });

  it('close is idempotent', async () => {
    const store = openSqlite(file);
    await store.close();
    await store.close();
  });
});
