// gateway.example.yaml does what its comments and the README promise, policy by policy.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { createOrdersBackend } from '../../scripts/demo-backend/server.ts';
import { adminDeps, bearer, call, closeServer, listenOn, startAuthServer, tempDir, tokenRequest, type AuthServer } from '../helpers.ts';

const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'gateway.example.yaml');

describe('gateway.example.yaml', () => {
  let gw: Gateway;
  let token: string;
  let ordersApp: { key: string; secret: string };
  // The demo backend as `npm run demo:backend` serves it, and an authorization server that knows alice.
  let backend: Server;
  let authServer: AuthServer;
  const dir = tempDir();
  before(async () => {
    backend = createOrdersBackend();
    authServer = await startAuthServer();
    authServer.answer = ({ username, password }) => (username === 'alice' && password === 'wonderland' ? { status: 200, body: { sub: 'user-1001' } } : { status: 401 });
    const env = {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DB: path.join(dir.dir, 'gateway.db'),
      LOG_LEVEL: 'silent',
      PORTAL_PORT: '0',
      ORDERS_URL: await listenOn(backend),
      AUTHSERVER_URL: authServer.url,
    };
    const config = loadConfigFile(EXAMPLE, { env });
    gw = await startGateway({ config, port: 0, adminPort: 0, logger: createLogger('silent') });
    const deps = adminDeps(gw, config);
    await createDeveloper(deps, { email: 'dev@example.com', name: 'Dev' });
    const app = await createApp(deps, { developer: 'dev@example.com', name: 'example-app', product: 'hello' });
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: app.key, secret: app.secret })).body.access_token;
    ordersApp = await createApp(deps, { developer: 'dev@example.com', name: 'orders-app', product: 'orders' });
  });
  after(async () => {
    await gw.close();
    await closeServer(backend);
    await authServer.close();
    dir.remove();
  });

  test('GET /v1/hello answers from the mock target', async () => {
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(token) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { message: 'Hello from the token gateway' });
  });

  test('GET /v1/quota: the 6th call within a minute is 429', async () => {
    // The six calls must fall in one calendar minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(`${gw.url}/v1/quota`, { headers: bearer(token) })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  });

  test('GET /v1/spike: ten calls fired at once, most are 429', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(`${gw.url}/v1/spike`, { headers: bearer(token) })));
    assert.ok(answers.filter((a) => a.status === 429).length >= 8);
  });

  test('GET /v1/private: 403 from this machine', async () => {
    const res = await call(`${gw.url}/v1/private`, { headers: bearer(token) });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'ip_denied');
  });

  test('GET /v1/search: missing q or limit=0 is 400; a good query is echoed', async () => {
    assert.deepEqual((await call(`${gw.url}/v1/search?limit=5`, { headers: bearer(token) })).body.errors, [{ pointer: '/query/q', message: 'is required' }]);
    assert.deepEqual((await call(`${gw.url}/v1/search?q=tea&limit=0`, { headers: bearer(token) })).body.errors, [{ pointer: '/query/limit', message: 'must be >= 1' }]);
    const ok = await call(`${gw.url}/v1/search?q=tea&limit=10`, { headers: bearer(token) });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.query, { q: 'tea', limit: '10' });
  });

  test('POST /v1/echo: no name is 400; a valid body is echoed, transformed', async () => {
    const post = (body: string) => call(`${gw.url}/v1/echo`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body });
    const bad = await post('{"title":"x"}');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [{ pointer: '/body/name', message: 'is required' }]);
    const ok = await post('{"name":"Ada"}');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-example'), 'echoed');
    assert.deepEqual(ok.body, { method: 'POST', path: '/v1/echo', query: {}, body: '{"name":"Ada"}', app: 'example-app' });
  });

  test("GET /v1/orders/1: an app's own client_credentials token is refused (403), the orders are a user's", async () => {
    const own = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, ordersApp);
    assert.equal(own.status, 200);
    for (const path of ['/v1/orders', '/v1/orders/1']) {
      const res = await call(`${gw.url}${path}`, { headers: bearer(own.body.access_token) });
      assert.equal(res.status, 403, path);
      assert.equal(res.body.code, 'insufficient_scope');
    }
    const create = await call(`${gw.url}/v1/orders`, { method: 'POST', headers: { ...bearer(own.body.access_token), 'content-type': 'application/json' }, body: '{"item":"kettle","quantity":1}' });
    assert.equal(create.status, 403);
    assert.equal(create.body.code, 'insufficient_scope');
  });

  test("POST /v1/orders: a user's token creates an order at the demo backend (201), which then lists it; a bad body is the backend's 400", async () => {
    const login = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, ordersApp);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.scope, 'orders:read orders:write');
    const auth = bearer(login.body.access_token);
    const post = (body: string) => call(`${gw.url}/v1/orders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });

    const created = await post('{"item":"kettle","quantity":2}');
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('location'), '/v1/orders/3');
    assert.deepEqual(created.body, { subject: 'user-1001', order: { id: '3', item: 'kettle', quantity: 2 } });
    const got = await call(`${gw.url}/v1/orders/3`, { headers: auth });
    assert.deepEqual(got.body, { subject: 'user-1001', order: { id: '3', item: 'kettle', quantity: 2 } });
    assert.deepEqual((await call(`${gw.url}/v1/orders`, { headers: auth })).body.orders.at(-1), { id: '3', item: 'kettle', quantity: 2 });

    for (const bad of ['{"item":"kettle","quantity":0}', '{"item":"kettle","quantity":1.5}', '{"item":"","quantity":1}', '{"quantity":1}', '[]', 'kettle']) {
      const refused = await post(bad);
      assert.equal(refused.status, 400, bad);
      assert.deepEqual(refused.body, { error: 'the body must be JSON: {"item": a non-empty string, "quantity": an integer of at least 1}' });
    }
  });
});
