// An outsider's attacks on signed tokens, at a running gateway: forged and confused tokens (the
// attacker's key by jwk, jku, x5u or the gateway's kid, alg none, HMAC keyed with the public key,
// crit and b64, other serializations, nested and oversized tokens, duplicate header members, a
// token of another product, another gateway, another kind), the same at the introspection and
// revocation endpoints, identity headers smuggled past the gateway, the JWKS and the store's
// copy of the keys, and key rotation and revocation racing the calls that use them.
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { base64url, CompactSign, decodeJwt, FlattenedSign, decodeProtectedHeader, exportJWK, type JSONWebKeySet, type JWTPayload, SignJWT } from 'jose';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { revokeSigningKeyByKid, rotateSigningKeys } from '../../src/admin/signing-keys.ts';
import { type Config, loadConfigFile } from '../../src/config/load.ts';
import type { SigningSettings } from '../../src/config/types.ts';
import { createJwtVerifier } from '../../src/oauth/signing/jwt.ts';
import { describeKeys, revokeSigningKey } from '../../src/oauth/signing/key-ring.ts';
import { newSigningKey, openSigningKey, type SigningKey } from '../../src/oauth/signing/keys.ts';
import { openStore } from '../../src/store/open.ts';
import type { SigningKeyRecord, Store } from '../../src/store/port/index.ts';
import { loadSecretKey } from '../../src/store/secret-key.ts';
import { serve, type Served } from '../e2e/children.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import {
  type Answer,
  basic,
  bearer,
  call,
  configYaml,
  rawExchange,
  startAuthServer,
  startTestGateway,
  startUpstream,
  storedText,
  storeAdminDeps,
  tempDir,
  tokenRequest,
  within,
  type AuthServer,
  type TestGateway,
  type Upstream,
} from '../helpers.ts';

const ISSUER = 'http://localhost:8080';
const SIGNED_AUDIENCE = 'https://api.example.com/signed';
const INTROSPECTION = { id: 'backend', secret: 'backend-secret-123456' };
const INVALID_TOKEN = { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'the access token is invalid, expired or revoked', code: 'invalid_token' };
const MALFORMED = { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'the bearer token is malformed', code: 'invalid_request' };

/** The key that signs now, read from the store as the gateway keeps it: what an attacker who stole it would hold. */
async function signingKey(gw: TestGateway): Promise<SigningKey> {
  const records = await gw.gateway.services.store.signingKeys.listSigningKeys();
  const secretKey = loadSecretKey(path.join(gw.dir, 'gateway.db.key'));
  const now = Date.now();
  const signing = records.filter((r) => r.revokedAt === null && r.activatesAt <= now).at(-1)!;
  return openSigningKey(signing, secretKey);
}

const settingsOf = (gw: TestGateway): SigningSettings => loadConfigFile(gw.configFile, { env: {} }).oauth.signing;

/** A compact JWS with this header and payload, as given (no library between), and signature bytes. */
function compact(header: string | Record<string, unknown>, payload: string | Record<string, unknown>, signature: Buffer | string = ''): string {
  const encode = (part: string | Record<string, unknown>) => base64url.encode(typeof part === 'string' ? part : JSON.stringify(part));
  return `${encode(header)}.${encode(payload)}.${typeof signature === 'string' ? signature : base64url.encode(signature)}`;
}

function hmac(alg: 'HS256' | 'HS384' | 'HS512', secret: string | Buffer, header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const input = `${base64url.encode(JSON.stringify({ ...header, alg }))}.${base64url.encode(JSON.stringify(payload))}`;
  return `${input}.${createHmac(`sha${alg.slice(2)}`, secret)
    .update(input)
    .digest('base64url')}`;
}

