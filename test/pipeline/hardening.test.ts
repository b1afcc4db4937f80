// The known ways around a gateway, each named after its class of attack: encoded traversal and
// other path variants, request smuggling, spoofed identity and forwarding headers, Connection
// tricks, and oversized requests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:net';
import { type ConfigError, parseConfig } from '../../src/config/load.ts';
import { IDENTITY_HEADERS } from '../../src/upstream/headers.ts';
import { bearer, call, configYaml, rawExchange as send, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('hardening', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let token: string;

  before(async () => {
    upstream = await startUpstream();
    gw = await startTestGateway({ upstreamUrl: upstream.url, listen: '  maxBodySize: 1000\n' });
    const app = await gw.client('hello', 'hardening');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const request = (method: string, target: string, headers: string[] = [], body = '') =>
    send(gw.url, [`${method} ${target} HTTP/1.1`, 'Host: gw.test', 'Connection: close', `Authorization: Bearer ${token}`, ...headers, '', body].join('\r\n'));

  // encoded-traversal: every variant of /v1/backend/1 either gets the canonical path's decision
  // or a 400, and the upstream receives exactly the path that was authorised.
  const variants: [string, number, string | undefined][] = [
    ['/v1/backend/1', 200, '/v1/backend/1'],
    ['/v1/backend/../backend/1', 400, undefined],
    ['/v1/backend/%2e%2e/backend/1', 400, undefined],
    ['/v1/backend/%2E%2E/backend/1', 400, undefined],
    ['/v1/backend/.%2e/backend/1', 400, undefined],
    ['/v1/backend/./1', 400, undefined],
    ['/v1%2fbackend/1', 400, undefined],
    ['/v1%2Fbackend%2F1', 400, undefined],
    ['/v1//backend/1', 400, undefined],
    ['/v1/backend/1;jsessionid=x', 400, undefined],
    ['/v1/backend/1%00', 400, undefined],
    ['/v1\\backend\\1', 400, undefined],
    ['/v1/backend%5c1', 400, undefined],
    ['/V1/BACKEND/1', 404, undefined],
    ['/v1/backend/1/', 404, undefined],
    // RFC 3986 §6.2.2.2: %31 is "1"; an upstream that decodes it sees another path than was matched.
    ['/v1/backend/%31', 400, undefined],
    ['/v1/backend/1%3A2', 200, '/v1/backend/1%3A2'],
    ['/v1/backend/a%20b%3F', 200, '/v1/backend/a%20b%3F'],
  ];
  for (const [target, status, forwarded] of variants) {
    test(`encoded-traversal: ${target} → ${status}`, async () => {
      const seen = upstream.received.length;
      const answer = await request('GET', target);
      assert.equal(statusOf(answer), status, answer.split('\r\n')[0]);
      if (forwarded === undefined) assert.equal(upstream.received.length, seen, 'the upstream saw nothing');
      else assert.equal(upstream.received.at(-1)?.url, forwarded);
    });
  }

  // smuggling-*: ambiguous framing never reaches the upstream.
  const smuggling: [string, string[], string][] = [
    ['smuggling-cl-te', ['Content-Length: 4', 'Transfer-Encoding: chunked'], '0\r\n\r\n'],
    ['smuggling-te-cl', ['Transfer-Encoding: chunked', 'Content-Length: 4'], '0\r\n\r\n'],
    ['smuggling-two-cl', ['Content-Length: 4', 'Content-Length: 5'], 'abcde'],
    ['smuggling-te-obfuscated-value', ['Transfer-Encoding: xchunked'], '0\r\n\r\n'],
    ['smuggling-te-space-before-colon', ['Transfer-Encoding : chunked'], '0\r\n\r\n'],
    ['smuggling-te-list', ['Transfer-Encoding: chunked, identity'], '0\r\n\r\n'],
    ['smuggling-te-twice', ['Transfer-Encoding: chunked', 'Transfer-Encoding: identity'], '0\r\n\r\n'],
    ['smuggling-cl-sign', ['Content-Length: +4'], 'abcd'],
  ];
  for (const [name, headers, body] of smuggling) {
    test(`${name}: 400, and the upstream sees nothing`, async () => {
      const seen = upstream.received.length;
      const answer = await request('POST', '/v1/echo', headers, body);
      assert.equal(statusOf(answer), 400, answer.split('\r\n')[0]);
      assert.equal(upstream.received.length, seen);
    });
  }

  test("xff-spoof and identity-spoof: what the client sends never reaches the upstream as the gateway's", async () => {
    const answer = await request('GET', '/v1/backend/7', [
      'X-Forwarded-For: 10.0.0.1',
      'X-Forwarded-Proto: https',
      'X-Forwarded-Host: admin.internal',
      'X-Gateway-App: someone-else',
      'X-Gateway-Client-Id: other',
      'X-Gateway-Subject: admin',
      'X_Gateway_Subject: admin',
      'Forwarded: for=10.0.0.1',
      'X-Real-IP: 10.0.0.1',
    ]);
    assert.equal(statusOf(answer), 200);
    const headers = upstream.received.at(-1)!.headers;
    assert.equal(headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(headers['x-forwarded-proto'], 'http');
    assert.equal(headers['x-forwarded-host'], undefined);
    assert.equal(headers['x-gateway-app'], 'hardening');
    assert.equal(headers['x-gateway-subject'], undefined);
    assert.equal(headers.x_gateway_subject, undefined);
    assert.equal(headers.forwarded, undefined);
    assert.equal(headers['x-real-ip'], undefined);
  });

  test('connection-strip: a header named in Connection cannot strip one the gateway adds', async () => {
    const answer = await send(
      gw.url,
      ['GET /v1/backend/8 HTTP/1.1', 'Host: gw.test', `Authorization: Bearer ${token}`, 'Connection: close, x-forwarded-for, x-gateway-app, x-gateway-client-id, authorization', '', ''].join('\r\n'),
    );
    assert.equal(statusOf(answer), 200, 'Authorization named in Connection still authenticates');
    const headers = upstream.received.at(-1)!.headers;
    assert.equal(headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(headers['x-gateway-app'], 'hardening');
    assert.ok(typeof headers['x-gateway-client-id'] === 'string');
    assert.equal(headers.authorization, undefined);
  });

  test('oversize-body: a Content-Length over listen.maxBodySize is 413 at once, and the connection closes', async () => {
    const seen = upstream.received.length;
    const answer = await request('POST', '/v1/echo', ['Content-Type: application/json', 'Content-Length: 5000'], '');
    assert.equal(statusOf(answer), 413);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /"code":"payload_too_large"/);
    assert.equal(upstream.received.length, seen);
    const fits = await call(`${gw.url}/v1/echo`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(900) }) });
    assert.equal(fits.status, 200);
  });

  test('oversize-target: a request target over 8 KiB is 414; a query of more than 100 parameters too', async () => {
    const long = await call(`${gw.url}/v1/hello?q=${'a'.repeat(9000)}`, { headers: bearer(token) });
    assert.equal(long.status, 414);
    assert.equal(long.body.code, 'uri_too_long');
    const many = await call(`${gw.url}/v1/hello?${Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&')}`, { headers: bearer(token) });
    assert.equal(many.status, 414);
    assert.equal(many.body.detail, 'the query has more than 100 parameters');
    const hundred = await call(`${gw.url}/v1/hello?${Array.from({ length: 100 }, (_, i) => `p${i}=1`).join('&')}`, { headers: bearer(token) });
    assert.equal(hundred.status, 200);
  });

  test('oversize-headers: more than 16 KiB of headers is 431', async () => {
    const answer = await request('GET', '/v1/hello', [`X-Big: ${'b'.repeat(17 * 1024)}`]);
    assert.equal(statusOf(answer), 431);
  });
});

