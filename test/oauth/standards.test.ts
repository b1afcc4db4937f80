// RFC 7009 revocation, RFC 7662 introspection and RFC 8414 metadata, over real HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, bearer, call, startAuthServer, startTestGateway, startUpstream, tokenRequest, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';

const CHALLENGE = 'Basic realm="test-realm", charset="UTF-8"';
const ISSUER = 'https://gateway.example.com';
const CALLER = { id: 'orders-backend', secret: 'a-backend-secret-of-some-length' };
const OAUTH = `  issuer: ${ISSUER}
  introspection:
    clients:
      - { id: ${CALLER.id}, secret: ${CALLER.secret} }
`;

const form = (params: Record<string, string>, authorization?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization === undefined ? {} : { authorization }) },
  body: new URLSearchParams(params).toString(),
});

describe('revocation and introspection', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  let app: { key: string; secret: string };
  let other: { key: string; secret: string };

  before(async () => {
    auth = await startAuthServer();
    upstream = await startUpstream();
    gw = await startTestGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url, oauth: OAUTH });
    app = await gw.client('orders', 'revoking-app');
    other = await gw.client('orders', 'other-app');
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await upstream.close();
  });

  const credentials = (c: { key: string; secret: string }) => basic(c.key, c.secret);
  const revoke = (token: string, c = app, extra: Record<string, string> = {}) => call(`${gw.url}/oauth2/revoke`, form({ token, ...extra }, credentials(c)));
  const introspect = (token: string, authorization = basic(CALLER.id, CALLER.secret)) => call(`${gw.url}/oauth2/introspect`, form({ token }, authorization));
  const orders = (token: string) => call(`${gw.url}/v1/orders`, { headers: bearer(token) });

  async function passwordTokens(c = app): Promise<{ access_token: string; refresh_token: string }> {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, c);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  test('revocation-refresh-family: revoking a refresh token stops it and its access token at once', async () => {
    const tokens = await passwordTokens();
    assert.equal((await orders(tokens.access_token)).status, 200);
    const res = await revoke(tokens.refresh_token, app, { token_type_hint: 'refresh_token' });
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal((await orders(tokens.access_token)).status, 401);
    const refreshed = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, app);
    assert.equal(refreshed.status, 401);
    assert.equal(refreshed.body.error, 'invalid_grant');
  });

  test('revocation-access-token: an access token (with a wrong hint) is revoked, with its grant', async () => {
    const tokens = await passwordTokens();
    assert.equal((await revoke(tokens.access_token, app, { token_type_hint: 'refresh_token' })).status, 200);
    assert.equal((await orders(tokens.access_token)).status, 401);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, app)).status, 401);
  });

  test("revocation-cross-client: another client's revocation answers 200 and revokes nothing", async () => {
    const tokens = await passwordTokens();
    assert.equal((await revoke(tokens.refresh_token, other)).status, 200);
    assert.equal((await orders(tokens.access_token)).status, 200);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, app)).status, 200);
  });

  test('revocation: unknown token 200; no token 400; no or bad client 401 with a challenge; GET 405', async () => {
    assert.equal((await revoke(`gwat_${'A'.repeat(64)}`)).status, 200);
    assert.equal((await revoke('not-even-a-token')).status, 200);
    const missing = await call(`${gw.url}/oauth2/revoke`, form({}, credentials(app)));
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { error: 'invalid_request', error_description: "parameter 'token' is required" });
    const anonymous = await call(`${gw.url}/oauth2/revoke`, form({ token: 'x' }));
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error, 'invalid_client');
    assert.equal(anonymous.headers.get('www-authenticate'), CHALLENGE);
    assert.equal((await call(`${gw.url}/oauth2/revoke`, form({ token: 'x' }, basic(app.key, 'wrong')))).status, 401);
    const get = await call(`${gw.url}/oauth2/revoke`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const inQuery = await call(`${gw.url}/oauth2/revoke?token=abc`, form({ token: 'x' }, credentials(app)));
    assert.equal(inQuery.status, 400, 'a token in the query string');
  });

  test('introspection: an active token, exactly', async () => {
    const issued = Math.floor(Date.now() / 1000);
    const tokens = await passwordTokens();
    const res = await introspect(tokens.access_token);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('content-type'), 'application/json');
    const { exp, iat, ...rest } = res.body as { exp: number; iat: number };
    assert.deepEqual(rest, { active: true, scope: 'orders:read orders:write', client_id: app.key, token_type: 'Bearer', sub: 'user-1', app: 'revoking-app', product: 'orders' });
    assert.ok(iat >= issued - 1 && iat <= issued + 5, String(iat));
    assert.equal(exp, iat + 600);
    const cc = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
    assert.equal((await introspect(cc)).body.sub, undefined, 'no subject for client credentials');
  });

  test('introspection: unknown, revoked, refresh and malformed tokens are {"active":false} and nothing else', async () => {
    const tokens = await passwordTokens();
    await revoke(tokens.refresh_token);
    for (const token of [tokens.access_token, tokens.refresh_token, `gwat_${'B'.repeat(64)}`, 'garbage']) {
      const res = await introspect(token);
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"active":false}');
    }
  });

  test('introspection: only the declared callers (not apps), POST only', async () => {
    const tokens = await passwordTokens();
    for (const authorization of [basic(CALLER.id, 'wrong-secret-wrong-secret'), basic('someone', CALLER.secret), credentials(app)]) {
      const res = await introspect(tokens.access_token, authorization);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' });
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE);
    }
    const get = await call(`${gw.url}/oauth2/introspect`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
  });

  test('metadata: issuer, absolute endpoints, exactly the enabled grants and client authentication methods', async () => {
    const res = await call(`${gw.url}/.well-known/oauth-authorization-server`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(res.body, {
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth2/token`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint: `${ISSUER}/oauth2/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint: `${ISSUER}/oauth2/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      grant_types_supported: ['client_credentials', 'password', 'refresh_token'],
      scopes_supported: ['hello:read', 'hello:admin', 'orders:read', 'orders:write'],
      dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'],
      response_types_supported: [],
    });
    const post = await call(`${gw.url}/.well-known/oauth-authorization-server`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(post.body.code, 'method_not_allowed');
  });
});

describe('without issuer and introspection callers', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ products: '  cc-only:\n    routes: [hello]\n' });
  });
  after(() => gw.close());

  test('neither metadata nor introspection is served (401 like any unknown path)', async () => {
    assert.equal((await call(`${gw.url}/.well-known/oauth-authorization-server`)).status, 401);
    assert.equal((await call(`${gw.url}/oauth2/introspect`, form({ token: 'x' }))).status, 401);
  });
});

describe('revocation when the store fails', () => {
  test('503 temporarily_unavailable, never a 200', async () => {
    const gw = await startTestGateway();
    try {
      const app = await gw.client('hello');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      await gw.gateway.services.store.close();
      const res = await call(`${gw.url}/oauth2/revoke`, form({ token }, basic(app.key, app.secret)));
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' });
      assert.ok(gw.logs.some((l) => l.includes('revocation endpoint failed')));
    } finally {
      await gw.close();
    }
  });
});
