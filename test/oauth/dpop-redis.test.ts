// DPoP (RFC 9449) across instances on one Redis, as replicas behind a load balancer run: a token
// bound at one instance is taken at the other with a fresh proof, and a proof spent at one is
// spent at both (§11.1), on a route and at the token endpoint. Both instances are reached by one
// name, listen.publicHost, so a proof's htu is the same at either: a proof replayed at the other
// instance is refused for being used before, not for naming another URI. Nonces (§8) made by one
// instance are taken by the other: they are keyed by the store's secret key, which both share.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/port/index.ts';
import { basic, call, configYaml, storeAdminDeps, tempDir, type Answer } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { serve, type Served } from '../e2e/children.ts';
import { dpopKey, type DpopKey } from './dpop-proof.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

const PUBLIC = 'http://api.example.com';
const TOKEN_HTU = `${PUBLIC}/oauth2/token`;
const ROUTE_PATH = '/v1/bound/7';
const ROUTE_HTU = `${PUBLIC}${ROUTE_PATH}`;
const ALGS = 'algs="ES256 ES384 ES512 EdDSA Ed25519 PS256 PS384 PS512 RS256 RS384 RS512"';

/** Two gateway processes on the Redis, sharing one secret key, and an app of the product `bound` (senderConstraint: dpop). */
async function startPair(redis: RedisServer, dir: string, keyPrefix: string, oauth = ''): Promise<{ instances: Served[]; store: Store; app: { key: string; secret: string } }> {
  const file = path.join(dir, 'gateway.yaml');
  const yaml = configYaml({
    listen: '  publicHost: api.example.com',
    oauth,
    routes: `  bound:\n    method: POST\n    path: /v1/bound/{id}\n    upstream: mock`,
    products: '  bound:\n    routes: [bound]\n    senderConstraint: dpop\n    grants: [client_credentials]',
  }).replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "${keyPrefix}"`);
  writeFileSync(file, yaml);
  // The key file first, so that both instances, started at once, hash tokens and key nonces alike.
  const config = loadConfigFile(file, { env: {} });
  const store = await openStore(config.store);
  const admin = storeAdminDeps(config, store);
  await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
  const created = await createApp(admin, { developer: 'dev@example.com', name: 'a', product: 'bound' });
  const instances = await Promise.all([serve(file), serve(file)]);
  return { instances, store, app: { key: created.key, secret: created.secret } };
}

describe('DPoP on Redis, two instances', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let instances: Served[];
  let store: Store;
  let app: { key: string; secret: string };
  let key: DpopKey;

  before(async () => {
    redis = await startRedis();
    ({ instances, store, app } = await startPair(redis, dir.dir, 'dpop:'));
    key = await dpopKey('ES256');
  });
  after(async () => {
    await Promise.all((instances ?? []).map((i) => i.stop()));
    await store?.close();
    await redis?.close();
    dir.remove();
  });

  const tokenAt = (i: number, proof: string): Promise<Answer> =>
    call(`${instances[i]!.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.key, app.secret), dpop: proof },
      body: 'grant_type=client_credentials',
    });
  const callAt = (i: number, token: string, proof: string): Promise<Answer> =>
    call(`${instances[i]!.url}${ROUTE_PATH}`, { method: 'POST', headers: { authorization: `DPoP ${token}`, dpop: proof, 'content-type': 'application/json' }, body: '{}' });
  async function boundTokenAt(i: number): Promise<string> {
    const res = await tokenAt(i, await key.proof({ method: 'POST', url: TOKEN_HTU }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.token_type, 'DPoP');
    return res.body.access_token;
  }

  test('a token bound at A is taken at B with a fresh proof of the key', async () => {
    const token = await boundTokenAt(0);
    const atB = await callAt(1, token, await key.proof({ method: 'POST', url: ROUTE_HTU, accessToken: token }));
    assert.equal(atB.status, 200, atB.text);
    assert.deepEqual(atB.body, { message: 'hello' });
    const atA = await callAt(0, token, await key.proof({ method: 'POST', url: ROUTE_HTU, accessToken: token }));
    assert.equal(atA.status, 200, atA.text);
  });

  test('a proof used on a route at A is refused when replayed at B: used before', async () => {
    const token = await boundTokenAt(0);
    const proof = await key.proof({ method: 'POST', url: ROUTE_HTU, accessToken: token });
    assert.equal((await callAt(0, token, proof)).status, 200);
    const replay = await callAt(1, token, proof);
    assert.equal(replay.status, 401, replay.text);
    assert.equal(replay.headers.get('www-authenticate'), `DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before", ${ALGS}`);
    assert.equal(replay.headers.get('content-type'), 'application/problem+json');
    assert.equal(replay.body.code, 'invalid_dpop_proof');
  });

  test('a proof used at the token endpoint of A is refused at the token endpoint of B', async () => {
    const proof = await key.proof({ method: 'POST', url: TOKEN_HTU });
    const atA = await tokenAt(0, proof);
    assert.equal(atA.status, 200, atA.text);
    const atB = await tokenAt(1, proof);
    assert.equal(atB.status, 400, atB.text);
    assert.deepEqual(atB.body, { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was used before' });
    assert.equal(atB.headers.get('cache-control'), 'no-store');
  });

  test("with listen.publicHost, a proof naming the instance's own address is for another URI", async () => {
    // The control of the replay tests above: htu is rebuilt from publicHost, not from the Host header.
    const own = await tokenAt(1, await key.proof({ method: 'POST', url: `${instances[1]!.url}/oauth2/token` }));
    assert.equal(own.status, 400);
    assert.deepEqual(own.body, { error: 'invalid_dpop_proof', error_description: 'the DPoP proof is for another URI' });
  });
});

describe('DPoP nonces on Redis, two instances', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let instances: Served[];
  let store: Store;
  let app: { key: string; secret: string };

  before(async () => {
    redis = await startRedis();
    ({ instances, store, app } = await startPair(redis, dir.dir, 'nonce:', '  dpop:\n    nonce: true\n'));
  });
  after(async () => {
    await Promise.all((instances ?? []).map((i) => i.stop()));
    await store?.close();
    await redis?.close();
    dir.remove();
  });

  test('a nonce given by A is taken by B, at the token endpoint and on a route', async () => {
    const key = await dpopKey('ES256');
    const tokenAt = async (i: number, nonce?: string) =>
      call(`${instances[i]!.url}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basic(app.key, app.secret),
          dpop: await key.proof({ method: 'POST', url: TOKEN_HTU, ...(nonce === undefined ? {} : { nonce }) }),
        },
        body: 'grant_type=client_credentials',
      });
    const asked = await tokenAt(0);
    assert.equal(asked.status, 400);
    assert.deepEqual(asked.body, { error: 'use_dpop_nonce', error_description: 'the DPoP proof must carry the nonce in DPoP-Nonce' });
    const nonce = asked.headers.get('dpop-nonce');
    assert.ok(nonce);
    const issued = await tokenAt(1, nonce);
    assert.equal(issued.status, 200, issued.text);
    const token = issued.body.access_token as string;
    const res = await call(`${instances[0]!.url}${ROUTE_PATH}`, {
      method: 'POST',
      headers: { authorization: `DPoP ${token}`, dpop: await key.proof({ method: 'POST', url: ROUTE_HTU, accessToken: token, nonce }), 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 200, res.text);
  });
});
