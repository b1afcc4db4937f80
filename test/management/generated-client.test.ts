// The management API driven by a client generated from its own OpenAPI document: openapi-fetch
// over the types openapi-typescript made of it (./generated/api.ts, `npm run docs:management`), so
// a change of the document that breaks a client breaks this file's type check, and an answer that
// leaves the document fails checkAnswer in the client's middleware.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { tokenRequest } from '../helpers.ts';
import { checkAnswer, startManagedGateway, type ManagedGateway } from './client.ts';
import type { components, paths } from './generated/api.ts';

type Problem = components['schemas']['Problem'];

/** Sends the management client's bearer token with every request. */
function bearerToken(token: string): Middleware {
  return {
    onRequest: function addBearer({ request }) {
      request.headers.set('authorization', `Bearer ${token}`);
    },
  };
}

/** Checks every answer against the operation the document declares at its path template, and notes which were checked. */
function answerChecker(checked: string[]): Middleware {
  return {
    onResponse: async function checkAgainstDocument({ request, response, schemaPath }) {
      const text = await response.clone().text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      checkAnswer(request.method, `/v1${schemaPath}`, { status: response.status, headers: response.headers, body, text });
      checked.push(`${request.method} ${schemaPath} ${response.status}`);
    },
  };
}

describe('management API through a client generated from its document', () => {
  let gw: ManagedGateway;
  let client: Client<paths>;
  const checked: string[] = [];

  before(async () => {
    gw = await startManagedGateway();
    const { token } = await gw.managementToken();
    client = createClient<paths>({ baseUrl: `${gw.managementUrl}/v1` });
    client.use(bearerToken(token), answerChecker(checked));
  });
  after(() => gw.close());

  test('a developer and an app: created, listed, read, disabled with If-Match, its key rotated; the products', async () => {
    const dev = await client.POST('/developers', { body: { email: 'Ada@Example.com', name: 'Ada' } });
    assert.equal(dev.response.status, 201);
    const developer = dev.data!;
    assert.deepEqual(developer, { id: developer.id, email: 'ada@example.com', name: 'Ada', status: 'active', verified: true, createdAt: developer.createdAt });

    const made = await client.POST('/apps', { body: { developer: 'ada@example.com', name: 'billing', product: 'hello' } });
    assert.equal(made.response.status, 201);
    const created = made.data!;
    const fields = {
      id: created.id,
      developerId: developer.id,
      developerEmail: 'ada@example.com',
      name: 'billing',
      product: 'hello',
      status: 'active' as const,
      approval: 'approved' as const,
      createdAt: created.createdAt,
      type: 'confidential' as const,
      redirectUris: [],
    };
    assert.deepEqual(created, { ...fields, key: created.key, secret: created.secret });
    assert.match(created.key, /^[A-Za-z0-9]{32}$/);
    assert.match(created.secret!, /^gws_/);
    const secret = created.secret!;
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: created.key, secret })).status, 200);

    const credential = { key: created.key, appId: created.id, status: 'approved' as const, expiresAt: null, createdAt: created.createdAt };
    const listed = await client.GET('/apps', { params: { query: { developer: 'ada@example.com' } } });
    assert.equal(listed.response.status, 200);
    assert.deepEqual(listed.data, { items: [{ ...fields, credentials: [credential] }], next: null });

    const read = await client.GET('/apps/{app}', { params: { path: { app: created.id } } });
    assert.equal(read.response.status, 200);
    assert.deepEqual(read.data, { ...fields, credentials: [credential] });
    const etag = read.response.headers.get('etag')!;
    assert.match(etag, /^"[A-Za-z0-9_-]{22}"$/);

    const disabled = await client.PATCH('/apps/{app}', { params: { path: { app: created.id }, header: { 'If-Match': etag } }, body: { status: 'disabled' } });
    assert.equal(disabled.response.status, 200);
    assert.deepEqual(disabled.data, { ...fields, status: 'disabled', credentials: [credential] });
    assert.notEqual(disabled.response.headers.get('etag'), etag);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: created.key, secret })).status, 401);
    // The ETag read before the change names a version that is gone.
    const stale = await client.PATCH('/apps/{app}', { params: { path: { app: created.id }, header: { 'If-Match': etag } }, body: { status: 'active' } });
    assert.equal(stale.response.status, 412);
    assert.equal(stale.error?.code, 'precondition_failed');

    const rotated = await client.POST('/apps/{app}/keys', { params: { path: { app: created.id } } });
    assert.equal(rotated.response.status, 201);
    const fresh = rotated.data!;
    assert.deepEqual(fresh, { ...fields, status: 'disabled', key: fresh.key, secret: fresh.secret, overlapUntil: fresh.overlapUntil });
    assert.notEqual(fresh.key, created.key);
    assert.match(fresh.secret!, /^gws_/);
    // portal.keyOverlap's default: the earlier key works for a day more.
    assert.ok(fresh.overlapUntil - created.createdAt >= 86_400_000, `${fresh.overlapUntil}`);
    const keys = await client.GET('/apps/{app}/keys', { params: { path: { app: created.id } } });
    assert.deepEqual(
      new Map(keys.data?.items.map((c) => [c.key, [c.status, c.expiresAt]])),
      new Map([
        [created.key, ['approved', fresh.overlapUntil]],
        [fresh.key, ['approved', null]],
      ]),
    );

    const products = await client.GET('/products');
    assert.equal(products.response.status, 200);
    assert.deepEqual(
      products.data?.items.map((p) => [p.name, p.grants, p.approval]),
      [
        ['hello', ['client_credentials'], 'auto'],
        ['orders', ['password', 'refresh_token', 'client_credentials'], 'manual'],
      ],
    );
    assert.deepEqual(products.data?.items[0], {
      name: 'hello',
      displayName: 'hello',
      description: '',
      scopes: ['hello:read', 'hello:admin'],
      grants: ['client_credentials'],
      approval: 'auto',
      visible: false,
      accessTokenLifetime: 3600,
      refreshTokenLifetime: 86400,
      routes: [
        { name: 'hello', method: 'GET', path: '/v1/hello', scopes: [] },
        { name: 'echo', method: 'POST', path: '/v1/echo', scopes: [] },
        { name: 'backend', method: 'GET', path: '/v1/backend/{id}', scopes: [] },
        { name: 'admin-only', method: 'GET', path: '/v1/admin', scopes: ['hello:admin'] },
      ],
    });
  });

  test('a refusal is read as a typed problem: a developer created twice', async () => {
    const first = await client.POST('/developers', { body: { email: 'bob@example.com', name: 'Bob' } });
    assert.equal(first.response.status, 201);
    const again = await client.POST('/developers', { body: { email: 'bob@example.com', name: 'Bob' } });
    assert.equal(again.response.status, 409);
    assert.equal(again.data, undefined);
    assert.equal(again.response.headers.get('content-type'), 'application/problem+json');
    const problem: Problem | undefined = again.error;
    assert.deepEqual(problem, { type: 'about:blank', title: 'Conflict', status: 409, detail: 'developer bob@example.com already exists', code: 'duplicate_developer' });
  });

  test('every answer was checked against the document', () => {
    assert.deepEqual(checked, [
      'POST /developers 201',
      'POST /apps 201',
      'GET /apps 200',
      'GET /apps/{app} 200',
      'PATCH /apps/{app} 200',
      'PATCH /apps/{app} 412',
      'POST /apps/{app}/keys 201',
      'GET /apps/{app}/keys 200',
      'GET /products 200',
      'POST /developers 201',
      'POST /developers 409',
    ]);
  });
});
