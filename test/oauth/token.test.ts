// POST /oauth2/token: client authentication, client_credentials, and the RFC 6749 §5.2 errors
// with the seed's statuses.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { revokeKey, setAppStatus, setDeveloperStatus, createDeveloper, createApp } from '../../src/admin/operations.ts';
import { basic, bearer, call, rawExchange, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CHALLENGE = 'Basic realm="test-realm", charset="UTF-8"';

function assertNoStore(headers: Headers): void {
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.equal(headers.get('pragma'), 'no-cache');
}

describe('token endpoint', () => {
  let gw: TestGateway;
  let app: { key: string; secret: string };
  before(async () => {
    gw = await startTestGateway();
    app = await gw.client('hello');
  });
  after(() => gw.close());

  test('client_credentials with Basic: an access token and nothing else', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200);
    assertNoStore(res.headers);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.match(res.body.access_token, /^gwat_[A-Za-z0-9_-]{64}$/);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 3600);
    assert.equal(res.body.scope, 'hello:read hello:admin');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(res.body.access_token) })).status, 200);
  });

  test('client_credentials with client_id and client_secret in the form', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: app.key, client_secret: app.secret });
    assert.equal(res.status, 200);
    assert.equal(res.body.refresh_token, undefined);
    assert.equal(res.body.refresh_token_expires_in, undefined);
  });

  test('a form charset parameter is accepted', async () => {
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', authorization: basic(app.key, app.secret) },
      body: 'grant_type=client_credentials',
    });
    assert.equal(res.status, 200);
  });

  test('a requested subset of scopes is granted, and scope is omitted when it equals the request', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials', scope: 'hello:read' }, app);
    assert.equal(res.status, 200);
    assert.equal(res.body.scope, undefined);
    const admin = await call(`${gw.url}/v1/admin`, { headers: bearer(res.body.access_token) });
    assert.equal(admin.status, 403);
    assert.equal(admin.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="insufficient_scope", error_description="the token lacks a scope this route requires", scope="hello:admin"');
  });

  test('a scope the product does not declare: 400 invalid_scope', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials', scope: 'hello:read orders:read' }, app);
    assert.equal(res.status, 400);
    assertNoStore(res.headers);
    assert.deepEqual(res.body, { error: 'invalid_scope', error_description: "scope 'orders:read' is not available to this app" });
  });

  test('Basic credentials are form-decoded after splitting on the first colon (RFC 6749 §2.3.1)', async () => {
    // Every character of a key and secret percent-encoded, as Go's x/oauth2 does.
    const enc = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${enc(app.key)}:${enc(app.secret)}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(res.status, 200);
    const lower = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: `basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(lower.status, 200);
  });

  test('client-enumeration: unknown client and wrong secret get identical 401 invalid_client answers with the Basic challenge', async () => {
    const unknown = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: 'nobody', secret: app.secret });
    const wrong = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: app.key, secret: `${app.secret}x` });
    for (const res of [unknown, wrong]) {
      assert.equal(res.status, 401);
      assertNoStore(res.headers);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      assert.equal(res.text, '{"error":"invalid_client","error_description":"client authentication failed"}');
    }
  });

  test('wrong secret in the form: 401 invalid_client, with the challenge every 401 carries (RFC 9110 §15.5.2)', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: app.key, client_secret: 'nope' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' });
  });

  test('no client authentication at all: 401 invalid_client with the challenge', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    assert.equal(res.body.error, 'invalid_client');
  });

  test('Basic and client_secret in one request: 400 invalid_request', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: app.key, client_secret: app.secret }, app);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: 'use one client authentication method, not both Basic and client_secret' });
  });

  test('basic-two-headers: two Basic Authorization headers are a 400, not "the first one wins"', async () => {
    const other = await gw.client('hello');
    for (const [first, second] of [
      [app, other],
      [other, app],
      [app, app],
    ]) {
      const body = 'grant_type=client_credentials';
      const answer = await rawExchange(
        gw.url,
        `POST /oauth2/token HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n` +
          `Authorization: ${basic(first!.key, first!.secret)}\r\nAuthorization: ${basic(second!.key, second!.secret)}\r\n\r\n${body}`,
      );
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.match(answer, /\r\ncache-control: no-store\r\n/i);
      assert.equal(answer.slice(answer.indexOf('\r\n\r\n') + 4), JSON.stringify({ error: 'invalid_request', error_description: 'the request has more than one Authorization header' }));
    }
  });

  for (const [name, header] of [
    ['no colon', `Basic ${Buffer.from('justakey').toString('base64')}`],
    ['bad base64', 'Basic !!!!'],
    ['bad percent-encoding', `Basic ${Buffer.from('%zz:secret').toString('base64')}`],
    ['another scheme', 'Bearer abc'],
    ['a colon inside the secret: the secret is everything after the first colon', `Basic ${Buffer.from('key:part:other').toString('base64')}`],
  ] as const) {
    test(`malformed Basic (${name}): 401 invalid_client, never a 500`, async () => {
      const res = await call(`${gw.url}/oauth2/token`, { method: 'POST', headers: { ...FORM, authorization: header }, body: 'grant_type=client_credentials' });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' });
    });
  }

  test('missing grant_type: 400 invalid_request; unknown grant type: 400 unsupported_grant_type', async () => {
    const missing = await tokenRequest(gw.url, {}, app);
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'invalid_request', error_description: "parameter 'grant_type' is required" });
    const unknown = await tokenRequest(gw.url, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }, app);
    assert.equal(unknown.status, 400);
    assertNoStore(unknown.headers);
    assert.deepEqual(unknown.body, { error: 'unsupported_grant_type', error_description: "grant type 'urn:ietf:params:oauth:grant-type:device_code' is not supported" });
  });

  test('an echoed value keeps error_description within the characters RFC 6749 §5.2 allows', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'a"b\\é\n' }, app);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'unsupported_grant_type', error_description: "grant type 'a?b???' is not supported" });
  });

  test('a grant the product does not enable: 400 unauthorized_client', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, app);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'unauthorized_client', error_description: "grant type 'password' is not enabled for API product 'hello'" });
  });

  test('repeated parameters: 400 invalid_request', async () => {
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(app.key, app.secret) },
      body: 'grant_type=client_credentials&grant_type=client_credentials',
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: "parameter 'grant_type' is repeated" });
  });

  test('an empty parameter counts as absent', async () => {
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(app.key, app.secret) },
      body: 'grant_type=client_credentials&scope=',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.scope, 'hello:read hello:admin');
  });

  test('JSON bodies are refused: 400 invalid_request', async () => {
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic(app.key, app.secret) },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    assert.equal(res.status, 400);
    assertNoStore(res.headers);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: 'the body must be application/x-www-form-urlencoded (UTF-8)' });
  });

  test('GET: 405 with Allow: POST', async () => {
    const res = await call(`${gw.url}/oauth2/token`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assertNoStore(res.headers);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: 'the token endpoint accepts POST only' });
  });

  test('a body over 16 KiB: 413', async () => {
    const res = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(app.key, app.secret) },
      body: `grant_type=client_credentials&pad=${'x'.repeat(17 * 1024)}`,
    });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: 'request body exceeds 16384 bytes' });
  });

  for (const query of ['client_secret=', 'client%5Fsecret=', 'a=1&client_secret=']) {
    test(`client_secret in the query string (${query}): 400 invalid_request`, async () => {
      const res = await call(`${gw.url}/oauth2/token?${query}${app.secret}`, {
        method: 'POST',
        headers: FORM,
        body: `grant_type=client_credentials&client_id=${app.key}`,
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { error: 'invalid_request', error_description: 'client_secret must not be sent in the query string' });
    });
  }

  test('a client that disconnects mid-body is not a server error', async () => {
    const before = gw.logs.length;
    const { port } = new URL(gw.url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type`);
        setTimeout(() => socket.destroy(), 20);
      });
      socket.on('close', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 50));
    const lines = gw.logs.slice(before).map((l) => JSON.parse(l) as { level: number; status?: number; error?: string });
    assert.deepEqual(
      lines.map((l) => [l.level, l.status, l.error]),
      [[30, 400, 'request_aborted']],
    );
  });

  test('nothing secret reaches the log', () => {
    const log = gw.logs.join('');
    assert.ok(!log.includes(app.secret));
    assert.ok(!/gwat_|gwrt_|gws_/.test(log));
  });
});

