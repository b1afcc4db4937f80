// The management API driven by fetch against a running gateway: each answer checked against the
// API's OpenAPI document, each refusal exact.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, bearer, call, tokenRequest } from '../helpers.ts';
import { api, startManagedGateway, type ManagedGateway } from './client.ts';

describe('management API', () => {
  let gw: ManagedGateway;
  let request: ReturnType<typeof api>;
  let clientKey: string;

  before(async () => {
    gw = await startManagedGateway();
    const made = await gw.managementToken();
    clientKey = made.key;
    request = api(gw.managementUrl, made.token);
  });
  after(() => gw.close());

  test('developers: create, read by email and id, page through, disable with If-Match, delete', async () => {
    const created = await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'Ada@Example.com', name: 'Ada' } });
    assert.equal(created.status, 201);
    assert.deepEqual({ ...created.body, id: '', createdAt: 0 }, { id: '', email: 'ada@example.com', name: 'Ada', status: 'active', verified: true, createdAt: 0 });
    assert.equal(created.headers.get('location'), `/v1/developers/${created.body.id}`);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    const byEmail = await request('GET', '/v1/developers/{developer}', '/v1/developers/ada@example.com');
    const byId = await request('GET', '/v1/developers/{developer}', `/v1/developers/${created.body.id}`);
    assert.deepEqual(byEmail.body, created.body);
    assert.equal(byEmail.headers.get('etag'), created.headers.get('etag'));
    assert.equal(byId.headers.get('etag'), created.headers.get('etag'));

    await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'bob@example.com', name: 'Bob' } });
    const first = await request('GET', '/v1/developers', '/v1/developers?limit=1');
    assert.deepEqual(
      first.body.items.map((d: { email: string }) => d.email),
      ['ada@example.com'],
    );
    assert.equal(typeof first.body.next, 'string');
    const second = await request('GET', '/v1/developers', `/v1/developers?limit=1&cursor=${first.body.next}`);
    assert.deepEqual(
      second.body.items.map((d: { email: string }) => d.email),
      ['bob@example.com'],
    );
    assert.equal(second.body.next, null);

    const stale = await request('PATCH', '/v1/developers/{developer}', '/v1/developers/ada@example.com', { body: { status: 'disabled' }, headers: { 'if-match': '"stale"' } });
    assert.equal(stale.status, 412);
    assert.equal(stale.body.code, 'precondition_failed');
    assert.equal((await request('GET', '/v1/developers/{developer}', '/v1/developers/ada@example.com')).body.status, 'active');
    const disabled = await request('PATCH', '/v1/developers/{developer}', '/v1/developers/ada@example.com', {
      body: { status: 'disabled' },
      headers: { 'if-match': created.headers.get('etag')! },
    });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.status, 'disabled');
    assert.notEqual(disabled.headers.get('etag'), created.headers.get('etag'));

    const duplicate = await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'bob@example.com', name: 'Bob' } });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.code, 'duplicate_developer');
    assert.equal(duplicate.headers.get('content-type'), 'application/problem+json');

    assert.equal((await request('DELETE', '/v1/developers/{developer}', '/v1/developers/bob@example.com')).status, 204);
    const gone = await request('GET', '/v1/developers/{developer}', '/v1/developers/bob@example.com');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'unknown_developer');
  });

  test('apps: registered with a key and secret that work at the token endpoint at once; Idempotency-Key makes a retry answer as the first', async () => {
    await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'cy@example.com', name: 'Cy' } });
    const headers = { 'idempotency-key': 'create-cy-billing' };
    const body = { developer: 'cy@example.com', name: 'billing', product: 'hello' };
    const created = await request('POST', '/v1/apps', '/v1/apps', { body, headers });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('idempotent-replayed'), null);
    assert.match(created.body.key, /^[A-Za-z0-9]{32}$/);
    assert.match(created.body.secret, /^gws_/);
    const retried = await request('POST', '/v1/apps', '/v1/apps', { body, headers });
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), 'true');
    // The secret is shown once: to the call that made it.
    const { secret: _shown, ...withoutSecret } = created.body;
    assert.deepEqual(retried.body, withoutSecret);
    const other = await request('POST', '/v1/apps', '/v1/apps', { body: { ...body, name: 'other' }, headers });
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'idempotency_key_reused');
    const listed = await request('GET', '/v1/apps', '/v1/apps?developer=cy@example.com');
    assert.deepEqual(
      listed.body.items.map((a: { name: string }) => a.name),
      ['billing'],
    );

    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: created.body.key, secret: created.body.secret });
    assert.equal(issued.status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);

    const revoked = await request('POST', '/v1/tokens/revoke', '/v1/tokens/revoke', { body: { app: created.body.id } });
    assert.deepEqual(revoked.body, { revoked: 1 });
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 401);
  });

  test('keys: import a key made by another gateway, which then works unchanged; a taken key is refused; rotate and revoke', async () => {
    await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'di@example.com', name: 'Di' } });
    const app = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'di@example.com', name: 'moved', product: 'hello' } });
    const imported = { key: 'apigee-Consumer.Key_01', secret: 'an-apigee-consumer-secret-0123456789' };
    const answer = await request('POST', '/v1/apps/{app}/keys/import', `/v1/apps/${app.body.id}/keys/import`, { body: imported });
    assert.equal(answer.status, 201);
    assert.deepEqual({ ...answer.body, createdAt: 0 }, { key: imported.key, appId: app.body.id, status: 'approved', expiresAt: null, createdAt: 0 });
    assert.ok(!answer.text.includes(imported.secret));
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, imported);
    assert.equal(issued.status, 200, issued.text);

    const other = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'di@example.com', name: 'other', product: 'hello' } });
    const taken = await request('POST', '/v1/apps/{app}/keys/import', `/v1/apps/${other.body.id}/keys/import`, { body: { ...imported, secret: 'another-secret-0123456789' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.code, 'key_taken');

    const rotated = await request('POST', '/v1/apps/{app}/keys', `/v1/apps/${app.body.id}/keys`);
    assert.equal(rotated.status, 201);
    assert.equal(typeof rotated.body.overlapUntil, 'number');
    const revoke = await request('POST', '/v1/apps/{app}/keys/{key}/revoke', `/v1/apps/${app.body.id}/keys/${imported.key}/revoke`);
    assert.equal(revoke.status, 200);
    assert.equal(revoke.body.status, 'revoked');
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, imported)).status, 401);
    const keys = await request('GET', '/v1/apps/{app}/keys', `/v1/apps/${app.body.id}/keys`);
    assert.equal(keys.body.items.length, 3);
  });

  test('products and usage: as the config declares them; calls counted per app, route and status class', async () => {
    const products = await request('GET', '/v1/products', '/v1/products');
    assert.deepEqual(
      products.body.items.map((p: { name: string }) => p.name),
      ['hello', 'orders'],
    );
    const hello = await request('GET', '/v1/products/{product}', '/v1/products/hello');
    assert.deepEqual(hello.body.routes[0], { name: 'hello', method: 'GET', path: '/v1/hello', scopes: [] });
    assert.deepEqual(hello.body.scopes, ['hello:read', 'hello:admin']);

    const { key, secret } = await gw.client('hello');
    const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret })).body.access_token;
    for (let i = 0; i < 3; i++) await call(`${gw.url}/v1/hello`, { headers: bearer(token) });
    await call(`${gw.url}/v1/admin`, { headers: bearer(token) });
    const app = (await request('GET', '/v1/apps', `/v1/apps?key=${key}`)).body.items[0];
    const usage = await request('GET', '/v1/usage', `/v1/usage?app=${app.id}`);
    assert.deepEqual(
      usage.body.items.map((u: { route: string; statusClass: string; count: number; product: string }) => [u.route, u.statusClass, u.count, u.product]),
      [
        ['admin-only', '2xx', 1, 'hello'],
        ['hello', '2xx', 3, 'hello'],
      ],
    );
    const bad = await request('GET', '/v1/usage', '/v1/usage?from=yesterday');
    assert.equal(bad.status, 400);
  });

  test('refusals: no token, a token of another product, a missing scope, an unknown field, the public token endpoint', async () => {
    const none = await call(`${gw.managementUrl}/v1/developers`);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="test-realm"');

    const { key, secret } = await gw.client('hello');
    const appToken = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret })).body.access_token;
    const foreign = await call(`${gw.managementUrl}/v1/developers`, { headers: bearer(appToken) });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.code, 'insufficient_scope');

    const reader = await gw.managementToken(['developers:read'], 'reader');
    const readOnly = api(gw.managementUrl, reader.token);
    assert.equal((await readOnly('GET', '/v1/developers', '/v1/developers')).status, 200);
    const write = await readOnly('POST', '/v1/developers', '/v1/developers', { body: { email: 'eve@example.com', name: 'Eve' } });
    assert.equal(write.status, 403);
    assert.equal(write.body.code, 'insufficient_scope');
    assert.match(write.headers.get('www-authenticate')!, /scope="developers:write"/);
    const widened = await call(`${gw.managementUrl}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic(reader.key, reader.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=developers:write',
    });
    assert.equal(widened.status, 400);
    assert.equal(widened.body.error, 'invalid_scope');

    const unknown = await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'eve@example.com', name: 'Eve', admin: true } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.code, 'invalid_request');

    // Management clients get their tokens at the management listener only.
    const publicToken = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: reader.key, secret: reader.secret });
    assert.equal(publicToken.status, 400);
    assert.equal(publicToken.body.error, 'unauthorized_client');
    // The API is not on the public listener.
    assert.equal((await call(`${gw.url}/v1/developers`, { headers: bearer(reader.token) })).status, 404);
  });

  test('the document at /openapi.json, and an audit line per call naming the client', async () => {
    const doc = await call(`${gw.managementUrl}/openapi.json`);
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    const lines = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'management.call' && l.actor.client === clientKey);
    assert.ok(lines.length > 10);
    const created = lines.find((l) => l.operation === 'createDeveloper');
    assert.deepEqual(
      { ...created, time: 0 },
      {
        level: 30,
        time: 0,
        audit: 'management.call',
        actor: { kind: 'management', client: clientKey, name: 'automation-1' },
        operation: 'createDeveloper',
        method: 'POST',
        path: '/v1/developers',
        status: 201,
        msg: 'management API call',
      },
    );
    // The operation's own line names the client too.
    const made = gw.logs.map((l) => JSON.parse(l)).find((l) => l.audit === 'developer.create' && l.developer.email === 'ada@example.com');
    assert.deepEqual(made.actor, { kind: 'management', client: clientKey, name: 'automation-1' });
  });
});
