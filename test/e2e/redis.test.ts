// Three gateway processes on one Redis (test/redis-server.ts), as three sidecars would run: a
// token issued by one works on all, quotas and spike arrests hold exactly across them, a refresh
// token rotates once, and a revocation reaches every instance within 100 ms. Then Redis goes down
// and comes back: the gateway answers 503 where it cannot check, and recovers by itself.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApp, createDeveloper, revokeKey, setAppStatus, type OperatorDeps } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/port/index.ts';
import { bearer, call, configYaml, startAuthServer, tempDir, tokenRequest, type AuthServer, storeAdminDeps } from '../helpers.ts';
import { hasRedis, startRedis, startRedisCluster, type RedisCluster, type RedisServer } from '../redis-server.ts';
import { serve, type Served } from './children.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';
const QUOTA = 20;
const BURST = 10;

threeInstances('server');
threeInstances('cluster');

/** The tests, on one redis-server and (all but Redis full and down) on a local three-node Cluster. */
function threeInstances(kind: 'server' | 'cluster'): void {
  describe(kind === 'server' ? 'three instances on one Redis' : 'three instances on a three-node Redis Cluster', { skip }, () => {
    const dir = tempDir();
    const serverOnly = kind === 'server' ? {} : { skip: 'run on the single server' };
    let redis: RedisServer;
    let cluster: RedisCluster | undefined;
    let authServer: AuthServer;
    let instances: Served[];
    let store: Store;
    let admin: OperatorDeps;
    let app: { key: string; secret: string };
    let appCount = 0;

    before(async () => {
      let storeYaml: string;
      if (kind === 'server') {
        redis = await startRedis({ durable: true });
        storeYaml = `url: ${redis.url}`;
      } else {
        cluster = await startRedisCluster();
        storeYaml = `cluster: [${cluster.seeds.map((s) => `redis://${s.host}:${s.port}`).join(', ')}]`;
      }
      authServer = await startAuthServer();
      const file = path.join(dir.dir, 'gateway.yaml');
      const yaml = configYaml({
        authServerUrl: authServer.url,
        routes: [
          `  q:\n    method: GET\n    path: /v1/q\n    upstream: mock\n    policies:\n      - quota: { limit: ${QUOTA}, interval: hour }`,
          `  qr:\n    method: GET\n    path: /v1/qr\n    upstream: mock\n    policies:\n      - quota: { limit: ${QUOTA}, interval: day, window: rolling }`,
          `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 1pm, burst: ${BURST} }`,
          '  closed:\n    method: GET\n    path: /v1/closed\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 100ps, failOpen: false }',
          // Joined into one count: it fails open only if every one of its counts does.
          '  mixed:\n    method: GET\n    path: /v1/mixed\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 100ps }\n      - spikeArrest: { rate: 100ps, burst: 100, failOpen: false }',
          '',
        ].join('\n'),
        products: [
          '  shared:\n    routes: [q, qr, s, closed, mixed, hello]\n    grants: [client_credentials]',
          '  rotating:\n    routes: [orders]\n    scopes: [orders:read]\n    grants: [password, refresh_token]\n    authServer: users\n    refreshReuseGrace: 1s',
          '',
        ].join('\n'),
      }).replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  ${storeYaml}\n  keyPrefix: "e2e:"`);
      writeFileSync(file, yaml);
      // The first instance creates the key file; the others, started after it, use it.
      instances = [await serve(file)];
      instances.push(...(await Promise.all([serve(file), serve(file)])));
      const config = loadConfigFile(file, { env: {} });
      store = await openStore(config.store);
      admin = storeAdminDeps(config, store);
      await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
      app = await newApp('shared');
    });
    after(async () => {
      await Promise.all((instances ?? []).map((i) => i.stop()));
      await store?.close();
      await authServer?.close();
      await redis?.close();
      await cluster?.close();
      dir.remove();
    });

    async function newApp(product: string): Promise<{ key: string; secret: string }> {
      const created = await createApp(admin, { developer: 'dev@example.com', name: `app-${++appCount}`, product });
      return { key: created.key, secret: created.secret };
    }

    async function issue(at: Served, creds = app): Promise<string> {
      const res = await tokenRequest(at.url, { grant_type: 'client_credentials' }, creds);
      assert.equal(res.status, 200, res.text);
      return res.body.access_token as string;
    }

    /** `count` calls at once, spread over the instances in turn; resolves to their statuses. */
    function spread(count: number, path: string, token: string): Promise<number[]> {
      return Promise.all(Array.from({ length: count }, (_, i) => call(`${instances[i % 3]!.url}${path}`, { headers: bearer(token) }).then((r) => r.status)));
    }

    const tally = (statuses: number[]) => {
      const t: Record<number, number> = {};
      for (const s of statuses) t[s] = (t[s] ?? 0) + 1;
      return t;
    };

    test('an app registered once gets tokens from every instance, and each token works on every instance', async () => {
      for (const issuer of instances) {
        const token = await issue(issuer);
        for (const at of instances) assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(token) })).status, 200);
      }
    });

    test(`a quota of ${QUOTA} holds exactly across three instances: of ${QUOTA + 30} calls at once, ${QUOTA} pass`, async () => {
      const token = await issue(instances[0]!, await newApp('shared'));
      assert.deepEqual(tally(await spread(QUOTA + 30, '/v1/q', token)), { 200: QUOTA, 429: 30 });
    });

    test(`a rolling quota of ${QUOTA} holds exactly across three instances`, async () => {
      const token = await issue(instances[2]!, await newApp('shared'));
      assert.deepEqual(tally(await spread(QUOTA + 30, '/v1/qr', token)), { 200: QUOTA, 429: 30 });
    });

    test(`a spike arrest's burst of ${BURST} holds exactly across three instances`, async () => {
      const token = await issue(instances[1]!, await newApp('shared'));
      assert.deepEqual(tally(await spread(BURST + 30, '/v1/s', token)), { 200: BURST, 429: 30 });
    });

    test('20 concurrent refreshes of one refresh token over three instances: exactly one succeeds; its reuse revokes the family everywhere', async () => {
      const orders = await newApp('rotating');
      const first = await tokenRequest(instances[0]!.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, orders);
      assert.equal(first.status, 200, first.text);
      const refresh = first.body.refresh_token as string;
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => tokenRequest(instances[i % 3]!.url, { grant_type: 'refresh_token', refresh_token: refresh }, orders)));
      assert.deepEqual(tally(answers.map((a) => a.status)), { 200: 1, 401: 19 });
      for (const a of answers.filter((x) => x.status === 401)) assert.equal(a.body.error, 'invalid_grant');
      const rotated = answers.find((a) => a.status === 200)!.body.access_token as string;
      for (const at of instances) assert.equal((await call(`${at.url}/v1/orders`, { headers: bearer(rotated) })).status, 502, 'the token passes (the backend is down)');
      // The spent token presented again after the product's grace for a client's own retries: the
      // family, the rotated access token included, is revoked on every instance.
      await sleep(1100);
      const since = performance.now();
      assert.equal((await tokenRequest(instances[2]!.url, { grant_type: 'refresh_token', refresh_token: refresh }, orders)).status, 401);
      const ms = await refusedEverywhere(rotated, since, '/v1/orders');
      assert.ok(ms < 100, `took ${Math.round(ms)} ms`);
    });

    /** Polls every instance until each refuses `token`; resolves to the ms that took, from `since`. */
    async function refusedEverywhere(token: string, since: number, route = '/v1/hello'): Promise<number> {
      for (;;) {
        const statuses = await Promise.all(instances.map((at) => call(`${at.url}${route}`, { headers: bearer(token) }).then((r) => r.status)));
        if (statuses.every((s) => s === 401)) return performance.now() - since;
        assert.ok(performance.now() - since < 2000, `still ${statuses.join(', ')}`);
        await sleep(5);
      }
    }

    test('a token revoked on one instance, a key revoked and an app disabled by the operator stop working on every instance within 100 ms', async () => {
      const victims = await Promise.all([newApp('shared'), newApp('shared'), newApp('shared')]);
      const tokens = await Promise.all(victims.map((v) => issue(instances[0]!, v)));
      // Every instance has each token in its cache.
      for (const token of tokens) for (const at of instances) assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(token) })).status, 200);

      let since = performance.now();
      const revoked = await tokenRequest(instances[0]!.url, { token: tokens[0]! }, victims[0], '/oauth2/revoke');
      assert.equal(revoked.status, 200);
      const byToken = await refusedEverywhere(tokens[0]!, since);

      since = performance.now();
      await revokeKey(admin, victims[1]!.key);
      const byKey = await refusedEverywhere(tokens[1]!, since);

      since = performance.now();
      await setAppStatus(admin, { key: victims[2]!.key }, 'disabled');
      const byApp = await refusedEverywhere(tokens[2]!, since);
      for (const ms of [byToken, byKey, byApp]) assert.ok(ms < 100, `took ${Math.round(ms)} ms`);
    });

    test('Redis refusing writes (full): issuance answers 503, a cached token still passes, quota fails closed, spike arrest open unless failOpen: false', serverOnly, async () => {
      const cached = await issue(instances[0]!, await newApp('shared'));
      for (const at of instances) assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(cached) })).status, 200);
      redisCli(redis, 'config', 'set', 'maxmemory-policy', 'noeviction');
      redisCli(redis, 'config', 'set', 'maxmemory', '1');
      try {
        for (const at of instances) {
          const issued = await tokenRequest(at.url, { grant_type: 'client_credentials' }, app);
          assert.equal(issued.status, 503);
          assert.equal(issued.body.error, 'temporarily_unavailable');
          assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(cached) })).status, 200);
          const quota = await call(`${at.url}/v1/q`, { headers: bearer(cached) });
          assert.equal(quota.status, 503);
          assert.equal(quota.body.code, 'temporarily_unavailable');
          assert.equal((await call(`${at.url}/v1/s`, { headers: bearer(cached) })).status, 200, 'spike arrest fails open by default');
          assert.equal((await call(`${at.url}/v1/closed`, { headers: bearer(cached) })).status, 503);
          assert.equal((await call(`${at.url}/v1/mixed`, { headers: bearer(cached) })).status, 503, 'a joined count with one closed count fails closed');
        }
      } finally {
        redisCli(redis, 'config', 'set', 'maxmemory', '0');
      }
      assert.equal((await call(`${instances[0]!.url}/v1/q`, { headers: bearer(cached) })).status, 200);
    });

    test(
      'Redis down: issuance, revocation and every token check answer 503 (a cached token is not trusted without the subscription), /readyz is 503; Redis back: all recover without a restart',
      serverOnly,
      async () => {
        const cached = await issue(instances[0]!);
        for (const at of instances) assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(cached) })).status, 200);
        await redis.stop();
        try {
          for (const at of instances) {
            const issued = await tokenRequest(at.url, { grant_type: 'client_credentials' }, app);
            assert.equal(issued.status, 503);
            assert.equal(issued.body.error, 'temporarily_unavailable');
            assert.equal((await tokenRequest(at.url, { token: cached }, app, '/oauth2/revoke')).status, 503);
            assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(cached) })).status, 503);
            // A token of the right form that no instance has seen: never taken without Redis.
            const unknown = `${cached.slice(0, -2)}${cached.endsWith('AA') ? 'BB' : 'AA'}`;
            assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(unknown) })).status, 503);
            assert.equal((await call(`${at.adminUrl}/readyz`)).status, 503);
          }
        } finally {
          await redis.start();
        }
        for (const at of instances) {
          for (let i = 0; (await call(`${at.adminUrl}/readyz`)).status !== 200; i++) {
            assert.ok(i < 200, 'ready again within 10 s');
            await sleep(50);
          }
          assert.equal((await call(`${at.url}/v1/hello`, { headers: bearer(cached) })).status, 200, 'the data survived; the token was read again');
          assert.equal((await tokenRequest(at.url, { grant_type: 'client_credentials' }, app)).status, 200);
        }
      },
    );
  });
}

function redisCli(server: RedisServer, ...args: string[]): void {
  execFileSync('redis-cli', ['-p', String(server.port), ...args], { stdio: 'ignore' });
}
