// Mutual TLS (RFC 8705) on the gateway's own TLS listener, with certificates made by openssl:
// apps that authenticate with a CA-signed certificate (tls_client_auth) or a self-signed one
// (self_signed_tls_client_auth), tokens bound to the certificate of their request (cnf.x5t#S256)
// and routes that take them only with that certificate; clients: Node's https, curl and Python's
// requests, each with its own certificate. Every refusal one by one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { setCertificateAuth } from '../../src/admin/app-certificates.ts';
import { basic, startTestGateway, startUpstream, tempDir, type TestGateway, type Upstream } from '../helpers.ts';
import { exchange, makeCertificates, type Certificates, type Exchange, type Pair } from './mtls-certificates.ts';

/** One request on a fresh TLS connection, presenting `cert` if given. */
function httpsCall(url: string, ca: Buffer, init: { method?: string; headers?: Record<string, string>; body?: string; cert?: Pair } = {}): Promise<Exchange> {
  const client = init.cert === undefined ? {} : { cert: readFileSync(init.cert.cert), key: readFileSync(init.cert.key) };
  return exchange(url, { method: init.method ?? 'GET', ...(init.headers === undefined ? {} : { headers: init.headers }), ca, ...client }, init.body);
}

// Asynchronous: the gateway answering them runs in this process.
const run = promisify(execFile);

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const OTHER_CERTIFICATE = 'Bearer realm="test-realm", error="invalid_token", error_description="this access token is bound to a client certificate the request did not present"';

