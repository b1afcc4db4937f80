// DPoP (RFC 9449): tokens bound to a client's key at the token endpoint, and protected calls that
// must prove that key, over real HTTP against a gateway on a real SQLite file with a real upstream.
// Every refusal of §4.3 and §7 one by one.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { base64url, decodeJwt, SignJWT, UnsecuredJWT, type JWTHeaderParameters } from 'jose';
import { basic, call, startAuthServer, startTestGateway, startUpstream, tokenRequest, type Answer, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';
import { ath, dpopKey, type DpopKey } from './dpop-proof.ts';

const ISSUER = 'https://gateway.example.com';
const CALLER = { id: 'backend', secret: 'backend-secret-123456' };
const ALGS = 'algs="ES256 ES384 ES512 EdDSA Ed25519 PS256 PS384 PS512 RS256 RS384 RS512"';

const parts = (upstreamUrl: string, authServerUrl: string, oauth = '') => ({
  upstreamUrl,
  authServerUrl,
  oauth: `  issuer: ${ISSUER}\n  introspection:\n    clients: [{ id: ${CALLER.id}, secret: ${CALLER.secret} }]\n${oauth}`,
  routes:
    '  bound:\n    method: POST\n    path: /v1/bound/{id}\n    upstream: backend\n  signed:\n    method: GET\n    path: /v1/signed\n    upstream: backend\n  identified:\n    method: GET\n    path: /v1/identified\n    upstream: backend',
  products: [
    '  bound:\n    routes: [bound]\n    senderConstraint: dpop\n    grants: [client_credentials, password, refresh_token]\n    authServer: users',
    '  signed:\n    routes: [signed]\n    accessTokenFormat: jwt\n    grants: [client_credentials]',
    '  identified:\n    routes: [identified]\n    upstreamIdentity: jwt\n    grants: [client_credentials]',
  ].join('\n'),
});

describe('DPoP-bound tokens', () => {
  let upstream: Upstream;
  let auth: AuthServer;
  let gw: TestGateway;
  let hello: { key: string; secret: string };
  let bound: { key: string; secret: string };
  let signed: { key: string; secret: string };
  let key: DpopKey;
  let other: DpopKey;

  before(async () => {
    upstream = await startUpstream();
    auth = await startAuthServer();
    gw = await startTestGateway(parts(upstream.url, auth.url));
    hello = await gw.client('hello');
    bound = await gw.client('bound');
    signed = await gw.client('signed');
    key = await dpopKey('ES256');
    other = await dpopKey('ES256');
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await auth.close();
  });

  const tokenUrl = () => `${gw.url}/oauth2/token`;
  async function dpopToken(app: { key: string; secret: string }, k: DpopKey, params: Record<string, string> = { grant_type: 'client_credentials' }): Promise<Answer> {
    const proof = await k.proof({ method: 'POST', url: tokenUrl() });
    return call(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.key, app.secret), dpop: proof },
      body: new URLSearchParams(params).toString(),
    });
  }
  async function boundToken(k = key): Promise<string> {
    const res = await dpopToken(bound, k);
    assert.equal(res.status, 200, res.text);
    return res.body.access_token;
  }
  const boundUrl = () => `${gw.url}/v1/bound/7`;
  async function callBound(token: string, proof: string | undefined, init: { scheme?: string; url?: string; method?: string } = {}): Promise<Answer> {
    return call(init.url ?? boundUrl(), {
      method: init.method ?? 'POST',
      headers: { authorization: `${init.scheme ?? 'DPoP'} ${token}`, ...(proof === undefined ? {} : { dpop: proof }), 'content-type': 'application/json' },
      body: '{}',
    });
  }
  const challenge = (error: string, description: string) => `DPoP error="${error}", error_description="${description}", ${ALGS}`;

  test('a token request with a proof gets token_type DPoP, bound to the key (cnf.jkt), whatever the product', async () => {
    const res = await dpopToken(hello, key);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(res.body.token_type, 'DPoP');
    const introspected = await call(`${gw.url}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CALLER.id, CALLER.secret) },
      body: new URLSearchParams({ token: res.body.access_token }).toString(),
    });
    assert.equal(introspected.status, 200);
    assert.equal(introspected.body.active, true);
    assert.equal(introspected.body.token_type, 'DPoP');
    assert.deepEqual(introspected.body.cnf, { jkt: key.jkt });
  });

  test('without a proof, a product of senderConstraint: none issues a Bearer token; one of dpop refuses with invalid_dpop_proof', async () => {
    const plain = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, hello);
    assert.equal(plain.status, 200);
    assert.equal(plain.body.token_type, 'Bearer');
    const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, bound);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { error: 'invalid_dpop_proof', error_description: "API product 'bound' issues DPoP-bound tokens only: send a DPoP proof" });
    assert.equal(refused.headers.get('cache-control'), 'no-store');
  });

  test('a JWT access token carries cnf.jkt in its claims', async () => {
    const res = await dpopToken(signed, key);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(res.body.access_token).cnf, { jkt: key.jkt });
    const proof = await key.proof({ method: 'GET', url: `${gw.url}/v1/signed`, accessToken: res.body.access_token });
    const ok = await call(`${gw.url}/v1/signed`, { headers: { authorization: `DPoP ${res.body.access_token}`, dpop: proof } });
    assert.equal(ok.status, 200, ok.text);
    const asBearer = await call(`${gw.url}/v1/signed`, { headers: { authorization: `Bearer ${res.body.access_token}` } });
    assert.equal(asBearer.status, 401);
  });

  test('a protected call with the DPoP scheme and a proof of the key reaches the upstream without the proof or the token', async () => {
    const token = await boundToken();
    const before = upstream.received.length;
    const res = await callBound(token, await key.proof({ method: 'POST', url: boundUrl(), accessToken: token }));
    assert.equal(res.status, 200, res.text);
    const got = upstream.received.slice(before);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers.dpop, undefined);
    assert.equal(got[0]!.headers.authorization, undefined);
    assert.equal(got[0]!.url, '/v1/bound/7');
  });

  test('the query string is not part of htu (§4.3 check 9); scheme and host case and the default port are normalised', async () => {
    const token = await boundToken();
    const proof = await key.proof({ method: 'POST', url: boundUrl(), accessToken: token, claims: { htu: boundUrl().replace('http://', 'HTTP://') } });
    const res = await callBound(token, proof, { url: `${boundUrl()}?page=2` });
    assert.equal(res.status, 200, res.text);
  });

  test('refusals on a route, one by one, each a 401 DPoP challenge that says why, and nothing reaches the upstream', async () => {
    const token = await boundToken();
    const url = boundUrl();
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, string | undefined, string, { scheme?: string; method?: string; url?: string }?][] = [
      ['no proof', undefined, 'a DPoP proof is required with the DPoP scheme'],
      ['a proof for another method', await key.proof({ method: 'GET', url, accessToken: token }), 'the DPoP proof is for another method'],
      ['a proof for another URL', await key.proof({ method: 'POST', url: `${gw.url}/v1/bound/8`, accessToken: token }), 'the DPoP proof is for another URI'],
      ['a proof for another host', await key.proof({ method: 'POST', url: url.replace('127.0.0.1', 'gateway.example.org'), accessToken: token }), 'the DPoP proof is for another URI'],
      ['a proof for another scheme', await key.proof({ method: 'POST', url: url.replace('http:', 'https:'), accessToken: token }), 'the DPoP proof is for another URI'],
      ['a stale iat', await key.proof({ method: 'POST', url, accessToken: token, claims: { iat: now - 300 } }), 'the DPoP proof is too old, or from the future'],
      ['an iat in the future', await key.proof({ method: 'POST', url, accessToken: token, claims: { iat: now + 120 } }), 'the DPoP proof is too old, or from the future'],
      ['no ath', await key.proof({ method: 'POST', url }), 'the DPoP proof does not name this access token (ath)'],
      ['a wrong ath', await key.proof({ method: 'POST', url, claims: { ath: ath(`${token}x`) } }), 'the DPoP proof does not name this access token (ath)'],
      ['no jti', await key.proof({ method: 'POST', url, accessToken: token, claims: { jti: undefined } }), 'the DPoP proof has no valid jti'],
      ['a proof signed by another key', await other.proof({ method: 'POST', url, accessToken: token }), 'the DPoP proof is signed by another key than the one the token is bound to'],
      ['typ JWT', await key.proof({ method: 'POST', url, accessToken: token, header: { typ: 'JWT' } }), 'the DPoP proof is not a valid signed dpop+jwt'],
      [
        'a private key in the header',
        await key.proof({ method: 'POST', url, accessToken: token, header: { jwk: { ...key.jwk, d: base64url.encode('not a key') } } }),
        'the DPoP proof is not a valid signed dpop+jwt',
      ],
      ['an HMAC proof', await hmacProof(url, token), 'the DPoP proof is not a valid signed dpop+jwt'],
      ['a none proof', unsecuredProof(url, token, key), 'the DPoP proof is not a valid signed dpop+jwt'],
      ['garbage', 'a.b.c', 'the DPoP proof is not a valid signed dpop+jwt'],
      ['a header of 2 kB', await key.proof({ method: 'POST', url, accessToken: token, header: { pad: 'A'.repeat(1500) } }), 'the DPoP proof is not a valid signed dpop+jwt'],
    ];
    const before = upstream.received.length;
    for (const [name, proof, description] of cases) {
      const res = await callBound(token, proof);
      assert.equal(res.status, 401, `${name}: ${res.text}`);
      assert.equal(res.headers.get('www-authenticate'), challenge('invalid_dpop_proof', description), name);
      assert.equal(res.headers.get('content-type'), 'application/problem+json', name);
      assert.equal(res.body.code, 'invalid_dpop_proof', name);
    }
    assert.equal(upstream.received.length, before);
  });

  test("htu names the gateway's own address, localhost for a loopback one, or oauth.issuer's origin; never what a Host header says", async () => {
    const token = await boundToken();
    const port = new URL(gw.url).port;
    for (const origin of [`http://localhost:${port}`, ISSUER]) {
      const res = await callBound(token, await key.proof({ method: 'POST', url: `${origin}/v1/bound/7`, accessToken: token }));
      assert.equal(res.status, 200, `${origin}: ${JSON.stringify(res.body)}`);
    }
    // A proof made for another server, sent here with that server's name as Host.
    const proof = await key.proof({ method: 'POST', url: `http://api.other.example:${port}/v1/bound/7`, accessToken: token });
    const spoofed = await new Promise<{ status: number; challenge: string | undefined }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/bound/7`, { method: 'POST', headers: { host: `api.other.example:${port}`, authorization: `DPoP ${token}`, dpop: proof } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, challenge: res.headers['www-authenticate'] }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(spoofed, { status: 401, challenge: challenge('invalid_dpop_proof', 'the DPoP proof is for another URI') });
  });

  test('a replayed proof is refused (jti single-use)', async () => {
    const token = await boundToken();
    const proof = await key.proof({ method: 'POST', url: boundUrl(), accessToken: token });
    assert.equal((await callBound(token, proof)).status, 200);
    const replay = await callBound(token, proof);
    assert.equal(replay.status, 401);
    assert.equal(replay.headers.get('www-authenticate'), challenge('invalid_dpop_proof', 'the DPoP proof was used before'));
  });

  test('a proof used at the token endpoint cannot be used there again', async () => {
    const proof = await key.proof({ method: 'POST', url: tokenUrl() });
    const send = () =>
      call(tokenUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(bound.key, bound.secret), dpop: proof },
        body: 'grant_type=client_credentials',
      });
    assert.equal((await send()).status, 200);
    const again = await send();
    assert.equal(again.status, 400);
    assert.deepEqual(again.body, { error: 'invalid_dpop_proof', error_description: 'the DPoP proof was used before' });
  });

  test('at the token endpoint, a proof for another URI or method, or two DPoP headers, is refused', async () => {
    const wrong = await key.proof({ method: 'POST', url: `${gw.url}/oauth2/revoke` });
    const res = await call(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(bound.key, bound.secret), dpop: wrong },
      body: 'grant_type=client_credentials',
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'invalid_dpop_proof', error_description: 'the DPoP proof is for another URI' });
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', authorization: basic(bound.key, bound.secret) });
    headers.append('dpop', await key.proof({ method: 'POST', url: tokenUrl() }));
    headers.append('dpop', await key.proof({ method: 'POST', url: tokenUrl() }));
    const two = await call(tokenUrl(), { method: 'POST', headers, body: 'grant_type=client_credentials' });
    assert.equal(two.status, 400);
    assert.equal(two.body.error, 'invalid_dpop_proof');
  });

  test('a DPoP-bound token sent as Bearer is refused, with a Bearer challenge; a Bearer token sent with the DPoP scheme too', async () => {
    const token = await boundToken();
    const asBearer = await callBound(token, undefined, { scheme: 'Bearer' });
    assert.equal(asBearer.status, 401);
    assert.match(asBearer.headers.get('www-authenticate')!, /^Bearer realm="test-realm", error="invalid_token"/);
    const plain = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, hello)).body.access_token as string;
    const url = `${gw.url}/v1/backend/1`;
    const res = await call(url, { headers: { authorization: `DPoP ${plain}`, dpop: await key.proof({ method: 'GET', url, accessToken: plain }) } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), challenge('invalid_token', 'this access token is not DPoP-bound: send it with the Bearer scheme'));
  });

  test('a request without a token to a route of a DPoP product is told of both schemes', async () => {
    const res = await call(boundUrl(), { method: 'POST' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), `Bearer realm="test-realm", DPoP ${ALGS}`);
  });

  test('a revoked DPoP-bound token is refused', async () => {
    const token = await boundToken();
    const revoked = await call(`${gw.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(bound.key, bound.secret) },
      body: new URLSearchParams({ token }).toString(),
    });
    assert.equal(revoked.status, 200);
    const res = await callBound(token, await key.proof({ method: 'POST', url: boundUrl(), accessToken: token }));
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), challenge('invalid_token', 'the access token is invalid, expired or revoked'));
  });

  test("a confidential client's refresh token is bound by its authentication: its refresh with another key binds the new token to that key", async () => {
    const first = await dpopToken(bound, key, { grant_type: 'password', username: 'alice', password: 'wonderland' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.token_type, 'DPoP');
    const refreshed = await dpopToken(bound, other, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(refreshed.body.token_type, 'DPoP');
    const token = refreshed.body.access_token as string;
    assert.equal((await callBound(token, await other.proof({ method: 'POST', url: boundUrl(), accessToken: token }))).status, 200);
    assert.equal((await callBound(token, await key.proof({ method: 'POST', url: boundUrl(), accessToken: token }))).status, 401);
  });

  test("the upstream's identity says how the token was bound: X-Gateway-Token-Binding, or cnf in the signed identity", async () => {
    const since = upstream.received.length;
    const token = await boundToken();
    assert.equal((await callBound(token, await key.proof({ method: 'POST', url: boundUrl(), accessToken: token }))).status, 200);
    assert.equal(upstream.received[since]!.headers['x-gateway-token-binding'], 'dpop');
    const app = await gw.client('identified');
    const res = await dpopToken(app, key);
    const url = `${gw.url}/v1/identified`;
    const called = await call(url, { headers: { authorization: `DPoP ${res.body.access_token}`, dpop: await key.proof({ method: 'GET', url, accessToken: res.body.access_token }) } });
    assert.equal(called.status, 200, called.text);
    const identity = upstream.received.at(-1)!.headers['x-gateway-identity'] as string;
    assert.deepEqual(decodeJwt(identity).cnf, { jkt: key.jkt });
    assert.equal(upstream.received.at(-1)!.headers['x-gateway-token-binding'], undefined);
  });

  test("keys that may not sign with the header's algorithm, each signing its proof rightly: refused", async () => {
    const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });
    const rsa = (modulusLength: number, publicExponent = 65537) => generateKeyPairSync('rsa', { modulusLength, publicExponent });
    // Each: the header's alg, the key, members added to its jwk, members added to the header, and the digest the key signs with.
    const cases: [string, string, ReturnType<typeof ec>, Record<string, unknown>?, Record<string, unknown>?, string?][] = [
      ['secp256k1 named ES256 (it is ES256K)', 'ES256', ec('secp256k1')],
      ['P-384 named ES256', 'ES256', ec('P-384')],
      ['a P-256 key named ES384', 'ES384', ec('P-256'), {}, {}, 'sha384'],
      ['an EC key named RS256', 'RS256', ec('P-256')],
      ['a key whose own alg says RS256', 'ES256', ec('P-256'), { alg: 'RS256' }],
      ['a key for encryption (use: enc)', 'ES256', ec('P-256'), { use: 'enc' }],
      ['a key whose key_ops do not verify', 'ES256', ec('P-256'), { key_ops: ['encrypt'] }],
      ['a crit header', 'ES256', ec('P-256'), {}, { crit: ['x-gateway-test'], 'x-gateway-test': true }],
      ['RSA of 1024 bits', 'RS256', rsa(1024)],
      ['RSA with another exponent than 65537', 'RS256', rsa(2048, 3)],
    ];
    // The same, rightly named: accepted, so that each refusal above is its key's or header's.
    const good = ec('P-256');
    cases.push(['(control)', 'ES256', good]);
    for (const [name, alg, pair, members, extra, digest = 'sha256'] of cases) {
      const jwk = { ...pair.publicKey.export({ format: 'jwk' }), ...members };
      const header = base64url.encode(JSON.stringify({ typ: 'dpop+jwt', alg, jwk, ...extra }));
      const claims = base64url.encode(JSON.stringify({ jti: crypto.randomUUID(), htm: 'POST', htu: tokenUrl(), iat: Math.floor(Date.now() / 1000) }));
      const input = Buffer.from(`${header}.${claims}`);
      const signature = pair.publicKey.asymmetricKeyType === 'ec' ? sign(digest, input, { key: pair.privateKey, dsaEncoding: 'ieee-p1363' }) : sign(digest, input, pair.privateKey);
      const res = await call(tokenUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(hello.key, hello.secret), dpop: `${header}.${claims}.${base64url.encode(signature)}` },
        body: 'grant_type=client_credentials',
      });
      if (pair === good) {
        assert.equal(res.status, 200, res.text);
        continue;
      }
      assert.equal(res.status, 400, name);
      assert.deepEqual(res.body, { error: 'invalid_dpop_proof', error_description: 'the DPoP proof is not a valid signed dpop+jwt' }, name);
    }
  });

  test('the metadata names the algorithms a proof may use', async () => {
    const res = await call(`${gw.url}/.well-known/oauth-authorization-server`);
    assert.deepEqual(res.body.dpop_signing_alg_values_supported, ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512']);
  });

  test('EdDSA and RSA keys make proofs too', async () => {
    for (const alg of ['EdDSA', 'RS256', 'PS256'] as const) {
      const k = await dpopKey(alg);
      const token = await boundToken(k);
      const res = await callBound(token, await k.proof({ method: 'POST', url: boundUrl(), accessToken: token }));
      assert.equal(res.status, 200, `${alg}: ${res.text}`);
    }
  });
});