describe('signed tokens under attack', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let users: AuthServer;
  let app: { key: string; secret: string };
  let other: { key: string; secret: string };
  before(async () => {
    upstream = await startUpstream();
    users = await startAuthServer();
    gw = await startTestGateway({
      authServerUrl: users.url,
      oauth: `  issuer: ${ISSUER}\n  introspection:\n    clients: [{ id: ${INTROSPECTION.id}, secret: ${INTROSPECTION.secret} }]\n  signing:\n    identity:\n      header: X-Caller`,
      upstreams: `  service:\n    url: ${upstream.url}`,
      routes: [
        '  who:\n    method: GET\n    path: /v1/who\n    upstream: service\n    upstreamIdentity: jwt',
        '  mine:\n    method: GET\n    path: /v1/mine\n    upstream: service\n    upstreamIdentity: token',
        '  mixed:\n    method: GET\n    path: /v1/mixed\n    upstream: service',
        '  theirs:\n    method: GET\n    path: /v1/theirs\n    upstream: service',
      ].join('\n'),
      products: [
        `  signed:\n    routes: [who, mine, mixed]\n    accessTokenFormat: jwt\n    audience: ${SIGNED_AUDIENCE}\n    upstreamIdentity: jwt\n    grants: [client_credentials, password, refresh_token]\n    authServer: users`,
        '  other:\n    routes: [theirs]\n    accessTokenFormat: jwt\n    audience: https://api.example.com/other',
        '  plain:\n    routes: [mixed]',
      ].join('\n'),
    });
    app = await gw.client('signed');
    other = await gw.client('signed');
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await users?.close();
  });

  const issue = async (creds = app, params: Record<string, string> = { grant_type: 'client_credentials' }) => {
    const res = await tokenRequest(gw.url, params, creds);
    assert.equal(res.status, 200, res.text);
    return res.body.access_token as string;
  };
  const at = (token: string, route = '/v1/who', headers: Record<string, string> = {}) => call(`${gw.url}${route}`, { headers: { ...bearer(token), ...headers } });
  const status = async (token: string, route = '/v1/who') => (await at(token, route)).status;
  /** 401 invalid_token, with its RFC 6750 challenge. */
  async function refused(token: string, why: string, route = '/v1/who'): Promise<void> {
    const res = await at(token, route);
    assert.equal(res.status, 401, why);
    assert.deepEqual(res.body, INVALID_TOKEN, why);
    assert.equal(res.headers.get('www-authenticate'), `Bearer realm="test-realm", error="invalid_token", error_description="${INVALID_TOKEN.detail}"`, why);
  }
  const introspect = (token: string, creds = INTROSPECTION) =>
    call(`${gw.url}/oauth2/introspect`, {
      method: 'POST',
      headers: { authorization: basic(creds.id, creds.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
  const revoke = (token: string, creds = app) =>
    call(`${gw.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basic(creds.key, creds.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });

  test("a token signed with the attacker's key, naming it by jwk, jku or x5u, or naming the gateway's kid, is refused", async () => {
    const claims = decodeJwt(await issue());
    const { kid } = decodeProtectedHeader(await issue()) as { kid: string };
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = await exportJWK(attacker.publicKey);
    const forge = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header }).sign(attacker.privateKey);
    for (const header of [
      { jwk },
      { jwk, kid },
      { jku: 'https://evil.example.com/jwks.json', kid: 'evil' },
      { jku: `${gw.url}/.well-known/jwks.json`, kid },
      { x5u: 'https://evil.example.com/cert.pem', kid },
      { kid },
    ]) {
      await refused(await forge(header), JSON.stringify(Object.keys(header)));
    }
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await refused(compact({ alg, typ: 'at+jwt', kid }, claims), alg);
      await refused(compact({ alg, typ: 'at+jwt', kid }, claims, Buffer.from('x')), `${alg} with a signature`);
    }
  });

  test('a kid that is a path, a URL, not a string, or a name every object has, is refused', async () => {
    const claims = decodeJwt(await issue());
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (const kid of ['../../etc/passwd', '/dev/null', 'file:///etc/passwd', 'https://evil.example.com/key', '__proto__', 'constructor', 'toString', '', ' ', 7, ['x'], {}, null, true]) {
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid } as never).sign(attacker.privateKey);
      await refused(token, JSON.stringify(kid));
    }
  });

  test("the algorithm is the key's: the gateway's kid with another algorithm is refused, whatever key signs", async () => {
    const claims = decodeJwt(await issue());
    const { kid } = decodeProtectedHeader(await issue()) as { kid: string };
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keys: [string, KeyObject][] = [
      ['ES384', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
      ['ES512', generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey],
      ['RS256', rsa.privateKey],
      ['PS256', rsa.privateKey],
      ['EdDSA', generateKeyPairSync('ed25519').privateKey],
      ['Ed25519', generateKeyPairSync('ed25519').privateKey],
    ];
    for (const [alg, key] of keys) {
      await refused(await new SignJWT(claims).setProtectedHeader({ alg, typ: 'at+jwt', kid }).sign(key), alg);
    }
  });

  test('HMAC keyed with the public key in any form (the JWK, the JWKS, PEM, DER, the raw point) is refused', async () => {
    const token = await issue();
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const jwksText = await (await fetch(`${gw.url}/.well-known/jwks.json`)).text();
    const jwk = (JSON.parse(jwksText) as JSONWebKeySet).keys.find((k) => k.kid === kid)!;
    const publicKey = (await signingKey(gw)).publicKey;
    const secrets: [string, string | Buffer][] = [
      ['the JWK', JSON.stringify(jwk)],
      ['the JWKS', jwksText],
      ['the PEM', publicKey.export({ format: 'pem', type: 'spki' }) as string],
      ['the DER', publicKey.export({ format: 'der', type: 'spki' })],
      ['the point', Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')])],
      ['x', jwk.x!],
      ['nothing', ''],
    ];
    for (const alg of ['HS256', 'HS384', 'HS512'] as const) {
      for (const [name, secret] of secrets) await refused(hmac(alg, secret, { typ: 'at+jwt', kid }, claims), `${alg} keyed with ${name}`);
    }
  });

  test('the real key with a crit header the gateway does not understand, or b64: false, is refused', async () => {
    const claims = decodeJwt(await issue());
    const key = await signingKey(gw);
    const sign = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header } as never).sign(key.privateKey);
    assert.equal(await status(await sign({})), 200, 'the same claims, signed alike, pass');
    await assert.rejects(sign({ crit: ['urn:evil'], 'urn:evil': true }));
    await refused(`${base64url.encode(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, crit: ['urn:evil'], 'urn:evil': true }))}.${(await sign({})).split('.').slice(1).join('.')}`, 'crit');
    // RFC 7797: the payload unencoded. Its JSON is no token68, and detached it is no JWT.
    const unencoded = await new FlattenedSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, b64: false, crit: ['b64'] })
      .sign(key.privateKey);
    const { protected: header, signature } = unencoded as { protected: string; signature: string };
    const raw = await at(`${header}.${JSON.stringify(claims)}.${signature}`);
    assert.equal(raw.status, 400);
    assert.deepEqual(raw.body, MALFORMED);
    await refused(`${header}..${signature}`, 'b64: false, detached');
    await refused(`${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`, 'b64: false, its payload encoded');
  });

  test('the JWS JSON serialization, a JWE, a nested JWT and extra segments are refused', async () => {
    const token = await issue();
    const [protectedHeader, payload, signature] = token.split('.');
    const flattened = JSON.stringify({ protected: protectedHeader, payload, signature });
    const general = JSON.stringify({ payload, signatures: [{ protected: protectedHeader, signature }] });
    for (const json of [flattened, general]) {
      const res = await at(json);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, MALFORMED);
      await refused(base64url.encode(json), 'the JSON serialization, encoded');
    }
    await refused(`${token}.${signature}`, 'four segments');
    await refused(`${token}.${payload}.${signature}`, 'five segments, a JWE in shape');
    await refused(`${base64url.encode(JSON.stringify({ alg: 'dir', enc: 'A128GCM', cty: 'JWT' }))}..${payload}.${payload}.${signature}`, 'a JWE');
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const nested = await new CompactSign(new TextEncoder().encode(token)).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', cty: 'JWT', kid }).sign(attacker.privateKey);
    await refused(nested, 'a nested JWT around a real one');
    const unsignedNest = compact({ alg: 'none', cty: 'JWT', kid }, token);
    await refused(unsignedNest, 'an unsigned JWT around a real one');
  });

  test('duplicate members in the header: whichever the gateway reads, the signature is checked with that', async () => {
    const token = await issue();
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const [, payload, signature] = token.split('.');
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const headers = [
      `{"alg":"none","alg":"ES256","typ":"at+jwt","kid":"${kid}"}`,
      `{"alg":"ES256","alg":"none","typ":"at+jwt","kid":"${kid}"}`,
      `{"alg":"ES256","typ":"at+jwt","kid":"evil","kid":"${kid}"}`,
      `{"alg":"ES256","typ":"at+jwt","kid":"${kid}","kid":"evil"}`,
      `{"alg":"HS256","typ":"at+jwt","kid":"${kid}","alg":"ES256"}`,
    ];
    for (const header of headers) {
      // The real signature over another header, and the attacker's signature over this one.
      await refused(`${base64url.encode(header)}.${payload}.${signature}`, `${header}, the real signature`);
      const input = `${base64url.encode(header)}.${base64url.encode(JSON.stringify(claims))}`;
      const forged = await new CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'ES256' }).sign(attacker.privateKey);
      await refused(`${input}.${forged.split('.')[2]}`, `${header}, the attacker's signature`);
    }
  });

  test('an oversized token is refused, and the gateway goes on serving', async () => {
    const token = await issue();
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const big = await new SignJWT({ ...claims, pad: 'x'.repeat(10_000) }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(attacker.privateKey);
    await refused(big, 'ten kilobytes');
    const wideHeader = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid, pad: 'x'.repeat(10_000) }).sign(attacker.privateKey);
    await refused(wideHeader, 'a ten-kilobyte header');
    const huge = await rawExchange(gw.url, `GET /v1/who HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}${'A'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.equal(await status(token), 200);
  });

  test('padding, whitespace and another alphabet: the same token in another spelling is the same token, revoked with it', async () => {
    const token = await issue();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    for (const spelling of [`${token} x`, `${header}. ${payload}.${signature}`]) {
      const res = await rawExchange(gw.url, `GET /v1/who HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${spelling}\r\nConnection: close\r\n\r\n`);
      assert.match(res, /^HTTP\/1\.1 (400|401) /, JSON.stringify(spelling));
    }
    const spaced = await at(`${header}.${payload} .${signature}`);
    assert.equal(spaced.status, 400);
    assert.deepEqual(spaced.body, MALFORMED);
    for (const spelling of [`${header}=.${payload}.${signature}`, `${header}.${payload}=.${signature}`]) {
      const res = await at(spelling);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, MALFORMED);
    }
    for (const spelling of [`${token}=`, `${header}.${payload}.${signature.slice(0, -1)}`, `${header}.${payload}.${signature}A`]) {
      await refused(spelling, spelling.slice(-8));
    }
    const standard = (part: string) => part.replace(/-/g, '+').replace(/_/g, '/');
    if (standard(payload) !== payload) await refused(`${header}.${standard(payload)}.${signature}`, 'the payload in base64');
    // jose decodes a padded signature, and ECDSA's (r, n − s) verifies as (r, s) does: the same
    // claims, the same jti, so revoking the token revokes every spelling of it.
    const n = BigInt('0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551');
    const sig = Buffer.from(signature, 'base64url');
    const highS = (n - BigInt(`0x${sig.subarray(32).toString('hex')}`)).toString(16).padStart(64, '0');
    const spellings = [`${token}==`, `${header}.${payload}.${base64url.encode(Buffer.concat([sig.subarray(0, 32), Buffer.from(highS, 'hex')]))}`];
    for (const spelling of spellings) assert.equal(await status(spelling), 200, spelling.slice(-8));
    assert.equal((await revoke(spellings[0]!)).status, 200);
    await refused(token, 'revoked by another spelling');
    for (const spelling of spellings) await refused(spelling, spelling.slice(-8));
  });

  test("a token of one product on another product's route is 403; a JWT of another gateway with the same issuer is refused", async () => {
    const signed = await issue();
    const theirs = await issue(await gw.client('other'));
    const forbidden = { type: 'about:blank', title: 'Forbidden', status: 403, detail: "the token's API product does not include this route", code: 'insufficient_scope' };
    for (const [token, route] of [
      [signed, '/v1/theirs'],
      [theirs, '/v1/who'],
      [theirs, '/v1/mixed'],
      [signed, '/v1/hello'],
    ] as const) {
      const res = await at(token, route);
      assert.equal(res.status, 403, route);
      assert.deepEqual(res.body, forbidden, route);
    }
    // Another gateway, its own store and keys, the same issuer and product names: its app's key is unknown here too.
    const elsewhere = await startTestGateway({
      oauth: `  issuer: ${ISSUER}`,
      routes: '  who:\n    method: GET\n    path: /v1/who\n    upstream: mock',
      products: `  signed:\n    routes: [who]\n    accessTokenFormat: jwt\n    audience: ${SIGNED_AUDIENCE}`,
    });
    try {
      const foreign = (await tokenRequest(elsewhere.url, { grant_type: 'client_credentials' }, await elsewhere.client('signed'))).body.access_token as string;
      assert.equal((await call(`${elsewhere.url}/v1/who`, { headers: bearer(foreign) })).status, 200);
      await refused(foreign, "another gateway's token");
      assert.deepEqual((await introspect(foreign)).body, { active: false });
    } finally {
      await elsewhere.close();
    }
  });

  test('an identity token is no access token: refused at the route, inactive at introspection, revoking it revokes nothing', async () => {
    const token = await issue();
    assert.equal(await status(token), 200);
    const identity = upstream.received.at(-1)!.headers['x-caller'] as string;
    assert.equal(decodeProtectedHeader(identity).typ, 'gateway-identity+jwt');
    await refused(identity, 'at the route');
    await refused(identity, 'at a route of token mode', '/v1/mine');
    assert.deepEqual((await introspect(identity)).body, { active: false });
    assert.equal((await revoke(identity)).status, 200);
    assert.equal(await status(token), 200);
  });

  test("a refresh token, a JWT's jti, or the jti as an opaque token, are no bearer tokens; a JWT is no refresh token", async () => {
    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wonderland' }, app);
    assert.equal(res.status, 200, res.text);
    const { access_token: token, refresh_token: refresh } = res.body as { access_token: string; refresh_token: string };
    const { jti } = decodeJwt(token) as { jti: string };
    for (const [fake, why] of [
      [refresh, 'the refresh token'],
      [jti, 'the jti'],
      [`gwat_${jti}`, 'the jti as an opaque token'],
      [`gwat_${jti.slice(5)}`, 'the jti in the shape of one'],
      [refresh.replace('gwrt_', 'gwat_'), 'the refresh token renamed'],
    ] as const) {
      await refused(fake, why);
    }
    for (const notRefresh of [token, jti, `gwrt_${jti.slice(5)}`]) {
      const res = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: notRefresh }, app);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' });
    }
    assert.equal(await status(token), 200, 'the token itself still works');
  });

  test('introspection: only its callers (not an app, not anonymously); a forged token is {"active":false} and nothing else', async () => {
    const token = await issue();
    const anonymous = await call(`${gw.url}/oauth2/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error, 'invalid_client');
    const asApp = await introspect(token, { id: app.key, secret: app.secret });
    assert.equal(asApp.status, 401);
    assert.equal(asApp.body.error, 'invalid_client');
    const claims = decodeJwt(token);
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const forged = [
      await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(attacker.privateKey),
      compact({ alg: 'none', typ: 'at+jwt', kid }, claims),
      hmac('HS256', JSON.stringify((await signingKey(gw)).publicJwk), { typ: 'at+jwt', kid }, claims),
      `${token.split('.')[0]}.${base64url.encode(JSON.stringify({ ...claims, scope: 'admin' }))}.${token.split('.')[2]}`,
    ];
    for (const f of forged) {
      const res = await introspect(f);
      assert.equal(res.status, 200);
      assert.equal(res.text, '{"active":false}');
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
    assert.equal((await introspect(token)).body.active, true);
  });

  test("revocation: another app's revocation is a 200 that changes nothing; the owner's takes the token at once", async () => {
    const token = await issue();
    const byOther = await revoke(token, other);
    assert.equal(byOther.status, 200);
    assert.equal(byOther.text, '');
    assert.equal(await status(token), 200);
    assert.equal((await introspect(token)).body.active, true);
    // A forged token that carries the victim's jti revokes nothing either, whoever sends it.
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token) as { kid: string };
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = await new SignJWT({ ...claims, client_id: other.key, sub: other.key }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(attacker.privateKey);
    assert.equal((await revoke(forged, other)).status, 200);
    assert.equal((await revoke(forged, app)).status, 200);
    assert.equal(await status(token), 200);
    assert.equal((await revoke(token)).status, 200);
    await refused(token, 'revoked by its owner');
    assert.deepEqual((await introspect(token)).body, { active: false });
  });

  test('the identity header cannot be smuggled: any case, with underscores, twice, or with the configured name of the default', async () => {
    const token = await issue();
    // Raw bytes, so that nothing on the client side merges or drops the repeated headers.
    const answer = await rawExchange(
      gw.url,
      `GET /v1/who HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Caller: forged-1\r\nx-caller: forged-2\r\nX_Caller: forged-3\r\nX-Gateway-Identity: forged-4\r\nConnection: close\r\n\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const smuggled = upstream.received.at(-1)!.headers;
    assert.match(smuggled['x-caller'] as string, /^eyJ[^,]+$/, "one identity, the gateway's");
    assert.equal(smuggled.x_caller, undefined);
    assert.equal(smuggled['x-gateway-identity'], undefined);
    const res = await call(`${gw.url}/v1/who`, { headers: { ...bearer(token), 'X-Caller': 'forged', 'x-gateway-identity': 'forged', 'x-caller-extra': 'fine' } });
    assert.equal(res.status, 200);
    const got = upstream.received.at(-1)!.headers;
    assert.match(got['x-caller'] as string, /^eyJ[^,]+$/, "one identity, the gateway's");
    assert.equal(got['x-gateway-identity'], undefined);
    assert.equal(got.authorization, undefined);
  });

  test("the identity header is dropped where a caller gets X-Gateway-* headers; in token mode the upstream gets the caller's JWT and nothing else", async () => {
    const plain = await issue(await gw.client('plain'));
    const viaHeaders = await rawExchange(
      gw.url,
      `GET /v1/mixed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${plain}\r\nX-Caller: forged\r\nConnection: x-caller-hop, close\r\nX-Caller-Hop: 1\r\n\r\n`,
    );
    assert.match(viaHeaders, /^HTTP\/1\.1 200 /);
    const headersMode = upstream.received.at(-1)!.headers;
    assert.equal(headersMode['x-caller'], undefined);
    assert.equal(headersMode['x-caller-hop'], undefined);
    assert.equal(headersMode['x-gateway-product'], 'plain');
    assert.equal(headersMode.authorization, undefined);

    const token = await issue();
    assert.equal((await at(token, '/v1/mixed', { 'x-caller': 'forged', 'x-gateway-product': 'plain' })).status, 200);
    const jwtMode = upstream.received.at(-1)!.headers;
    assert.equal(decodeJwt(jwtMode['x-caller'] as string).client_id, app.key);
    assert.equal(jwtMode['x-gateway-product'], undefined);

    assert.equal((await at(token, '/v1/mine', { 'x-caller': 'forged', 'x-gateway-app': 'forged' })).status, 200);
    const tokenMode = upstream.received.at(-1)!.headers;
    assert.equal(tokenMode.authorization, `Bearer ${token}`);
    assert.equal(tokenMode['x-caller'], undefined);
    assert.equal(tokenMode['x-gateway-app'], undefined);
    const opaque = await at(plain, '/v1/mine');
    assert.equal(opaque.status, 403, 'an opaque token of another product');
  });
});

describe('the clock: expiry at the second, nbf, and a stolen key cannot outlive the record', () => {
  let now = Date.UTC(2026, 0, 1, 12);
  let gw: TestGateway;
  let app: { key: string; secret: string };
  before(async () => {
    gw = await startTestGateway(
      {
        oauth: `  issuer: ${ISSUER}\n  introspection:\n    clients: [{ id: ${INTROSPECTION.id}, secret: ${INTROSPECTION.secret} }]`,
        products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 60',
      },
      { clock: () => now },
    );
    app = await gw.client('signed');
  });
  after(() => gw?.close());

  const issue = async () => (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
  const status = async (token: string) => (await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status;
  const active = async (token: string) =>
    (
      await call(`${gw.url}/oauth2/introspect`, {
        method: 'POST',
        headers: { authorization: basic(INTROSPECTION.id, INTROSPECTION.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${token}`,
      })
    ).body.active as boolean;

  test('a token works until the millisecond before its exp and never from exp on, clock skew or not', async () => {
    now = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    const token = await issue();
    const { exp, iat } = decodeJwt(token) as { exp: number; iat: number };
    assert.equal(exp - iat, 60);
    now = exp * 1000 - 1;
    assert.equal(await status(token), 200);
    assert.equal(await active(token), true);
    for (const later of [0, 1, 29_000, 31_000]) {
      now = exp * 1000 + later;
      assert.equal(await status(token), 401, `exp + ${later} ms`);
      assert.equal(await active(token), false, `exp + ${later} ms`);
    }
  });

  test('signed with the real key: an nbf in the future is refused, and a later exp does not outlive the record', async () => {
    now = Date.UTC(2026, 0, 1, 13);
    const token = await issue();
    const claims = decodeJwt(token) as JWTPayload & { exp: number };
    const key = await signingKey(gw);
    const resign = (changes: JWTPayload) => key.sign('at+jwt', { ...claims, ...changes });
    assert.equal(await status(resign({})), 200);
    assert.equal(await status(resign({ nbf: now / 1000 + 120 })), 401, 'nbf two minutes ahead');
    assert.equal(await status(resign({ nbf: now / 1000 - 1 })), 200, 'nbf passed');
    const longer = resign({ exp: claims.exp + 86_400 });
    assert.equal(await status(longer), 200);
    now = claims.exp * 1000;
    assert.equal(await status(longer), 401, "the record's expiry, not the token's");
    assert.equal(await active(longer), false);
    now = Date.UTC(2026, 0, 1, 14);
    const fresh = await issue();
    const freshClaims = decodeJwt(fresh);
    for (const changes of [{ iss: 'http://localhost:8081' }, { aud: 'hello' }, { client_id: 'someone-else' }, { product: 'hello' }, { jti: 'x'.repeat(64) }, { jti: undefined }, { exp: undefined }]) {
      assert.equal(await status(key.sign('at+jwt', { ...freshClaims, ...changes })), 401, JSON.stringify(changes));
    }
  });
});