describe('mutual TLS (listen.tls.clientCa)', () => {
  const temp = tempDir();
  let certs: Certificates;
  let ca: Buffer;
  let gw: TestGateway;
  let upstream: Upstream;
  let pkiClient: Pair;
  let otherSigned: Pair;
  let selfSigned: Pair;
  let forgedSubject: Pair;
  let pki: { key: string; secret: string };
  let self: { key: string; secret: string };
  let plain: { key: string; secret: string };
  let bound: { key: string; secret: string };

  before(async () => {
    certs = makeCertificates(temp.dir);
    ca = readFileSync(certs.ca);
    pkiClient = certs.signed('pki-client', '/C=US/O=Example, Inc./CN=orders-client', 'DNS:orders-client.example.com,URI:spiffe://example.com/orders');
    otherSigned = certs.signed('other-client', '/C=US/O=Example, Inc./CN=someone-else', 'DNS:someone-else.example.com');
    selfSigned = certs.selfSigned('self-client', '/CN=self-signed app');
    // Names the registered subject, but no CA of the gateway's signed it.
    forgedSubject = certs.selfSigned('forged', '/C=US/O=Example, Inc./CN=orders-client');
    upstream = await startUpstream();
    gw = await startTestGateway(
      {
        upstreamUrl: upstream.url,
        listen: `  tls:\n    cert: ${certs.server.cert}\n    key: ${certs.server.key}\n    clientCa: ${certs.ca}`,
        oauth: '  issuer: https://gateway.example.com\n  introspection:\n    clients: [{ id: backend, secret: backend-secret-123456 }]',
        products: '  bound:\n    routes: [backend]\n    senderConstraint: mtls',
      },
      { dir: temp.dir },
    );
    pki = await gw.client('hello', 'pki-app');
    await setCertificateAuth(gw.admin, { key: pki.key }, { method: 'tls_client_auth', subjectDn: 'CN=orders-client, O=Example\\, Inc., C=US' });
    self = await gw.client('hello', 'self-signed-app');
    await setCertificateAuth(gw.admin, { key: self.key }, { method: 'self_signed_tls_client_auth', certificates: [selfSigned.pem] });
    plain = await gw.client('hello', 'secret-app');
    bound = await gw.client('bound', 'bound-app');
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    temp.remove();
  });

  const token = (clientId: string, cert?: Pair, extra: Record<string, string> = {}) =>
    httpsCall(`${gw.url}/oauth2/token`, ca, {
      method: 'POST',
      headers: { ...FORM, ...extra },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId }).toString(),
      ...(cert ? { cert } : {}),
    });
  const backend = (accessToken: string, cert?: Pair) => httpsCall(`${gw.url}/v1/backend/1`, ca, { headers: { authorization: `Bearer ${accessToken}` }, ...(cert ? { cert } : {}) });
  const introspect = (t: string) =>
    httpsCall(`${gw.url}/oauth2/introspect`, ca, {
      method: 'POST',
      headers: { ...FORM, authorization: basic('backend', 'backend-secret-123456') },
      body: new URLSearchParams({ token: t }).toString(),
    });

  test('tls_client_auth: the CA-signed certificate with the registered subject DN gets a token bound to it; the route takes it with that certificate only', async () => {
    const res = await token(pki.key, pkiClient);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // RFC 8705 §3: a certificate-bound token is still of type Bearer.
    assert.equal(res.body.token_type, 'Bearer');
    const introspected = await introspect(res.body.access_token);
    assert.deepEqual(introspected.body.cnf, { 'x5t#S256': pkiClient.thumbprint });
    assert.equal(introspected.body.token_type, 'Bearer');
    const since = upstream.received.length;
    const ok = await backend(res.body.access_token, pkiClient);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(upstream.received[since]!.headers['x-gateway-token-binding'], 'mtls');
    for (const [name, cert] of [
      ['no certificate', undefined],
      ['another certificate of the CA', otherSigned],
      ['a self-signed one with the same subject', forgedSubject],
    ] as const) {
      const refused = await backend(res.body.access_token, cert);
      assert.equal(refused.status, 401, name);
      assert.equal(refused.headers['www-authenticate'], OTHER_CERTIFICATE, name);
      assert.equal(refused.body.code, 'invalid_token', name);
    }
    assert.equal(upstream.received.length, since + 1);
  });

  test('tls_client_auth refusals: another subject, a self-signed certificate naming the subject, none, or the secret instead: 401 invalid_client', async () => {
    for (const [name, cert] of [
      ['another subject', otherSigned],
      ['self-signed with the subject', forgedSubject],
      ['no certificate', undefined],
    ] as const) {
      const res = await token(pki.key, cert);
      assert.equal(res.status, 401, name);
      assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' }, name);
    }
    const bySecret = await httpsCall(`${gw.url}/oauth2/token`, ca, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(pki.key, pki.secret) },
      body: 'grant_type=client_credentials',
      cert: pkiClient,
    });
    assert.equal(bySecret.status, 401);
    assert.equal(bySecret.body.error, 'invalid_client');
  });

  test('tls_client_auth by a subjectAltName: DNS and URI', async () => {
    const byDns = await gw.client('hello', 'san-dns-app');
    await setCertificateAuth(gw.admin, { key: byDns.key }, { method: 'tls_client_auth', san: 'dns', value: 'orders-client.example.com' });
    assert.equal((await token(byDns.key, pkiClient)).status, 200);
    assert.equal((await token(byDns.key, otherSigned)).status, 401);
    const byUri = await gw.client('hello', 'san-uri-app');
    await setCertificateAuth(gw.admin, { key: byUri.key }, { method: 'tls_client_auth', san: 'uri', value: 'spiffe://example.com/orders' });
    assert.equal((await token(byUri.key, pkiClient)).status, 200);
    assert.equal((await token(byUri.key, otherSigned)).status, 401);
  });

  test('self_signed_tls_client_auth with curl: the registered certificate gets a token, and calls with it', async () => {
    const curl = async (cert: Pair, ...args: string[]) => {
      const { stdout } = await run('curl', ['-sS', '--cacert', certs.ca, '--cert', cert.cert, '--key', cert.key, '-w', '\n%{http_code}', ...args]);
      const lines = stdout.split('\n');
      return { status: Number(lines.pop()), body: JSON.parse(lines.join('\n')) };
    };
    const res = await curl(selfSigned, '-d', `grant_type=client_credentials&client_id=${self.key}`, `${gw.url}/oauth2/token`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const called = await curl(selfSigned, '-H', `Authorization: Bearer ${res.body.access_token}`, `${gw.url}/v1/backend/2`);
    assert.equal(called.status, 200);
    assert.deepEqual(called.body, { upstream: true, path: '/v1/backend/2' });
    // Another certificate, CA-signed or not, is not the one registered.
    const other = await curl(forgedSubject, '-d', `grant_type=client_credentials&client_id=${self.key}`, `${gw.url}/oauth2/token`);
    assert.equal(other.status, 401);
    assert.equal(other.body.error, 'invalid_client');
  });

  test("Python's requests with a client certificate gets a bound token and calls the route", async () => {
    const script = [
      'import json, sys, requests',
      'base, ca, cert, key, client_id = sys.argv[1:6]',
      "t = requests.post(base + '/oauth2/token', data={'grant_type': 'client_credentials', 'client_id': client_id}, cert=(cert, key), verify=ca)",
      "r = requests.get(base + '/v1/backend/3', headers={'Authorization': 'Bearer ' + t.json()['access_token']}, cert=(cert, key), verify=ca)",
      "n = requests.get(base + '/v1/backend/3', headers={'Authorization': 'Bearer ' + t.json()['access_token']}, verify=ca)",
      "print(json.dumps({'token': t.status_code, 'call': r.status_code, 'body': r.json(), 'without': n.status_code}))",
    ].join('\n');
    const { stdout } = await run('/usr/bin/python3', ['-c', script, gw.url, certs.ca, selfSigned.cert, selfSigned.key, self.key]);
    assert.deepEqual(JSON.parse(stdout), { token: 200, call: 200, body: { upstream: true, path: '/v1/backend/3' }, without: 401 });
  });

  test('an app with a secret that presents a certificate gets a token bound to it (senderConstraint none)', async () => {
    const res = await httpsCall(`${gw.url}/oauth2/token`, ca, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(plain.key, plain.secret) },
      body: 'grant_type=client_credentials',
      cert: otherSigned,
    });
    assert.equal(res.status, 200);
    assert.deepEqual((await introspect(res.body.access_token)).body.cnf, { 'x5t#S256': otherSigned.thumbprint });
    assert.equal((await backend(res.body.access_token, otherSigned)).status, 200);
    assert.equal((await backend(res.body.access_token)).status, 401);
    const unbound = await httpsCall(`${gw.url}/oauth2/token`, ca, { method: 'POST', headers: { ...FORM, authorization: basic(plain.key, plain.secret) }, body: 'grant_type=client_credentials' });
    assert.equal((await introspect(unbound.body.access_token)).body.cnf, undefined);
    assert.equal((await backend(unbound.body.access_token)).status, 200);
  });

  test('senderConstraint: mtls: no token without a client certificate (400 invalid_request), and one bound to it with', async () => {
    const without = await httpsCall(`${gw.url}/oauth2/token`, ca, { method: 'POST', headers: { ...FORM, authorization: basic(bound.key, bound.secret) }, body: 'grant_type=client_credentials' });
    assert.equal(without.status, 400);
    assert.deepEqual(without.body, { error: 'invalid_request', error_description: "API product 'bound' issues certificate-bound tokens only: present a client certificate" });
    const withCert = await httpsCall(`${gw.url}/oauth2/token`, ca, {
      method: 'POST',
      headers: { ...FORM, authorization: basic(bound.key, bound.secret) },
      body: 'grant_type=client_credentials',
      cert: selfSigned,
    });
    assert.equal(withCert.status, 200);
    assert.equal((await backend(withCert.body.access_token, selfSigned)).status, 200);
    assert.equal((await backend(withCert.body.access_token)).headers['www-authenticate'], OTHER_CERTIFICATE);
  });

  test('a registered certificate authenticates only within its validity period: not before it, not after it', async () => {
    const DAY = 86_400_000;
    for (const [when, shift] of [
      ['three days on (it is valid for two)', 3 * DAY],
      ['a day before it was made', -DAY],
    ] as const) {
      const dir = tempDir();
      const other = await startTestGateway(
        { listen: `  tls:\n    cert: ${certs.server.cert}\n    key: ${certs.server.key}\n    clientCa: ${certs.ca}` },
        { dir: dir.dir, clock: () => Date.now() + shift },
      );
      try {
        const app = await other.client('hello', 'dated-app');
        await setCertificateAuth(other.admin, { key: app.key }, { method: 'self_signed_tls_client_auth', certificates: [selfSigned.pem] });
        const res = await httpsCall(`${other.url}/oauth2/token`, ca, { method: 'POST', headers: FORM, body: `grant_type=client_credentials&client_id=${app.key}`, cert: selfSigned });
        assert.equal(res.status, 401, when);
        assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' }, when);
      } finally {
        await other.close();
        dir.remove();
      }
    }
  });

  test('revocation takes a certificate-authenticated app; a revoked bound token is refused', async () => {
    const res = await token(pki.key, pkiClient);
    const revoked = await httpsCall(`${gw.url}/oauth2/revoke`, ca, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token: res.body.access_token, client_id: pki.key }).toString(),
      cert: pkiClient,
    });
    assert.equal(revoked.status, 200);
    assert.equal((await backend(res.body.access_token, pkiClient)).status, 401);
  });

  test('the metadata names the certificate methods and bound tokens', async () => {
    const res = await httpsCall(`${gw.url}/.well-known/oauth-authorization-server`, ca);
    assert.deepEqual(res.body.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'tls_client_auth', 'self_signed_tls_client_auth']);
    assert.equal(res.body.tls_client_certificate_bound_access_tokens, true);
  });
});
