// The OAuth endpoints are routes of the route table that take their paths before any route of
// the config, whatever the method: a route declared at /oauth2/token or under /oauth2/{x} never
// answers there. Their access lines and metrics name the endpoint's path.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

describe('the OAuth endpoints in the route table', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({
      routes: `
  shadowed:
    method: GET
    path: /oauth2/token
    upstream: mock
  under-oauth2:
    method: POST
    path: /oauth2/{name}
    upstream: mock`,
      products: `
  shadows:
    routes: [shadowed, under-oauth2]
    scopes: [x]`,
    });
  });
  after(() => gw.close());

  test("a route of the config at an endpoint's path does not answer there, whatever the method", async () => {
    const get = await call(`${gw.url}/oauth2/token`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal(get.headers.get('cache-control'), 'no-store');
    assert.deepEqual(get.body, { error: 'invalid_request', error_description: 'the token endpoint accepts POST only' });
    const revoke = await tokenRequest(gw.url, { token: 'x' }, undefined, '/oauth2/revoke');
    assert.equal(revoke.status, 401);
    assert.equal(revoke.body.error, 'invalid_client');
    assert.equal(revoke.headers.get('www-authenticate'), 'Basic realm="test-realm", charset="UTF-8"');
  });

  test("a path under /oauth2/ that no endpoint has is the config's", async () => {
    const other = await call(`${gw.url}/oauth2/other`, { method: 'POST' });
    assert.equal(other.status, 401);
    assert.match(other.headers.get('www-authenticate') ?? '', /^Bearer realm="test-realm"/);
  });

  test("the access line names the endpoint's path as its route, and what the endpoint did", async () => {
    const app = await gw.client('hello');
    const issued = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'issued-1', authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(issued.status, 200, issued.text);
    const line = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.id === 'issued-1');
    assert.equal(line?.route, '/oauth2/token');
    assert.equal(line?.grant, 'client_credentials');
    assert.equal(line?.status, 200);
  });
});