describe('DPoP nonces (oauth.dpop.nonce: true)', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let auth: AuthServer;
  let bound: { key: string; secret: string };

  before(async () => {
    upstream = await startUpstream();
    auth = await startAuthServer();
    gw = await startTestGateway(parts(upstream.url, auth.url, '  dpop:\n    nonce: true\n'));
    bound = await gw.client('bound');
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await auth.close();
  });

  test('a proof without the nonce gets use_dpop_nonce and a DPoP-Nonce; with it, a token and a call', async () => {
    const key = await dpopKey();
    const tokenUrl = `${gw.url}/oauth2/token`;
    const ask = async (nonce?: string) =>
      call(tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basic(bound.key, bound.secret),
          dpop: await key.proof({ method: 'POST', url: tokenUrl, ...(nonce === undefined ? {} : { nonce }) }),
        },
        body: 'grant_type=client_credentials',
      });
    const first = await ask();
    assert.equal(first.status, 400);
    assert.deepEqual(first.body, { error: 'use_dpop_nonce', error_description: 'the DPoP proof must carry the nonce in DPoP-Nonce' });
    const nonce = first.headers.get('dpop-nonce');
    assert.ok(nonce);
    assert.equal((await ask('not-the-nonce')).body.error, 'use_dpop_nonce');
    const second = await ask(nonce);
    assert.equal(second.status, 200, second.text);
    const token = second.body.access_token as string;
    const url = `${gw.url}/v1/bound/1`;
    const noNonce = await call(url, { method: 'POST', headers: { authorization: `DPoP ${token}`, dpop: await key.proof({ method: 'POST', url, accessToken: token }) } });
    assert.equal(noNonce.status, 401);
    assert.match(noNonce.headers.get('www-authenticate')!, /^DPoP error="use_dpop_nonce"/);
    const routeNonce = noNonce.headers.get('dpop-nonce')!;
    const ok = await call(url, { method: 'POST', headers: { authorization: `DPoP ${token}`, dpop: await key.proof({ method: 'POST', url, accessToken: token, nonce: routeNonce }) } });
    assert.equal(ok.status, 200, ok.text);
  });
});

async function hmacProof(url: string, token: string): Promise<string> {
  const secret = new TextEncoder().encode('a shared secret of thirty-two bytes!');
  return new SignJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: url, iat: Math.floor(Date.now() / 1000), ath: ath(token) })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: { kty: 'oct', k: base64url.encode(secret) } } as JWTHeaderParameters)
    .sign(secret);
}

function unsecuredProof(url: string, token: string, key: DpopKey): string {
  const jwt = new UnsecuredJWT({ jti: crypto.randomUUID(), htm: 'POST', htu: url, iat: Math.floor(Date.now() / 1000), ath: ath(token) }).encode();
  // UnsecuredJWT writes {"alg":"none"}; the header a forger would send names typ and a key too.
  const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk }));
  return `${header}.${jwt.split('.')[1]}.`;
}
