// JWT access tokens (RFC 9068): what the token endpoint issues for a product with
// accessTokenFormat: jwt, the JWKS that verifies them, and every refusal of a token the gateway
// did not issue as it stands, over real HTTP against a gateway on a real SQLite file.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { base64url, createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT, type JSONWebKeySet, type JWTPayload } from 'jose';
import { openSigningKey, type SigningKey } from '../../src/oauth/signing/keys.ts';
import { loadSecretKey } from '../../src/store/secret-key.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { revokeSigningKeyByKid, rotateSigningKeys } from '../../src/admin/signing-keys.ts';
import { basic, bearer, call, startAuthServer, startTestGateway, tokenRequest, type AuthServer, type TestGateway } from '../helpers.ts';

const ISSUER = 'http://localhost:8080';

/** The products of test/helpers.ts, and `signed`, whose tokens are JWTs. */
const parts = {
  oauth: `  issuer: ${ISSUER}\n  introspection:\n    clients: [{ id: backend, secret: backend-secret-123456 }]`,
  routes: `  signed:\n    method: GET\n    path: /v1/signed\n    upstream: echo\n    scopes: [signed:read]\n  signed-post:\n    method: POST\n    path: /v1/signed\n    upstream: echo`,
  products: `  signed:\n    routes: [signed, signed-post]\n    scopes: [signed:read, signed:write]\n    accessTokenFormat: jwt\n    audience: https://api.example.com/signed\n    accessTokenLifetime: 5m\n    grants: [client_credentials, password, refresh_token]\n    authServer: users`,
};

/** The key that signs now, read from the store as the gateway keeps it: to sign tokens the gateway did not issue. */
async function signingKey(gw: TestGateway): Promise<SigningKey> {
  const records = await gw.gateway.services.store.signingKeys.listSigningKeys();
  const secretKey = loadSecretKey(path.join(gw.dir, 'gateway.db.key'));
  return openSigningKey(records.at(-1)!, secretKey);
}

async function jwks(gw: TestGateway): Promise<JSONWebKeySet> {
  const res = await fetch(`${gw.url}/.well-known/jwks.json`);
  return (await res.json()) as JSONWebKeySet;
}

