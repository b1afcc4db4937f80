// The password grant against a stand-in authorization server over real HTTP, and the
// refresh_token grant with rotation and reuse detection.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { AUTH_CLIENT, bearer, call, startAuthServer, startUpstream, startTestGateway, storedText, tokenRequest, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';

const CHALLENGE = 'Basic realm="test-realm", charset="UTF-8"';

describe('password grant', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  let app: { key: string; secret: string };
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonder land:1', sub: 'user-1' }, bob: { password: 'builder' } });
    upstream = await startUpstream();
    gw = await startTestGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url });
    app = await gw.client('orders');
  });
  beforeEach(() => {
    auth.answer = undefined;
    auth.calls.length = 0;
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await upstream.close();
  });

  test('the authorization server confirms: access and refresh token, subject forwarded upstream', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonder land:1' }, app);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'refresh_token_expires_in', 'scope', 'token_type']);
    assert.equal(res.body.expires_in, 600);
    assert.equal(res.body.refresh_token_expires_in, '3600');
    assert.match(res.body.refresh_token, /^gwrt_[A-Za-z0-9_-]{64}$/);
    // The gateway authenticated itself to the authorization server and passed the credentials through.
    assert.deepEqual(auth.calls, [{ authorization: `Basic ${Buffer.from(`${AUTH_CLIENT.id}:${AUTH_CLIENT.secret}`).toString('base64')}`, body: { username: 'alice', password: 'wonder land:1' } }]);
    const orders = await call(`${gw.url}/v1/orders`, { headers: bearer(res.body.access_token) });
    assert.equal(orders.status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'user-1');
  });

  test('without a subject in the answer the username is the subject', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'bob', password: 'builder', scope: 'orders:read' }, app);
    assert.equal(res.status, 200);
    assert.equal(res.body.scope, undefined);
    await call(`${gw.url}/v1/orders`, { headers: bearer(res.body.access_token) });
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'bob');
  });

  test('a subject outside visible ASCII reaches the upstream percent-encoded', async () => {
    auth.answer = () => ({ status: 200, body: { sub: '山田 100%' } });
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'yamada', password: 'x' }, app);
    assert.equal(res.status, 200);
    const orders = await call(`${gw.url}/v1/orders`, { headers: bearer(res.body.access_token) });
    assert.equal(orders.status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], '%E5%B1%B1%E7%94%B0 100%25');
  });

  test('rejected user credentials: 401 invalid_grant, with the challenge after Basic', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wrong' }, app);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    assert.deepEqual(res.body, { error: 'invalid_grant', error_description: 'invalid resource owner credentials' });
  });

  test('403 from the authorization server (user disabled): 401 invalid_grant', async () => {
    auth.answer = () => ({ status: 403 });
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonder land:1' }, app);
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_grant');
  });

  test('the client is authenticated before the authorization server is asked', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonder land:1' }, { key: app.key, secret: 'wrong' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_client');
    assert.equal(auth.calls.length, 0);
  });

  test('missing username or password: 400 invalid_request, the server is not asked', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice' }, app);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'invalid_request', error_description: "parameter 'password' is required" });
    assert.equal(auth.calls.length, 0);
  });

  test('the authorization server failing: 503 temporarily_unavailable', async () => {
    auth.answer = () => ({ status: 500 });
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonder land:1' }, app);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.deepEqual(res.body, { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' });
  });

  test('the authorization server too slow (timeout 1s): 503 temporarily_unavailable', async () => {
    auth.answer = () => ({ status: 200, delayMs: 1500 });
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonder land:1' }, app);
    assert.equal(res.status, 503);
    assert.equal(res.body.error, 'temporarily_unavailable');
  });

  test('the password never reaches the log or the database', async () => {
    const log = gw.logs.join('');
    assert.ok(!log.includes('wonder land'));
    assert.ok(!log.includes('builder'));
    const db = await storedText(gw.dir);
    assert.ok(db.length > 1000, 'the store holds the tokens');
    assert.ok(!db.includes('wonder land'));
    assert.ok(!db.includes('gwat_') && !db.includes('gwrt_') && !db.includes('gws_'));
  });
});

describe('password grant without refresh_token enabled', () => {
  test('an access token only', async () => {
    const auth = await startAuthServer();
    const gw = await startTestGateway({
      authServerUrl: auth.url,
      products: `  users-only:\n    routes: [hello]\n    grants: [password]\n    authServer: users\n`,
    });
    try {
      const app = await gw.client('users-only');
      const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, app);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'token_type']);
      const refresh = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: 'gwrt_x' }, app);
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body.error, 'unauthorized_client');
    } finally {
      await gw.close();
      await auth.close();
    }
  });
});