describe('rotation and revocation racing the calls', () => {
  let gw: TestGateway;
  let app: { key: string; secret: string };
  let settings: SigningSettings;
  before(async () => {
    gw = await startTestGateway({
      oauth: `  issuer: ${ISSUER}\n  signing:\n    rotateEvery: 1h\n    publishAhead: 5s`,
      products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt',
    });
    app = await gw.client('signed');
    settings = settingsOf(gw);
  });
  after(() => gw?.close());

  const issued = () => tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
  const status = async (token: string) => (await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status;

  test('a token being verified while the keys are read again (a rotation elsewhere) is accepted', async () => {
    const verify = createJwtVerifier(gw.gateway.services.keys, ISSUER);
    const token = (await issued()).body.access_token as string;
    const pending = verify(token, Date.now());
    assert.ok(pending instanceof Promise, 'a token not seen before is verified with its signature');
    await gw.gateway.services.keys.load();
    const verified = await pending;
    assert.equal(verified?.jti, decodeJwt(token).jti);
  });

  test('a hundred first calls while a key is added: every one accepted', async () => {
    const tokens = await Promise.all(Array.from({ length: 100 }, async () => (await issued()).body.access_token as string));
    const calls = Promise.all(tokens.map(status));
    await rotateSigningKeys(gw.admin, settings);
    assert.deepEqual(
      await calls,
      tokens.map(() => 200),
    );
  });

  test('token requests while keys are rotated and the signing key revoked: every token works unless its key was revoked, and none is signed by it after its revocation', async () => {
    const signing = decodeProtectedHeader((await issued()).body.access_token as string).kid!;
    const during: Promise<Answer>[] = [];
    for (let i = 0; i < 100; i++) during.push(issued());
    const [, revoked] = await Promise.all([rotateSigningKeys(gw.admin, settings), revokeSigningKeyByKid(gw.admin, settings, signing)]);
    const afterwards = await Promise.all(Array.from({ length: 100 }, issued));
    // Between the revocation and the replacement's first read nothing may sign: a 503 to try again in a second.
    const answered = await Promise.all(during);
    for (const res of answered.filter((r) => r.status !== 200)) {
      assert.equal(res.status, 503, res.text);
      assert.deepEqual(res.body, { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' });
      assert.equal(res.headers.get('retry-after'), '1');
    }
    for (const res of afterwards) assert.equal(res.status, 200, res.text);
    const results = [...answered.filter((r) => r.status === 200), ...afterwards];
    const kids = results.map((r) => decodeProtectedHeader(r.body.access_token as string).kid!);
    assert.deepEqual(new Set(kids.slice(-100)), new Set([revoked.replacement]), 'once revoke returned, the replacement signs');
    const statuses = await Promise.all(results.map((r) => status(r.body.access_token as string)));
    assert.deepEqual(
      statuses,
      kids.map((kid) => (kid === signing ? 401 : 200)),
    );
    const views = describeKeys(await gw.gateway.services.store.signingKeys.listSigningKeys(), settings.retireAfterMs, Date.now());
    assert.deepEqual(
      views.filter((v) => v.status !== 'next').map((v) => [v.kid, v.status]),
      [
        [signing, 'revoked'],
        [revoked.replacement, 'signing'],
      ],
    );
    const published = ((await (await fetch(`${gw.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);
    assert.deepEqual(
      published,
      views.filter((v) => v.status !== 'revoked').map((v) => v.kid),
    );
  });

  test("a key another instance's schedule makes between the revocation and the replacement is the replacement, and the only one", async () => {
    const keys = gw.gateway.services.store.signingKeys;
    const { secretKey } = gw.gateway.services;
    const now = Date.now();
    const signing = describeKeys(await keys.listSigningKeys(), settings.retireAfterMs, now).find((v) => v.status === 'signing')!.kid;
    let scheduled: string | undefined;
    const store = {
      signingKeys: {
        listSigningKeys: () => keys.listSigningKeys(),
        addSigningKey: (key: SigningKeyRecord, after: string | null) => keys.addSigningKey(key, after),
        deleteSigningKeys: (kids: readonly string[]) => keys.deleteSigningKeys(kids),
        // A few milliseconds after the revocation, another instance finds nothing signing and makes a key that signs at once.
        async revokeSigningKey(kid: string, at: number) {
          const revoked = await keys.revokeSigningKey(kid, at);
          const record = await newSigningKey('ES256', secretKey, at + 5, at + 5);
          const latest = (await keys.listSigningKeys()).filter((k) => k.revokedAt === null).at(-1)?.kid ?? null;
          assert.equal(await keys.addSigningKey(record, latest), true);
          scheduled = record.kid;
          return revoked;
        },
      },
    };
    assert.deepEqual(await revokeSigningKey({ store, secretKey }, settings, signing, now), { revoked: true, replacement: scheduled });
    const made = (await keys.listSigningKeys()).filter((k) => k.createdAt >= now).map((k) => k.kid);
    assert.deepEqual(made, [scheduled]);
  });
});

describe('what the JWKS and the store show of each algorithm', () => {
  test("a fresh gateway's first call finds its keys: the JWKS lists the key it made and the one added by hand", async () => {
    const gw = await startTestGateway({ oauth: `  issuer: ${ISSUER}`, products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt' });
    try {
      const next = await rotateSigningKeys(gw.admin, settingsOf(gw));
      const { keys } = (await (await fetch(`${gw.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      assert.equal(keys.length, 2);
      assert.equal(keys[1]!.kid, next.kid);
    } finally {
      await gw.close();
    }
  });

  for (const algorithm of ['ES256', 'EdDSA', 'RS256'] as const) {
    test(`${algorithm}: the JWKS has the public members only and no revoked key; the store has no private key in the clear`, async () => {
      const gw = await startTestGateway({
        oauth: `  issuer: ${ISSUER}\n  signing:\n    algorithm: ${algorithm}\n    publishAhead: 10s`,
        products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt',
      });
      try {
        const settings = settingsOf(gw);
        const next = await rotateSigningKeys(gw.admin, settings);
        const res = await fetch(`${gw.url}/.well-known/jwks.json`);
        assert.equal(res.headers.get('cache-control'), 'public, max-age=5');
        assert.equal(res.headers.get('content-type'), 'application/jwk-set+json');
        const { keys } = (await res.json()) as JSONWebKeySet;
        assert.equal(keys.length, 2);
        const publicMembers = { ES256: ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'], EdDSA: ['alg', 'crv', 'kid', 'kty', 'use', 'x'], RS256: ['alg', 'e', 'kid', 'kty', 'n', 'use'] }[algorithm];
        for (const k of keys) assert.deepEqual(Object.keys(k).sort(), publicMembers);
        const stored = await storedText(gw.dir);
        for (const record of await gw.gateway.services.store.signingKeys.listSigningKeys()) {
          const key = openSigningKey(record, loadSecretKey(path.join(gw.dir, 'gateway.db.key')));
          const jwk = await exportJWK(key.privateKey);
          for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const) {
            const value = jwk[member];
            if (value === undefined) continue;
            assert.equal(stored.includes(value), false, `${member} in base64url`);
            assert.equal(stored.includes(Buffer.from(value, 'base64url').toString('latin1')), false, `${member} as bytes`);
            assert.equal(stored.includes(Buffer.from(value, 'base64url').toString('base64')), false, `${member} in base64`);
          }
          const pkcs8 = key.privateKey.export({ format: 'der', type: 'pkcs8' });
          assert.equal(stored.includes(pkcs8.toString('latin1')), false, 'PKCS #8');
          assert.equal(stored.includes(pkcs8.toString('base64')), false, 'PKCS #8 in base64');
        }
        await revokeSigningKeyByKid(gw.admin, settings, next.kid);
        const after = ((await (await fetch(`${gw.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);
        assert.equal(after.length, 1);
        assert.equal(after.includes(next.kid), false);
      } finally {
        await gw.close();
      }
    });
  }
});

const skipRedis = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

/** Two gateway processes on one Redis, as sidecars run them, with the test's own connection to their store. */
async function twoInstances(signing: string): Promise<{ instances: Served[]; store: Store; config: Config; redis: RedisServer; app: { key: string; secret: string }; close(): Promise<void> }> {
  const dir = tempDir();
  const redis = await startRedis();
  const file = path.join(dir.dir, 'gateway.yaml');
  const yaml = configYaml({
    oauth: `  issuer: ${ISSUER}\n  signing:\n${signing}`,
    products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 10m',
  }).replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "jwt:"`);
  writeFileSync(file, yaml);
  const config = loadConfigFile(file, { env: {} });
  const store = await openStore(config.store);
  const admin = storeAdminDeps(config, store);
  await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
  const created = await createApp(admin, { developer: 'dev@example.com', name: 'a', product: 'signed' });
  const instances = await Promise.all([serve(file), serve(file)]);
  return {
    instances,
    store,
    config,
    redis,
    app: { key: created.key, secret: created.secret },
    async close() {
      await Promise.all(instances.map((i) => i.stop()));
      await store.close();
      await redis.close();
      dir.remove();
    },
  };
}

describe('two instances on Redis: rotation by the schedule at both, revocation while a subscription is down', { skip: skipRedis }, () => {
  test('both instances maintaining the schedule: one next key at a time, and every token signed by the key whose turn it is', async () => {
    const pair = await twoInstances('    rotateEvery: 2s\n    publishAhead: 1s');
    try {
      const issued: { at: number; kid: string; token: string }[] = [];
      let mostNext = 0;
      await within(
        15_000,
        async () => {
          for (const i of [0, 1]) {
            const res = await tokenRequest(pair.instances[i]!.url, { grant_type: 'client_credentials' }, pair.app);
            assert.equal(res.status, 200, res.text);
            issued.push({ at: i, kid: decodeProtectedHeader(res.body.access_token as string).kid!, token: res.body.access_token as string });
          }
          const keys = await pair.store.signingKeys.listSigningKeys();
          mostNext = Math.max(mostNext, keys.filter((k) => k.revokedAt === null && k.activatesAt > Date.now()).length);
          return new Set(issued.map((t) => t.kid)).size;
        },
        (kids) => kids >= 4,
      );
      assert.equal(mostNext, 1, 'never two next keys');
      const turn = new Map((await pair.store.signingKeys.listSigningKeys()).map((k) => [k.kid, k.activatesAt]));
      assert.ok(new Set(issued.map((t) => t.kid)).size >= 4, 'four keys took their turn');
      for (let i = 1; i < issued.length; i++) {
        assert.ok(turn.get(issued[i]!.kid)! >= turn.get(issued[i - 1]!.kid)!, `token ${i} (instance ${issued[i]!.at}) signed by a key whose turn had passed`);
      }
      for (const { token } of issued) {
        for (const instance of pair.instances) assert.equal((await call(`${instance.url}/v1/hello`, { headers: bearer(token) })).status, 200);
      }
    } finally {
      await pair.close();
    }
  });

  test("a key revoked while the instances' subscriptions are down, which neither hears of, is refused by both within a second", async () => {
    const pair = await twoInstances('    rotateEvery: 1h\n    publishAhead: 10s');
    const redis = new Redis(pair.redis.url);
    try {
      const token = (await tokenRequest(pair.instances[0]!.url, { grant_type: 'client_credentials' }, pair.app)).body.access_token as string;
      const statusAt = async (i: number) => (await call(`${pair.instances[i]!.url}/v1/hello`, { headers: bearer(token) })).status;
      assert.equal(await statusAt(1), 200);
      assert.equal(await statusAt(0), 200);
      const admin = { ...storeAdminDeps(pair.config, pair.store), signing: pair.config.oauth.signing };
      // A key added: both instances read the keys again (and show it in their JWKS), so that the
      // feed's "everything" when their subscriptions return comes within a second of that read.
      const next = await rotateSigningKeys(admin, pair.config.oauth.signing);
      for (const instance of pair.instances) {
        const kids = () => fetch(`${instance.url}/.well-known/jwks.json`).then(async (r) => ((await r.json()) as JSONWebKeySet).keys.map((k) => k.kid));
        assert.ok((await within(1000, kids, (k) => k.includes(next.kid))).includes(next.kid));
      }
      // Every subscription to the changes channel cut: what is published until they are back is lost.
      await redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      const kid = decodeProtectedHeader(token).kid!;
      await revokeSigningKeyByKid(admin, pair.config.oauth.signing, kid);
      for (const i of [0, 1]) {
        assert.equal(
          await within(
            1000,
            () => statusAt(i),
            (s) => s === 401,
          ),
          401,
          `instance ${i}`,
        );
      }
    } finally {
      redis.disconnect();
      await pair.close();
    }
  });
});