describe('disabling stops issuance and invalidates issued tokens at once', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  async function issued(app: { key: string; secret: string }): Promise<string> {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(res.body.access_token) })).status, 200);
    return res.body.access_token;
  }

  async function assertDead(app: { key: string; secret: string }, token: string): Promise<void> {
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(token) });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_token", error_description="the access token is invalid, expired or revoked"');
    const again = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(again.status, 401);
    assert.equal(again.body.error, 'invalid_client');
  }

  test('a revoked key', async () => {
    const app = await gw.client('hello');
    const token = await issued(app);
    await revokeKey(gw.admin, app.key);
    await assertDead(app, token);
  });

  test('a disabled app; once enabled it gets new tokens, the old ones stay dead', async () => {
    const app = await gw.client('hello');
    const token = await issued(app);
    await setAppStatus(gw.admin, { key: app.key }, 'disabled');
    await assertDead(app, token);
    await setAppStatus(gw.admin, { key: app.key }, 'active');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status, 401);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(await issued(app)) })).status, 200);
  });

  test('a disabled developer', async () => {
    await createDeveloper(gw.admin, { email: 'other@example.com', name: 'Other' });
    const created = await createApp(gw.admin, { developer: 'other@example.com', name: 'x', product: 'hello' });
    const app = { key: created.key, secret: created.secret };
    const token = await issued(app);
    await setDeveloperStatus(gw.admin, 'other@example.com', 'disabled');
    await assertDead(app, token);
  });
});

describe('token lifetimes', () => {
  test('an access token expires after expires_in, judged by the clock', async () => {
    let now = Date.now();
    const gw = await startTestGateway({}, { clock: () => now });
    try {
      const app = await gw.client('hello');
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      now += 3599_000;
      assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(res.body.access_token) })).status, 200);
      now += 1_000;
      const expired = await call(`${gw.url}/v1/hello`, { headers: bearer(res.body.access_token) });
      assert.equal(expired.status, 401);
      assert.equal(expired.body.code, 'invalid_token');
    } finally {
      await gw.close();
    }
  });
});
