// Mutual TLS behind a proxy that ends TLS (RFC 8705 §2 and §3 with listen.clientCertificateHeader):
// the client certificate is what nginx's $ssl_client_escaped_cert or Envoy's
// X-Forwarded-Client-Cert says, believed only on connections from listen.trustedProxies (here
// 127.0.0.2, the "proxy"; 127.0.0.1 is anyone else), and never forwarded upstream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setCertificateAuth } from '../../src/admin/app-certificates.ts';
import { rawExchange, rawHead, startTestGateway, startUpstream, tempDir, type TestGateway, type Upstream } from '../helpers.ts';
import { exchange, makeCertificates, type Exchange, type Pair } from './mtls-certificates.ts';

const PROXY = '127.0.0.2';
const OTHER_CERTIFICATE = 'Bearer realm="test-realm", error="invalid_token", error_description="this access token is bound to a client certificate the request did not present"';

/** One request from `from` (a loopback address of this machine). */
function send(url: string, from: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Exchange> {
  return exchange(url, { method: init.method ?? 'GET', ...(init.headers === undefined ? {} : { headers: init.headers }), localAddress: from }, init.body);
}

const nginx = (c: Pair) => encodeURIComponent(c.pem);
const envoy = (c: Pair) => `By=spiffe://gateway.example.com;Hash=${Buffer.from(c.thumbprint, 'base64url').toString('hex')};Cert="${encodeURIComponent(c.pem)}";Subject="CN=app"`;

for (const format of ['nginx', 'envoy'] as const) {
  const header = format === 'nginx' ? 'X-SSL-Client-Cert' : 'X-Forwarded-Client-Cert';
  const value = format === 'nginx' ? nginx : envoy;

  describe(`mutual TLS behind a proxy (${format}: ${header})`, () => {
    const temp = tempDir();
    let gw: TestGateway;
    let upstream: Upstream;
    let client: Pair;
    let other: Pair;
    let app: { key: string; secret: string };

    before(async () => {
      const certs = makeCertificates(temp.dir);
      client = certs.selfSigned('client', '/CN=app behind the proxy');
      other = certs.selfSigned('other', '/CN=someone else');
      upstream = await startUpstream();
      gw = await startTestGateway({ upstreamUrl: upstream.url, listen: `  trustedProxies: [${PROXY}]\n  clientCertificateHeader:\n    name: ${header}\n    format: ${format}` }, { dir: temp.dir });
      app = await gw.client('hello', 'proxied-app');
      await setCertificateAuth(gw.admin, { key: app.key }, { method: 'self_signed_tls_client_auth', certificates: [client.pem] });
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
      temp.remove();
    });

    const token = (from: string, cert?: string) =>
      send(`${gw.url}/oauth2/token`, from, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cert === undefined ? {} : { [header]: cert }) },
        body: `grant_type=client_credentials&client_id=${app.key}`,
      });
    const backend = (from: string, accessToken: string, cert?: string) =>
      send(`${gw.url}/v1/backend/1`, from, { headers: { authorization: `Bearer ${accessToken}`, ...(cert === undefined ? {} : { [header]: cert }) } });

    test("from the trusted proxy, its header's certificate authenticates the app and binds the token; the upstream never sees the header", async () => {
      const res = await token(PROXY, value(client));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const since = upstream.received.length;
      const ok = await backend(PROXY, res.body.access_token, value(client));
      assert.equal(ok.status, 200);
      const got = upstream.received[since]!;
      assert.equal(got.headers[header.toLowerCase()], undefined);
      assert.equal(got.headers['x-gateway-token-binding'], 'mtls');
      const otherCert = await backend(PROXY, res.body.access_token, value(other));
      assert.equal(otherCert.status, 401);
      assert.equal(otherCert.headers['www-authenticate'], OTHER_CERTIFICATE);
      const none = await backend(PROXY, res.body.access_token);
      assert.equal(none.status, 401);
    });

    test('from anyone else, the header is not believed: no client authentication by it, no bound call with it', async () => {
      const refused = await token('127.0.0.1', value(client));
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, { error: 'invalid_client', error_description: 'client authentication failed' });
      const bound = (await token(PROXY, value(client))).body.access_token as string;
      const since = upstream.received.length;
      const res = await backend('127.0.0.1', bound, value(client));
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], OTHER_CERTIFICATE);
      assert.equal(upstream.received.length, since);
    });

    test('an unbound call keeps the header from the upstream too, whoever sent it', async () => {
      const plain = await gw.client('hello', 'plain-app');
      const tokenRes = await send(`${gw.url}/oauth2/token`, '127.0.0.1', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${plain.key}:${plain.secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      const since = upstream.received.length;
      for (const from of ['127.0.0.1', PROXY]) {
        const res = await backend(from, tokenRes.body.access_token, value(other));
        // From the proxy, the token is unbound: a certificate beside it changes nothing.
        assert.equal(res.status, 200, from);
      }
      assert.deepEqual(
        upstream.received.slice(since).map((r) => r.headers[header.toLowerCase()]),
        [undefined, undefined],
      );
    });

    test('a header that is not one certificate is no certificate', async () => {
      const garbage =
        format === 'nginx'
          ? ['%E0%A4%A', 'not a certificate', encodeURIComponent('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')]
          : [`${envoy(client)},${envoy(other)}`, 'Hash=abc', `Cert="${encodeURIComponent(client.pem)}";Cert="${encodeURIComponent(client.pem)}"`];
      for (const g of garbage) {
        const res = await token(PROXY, g);
        assert.equal(res.status, 401, g);
        assert.equal(res.body.error, 'invalid_client', g);
      }
    });

    test('a header sent twice is no certificate, even if the first is the registered one', async () => {
      const answer = await rawExchange(
        gw.url,
        [
          'POST /oauth2/token HTTP/1.1',
          `Host: 127.0.0.1:${new URL(gw.url).port}`,
          'Content-Type: application/x-www-form-urlencoded',
          `${header}: ${value(client)}`,
          `${header}: ${value(other)}`,
          `Content-Length: ${`grant_type=client_credentials&client_id=${app.key}`.length}`,
          'Connection: close',
          '',
          `grant_type=client_credentials&client_id=${app.key}`,
        ].join('\r\n'),
        PROXY,
      );
      assert.equal(rawHead(answer).status, 'HTTP/1.1 401 Unauthorized');
    });
  });
}

test("nginx's older $ssl_client_cert (PEM, every line but the first indented by a tab) reads too", async () => {
  const temp = tempDir();
  const certs = makeCertificates(temp.dir);
  const client = certs.selfSigned('client', '/CN=tabbed');
  const gw = await startTestGateway({ listen: `  trustedProxies: [${PROXY}]\n  clientCertificateHeader:\n    name: X-SSL-Client-Cert\n    format: nginx` }, { dir: temp.dir });
  try {
    const app = await gw.client('hello');
    await setCertificateAuth(gw.admin, { key: app.key }, { method: 'self_signed_tls_client_auth', certificates: [client.pem] });
    // A header value cannot hold a newline; nginx's variable folds the PEM onto tab-led lines, which its proxy_set_header sends as is.
    const tabbed = client.pem.trim().split('\n').join('\t');
    const res = await send(`${gw.url}/oauth2/token`, PROXY, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-ssl-client-cert': tabbed },
      body: `grant_type=client_credentials&client_id=${app.key}`,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  } finally {
    await gw.close();
    temp.remove();
  }
});