describe('refresh_token grant', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  let app: { key: string; secret: string };
  let now = Date.now();
  before(async () => {
    auth = await startAuthServer();
    upstream = await startUpstream();
    gw = await startTestGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url }, { clock: () => now });
    app = await gw.client('orders');
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await upstream.close();
  });

  async function login(scope?: string): Promise<{ access_token: string; refresh_token: string }> {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland', ...(scope ? { scope } : {}) }, app);
    assert.equal(res.status, 200);
    return res.body;
  }

  test('each use rotates: new access and refresh tokens, no user credentials sent anywhere', async () => {
    const first = await login();
    const calls = auth.calls.length;
    const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.notEqual(res.body.access_token, first.access_token);
    assert.notEqual(res.body.refresh_token, first.refresh_token);
    assert.equal(res.body.refresh_token_expires_in, '3600');
    assert.equal(res.body.scope, 'orders:read orders:write');
    assert.equal(auth.calls.length, calls);
    const orders = await call(`${gw.url}/v1/orders`, { headers: bearer(res.body.access_token) });
    assert.equal(orders.status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'user-1');
    const next = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, app);
    assert.equal(next.status, 200);
  });

  test('refresh-reuse: a rotated refresh token presented again is 401 invalid_grant and revokes the whole family', async () => {
    const first = await login();
    const second = (await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app)).body;
    const reuse = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app);
    assert.equal(reuse.status, 401);
    assert.deepEqual(reuse.body, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' });
    for (const token of [first.access_token, second.access_token]) {
      assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(token) })).status, 401);
    }
    const successor = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: second.refresh_token }, app);
    assert.equal(successor.status, 401);
    assert.equal(successor.body.error, 'invalid_grant');
  });

  test('refresh-race: concurrent uses of one refresh token: exactly one succeeds, and without a grace the reuse revokes the winner too', async () => {
    const first = await login();
    const answers = await Promise.all(Array.from({ length: 8 }, () => tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
    const winner = answers.find((a) => a.status === 200)!.body;
    assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(winner.access_token) })).status, 401);
  });

  test('scope-widening: a refresh can narrow the scope but never widen it', async () => {
    const first = await login('orders:read');
    const wider = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'orders:read orders:write' }, app);
    assert.equal(wider.status, 400);
    assert.deepEqual(wider.body, { error: 'invalid_scope', error_description: 'the requested scope exceeds the scope of the refresh token' });
    // The refused request did not consume the refresh token.
    const same = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'orders:read' }, app);
    assert.equal(same.status, 200);
    assert.equal(same.body.scope, undefined);

    const broad = await login();
    const narrow = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: broad.refresh_token, scope: 'orders:write' }, app);
    assert.equal(narrow.status, 200);
    const narrowed = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: narrow.body.refresh_token }, app);
    assert.equal(narrowed.body.scope, 'orders:write');
    assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(narrowed.body.access_token) })).status, 403);
  });

  test("another client's refresh token: 401 invalid_grant", async () => {
    const first = await login();
    const other = await gw.client('orders');
    const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, other);
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_grant');
    // Still usable by its own client.
    assert.equal((await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app)).status, 200);
  });

  test('an unknown or access token as refresh token: 401 invalid_grant; missing: 400', async () => {
    const first = await login();
    for (const refresh_token of ['gwrt_unknown', first.access_token]) {
      const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token }, app);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
      assert.equal(res.body.error, 'invalid_grant');
    }
    const missing = await tokenRequest(gw.url, { grant_type: 'refresh_token' }, app);
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'invalid_request', error_description: "parameter 'refresh_token' is required" });
  });

  test('an expired refresh token: 401 invalid_grant', async () => {
    const first = await login();
    now += 3600_000;
    const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app);
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_grant');
  });

  test('client credentials invalid on a refresh: 401 invalid_client', async () => {
    const first = await login();
    const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, { key: app.key, secret: 'bad' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_client');
  });
});

describe('refresh_token grant with refreshReuseGrace', () => {
  test('a reuse within the grace is refused without revoking; after it, the family is revoked', async () => {
    let now = Date.now();
    const auth = await startAuthServer();
    const upstream = await startUpstream();
    const gw = await startTestGateway(
      {
        authServerUrl: auth.url,
        upstreamUrl: upstream.url,
        products: `  orders-grace:\n    routes: [orders]\n    scopes: [orders:read]\n    grants: [password, refresh_token]\n    authServer: users\n    refreshReuseGrace: 10s\n`,
      },
      { clock: () => now },
    );
    try {
      const app = await gw.client('orders-grace');
      const first = (await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, app)).body;
      const answers = await Promise.all(Array.from({ length: 4 }, () => tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401]);
      const winner = answers.find((a) => a.status === 200)!.body;
      assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(winner.access_token) })).status, 200, "the winner's tokens live on");
      now += 10_000;
      const late = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, app);
      assert.equal(late.status, 401);
      assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(winner.access_token) })).status, 401, 'a reuse after the grace revokes the family');
      assert.equal((await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: winner.refresh_token }, app)).status, 401);
    } finally {
      await gw.close();
      await auth.close();
      await upstream.close();
    }
  });
});
