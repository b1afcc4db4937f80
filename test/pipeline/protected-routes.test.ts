// Protected routes: RFC 6750 bearer verification, product and scope checks, and forwarding to
// real http and https upstreams.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, call, rawExchange, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');

function raw(url: string, rawPath: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/`, { path: rawPath, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('protected routes', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let token: string;
  let ordersToken: string;
  before(async () => {
    upstream = await startUpstream();
    gw = await startTestGateway({ upstreamUrl: `${upstream.url}/base` });
    const app = await gw.client('hello', 'routes-app');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
    const orders = await gw.client('orders');
    ordersToken = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, orders)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('a mock target answers with its fixed JSON', async () => {
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(token) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.text, '{"message":"hello"}');
  });

  test('no token: 401 with a bare Bearer challenge', async () => {
    const res = await call(`${gw.url}/v1/hello`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm"');
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(res.body, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'a bearer token is required', code: 'unauthorized' });
  });

  test('a lowercase bearer scheme is accepted', async () => {
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: { authorization: `bearer ${token}` } })).status, 200);
  });

  for (const [name, header] of [
    ['unknown token of the right shape', `Bearer gwat_${'A'.repeat(64)}`],
    ['unknown token of another shape', 'Bearer gwat_AAAA'],
    ['random string', 'Bearer not-a-token'],
  ] as const) {
    test(`${name}: 401 invalid_token`, async () => {
      const res = await call(`${gw.url}/v1/hello`, { headers: { authorization: header } });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_token", error_description="the access token is invalid, expired or revoked"');
      assert.deepEqual(res.body, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'the access token is invalid, expired or revoked', code: 'invalid_token' });
    });
  }

  test('one keep-alive connection: each call is checked against its own token, and a revocation between calls holds', async () => {
    const { Client } = await import('undici');
    const client = new Client(gw.url, { pipelining: 1, connections: 1 } as never);
    const get = async (authorization: string) => {
      const res = await client.request({ method: 'GET', path: '/v1/hello', headers: { authorization } });
      await res.body.text();
      return res.statusCode;
    };
    try {
      const app = await gw.client('hello', 'one-connection');
      const mine = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      // Same length and prefix as a real token, one character off at the end.
      const forged = mine.slice(0, -1) + (mine.endsWith('A') ? 'B' : 'A');
      assert.equal(await get(`Bearer ${mine}`), 200);
      assert.equal(await get(`Bearer ${forged}`), 401);
      assert.equal(await get(`Bearer ${mine}`), 200);
      assert.equal(await get(`Bearer ${token}`), 200, "another app's token on the same connection");
      assert.equal(await get(`Bearer ${mine}`), 200);
      const { revokeKey } = await import('../../src/admin/operations.ts');
      await revokeKey(gw.admin, app.key);
      assert.equal(await get(`Bearer ${mine}`), 401, 'revoked, on the connection that used it');
    } finally {
      await client.close();
    }
  });

  test('bearer-token-in-query: refused with 400, with or without a header', async () => {
    for (const headers of [{}, bearer(token)]) {
      const res = await call(`${gw.url}/v1/hello?access_token=${token}`, { headers });
      assert.equal(res.status, 400);
      assert.equal(res.body.detail, 'the access token must not be sent in the query string');
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_request", error_description="the access token must not be sent in the query string"');
    }
    assert.equal((await call(`${gw.url}/v1/hello?q=access_token`, { headers: bearer(token) })).status, 200, 'the word alone is no parameter');
    assert.equal((await call(`${gw.url}/v1/hello?access%5Ftoken=${token}`, { headers: bearer(token) })).status, 400, 'an encoded name');
  });

  test('bearer-two-headers: two Authorization headers are a 400, whichever comes first', async () => {
    for (const [first, second] of [
      [token, 'gwat_x'],
      ['gwat_x', token],
      [token, token],
    ]) {
      const answer = await rawExchange(gw.url, `GET /v1/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${first}\r\nauthorization: Bearer ${second}\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.match(answer, /more than one Authorization header/);
    }
  });

  test('bearer-header-and-body: a form body carrying access_token besides the header is a 400; other forms pass', async () => {
    const post = (body: string) => call(`${gw.url}/v1/echo`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' }, body });
    const both = await post(`a=1&access_token=${token}`);
    assert.equal(both.status, 400);
    assert.equal(both.body.detail, 'the access token must be sent in one way only, not in the header and the body');
    const plain = await post('a=1&b=2');
    assert.equal(plain.status, 200);
    assert.equal(plain.body.body, 'a=1&b=2', 'the body read for the check reaches the upstream whole');
  });

  // The same check may not depend on how the body is framed or which charset it names.
  test('bearer-header-and-body-chunked: a chunked form body carrying access_token is a 400 too', async () => {
    const body = `a=1&access_token=${token}`;
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const answer = await rawExchange(
      gw.url,
      `POST /v1/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /the access token must be sent in one way only, not in the header and the body/);
  });

  test('bearer-header-and-body-charset: a form body in iso-8859-1, or with the name percent-encoded, is a 400 too', async () => {
    for (const [type, body] of [
      ['application/x-www-form-urlencoded; charset=iso-8859-1', `a=%E9&access_token=${token}`],
      ['Application/X-WWW-Form-Urlencoded;charset="windows-1252"', `access_token=${token}`],
      ['application/x-www-form-urlencoded', `access%5Ftoken=${token}`],
    ]) {
      const res = await call(`${gw.url}/v1/echo`, { method: 'POST', headers: { ...bearer(token), 'content-type': type! }, body: body! });
      assert.equal(res.status, 400, type);
      assert.equal(res.body.detail, 'the access token must be sent in one way only, not in the header and the body');
    }
  });

  test('bearer-header-and-body-unreadable: a form that cannot be looked through is refused, not passed on', async () => {
    const post = (headers: Record<string, string>, body: string | Buffer) =>
      call(`${gw.url}/v1/echo`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    const utf16 = await post({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-16le' }, Buffer.from(`access_token=${token}`, 'utf16le'));
    assert.equal(utf16.status, 415);
    assert.equal(utf16.body.detail, 'a form body in charset utf-16le is not accepted');
    const gzip = await post({ 'content-encoding': 'gzip' }, 'x');
    assert.equal(gzip.status, 415);
    assert.equal(gzip.body.detail, 'a form body must not be compressed');
    const large = `a=${'x'.repeat(64 * 1024)}`;
    const chunkedLarge = await rawExchange(
      gw.url,
      `POST /v1/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${large.length.toString(16)}\r\n${large}\r\n0\r\n\r\n`,
    );
    assert.match(chunkedLarge, /^HTTP\/1\.1 413 /);
    assert.match(chunkedLarge, /a form body on a protected route is limited to 65536 bytes/);
  });

  test('a malformed bearer token: 400 invalid_request', async () => {
    const res = await call(`${gw.url}/v1/hello`, { headers: { authorization: 'Bearer a b' } });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_request", error_description="the bearer token is malformed"');
  });

  test('another scheme is no bearer token: 401 bare challenge', async () => {
    const res = await call(`${gw.url}/v1/hello`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm"');
  });

  test('a token of another product: 403 insufficient_scope', async () => {
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(ordersToken) });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('www-authenticate'), `Bearer realm="test-realm", error="insufficient_scope", error_description="the token's API product does not include this route"`);
    assert.equal(res.body.code, 'insufficient_scope');
  });

  test('an unknown path: 401 without a token, 404 with one', async () => {
    assert.equal((await call(`${gw.url}/v1/nothing`)).status, 401);
    const res = await call(`${gw.url}/v1/nothing`, { headers: bearer(token) });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no route matches this path', code: 'not_found' });
  });

  test('another method on a known path: 405 with Allow, after authentication', async () => {
    assert.equal((await call(`${gw.url}/v1/hello`, { method: 'DELETE' })).status, 401);
    const res = await call(`${gw.url}/v1/hello`, { method: 'DELETE', headers: bearer(token) });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
  });

  for (const rawPath of ['/v1/../v1/hello', '/v1/%2e%2e/hello', '/v1%2fhello', '/v1//hello', '/v1/hello;x=1', '/v1/hello%00', '/v1\\hello']) {
    test(`path ${rawPath}: 400 before anything else`, async () => {
      const res = await raw(gw.url, rawPath, bearer(token));
      assert.equal(res.status, 400);
      assert.equal(JSON.parse(res.body).code, 'invalid_path');
    });
  }

  test('forwarding: path, query, body and headers as the upstream must see them', async () => {
    // node:http rather than fetch, which will not send a Connection header.
    const res = await raw(gw.url, '/v1/backend/42?a=1&b=two', {
      ...bearer(token),
      'x-custom': 'kept',
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-host': 'evil.example',
      'x-gateway-app': 'forged',
      'x-gateway-subject': 'admin',
      forwarded: 'for=6.6.6.6',
      connection: 'x-drop-me',
      'x-drop-me': 'secret',
      x_gateway_subject: 'admin',
      'x-original-url': '/admin',
      'x-http-method-override': 'DELETE',
      expect: '100-continue',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-upstream'], 'yes');
    assert.deepEqual(JSON.parse(res.body), { upstream: true, path: '/base/v1/backend/42?a=1&b=two' });
    const seen = upstream.received.at(-1)!;
    assert.equal(seen.method, 'GET');
    assert.equal(seen.url, '/base/v1/backend/42?a=1&b=two');
    const h = seen.headers;
    assert.equal(h.authorization, undefined);
    assert.equal(h['x-custom'], 'kept');
    assert.equal(h['x-drop-me'], undefined);
    assert.equal(h.forwarded, undefined);
    for (const name of ['x_gateway_subject', 'x-original-url', 'x-http-method-override', 'expect']) assert.equal(h[name], undefined, name);
    assert.equal(h['x-forwarded-for'], '127.0.0.1');
    assert.equal(h['x-forwarded-proto'], 'http');
    assert.equal(h['x-forwarded-host'], undefined, 'no trusted proxy said it, and no listen.publicHost is set');
    assert.equal(h.host, new URL(upstream.url).host);
    assert.equal(h['x-gateway-app'], 'routes-app');
    assert.equal(h['x-gateway-product'], 'hello');
    assert.equal(h['x-gateway-developer'], 'dev@example.com');
    assert.equal(h['x-gateway-scope'], 'hello:read hello:admin');
    assert.equal(h['x-gateway-subject'], undefined);
  });

  test('echo answers with what it received, after the same header rules', async () => {
    const res = await call(`${gw.url}/v1/echo?x=1&x=2`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', 'x-gateway-app': 'forged' },
      body: '{"name":"n"}',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.method, 'POST');
    assert.equal(res.body.path, '/v1/echo');
    assert.deepEqual(res.body.query, { x: ['1', '2'] });
    assert.equal(res.body.body, '{"name":"n"}');
    assert.equal(res.body.headers['x-gateway-app'], 'routes-app');
    assert.equal(res.body.headers.authorization, undefined);
  });
});

describe('upstream failures', () => {
  test('an upstream refusing connections: 502 problem+json', async () => {
    const gw = await startTestGateway({ upstreamUrl: 'http://127.0.0.1:9' });
    try {
      const app = await gw.client('hello');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const res = await call(`${gw.url}/v1/backend/1`, { headers: bearer(token) });
      assert.equal(res.status, 502);
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
      assert.deepEqual(res.body, { type: 'about:blank', title: 'Bad Gateway', status: 502, detail: 'the upstream could not be reached', code: 'upstream_unavailable' });
    } finally {
      await gw.close();
    }
  });

  test('an upstream slower than its timeout (1s): 504 problem+json', async () => {
    const slow = await startUpstream((_req, res) => void setTimeout(() => res.writeHead(200).end('late'), 4000).unref());
    const gw = await startTestGateway({ upstreamUrl: slow.url });
    try {
      const app = await gw.client('hello');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const res = await call(`${gw.url}/v1/backend/1`, { headers: bearer(token) });
      assert.equal(res.status, 504);
      assert.deepEqual(res.body, { type: 'about:blank', title: 'Gateway Timeout', status: 504, detail: 'the upstream did not answer in time', code: 'upstream_timeout' });
    } finally {
      await gw.close();
      await slow.close();
    }
  });

  test('an https upstream with its CA configured; without it, 502', async () => {
    const server = createHttpsServer(
      { cert: readFileSync(path.join(FIXTURES, 'localhost.crt')), key: readFileSync(path.join(FIXTURES, 'localhost.key')) },
      (req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tls: true, path: req.url })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://localhost:${(server.address() as AddressInfo).port}`;
    const gw = await startTestGateway({
      upstreams: `  secure:\n    url: ${url}\n    tls:\n      ca: ${path.join(FIXTURES, 'localhost.crt')}\n  untrusted:\n    url: ${url}\n`,
      routes: `  secure:\n    method: GET\n    path: /v1/secure\n    upstream: secure\n  untrusted:\n    method: GET\n    path: /v1/untrusted\n    upstream: untrusted\n`,
      products: `  tls:\n    routes: [secure, untrusted]\n`,
    });
    try {
      const app = await gw.client('tls');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const ok = await call(`${gw.url}/v1/secure`, { headers: bearer(token) });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, { tls: true, path: '/v1/secure' });
      const bad = await call(`${gw.url}/v1/untrusted`, { headers: bearer(token) });
      assert.equal(bad.status, 502);
      assert.equal(bad.body.code, 'upstream_unavailable');
    } finally {
      await gw.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
