// upstreamIdentity: the upstream verifies who calls with the published JWKS, as a service behind
// the gateway would: a Node upstream with jose's remote JWKS set over HTTP, and a Python one with
// PyJWT's PyJWKClient (Debian's python3-jwt), for each signing algorithm and across a rotation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { revokeSigningKeyByKid, rotateSigningKeys } from '../../src/admin/signing-keys.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { bearer, call, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const ISSUER = 'http://localhost:8080';
const AUDIENCE = 'https://api.example.com/signed';
const VERIFY_PY = path.join(import.meta.dirname, 'verify.py');
const run = promisify(execFile);

/** Debian's python3 with python3-jwt (CI installs it); a python3 on the PATH when that is the one with PyJWT. */
async function python(): Promise<string> {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const found = await run(candidate, ['-c', 'import jwt, cryptography']).then(
      () => true,
      () => false,
    );
    if (found) return candidate;
  }
  throw new Error('no python3 with PyJWT and cryptography: apt-get install -y python3-jwt python3-cryptography');
}

/** What PyJWT makes of the token: its claims, or the reason it refused. */
async function verifyInPython(gw: TestGateway, token: string, audience: string, algorithm: string): Promise<Record<string, unknown> | string> {
  try {
    const { stdout } = await run(await python(), [VERIFY_PY, `${gw.url}/.well-known/jwks.json`, token, audience, ISSUER, algorithm]);
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err).trim();
  }
}

/** A service behind the gateway: it believes only what verifies with the gateway's JWKS. */
async function verifyingUpstream(jwksUrl: () => string): Promise<Upstream> {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  return startUpstream((req, res) => {
    jwks ??= createRemoteJWKSet(new URL(jwksUrl()));
    const answer = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const identity = req.url!.startsWith('/v1/identity');
    const token = identity ? req.headers['x-gateway-identity'] : req.headers.authorization?.replace(/^Bearer /, '');
    if (typeof token !== 'string') return answer(401, { refused: 'no token' });
    jwtVerify(token, jwks, identity ? { issuer: ISSUER, audience: 'orders-service', typ: 'gateway-identity+jwt' } : { issuer: ISSUER, audience: AUDIENCE, typ: 'at+jwt' }).then(
      ({ payload, protectedHeader }) => answer(200, { claims: payload, alg: protectedHeader.alg, authorization: req.headers.authorization ?? null, gatewayApp: req.headers['x-gateway-app'] ?? null }),
      (err: { code?: string }) => answer(401, { refused: err.code }),
    );
  });
}

function config(upstreamUrl: string, algorithm: string, signing = '') {
  return {
    oauth: `  issuer: ${ISSUER}\n  signing:\n    algorithm: ${algorithm}\n${signing}`,
    upstreams: `  verifier:\n    url: ${upstreamUrl}\n    audience: orders-service`,
    routes: [
      '  identity:\n    method: GET\n    path: /v1/identity\n    upstream: verifier\n    upstreamIdentity: jwt',
      '  forward:\n    method: GET\n    path: /v1/forward\n    upstream: verifier\n    upstreamIdentity: token',
      '  plain:\n    method: GET\n    path: /v1/plain\n    upstream: verifier',
    ].join('\n'),
    products: `  signed:\n    routes: [identity, forward, plain]\n    scopes: [signed:read]\n    accessTokenFormat: jwt\n    audience: ${AUDIENCE}`,
  };
}

