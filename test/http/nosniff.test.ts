// X-Content-Type-Options: nosniff on every answer the gateway writes itself (problem+json, the
// OAuth endpoints', the metadata, the admin listener's); an upstream's answer, proxied, keeps its own headers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, call, startTestGateway, startUpstream, tokenRequest } from '../helpers.ts';

test("the gateway's own answers carry X-Content-Type-Options: nosniff; a proxied answer keeps the upstream's say", async () => {
  const upstream = await startUpstream();
  const gw = await startTestGateway({ upstreamUrl: upstream.url, oauth: '  issuer: https://gateway.example.com\n' });
  try {
    const problem = await call(`${gw.url}/v1/backend/1`);
    assert.equal(problem.status, 401);
    assert.equal(problem.headers.get('content-type'), 'application/problem+json');
    assert.equal(problem.headers.get('x-content-type-options'), 'nosniff');

    const app = await gw.client('hello');
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(issued.status, 200);
    assert.equal(issued.headers.get('x-content-type-options'), 'nosniff');
    const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: app.key, secret: 'wrong' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-content-type-options'), 'nosniff');

    const metadata = await call(`${gw.url}/.well-known/oauth-authorization-server`);
    assert.equal(metadata.status, 200);
    assert.equal(metadata.headers.get('x-content-type-options'), 'nosniff');

    const health = await call(`${gw.gateway.adminUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('x-content-type-options'), 'nosniff');

    const proxied = await call(`${gw.url}/v1/backend/1`, { headers: bearer(issued.body.access_token) });
    assert.equal(proxied.status, 200);
    assert.equal(proxied.headers.get('x-upstream'), 'yes');
    assert.equal(proxied.headers.get('x-content-type-options'), null);
  } finally {
    await gw.close();
    await upstream.close();
  }
});