describe('JWT access tokens', () => {
  let gw: TestGateway;
  let users: AuthServer;
  let app: { key: string; secret: string };
  before(async () => {
    users = await startAuthServer();
    gw = await startTestGateway({ ...parts, authServerUrl: users.url });
    app = await gw.client('signed');
  });
  after(async () => {
    await gw.close();
    await users.close();
  });

  async function issue(params: Record<string, string> = { grant_type: 'client_credentials' }): Promise<string> {
    const res = await tokenRequest(gw.url, params, app);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.access_token as string;
  }

  test('client_credentials issues an RFC 9068 token: typ at+jwt, ES256, the kid of a published key, and every claim', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 300);
    const token = res.body.access_token as string;
    const header = decodeProtectedHeader(token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'ES256');
    assert.match(header.kid!, /^gwk_[A-Za-z0-9_-]{22}$/);
    const set = await jwks(gw);
    const { payload } = await jwtVerify(token, createLocalJWKSet(set), { issuer: ISSUER, audience: 'https://api.example.com/signed', typ: 'at+jwt' });
    assert.deepEqual(Object.keys(payload).sort(), ['app', 'aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'product', 'scope', 'sub']);
    assert.equal(payload.sub, app.key);
    assert.equal(payload.client_id, app.key);
    assert.equal(payload.scope, 'signed:read signed:write');
    assert.equal(payload.product, 'signed');
    assert.match(payload.app as string, /^app-\d+$/);
    assert.equal(payload.exp! - payload.iat!, 300);
    assert.ok(payload.iat! >= before && payload.iat! <= before + 5);
    assert.match(payload.jti!, /^[A-Za-z0-9_-]{64}$/);
    const answer = await call(`${gw.url}/v1/signed`, { headers: bearer(token) });
    assert.equal(answer.status, 200);
  });

  test('the JWKS holds public keys only, with kid, alg and use, and may be cached for less than publishAhead; the metadata names it', async () => {
    const res = await fetch(`${gw.url}/.well-known/jwks.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/jwk-set+json');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    const set = (await res.json()) as JSONWebKeySet;
    assert.equal(set.keys.length, 1);
    const [key] = set.keys;
    assert.deepEqual(Object.keys(key!).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal(key!.alg, 'ES256');
    assert.equal(key!.use, 'sig');
    const metadata = (await (await fetch(`${gw.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(metadata.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
    assert.equal((await fetch(`${gw.url}/.well-known/jwks.json`, { method: 'POST' })).status, 405);
  });

  test('the store holds the private key encrypted: neither its JWK nor its PKCS #8 bytes are in the database file', async () => {
    const key = await signingKey(gw);
    const der = key.privateKey.export({ format: 'der', type: 'pkcs8' });
    const d = key.privateKey.export({ format: 'jwk' }).d!;
    const file = readFileSync(path.join(gw.dir, 'gateway.db'));
    assert.equal(file.includes(der.subarray(-32)), false);
    assert.equal(file.includes(Buffer.from(d)), false);
  });

  test('the password and refresh_token grants: sub is the user, the refresh token stays opaque and rotates', async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland', scope: 'signed:read' }, app);
    assert.equal(res.status, 200);
    assert.match(res.body.refresh_token, /^gwrt_[A-Za-z0-9_-]{64}$/);
    const first = decodeJwt(res.body.access_token);
    assert.equal(first.sub, 'user-1');
    assert.equal(first.client_id, app.key);
    assert.equal(first.scope, 'signed:read');
    const refreshed = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, app);
    assert.equal(refreshed.status, 200);
    assert.match(refreshed.body.refresh_token, /^gwrt_/);
    const second = decodeJwt(refreshed.body.access_token);
    assert.equal(second.sub, 'user-1');
    assert.equal(second.scope, 'signed:read');
    assert.notEqual(second.jti, first.jti);
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(refreshed.body.access_token) })).status, 200);
    // The rotated refresh token presented again revokes the family: both access tokens with it.
    const reused = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, app);
    assert.equal(reused.status, 401);
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(refreshed.body.access_token) })).status, 401);
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(res.body.access_token) })).status, 401);
  });

  test('a refused token gets 401 invalid_token: modified payload, alg none, HMAC with the public key, unknown kid, expired, another issuer, wrong audience', async () => {
    const token = await issue();
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = decodeJwt(token);
    const key = await signingKey(gw);
    const sign = (payload: JWTPayload, header: Record<string, unknown> = {}) => new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header }).sign(key.privateKey);
    const now = Math.floor(Date.now() / 1000);
    const publicJwk = (await jwks(gw)).keys[0]!;
    const hmacHeader = base64url.encode(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: key.kid }));
    const hmacInput = `${hmacHeader}.${p}`;
    const forged: Record<string, string> = {
      'modified payload': `${h}.${base64url.encode(JSON.stringify({ ...claims, scope: 'signed:read signed:write admin' }))}.${s}`,
      'alg none': `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: key.kid }))}.${p}.`,
      'HMAC keyed with the public key': `${hmacInput}.${createHmac('sha256', JSON.stringify(publicJwk)).update(hmacInput).digest('base64url')}`,
      'unknown kid': await sign(claims, { kid: 'gwk_AAAAAAAAAAAAAAAAAAAAAA' }),
      expired: await sign({ ...claims, iat: now - 600, exp: now - 120 }),
      'another issuer': await sign({ ...claims, iss: 'https://evil.example.com' }),
      'wrong audience': await sign({ ...claims, aud: 'https://api.example.com/other' }),
      'another typ': await sign(claims, { typ: 'JWT' }),
      'a jti the gateway never issued': await sign({ ...claims, jti: 'A'.repeat(64) }),
      'another client_id than its record': await sign({ ...claims, client_id: 'someone-else-entirely' }),
    };
    for (const [what, jwt] of Object.entries(forged)) {
      const res = await call(`${gw.url}/v1/signed`, { headers: bearer(jwt) });
      assert.equal(res.status, 401, what);
      assert.equal(res.body.code, 'invalid_token', what);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_token", error_description="the access token is invalid, expired or revoked"', what);
    }
    // The token itself still works: nothing above touched it.
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(token) })).status, 200);
  });

  test("a token of one product does not call another product's route (403); a route scope the token lacks is 403", async () => {
    const token = await issue({ grant_type: 'client_credentials', scope: 'signed:write' });
    const other = await call(`${gw.url}/v1/hello`, { headers: bearer(token) });
    assert.equal(other.status, 403);
    const lacking = await call(`${gw.url}/v1/signed`, { headers: bearer(token) });
    assert.equal(lacking.status, 403);
    assert.equal(lacking.body.code, 'insufficient_scope');
  });

  test('revocation (RFC 7009) of a JWT: the next call is refused, and introspection says inactive', async () => {
    const token = await issue();
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(token) })).status, 200);
    const introspect = () =>
      call(`${gw.url}/oauth2/introspect`, {
        method: 'POST',
        headers: { authorization: basic('backend', 'backend-secret-123456'), 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      });
    const active = await introspect();
    assert.equal(active.status, 200);
    const claims = decodeJwt(token);
    assert.deepEqual(active.body, {
      active: true,
      scope: 'signed:read signed:write',
      client_id: app.key,
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      app: claims.app,
      product: 'signed',
      aud: 'https://api.example.com/signed',
      iss: ISSUER,
      jti: claims.jti,
    });
    const revoked = await call(`${gw.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assert.equal(revoked.status, 200);
    assert.equal((await call(`${gw.url}/v1/signed`, { headers: bearer(token) })).status, 401);
    assert.deepEqual((await introspect()).body, { active: false });
  });
});

describe('signing keys: the schedule, rotation by hand and revocation', () => {
  // The gateway's clock, moved by the test; the schedule is looked at by calling maintain(), as its timer does.
  let now = Date.UTC(2026, 0, 1);
  let gw: TestGateway;
  let app: { key: string; secret: string };
  const MINUTE = 60_000;
  before(async () => {
    gw = await startTestGateway({ ...parts, oauth: `${parts.oauth}\n  signing:\n    rotateEvery: 10m\n    publishAhead: 1m` }, { clock: () => now });
    app = await gw.client('signed');
  });
  after(() => gw.close());

  const issue = async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.access_token as string;
  };
  const kids = async () => (await jwks(gw)).keys.map((k) => k.kid);
  const works = async (token: string) => (await call(`${gw.url}/v1/signed`, { headers: bearer(token) })).status;

  test('the next key is published publishAhead before it signs; a retired key stays published until its last token expires', async () => {
    const first = decodeProtectedHeader(await issue()).kid!;
    assert.deepEqual(await kids(), [first]);
    now += 8 * MINUTE;
    await gw.gateway.services.keys.maintain();
    assert.deepEqual(await kids(), [first], 'not yet: more than publishAhead before the turn');
    now += MINUTE + 1000;
    await gw.gateway.services.keys.maintain();
    const published = await kids();
    assert.equal(published.length, 2);
    const next = published[1]!;
    const old = await issue();
    assert.equal(decodeProtectedHeader(old).kid, first, 'the next key does not sign before its turn');
    now += MINUTE;
    const fresh = await issue();
    assert.equal(decodeProtectedHeader(fresh).kid, next);
    assert.equal(await works(old), 200, 'a token of the retired key works until it expires');
    // The longest lifetime is 5m; with a minute of skew the retired key leaves after 6m.
    now += 6 * MINUTE - 1000;
    await gw.gateway.services.keys.maintain();
    assert.deepEqual(await kids(), [first, next]);
    now += 2000;
    await gw.gateway.services.keys.maintain();
    assert.deepEqual(await kids(), [next]);
    assert.equal(await works(old), 401, 'long expired');
    assert.equal(await works(await issue()), 200);
  });

  test('rotation by hand publishes a key that signs after publishAhead; revoking the key that signs puts a new one in its place at once', async () => {
    const settings = loadConfigFile(gw.configFile, { env: {} }).oauth.signing;
    const deps = { ...gw.admin, signing: settings };
    const current = decodeProtectedHeader(await issue()).kid!;
    const added = await rotateSigningKeys(deps, settings);
    assert.equal(added.status, 'next');
    assert.equal(added.activatesAt, now + MINUTE);
    assert.ok((await kids()).includes(added.kid));
    const before = await issue();
    assert.equal(decodeProtectedHeader(before).kid, current);
    const revoked = await revokeSigningKeyByKid(deps, settings, current);
    assert.notEqual(revoked.replacement, null);
    assert.equal((await kids()).includes(current), false, 'a revoked key leaves the JWKS at once');
    assert.equal(await works(before), 401, 'and every token it signed is refused');
    const after = await issue();
    assert.equal(decodeProtectedHeader(after).kid, revoked.replacement);
    assert.equal(await works(after), 200);
  });
});