// identity-spoof: headers by which a proxy in front names the client or the user it
// authenticated. From a client they are forgeries; an upstream that reads one would believe it.
describe('identity-spoof', () => {
  let upstream: Upstream;
  const gateways: TestGateway[] = [];
  before(async () => {
    upstream = await startUpstream();
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await upstream.close();
  });

  async function forwardedHeaders(listen: string, headers: string[]) {
    const gw = await startTestGateway({ upstreamUrl: upstream.url, listen });
    gateways.push(gw);
    const app = await gw.client('hello', 'identity');
    const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
    const answer = await send(gw.url, ['GET /v1/backend/7 HTTP/1.1', 'Host: evil.example', 'Connection: close', `Authorization: Bearer ${token}`, ...headers, '', ''].join('\r\n'));
    assert.equal(statusOf(answer), 200);
    return upstream.received.at(-1)!.headers;
  }

  test('identity-spoof-headers: none of the documented identity headers reaches the upstream; listen.dropHeaders adds to them', async () => {
    const named = ['True-Client-IP', 'X-Client-IP', 'CF-Connecting-IP', 'Client-IP', 'X-Real-IP', 'Forwarded', 'X-Original-URI', 'X-Original-Method', 'X-Remote-User', 'X-Authenticated-User'];
    // Found by the attack pass: siblings of those, from auth proxies, TLS terminators and load balancers.
    named.push(
      ...['Remote-Groups', 'Remote-Email', 'X-Consumer-Groups', 'X-Consumer-Custom-ID', 'X-Anonymous-Consumer', 'X-Authenticated-Scope', 'X-Authenticated-Groups', 'X-WEBAUTH-USER'],
      ...['X-Auth-Request-User', 'X-Auth-Request-Email', 'X-Auth-Request-Groups', 'X-Auth-Request-Preferred-Username', 'X-Goog-Authenticated-User-Email', 'X-MS-CLIENT-PRINCIPAL-NAME'],
      ...['X-Amzn-Oidc-Identity', 'Cf-Access-Authenticated-User-Email', 'X-Pomerium-Claim-Email', 'X-authentik-username', 'X-Userinfo', 'X-SSL-Client-S-DN', 'Ssl-Client-Verify'],
      ...['X-Client-Cert', 'X-ARR-ClientCert', 'X-Envoy-External-Address', 'X-Original-Forwarded-For', 'X-ProxyUser-Ip', 'Fly-Client-IP', 'X-Azure-ClientIP', 'CloudFront-Viewer-Address'],
      ...[
        'X-Appengine-User-Ip',
        'X-Forwarded',
        'Forwarded-For',
        'X-Scheme',
        'X-Url-Scheme',
        'Front-End-Https',
        'X-Original-Path',
        'X-Request-Uri',
        'X-Script-Name',
        'X-Envoy-Original-Path',
        'X-Method',
      ],
      // …and from its second pass.
      ...['iv-user', 'iv-groups', 'iv-creds', 'iv-remote-address', 'WL-Proxy-Client-IP', 'WL-Proxy-Client-Cert', 'WL-Proxy-SSL', 'Proxy-Client-IP', 'Client-Cert', 'Client-Cert-Chain'],
      ...['Tailscale-User-Login', 'Tailscale-User-Name', 'X-Vouch-User', 'Impersonate-User', 'Impersonate-Group', 'X-MS-TOKEN-AAD-ID-TOKEN', 'Shib-Identity-Provider', 'eppn', 'SMUSER'],
      ...['Teleport-Jwt-Assertion', 'X-Goog-Iap-Jwt-Assertion', 'CF-Connecting-IPv6', 'DO-Connecting-IP', 'Incap-Client-IP', 'X-Sucuri-ClientIP', 'X-Vercel-Forwarded-For'],
      ...['X-Nf-Client-Connection-Ip', 'X-Client-DN', 'X-Client-Verify', 'X-Email', 'X-Username', 'X-Groups', 'X-Jwt-Payload', 'X-HTTP-Host-Override'],
    );
    const all = [...new Set([...named.map((n) => n.toLowerCase()), ...IDENTITY_HEADERS])];
    const headers = await forwardedHeaders('  dropHeaders: [X-Tenant]\n', [...all.map((n) => `${n}: forged`), 'X-Tenant: other', 'X-Kept: yes']);
    for (const name of all) assert.equal(headers[name], undefined, name);
    assert.equal(headers['x-tenant'], undefined);
    assert.equal(headers['x-kept'], 'yes');
  });

  test("identity-spoof-host: X-Forwarded-Host is listen.publicHost, never the client's Host or X-Forwarded-Host", async () => {
    const headers = await forwardedHeaders('  publicHost: api.example.com\n', ['X-Forwarded-Host: admin.internal']);
    assert.equal(headers['x-forwarded-host'], 'api.example.com');
  });

  test('identity-spoof-host: a trusted proxy in front says the host; a malformed value is not taken', async () => {
    const listen = '  trustedProxies: [127.0.0.1]\n  publicHost: api.example.com\n';
    assert.equal((await forwardedHeaders(listen, ['X-Forwarded-Host: shop.example.com:8443']))['x-forwarded-host'], 'shop.example.com:8443');
    assert.equal((await forwardedHeaders(listen, ['X-Forwarded-Host: a.example, b.example']))['x-forwarded-host'], 'api.example.com');
  });
});

