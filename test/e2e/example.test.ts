// gateway.example.yaml does what its comments and the README promise, policy by policy, and
// serves the orders API that examples/orders.openapi.yaml describes.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { freePort } from '../../src/http/listener.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { loadDocument } from '../../src/openapi/document.ts';
import { createOrdersBackend } from '../../scripts/demo-backend/server.ts';
import { adminDeps, bearer, call, closeServer, listenOn, startAuthServer, tempDir, tokenRequest, type Answer, type AuthServer } from '../helpers.ts';

const EXAMPLE = path.join(import.meta.dirname, '..', '..', 'gateway.example.yaml');
const ORDERS_DOCUMENT = path.join(import.meta.dirname, '..', '..', 'examples', 'orders.openapi.yaml');

/**
 * Fails unless `res` is an answer the document lists for the operation: its status, its content
 * type, a body valid against that media type's schema, and its required headers.
 */
function assertDocumented(operationId: string, res: Answer): void {
  const doc = loadDocument(ORDERS_DOCUMENT);
  const op = doc.operations.find((o) => o.operationId === operationId) ?? assert.fail(operationId);
  const response = op.responses.find((r) => r.status === String(res.status)) ?? assert.fail(`${operationId}: ${res.status} is not in the document`);
  const type = res.headers.get('content-type') ?? '';
  const media = response.content.find((m) => m.type === type) ?? assert.fail(`${operationId} ${res.status}: ${type} is not in the document`);
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
  for (const [url, value] of doc.files) ajv.addSchema(value as object, url);
  const validate = ajv.compile(media.schema ?? assert.fail('a schema'));
  assert.ok(validate(res.body), `${operationId} ${res.status}: ${ajv.errorsText(validate.errors)}`);
  for (const [name, header] of response.headers) if (header.required) assert.ok(res.headers.has(name), `${operationId} ${res.status}: ${name}`);
}

/** The CORS headers of an answer, and Vary, by name. */
function corsHeaders(res: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of res.headers) if (name.startsWith('access-control-') || name === 'vary') out[name] = value;
  return out;
}

