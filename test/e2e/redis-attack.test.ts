// Three gateway processes on one Redis (test/redis-server.ts), under the faults an attacker or a
// bad day brings: Redis holding writes for longer than the command timeout (CLIENT PAUSE WRITE, as
// a failover does), so that a revocation answered 503 is applied later; one instance cut off from
// Redis by the network with its connections left open. No revoked token may pass anywhere after
// either, and every instance recovers by itself.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApp, createDeveloper, setAppStatus, type OperatorDeps } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/port/index.ts';
import { bearer, call, configYaml, tempDir, tokenRequest, storeAdminDeps } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { serve, type Served } from './children.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

/** A TCP proxy to `port` that can freeze: it stops reading either side (nothing is lost or closed) until thawed, as a network partition does. */
async function freezingProxy(port: number): Promise<{ port: number; freeze(): void; thaw(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      if (frozen) s.pause();
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    thaw() {
      frozen = false;
      for (const s of sockets) s.resume();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('three instances on one Redis, under faults', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let proxy: Awaited<ReturnType<typeof freezingProxy>>;
  let instances: Served[];
  let store: Store;
  let admin: OperatorDeps;
  let appCount = 0;

  before(async () => {
    redis = await startRedis();
    proxy = await freezingProxy(redis.port);
    const yaml = (port: number) => configYaml().replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: redis://127.0.0.1:${port}\n  keyPrefix: "attack:"`);
    // One key file for all (data/gateway.key beside the config files); the third instance reaches Redis through the proxy.
    writeFileSync(path.join(dir.dir, 'direct.yaml'), yaml(redis.port));
    writeFileSync(path.join(dir.dir, 'proxied.yaml'), yaml(proxy.port));
    instances = [await serve(path.join(dir.dir, 'direct.yaml'))];
    instances.push(...(await Promise.all([serve(path.join(dir.dir, 'direct.yaml')), serve(path.join(dir.dir, 'proxied.yaml'))])));
    const config = loadConfigFile(path.join(dir.dir, 'direct.yaml'), { env: {} });
    store = await openStore(config.store);
    admin = storeAdminDeps(config, store);
    await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
  });
  after(async () => {
    await Promise.all((instances ?? []).map((i) => i.stop()));
    await store?.close();
    await proxy?.close();
    await redis?.close();
    dir.remove();
  });

  async function newApp(): Promise<{ key: string; secret: string }> {
    const created = await createApp(admin, { developer: 'dev@example.com', name: `app-${++appCount}`, product: 'hello' });
    return { key: created.key, secret: created.secret };
  }

  /** A token of `app`, in every instance's cache; and `app` in the first instance's client cache. */
  async function cachedToken(app: { key: string; secret: string }): Promise<string> {
    const issued = await tokenRequest(instances[0]!.url, { grant_type: 'client_credentials' }, app);
    assert.equal(issued.status, 200, issued.text);
    const token = issued.body.access_token as string;
    for (const at of instances) assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(token) })).status, 200);
    return token;
  }

  /** What `read` resolves to once the test's own store answers again (it fails at once for a moment after a stall). */
  async function answered<T>(read: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await read();
      } catch (err) {
        if (i >= 50) throw err;
        await sleep(20);
      }
    }
  }

  const statuses = (token: string) => Promise.all(instances.map((at) => call(`${at.url}/v1/hello`, { headers: bearer(token) }).then((r) => r.status)));

  /** Polls every instance until each answers `token` with `status`; fails after `withinMs`. */
  async function everywhere(token: string, status: number, withinMs: number, what = 'the token'): Promise<void> {
    const since = performance.now();
    for (;;) {
      const seen = await statuses(token);
      if (seen.every((s) => s === status)) return;
      assert.ok(performance.now() - since < withinMs, `${what}: still ${seen.join(', ')}`);
      await sleep(20);
    }
  }

  const redisCli = (...args: string[]) => execFileSync('redis-cli', ['-p', String(redis.port), ...args], { stdio: 'ignore' });

  test('a revocation and an app disable answered 503 while Redis held writes past the timeout, then applied by Redis, reach every cache', async () => {
    const victims = [await newApp(), await newApp()];
    const [byToken, byApp] = [await cachedToken(victims[0]!), await cachedToken(victims[1]!)];
    // Reads pass, writes (and scripts, and PUBLISH) wait: the writes time out (store.timeout 1s), and Redis applies them after.
    redisCli('client', 'pause', '2500', 'WRITE');
    const paused = performance.now();
    const [revoked] = await Promise.all([
      tokenRequest(instances[0]!.url, { token: byToken }, victims[0], '/oauth2/revoke'),
      assert.rejects(setAppStatus(admin, { key: victims[1]!.key }, 'disabled'), /Command timed out/),
    ]);
    assert.equal(revoked.status, 503);
    await sleep(Math.max(0, 2500 - (performance.now() - paused)));
    // Both writes went out before they timed out, and Redis applied them once it went on.
    assert.equal((await answered(() => store.apps.findAppByKey(victims[1]!.key)))?.status, 'disabled');
    await everywhere(byToken, 401, 1000, 'the token revoked');
    await everywhere(byApp, 401, 1000, "the disabled app's token");
  });

  test('an instance cut off from Redis with its connections open stops trusting its cache (503, /readyz 503), and serves again once it is back', async () => {
    const app = await newApp();
    const [victim, other] = [await cachedToken(app), await cachedToken(app)];
    proxy.freeze();
    try {
      const since = performance.now();
      assert.equal((await tokenRequest(instances[0]!.url, { token: victim }, app, '/oauth2/revoke')).status, 200);
      // The others hear the revocation; the one cut off cannot, and within its heartbeat's bound (2 × 500 ms + store.timeout) trusts nothing it remembers.
      // Each token is polled until refused: the first 503 need not be that bound's. A token the
      // instance no longer holds (a stall of its heartbeats under load, before the cut, made it
      // forget everything, and only `other` was read again) is refused as soon as its read times
      // out, while what it holds is still served within the bound.
      for (const token of [victim, other]) {
        for (;;) {
          const status = (await call(`${instances[2]!.url}/v1/hello`, { headers: bearer(token) })).status;
          if (status !== 200) {
            assert.equal(status, 503);
            break;
          }
          assert.ok(performance.now() - since < 2500, `${token === victim ? 'the revoked token' : 'a token it remembers'} still passed on the instance cut off`);
          await sleep(20);
        }
      }
      assert.equal((await call(`${instances[2]!.adminUrl}/readyz`)).status, 503);
      assert.deepEqual((await statuses(victim)).slice(0, 2), [401, 401]);
    } finally {
      proxy.thaw();
    }
    await everywhere(victim, 401, 5000);
    await everywhere(other, 200, 5000);
  });

  test('while Redis answers nothing (CLIENT PAUSE ALL), every call is answered 503 within store.timeout, also those that came while others waited', async () => {
    const app = await newApp();
    assert.equal((await tokenRequest(instances[0]!.url, { token: 'warm-up' }, app, '/oauth2/revoke')).status, 200);
    const unknown = `gwat_${'A'.repeat(64)}`;
    const timed = async (answer: () => Promise<{ status: number }>) => {
      const since = performance.now();
      const { status } = await answer();
      return { status, ms: performance.now() - since };
    };
    const wave = () =>
      instances.flatMap((at) => [
        timed(() => tokenRequest(at.url, { grant_type: 'client_credentials' }, app)),
        timed(() => tokenRequest(at.url, { token: unknown }, app, '/oauth2/revoke')),
        timed(() => call(`${at.url}/v1/hello`, { headers: bearer(unknown) })),
      ]);
    redisCli('client', 'pause', '3000', 'ALL');
    const first = wave();
    await sleep(300);
    const second = wave();
    await sleep(900);
    const third = wave();
    const answers = await Promise.all([...first, ...second, ...third]);
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([503]));
    // store.timeout is 1 s: commands queued behind a stalled batch once waited for it to time out, then for their own timeout.
    const slowest = Math.max(...answers.map((a) => a.ms));
    assert.ok(slowest < 1400, `a call took ${Math.round(slowest)} ms`);
    await sleep(1000);
    for (const at of instances) {
      for (let i = 0; (await tokenRequest(at.url, { grant_type: 'client_credentials' }, app)).status !== 200; i++) {
        assert.ok(i < 100, 'issuing again within 5 s');
        await sleep(50);
      }
    }
  });

  test('a gateway on a Redis that evicts keys when full warns at start (throttles, counts and tokens would go first)', async () => {
    redisCli('config', 'set', 'maxmemory-policy', 'allkeys-lru');
    try {
      const fourth = await serve(path.join(dir.dir, 'direct.yaml'));
      try {
        const warned = await fourth.nextLog((e) => typeof e.msg === 'string' && e.msg.includes('maxmemory-policy'), 0);
        assert.equal(warned.level, 40);
        assert.match(warned.msg as string, /maxmemory-policy allkeys-lru\).*apps and developers; set maxmemory-policy noeviction/);
      } finally {
        await fourth.stop();
      }
    } finally {
      redisCli('config', 'set', 'maxmemory-policy', 'noeviction');
    }
    for (const at of instances) assert.ok(!at.logs.some((e) => typeof e.msg === 'string' && e.msg.includes('maxmemory-policy')), 'no warning under noeviction');
  });

  test('a gateway whose secret key file others may read (a copy made with mode 0644) warns at start', async () => {
    const keyFile = path.join(dir.dir, 'data', 'gateway.key');
    chmodSync(keyFile, 0o644);
    try {
      const fourth = await serve(path.join(dir.dir, 'direct.yaml'));
      try {
        const warned = await fourth.nextLog((e) => typeof e.msg === 'string' && e.msg.startsWith(keyFile), 0);
        assert.equal(warned.level, 40);
        assert.equal(warned.msg, `${keyFile} is readable or writable by others (mode 0644): chmod 600 it`);
      } finally {
        await fourth.stop();
      }
    } finally {
      chmodSync(keyFile, 0o600);
    }
    for (const at of instances) assert.ok(!at.logs.some((e) => typeof e.msg === 'string' && e.msg.startsWith(keyFile)), 'no warning for a key file of mode 0600');
  });
});