// slow-sender: a client that trickles its headers or its body is cut off at the documented limit
// (listen.headersTimeout, listen.requestTimeout), not up to 30 s later when Node happens to look.
describe('slow-sender', () => {
  let gw: TestGateway;
  let token: string;
  before(async () => {
    gw = await startTestGateway({ listen: '  headersTimeout: 1s\n  requestTimeout: 2s\n' });
    const app = await gw.client('hello', 'slow');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(() => gw.close());

  /** Writes `head`, then one more piece every 200 ms until the server ends the connection; resolves to what it answered and after how long. */
  function trickle(head: string, piece: string): Promise<{ answer: string; ms: number }> {
    const { port } = new URL(gw.url);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      let answer = '';
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
      const timer = setInterval(() => socket.writable && socket.write(piece), 200);
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, ms: performance.now() - started });
      });
      socket.on('error', () => {});
      setTimeout(() => {
        clearInterval(timer);
        socket.destroy();
        reject(new Error(`still open after 10 s; answered so far: ${JSON.stringify(answer)}`));
      }, 10_000).unref();
    });
  }

  test('slow-sender-headers: trickled headers get 408 within a second of listen.headersTimeout', async () => {
    const { answer, ms } = await trickle('GET /v1/hello HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n');
    assert.equal(answer, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    assert.ok(ms >= 1_000 && ms < 2_000, `cut off after ${Math.round(ms)} ms`);
  });

  test('slow-sender-body: a trickled body is cut off within a second of listen.requestTimeout', async () => {
    const head = `POST /v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n`;
    const { answer, ms } = await trickle(head, 'x');
    assert.equal(answer, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    assert.ok(ms >= 2_000 && ms < 3_000, `cut off after ${Math.round(ms)} ms`);
  });

  test('slow-sender: a header timeout longer than the request timeout is refused at load, with its line', () => {
    assert.throws(
      () => parseConfig(configYaml({ listen: '  headersTimeout: 2m\n  requestTimeout: 1m\n' }), 'gateway.yaml', { env: {} }),
      (err: ConfigError) => {
        assert.match(err.message, /listen\.headersTimeout: must not be longer than listen\.requestTimeout \(gateway\.yaml:\d+\)/);
        return true;
      },
    );
  });
});