describe('gateway.example.yaml', () => {
  let gw: Gateway;
  let token: string;
  let ordersApp: { key: string; secret: string };
  // The demo backend as `npm run demo:backend` serves it, and an authorization server that knows alice.
  let backend: Server;
  let authServer: AuthServer;
  /** The portal's origin, which the example allows to call the orders API and the token endpoint from a browser. */
  let portal: string;
  /** The gateway's log lines at info and above. */
  const logs: { msg: string; url?: string }[] = [];
  const dir = tempDir();
  before(async () => {
    backend = createOrdersBackend();
    authServer = await startAuthServer();
    authServer.answer = ({ username, password }) => (username === 'alice' && password === 'wonderland' ? { status: 200, body: { sub: 'user-1001' } } : { status: 401 });
    const portalPort = await freePort('127.0.0.1');
    portal = `http://localhost:${portalPort}`;
    const env = {
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DB: path.join(dir.dir, 'gateway.db'),
      LOG_LEVEL: 'silent',
      PORTAL_PORT: String(portalPort),
      ORDERS_URL: await listenOn(backend),
      AUTHSERVER_URL: authServer.url,
    };
    const config = loadConfigFile(EXAMPLE, { env });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(JSON.parse(chunk.toString('utf8')) as (typeof logs)[number]);
        done();
      },
    });
    gw = await startGateway({ config, port: 0, adminPort: 0, logger: createLogger('info', sink) });
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

  test('the admin listener moves with ADMIN_PORT, as the other listeners with theirs', () => {
    assert.equal(loadConfigFile(EXAMPLE, { env: { ADMIN_PORT: '9911' } }).admin?.port, 9911);
    assert.deepEqual(loadConfigFile(EXAMPLE, { env: {} }).admin, { host: '127.0.0.1', port: 9901 });
  });

  test("the portal logs the address its pages' CORS origin is, so the try-it panel works from the address the log shows", () => {
    const listening = logs.find((l) => l.msg === 'developer portal listening') ?? assert.fail('the portal says where it listens');
    assert.equal(listening.url, portal);
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
    assert.equal(own.body.scope, 'orders:read orders:write', "the document's scopes are the product's");
    for (const path of ['/v1/orders', '/v1/orders/1']) {
      const res = await call(`${gw.url}${path}`, { headers: bearer(own.body.access_token) });
      assert.equal(res.status, 403, path);
      assert.equal(res.body.code, 'insufficient_scope');
      assertDocumented(path === '/v1/orders' ? 'listOrders' : 'getOrder', res);
    }
    // Refused before the body is looked at: a body the document refuses is 403 too.
    for (const body of ['{"item":"kettle","quantity":1}', '{"quantity":0}']) {
      const create = await call(`${gw.url}/v1/orders`, { method: 'POST', headers: { ...bearer(own.body.access_token), 'content-type': 'application/json' }, body });
      assert.equal(create.status, 403, body);
      assert.equal(create.body.code, 'insufficient_scope');
    }
  });

  test("POST /v1/orders: a user's token creates an order at the demo backend (201), which then lists it; each answer is one the document lists", async () => {
    const login = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, ordersApp);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.scope, 'orders:read orders:write');
    const auth = bearer(login.body.access_token);
    const post = (body: string) => call(`${gw.url}/v1/orders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });

    const created = await post('{"item":"kettle","quantity":2}');
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('location'), '/v1/orders/3');
    assert.deepEqual(created.body, { subject: 'user-1001', order: { id: '3', item: 'kettle', quantity: 2 } });
    assertDocumented('createOrder', created);
    const got = await call(`${gw.url}/v1/orders/3`, { headers: auth });
    assert.deepEqual(got.body, { subject: 'user-1001', order: { id: '3', item: 'kettle', quantity: 2 } });
    assertDocumented('getOrder', got);
    const list = await call(`${gw.url}/v1/orders`, { headers: auth });
    assert.deepEqual(list.body.orders.at(-1), { id: '3', item: 'kettle', quantity: 2 });
    assertDocumented('listOrders', list);
    const missing = await call(`${gw.url}/v1/orders/99`, { headers: auth });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { error: 'no such order' });
    assertDocumented('getOrder', missing);
    assertDocumented('listOrders', await call(`${gw.url}/v1/orders`));
  });

  test('/v1/orders: a request the document refuses is 400 problem+json listing each failure, and never reaches the backend', async () => {
    const login = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, ordersApp);
    const auth = bearer(login.body.access_token);
    const post = (body: string, type = 'application/json') => call(`${gw.url}/v1/orders`, { method: 'POST', headers: { ...auth, 'content-type': type }, body });
    const before = (await call(`${gw.url}/v1/orders`, { headers: auth })).body.orders.length;

    const refusals: [string, { in: string; name?: string; pointer: string; message: string }[]][] = [
      ['{"quantity":1}', [{ in: 'body', pointer: '/body/item', message: 'is required' }]],
      // The README's example.
      [
        '{"quantity":0}',
        [
          { in: 'body', pointer: '/body/item', message: 'is required' },
          { in: 'body', pointer: '/body/quantity', message: 'must be >= 1' },
        ],
      ],
      [
        '{"item":"","quantity":0}',
        [
          { in: 'body', pointer: '/body/item', message: 'must NOT have fewer than 1 characters' },
          { in: 'body', pointer: '/body/quantity', message: 'must be >= 1' },
        ],
      ],
      ['{"item":"kettle","quantity":1.5}', [{ in: 'body', pointer: '/body/quantity', message: 'must be integer' }]],
      [
        '{"item":42,"quantity":"2"}',
        [
          { in: 'body', pointer: '/body/item', message: 'must be string' },
          { in: 'body', pointer: '/body/quantity', message: 'must be integer' },
        ],
      ],
      ['[]', [{ in: 'body', pointer: '/body', message: 'must be object' }]],
      ['kettle', [{ in: 'body', pointer: '/body', message: 'is not valid JSON' }]],
    ];
    for (const [body, errors] of refusals) {
      const refused = await post(body);
      assert.equal(refused.status, 400, body);
      assert.equal(refused.headers.get('content-type'), 'application/problem+json');
      assert.deepEqual(refused.body, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'the request is not valid', code: 'invalid_request', errors }, body);
      assertDocumented('createOrder', refused);
    }
    const text = await post('kettle', 'text/plain');
    assert.equal(text.status, 415);
    assert.equal(text.body.detail, 'the body must be application/json');
    assertDocumented('createOrder', text);

    for (const id of ['abc', '01', '0']) {
      const res = await call(`${gw.url}/v1/orders/${id}`, { headers: auth });
      assert.equal(res.status, 400, id);
      assert.deepEqual(res.body.errors, [{ in: 'path', name: 'id', pointer: '/path/id', message: 'must match pattern "^[1-9][0-9]*$"' }], id);
      assertDocumented('getOrder', res);
    }
    assert.equal((await call(`${gw.url}/v1/orders`, { headers: auth })).body.orders.length, before, 'no order was created');
  });

  test("the portal's origin may call the orders API and the token endpoint from a browser: preflights 204, answers readable", async () => {
    const preflight = (path: string, method: string, headers: string) =>
      call(`${gw.url}${path}`, { method: 'OPTIONS', headers: { origin: portal, 'access-control-request-method': method, 'access-control-request-headers': headers } });
    const vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
    const operation = (method: string) => ({
      'access-control-allow-origin': portal,
      'access-control-allow-methods': method,
      'access-control-allow-headers': 'Authorization, Content-Type',
      'access-control-max-age': '600',
      vary,
    });
    for (const [path, method] of [
      ['/v1/orders', 'GET'],
      ['/v1/orders', 'POST'],
      ['/v1/orders/1', 'GET'],
    ] as const) {
      const res = await preflight(path, method, 'authorization,content-type');
      assert.equal(res.status, 204, `${method} ${path}`);
      assert.deepEqual(corsHeaders(res), operation(method), `${method} ${path}`);
    }
    const token = await preflight('/oauth2/token', 'POST', 'authorization,content-type');
    assert.equal(token.status, 204);
    assert.deepEqual(corsHeaders(token), operation('POST'));
    assert.equal(
      (await call(`${gw.url}/v1/orders`, { method: 'OPTIONS', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET' } })).status,
      403,
      'another origin is refused',
    );

    // The calls themselves, from the portal's origin: the token, a 400 and a 201 carry the headers a page needs to read them.
    const login = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { origin: portal, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${ordersApp.key}:${ordersApp.secret}`).toString('base64')}` },
      body: 'grant_type=password&username=alice&password=wonderland',
    });
    assert.equal(login.status, 200);
    assert.deepEqual(corsHeaders(login), { 'access-control-allow-origin': portal, vary: 'Origin' });
    const post = (body: string) => call(`${gw.url}/v1/orders`, { method: 'POST', headers: { origin: portal, ...bearer(login.body.access_token), 'content-type': 'application/json' }, body });
    const exposed = { 'access-control-allow-origin': portal, 'access-control-expose-headers': 'X-Request-Id, Location', vary: 'Origin' };
    const refused = await post('{"item":"teapot"}');
    assert.equal(refused.status, 400);
    assert.deepEqual(corsHeaders(refused), exposed);
    const created = await post('{"item":"teapot","quantity":1}');
    assert.equal(created.status, 201);
    assert.deepEqual(corsHeaders(created), exposed);
  });
});
