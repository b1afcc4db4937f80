// An outsider's attacks on signed tokens, at a running gateway: tokens that name a key of the
// attacker's own (jwk, jku, x5u), crit headers, an identity token presented as an access token, a
// JWT revoked by another app, an identity header smuggled past the gateway under any spelling.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { base64url, decodeJwt, decodeProtectedHeader, exportJWK, SignJWT } from 'jose';
import { openSigningKey } from '../../src/oauth/signing/keys.ts';
import { loadSecretKey } from '../../src/store/secret-key.ts';
import { basic, bearer, call, rawExchange, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const ISSUER = 'http://localhost:8080';

describe('signed tokens under attack', () => {
  let gw: TestGateway;
  let upstream: Upstream;
  let app: { key: string; secret: string };
  let other: { key: string; secret: string };
  before(async () => {
    upstream = await startUpstream();
    gw = await startTestGateway({
      oauth: `  issuer: ${ISSUER}\n  signing:\n    identity:\n      header: X-Caller`,
      upstreams: `  service:\n    url: ${upstream.url}`,
      routes: '  who:\n    method: GET\n    path: /v1/who\n    upstream: service\n    upstreamIdentity: jwt',
      products: '  signed:\n    routes: [who]\n    accessTokenFormat: jwt',
    });
    app = await gw.client('signed');
    other = await gw.client('signed');
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const issue = async (creds = app) => (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, creds)).body.access_token as string;
  const status = async (token: string) => (await call(`${gw.url}/v1/who`, { headers: bearer(token) })).status;

  test("a token signed with the attacker's key, naming it by jwk, jku or x5u, or naming the gateway's kid, is refused", async () => {
    const claims = decodeJwt(await issue());
    const { kid } = decodeProtectedHeader(await issue()) as { kid: string };
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = await exportJWK(attacker.publicKey);
    const forge = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header }).sign(attacker.privateKey);
    for (const header of [{ jwk }, { jwk, kid }, { jku: 'https://evil.example.com/jwks.json', kid: 'evil' }, { x5u: 'https://evil.example.com/cert.pem', kid }, { kid }, { kid: '../../etc/passwd' }]) {
      assert.equal(await status(await forge(header)), 401, JSON.stringify(Object.keys(header)));
    }
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const unsigned = `${base64url.encode(JSON.stringify({ alg, typ: 'at+jwt', kid }))}.${base64url.encode(JSON.stringify(claims))}.`;
      assert.equal(await status(unsigned), 401, alg);
    }
  });

  test('the real key with a crit header the gateway does not understand, or b64: false, is refused', async () => {
    const claims = decodeJwt(await issue());
    const records = await gw.gateway.services.store.signingKeys.listSigningKeys();
    const key = openSigningKey(records.at(-1)!, loadSecretKey(path.join(gw.dir, 'gateway.db.key')));
    const sign = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, ...header } as never).sign(key.privateKey);
    assert.equal(await status(await sign({})), 200, 'the same claims, signed alike, pass');
    await assert.rejects(sign({ crit: ['urn:evil'], 'urn:evil': true }));
    const crit = `${base64url.encode(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: key.kid, crit: ['urn:evil'], 'urn:evil': true }))}.${(await sign({})).split('.').slice(1).join('.')}`;
    assert.equal(await status(crit), 401);
  });

  test('an identity token taken from the upstream is refused as an access token, at the route', async () => {
    assert.equal(await status(await issue()), 200);
    const identity = upstream.received.at(-1)!.headers['x-caller'] as string;
    assert.match(identity, /^eyJ/);
    assert.equal(await status(identity), 401);
  });

  test("another app cannot revoke an app's JWT: 200, and the token keeps working", async () => {
    const token = await issue();
    const res = await call(`${gw.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basic(other.key, other.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    assert.equal(res.status, 200);
    assert.equal(await status(token), 200);
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
});