// slow-reader: a client that never reads its answer holds an upstream connection only until the
// request timeout passes without traffic, not for as long as it keeps the socket open.
describe('slow-reader', () => {
  let gw: TestGateway;
  let token: string;
  let upstream: Upstream;
  let upstreamClosed: Promise<void>;
  before(async () => {
    let closed!: () => void;
    upstreamClosed = new Promise((resolve) => (closed = resolve));
    // 64 MiB, written as fast as the gateway takes it.
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const more = () => {
        while (sent < 1024) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => closed());
      more();
    });
    gw = await startTestGateway({ upstreamUrl: upstream.url, listen: '  headersTimeout: 1s\n  requestTimeout: 2s\n' });
    const app = await gw.client('hello', 'reader');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('slow-reader: a client that stops reading is cut off once listen.requestTimeout passes without traffic, and the upstream request ends', { timeout: 20_000 }, async () => {
    const { port } = new URL(gw.url);
    const socket = connect({ port: Number(port), host: '127.0.0.1' });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /v1/backend/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    // Read the first bytes, then never again (a paused socket sees no close either: the gateway's end is what counts).
    const first = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.pause();
    const paused = performance.now();
    assert.match(first.toString('latin1'), /^HTTP\/1\.1 200 /);
    await upstreamClosed;
    const ms = performance.now() - paused;
    socket.destroy();
    // Buffers fill first (a few MiB on loopback), then 2 s without traffic.
    assert.ok(ms >= 2_000 && ms < 10_000, `the upstream request ended after ${Math.round(ms)} ms`);
  });
});