for (const algorithm of ['ES256', 'EdDSA', 'RS256']) {
  describe(`upstream identity, signed with ${algorithm}`, () => {
    let gw: TestGateway;
    let upstream: Upstream;
    let app: { key: string; secret: string };
    let token: string;
    before(async () => {
      upstream = await verifyingUpstream(() => `${gw.url}/.well-known/jwks.json`);
      gw = await startTestGateway(config(upstream.url, algorithm));
      app = await gw.client('signed');
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      assert.equal(res.status, 200);
      token = res.body.access_token;
      assert.equal(decodeProtectedHeader(token).alg, algorithm);
    });
    after(async () => {
      await gw.close();
      await upstream.close();
    });

    test("jwt: the upstream verifies X-Gateway-Identity with the JWKS; the client's Authorization and the X-Gateway-* headers never reach it", async () => {
      const res = await call(`${gw.url}/v1/identity`, { headers: { ...bearer(token), 'x-gateway-identity': 'forged' } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const { claims } = res.body;
      assert.deepEqual(Object.keys(claims).sort(), ['app', 'aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'product', 'scope', 'sub']);
      assert.equal(claims.iss, ISSUER);
      assert.equal(claims.aud, 'orders-service');
      assert.equal(claims.sub, app.key);
      assert.equal(claims.client_id, app.key);
      assert.equal(claims.product, 'signed');
      assert.equal(claims.scope, 'signed:read');
      assert.equal(claims.exp - claims.iat, 60);
      assert.equal(res.body.alg, algorithm);
      assert.equal(res.body.authorization, null);
      assert.equal(res.body.gatewayApp, null);
      const received = upstream.received.at(-1)!;
      assert.equal(received.headers.authorization, undefined);
      assert.equal(Object.keys(received.headers).filter((h) => h.startsWith('x-gateway-') && h !== 'x-gateway-identity').length, 0);
      // The same caller at the same upstream is sent the same identity for the first half of its lifetime.
      const again = await call(`${gw.url}/v1/identity`, { headers: bearer(token) });
      assert.equal(again.body.claims.jti, claims.jti);
    });

    test("token: the upstream gets the caller's own JWT access token as Authorization, and verifies it", async () => {
      const res = await call(`${gw.url}/v1/forward`, { headers: bearer(token) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.authorization, `Bearer ${token}`);
      assert.equal(res.body.claims.jti, decodeJwt(token).jti);
    });

    test('headers: a route without upstreamIdentity tells the upstream by X-Gateway-* headers, as before', async () => {
      const res = await call(`${gw.url}/v1/plain`, { headers: bearer(token) });
      assert.equal(res.status, 401);
      const received = upstream.received.at(-1)!;
      assert.equal(received.headers['x-gateway-client-id'], app.key);
      assert.equal(received.headers['x-gateway-identity'], undefined);
    });

    test('PyJWT verifies the access token and the identity token with PyJWKClient', async () => {
      const claims = await verifyInPython(gw, token, AUDIENCE, algorithm);
      assert.equal(typeof claims, 'object', String(claims));
      assert.equal((claims as Record<string, unknown>).client_id, app.key);
      await call(`${gw.url}/v1/identity`, { headers: bearer(token) });
      const identity = upstream.received.at(-1)!.headers['x-gateway-identity'] as string;
      const verified = await verifyInPython(gw, identity, 'orders-service', algorithm);
      assert.equal((verified as Record<string, unknown>).aud, 'orders-service', String(verified));
      assert.match(String(await verifyInPython(gw, identity, AUDIENCE, algorithm)), /^refused: InvalidAudienceError/);
    });
  });
}

describe('verifiers across a rotation and a revocation', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let app: { key: string; secret: string };
  before(async () => {
    upstream = await verifyingUpstream(() => `${gw.url}/.well-known/jwks.json`);
    gw = await startTestGateway(config(upstream.url, 'ES256', '    publishAhead: 1s\n    rotateEvery: 1h'));
    app = await gw.client('signed');
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const issue = async () => (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;

  test("tokens signed before and after a rotation both verify, in Node and in Python; a revoked key's token fails everywhere", async () => {
    const settings = loadConfigFile(gw.configFile, { env: {} }).oauth.signing;
    const deps = { ...gw.admin, signing: settings };
    const old = await issue();
    const added = await rotateSigningKeys(deps, settings);
    // The new key signs once publishAhead (1 s) has passed.
    let fresh = await issue();
    for (let i = 0; i < 100 && decodeProtectedHeader(fresh).kid !== added.kid; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      fresh = await issue();
    }
    assert.equal(decodeProtectedHeader(fresh).kid, added.kid);
    for (const token of [old, fresh]) {
      assert.equal((await call(`${gw.url}/v1/forward`, { headers: bearer(token) })).status, 200);
      assert.equal(typeof (await verifyInPython(gw, token, AUDIENCE, 'ES256')), 'object');
    }
    await revokeSigningKeyByKid(deps, settings, decodeProtectedHeader(old).kid!);
    assert.equal((await call(`${gw.url}/v1/forward`, { headers: bearer(old) })).status, 401);
    assert.match(String(await verifyInPython(gw, old, AUDIENCE, 'ES256')), /^refused: PyJWKClientError/);
    assert.equal((await call(`${gw.url}/v1/forward`, { headers: bearer(fresh) })).status, 200);
    assert.equal(typeof (await verifyInPython(gw, fresh, AUDIENCE, 'ES256')), 'object');
  });
});
