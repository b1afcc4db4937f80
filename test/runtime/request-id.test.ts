// Request ids and trace context end to end: a client's X-Request-Id kept when it is a short
// visible-ASCII value and replaced otherwise, the same id answered, sent upstream and logged;
// traceparent passed through untouched and its trace id logged; the access line's fields; and
// no credential in any log line.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, bearer, call, rawExchange, rawHead, startAuthServer, startTestGateway, startUpstream, tokenRequest, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

interface AccessLine {
  id: string;
  method: string;
  path: string;
  route: string;
  status: number;
  ms: number;
  upstreamMs?: number;
  app?: string;
  product?: string;
  trace?: string;
  error?: string;
  grant?: string;
}

function accessLines(gw: TestGateway): AccessLine[] {
  return gw.logs.map((l) => JSON.parse(l) as AccessLine & { msg: string }).filter((l) => l.msg === 'request');
}

/** The access line of the request answered with `id`; exactly one. */
function accessLine(gw: TestGateway, id: string): AccessLine {
  const lines = accessLines(gw).filter((l) => l.id === id);
  assert.equal(lines.length, 1, `one access line for ${id}: ${JSON.stringify(lines)}`);
  return lines[0]!;
}

describe('request ids', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let access: string;
  before(async () => {
    upstream = await startUpstream((req, res) => {
      // An upstream's own X-Request-Id does not replace the gateway's.
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'from-the-upstream' }).end(JSON.stringify({ path: req.url }));
    });
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    const app = await gw.client('hello');
    access = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('a valid client X-Request-Id is answered, sent upstream and logged unchanged', async () => {
    for (const id of ['req-1', 'a'.repeat(128), '!#$%&*+-.^_`|~:;<=>?@[]{}()/\\"\',0Zz']) {
      const res = await call(`${gw.url}/v1/backend/1`, { headers: { ...bearer(access), 'x-request-id': id } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-request-id'), id);
      assert.equal(upstream.received.at(-1)!.headers['x-request-id'], id);
      const line = accessLine(gw, id);
      assert.equal(line.route, 'backend');
    }
  });

  test('an id the gateway does not keep (too long, empty, a space, a tab, a byte past ASCII, two headers) is replaced by a UUID, which is answered, sent upstream and logged', async () => {
    const fresh = new Set<string>();
    const check = (id: string, what: string) => {
      assert.match(id, UUID, what);
      assert.equal(upstream.received.at(-1)!.headers['x-request-id'], id, what);
      assert.deepEqual(upstream.received.at(-1)!.headers['x-request-id'], id, what);
      assert.equal(accessLine(gw, id).status, 200, what);
      fresh.add(id);
    };
    const tooLong = 'a'.repeat(129);
    const viaFetch = await call(`${gw.url}/v1/backend/1`, { headers: { ...bearer(access), 'x-request-id': tooLong } });
    assert.equal(viaFetch.status, 200);
    check(viaFetch.headers.get('x-request-id')!, 'too long');
    assert.ok(!gw.logs.join('').includes(tooLong));

    const { port } = new URL(gw.url);
    for (const [what, lines] of [
      ['empty', ['X-Request-Id: ']],
      ['a space', ['X-Request-Id: two words']],
      ['a tab', ['X-Request-Id: tab\there']],
      ['a byte past ASCII', ['X-Request-Id: caf\xe9']],
      ['two headers', ['X-Request-Id: first', 'X-Request-Id: second']],
    ] as const) {
      const text = [`GET /v1/backend/2 HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${access}`, ...lines, 'Connection: close', '', ''].join('\r\n');
      const answer = rawHead(await rawExchange(gw.url, text));
      assert.equal(answer.status, 'HTTP/1.1 200 OK', `${what}: ${answer.body}`);
      const ids = answer.headers.get('x-request-id') ?? [];
      assert.equal(ids.length, 1, `${what}: one X-Request-Id answered`);
      check(ids[0]!, what);
    }
    assert.equal(fresh.size, 6, 'a new id each time');
  });

  test('every request without an id gets its own', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await call(`${gw.url}/v1/hello`, { headers: bearer(access) });
      assert.match(res.headers.get('x-request-id')!, UUID);
      ids.add(res.headers.get('x-request-id')!);
    }
    assert.equal(ids.size, 5);
  });

  test('traceparent passes upstream byte for byte; the access line carries its trace id, and none for a malformed one', async () => {
    for (const [header, trace] of [
      [TRACEPARENT, TRACE_ID],
      // A later version may append fields (W3C Trace Context §4.3); the trace id is still read.
      [`cc-${TRACE_ID}-00f067aa0ba902b7-09-what-the-future-holds`, TRACE_ID],
      ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', undefined],
      [`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, undefined],
      [`00-${TRACE_ID}-${'0'.repeat(16)}-01`, undefined],
      [`ff-${TRACE_ID}-00f067aa0ba902b7-01`, undefined],
      [`00-${TRACE_ID}-00f067aa0ba902b7-01-extra`, undefined],
      ['not a traceparent', undefined],
    ] as const) {
      const res = await call(`${gw.url}/v1/backend/3`, { headers: { ...bearer(access), traceparent: header, tracestate: 'vendor=opaque' } });
      assert.equal(res.status, 200);
      const got = upstream.received.at(-1)!.headers;
      assert.equal(got.traceparent, header);
      assert.equal(got.tracestate, 'vendor=opaque');
      assert.equal(accessLine(gw, res.headers.get('x-request-id')!).trace, trace, header);
    }
  });

  test('the access line of a proxied call: id, method, path (no query), route, product, app, status, ms and upstreamMs', async () => {
    const res = await call(`${gw.url}/v1/backend/4?secret=query`, { headers: { ...bearer(access), 'x-request-id': 'line-1', traceparent: TRACEPARENT } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-request-id'), 'line-1');
    const line = accessLine(gw, 'line-1') as AccessLine & Record<string, unknown>;
    assert.deepEqual(Object.keys(line).sort(), ['app', 'id', 'level', 'method', 'ms', 'msg', 'path', 'product', 'route', 'status', 'time', 'trace', 'upstreamMs']);
    assert.deepEqual(
      { id: line.id, method: line.method, path: line.path, route: line.route, status: line.status, product: line.product, app: line.app, trace: line.trace },
      { id: 'line-1', method: 'GET', path: '/v1/backend/4', route: 'backend', status: 200, product: 'hello', app: 'app-1', trace: TRACE_ID },
    );
    assert.ok(typeof line.ms === 'number' && line.ms >= 0);
    assert.ok(typeof line.upstreamMs === 'number' && line.upstreamMs >= 0 && line.upstreamMs <= line.ms);
  });

  test('problem answers (401, 404, 405, 413, 429, 501) carry the request id; the token endpoint and metadata answers too', async () => {
    const expectId = async (what: string, res: Promise<{ status: number; headers: Headers }>, status: number) => {
      const answer = await res;
      assert.equal(answer.status, status, what);
      assert.match(answer.headers.get('x-request-id') ?? '', UUID, what);
      assert.equal(accessLine(gw, answer.headers.get('x-request-id')!).status, status, what);
    };
    await expectId('401 no token', call(`${gw.url}/v1/hello`), 401);
    await expectId('401 bad token', call(`${gw.url}/v1/hello`, { headers: bearer('gwat_nope') }), 401);
    await expectId('404', call(`${gw.url}/v1/none`, { headers: bearer(access) }), 404);
    await expectId('405', call(`${gw.url}/v1/hello`, { method: 'PUT', headers: bearer(access) }), 405);
    await expectId('413', call(`${gw.url}/v1/echo`, { method: 'POST', headers: bearer(access), body: 'x'.repeat(11 * 1024 * 1024) }), 413);
    await expectId('token 200', tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('hello')), 200);
    await expectId('token 400', tokenRequest(gw.url, { grant_type: 'implicit' }, await gw.client('hello')), 400);
    await expectId('token 401', tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: 'nobody', secret: 'nothing' }), 401);
    await expectId('token 405', call(`${gw.url}/oauth2/token`), 405);
    await expectId('revoke 200', tokenRequest(gw.url, { token: 'gwat_unknown' }, await gw.client('hello'), '/oauth2/revoke'), 200);
    // A given id comes back on the OAuth answers too.
    const given = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: 'nobody', secret: 'nothing' });
    assert.match(given.headers.get('x-request-id')!, UUID);
    const kept = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'x-request-id': 'oauth-1', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    assert.deepEqual([kept.status, kept.headers.get('x-request-id')], [401, 'oauth-1']);
    const raw = rawHead(await rawExchange(gw.url, `POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\nX-Request-Id: coding-1\r\nConnection: close\r\n\r\n0\r\n\r\n`));
    assert.deepEqual([raw.status, raw.headers.get('x-request-id')], ['HTTP/1.1 501 Not Implemented', ['coding-1']]);
  });

  test('a quota refusal (429) carries the request id beside its RateLimit headers', async () => {
    const limited = await startTestGateway({
      routes: '  limited:\n    method: GET\n    path: /v1/limited\n    upstream: mock\n    policies:\n      - quota: { limit: 1, interval: hour }\n',
      products: '  limited:\n    routes: [limited]\n',
    });
    try {
      const app = await limited.client('limited');
      const token = (await tokenRequest(limited.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      const first = await call(`${limited.url}/v1/limited`, { headers: { ...bearer(token), 'x-request-id': 'quota-1' } });
      assert.deepEqual([first.status, first.headers.get('x-request-id'), first.headers.get('ratelimit-policy')], [200, 'quota-1', '"quota-hour";q=1;w=3600']);
      assert.match(first.headers.get('ratelimit') ?? '', /^"quota-hour";r=0;t=\d+$/);
      const over = await call(`${limited.url}/v1/limited`, { headers: { ...bearer(token), 'x-request-id': 'quota-2' } });
      assert.deepEqual([over.status, over.headers.get('x-request-id'), over.headers.get('ratelimit-policy')], [429, 'quota-2', '"quota-hour";q=1;w=3600']);
      assert.match(over.headers.get('ratelimit') ?? '', /^"quota-hour";r=0;t=\d+$/);
      assert.match(over.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(over.body.code, 'quota_exceeded');
      assert.equal(accessLine(limited, 'quota-2').error, 'quota_exceeded');
    } finally {
      await limited.close();
    }
  });
});

describe('metadata answers', () => {
  test('the metadata document and its 405 carry the request id', async () => {
    const gw = await startTestGateway({ oauth: '  issuer: http://127.0.0.1\n' });
    try {
      const doc = await call(`${gw.url}/.well-known/oauth-authorization-server`, { headers: { 'x-request-id': 'meta-1' } });
      assert.deepEqual([doc.status, doc.headers.get('x-request-id'), doc.body.issuer], [200, 'meta-1', 'http://127.0.0.1']);
      const refused = await call(`${gw.url}/.well-known/oauth-authorization-server`, { method: 'POST', headers: { 'x-request-id': 'meta-2' } });
      assert.deepEqual([refused.status, refused.headers.get('x-request-id'), refused.headers.get('allow')], [405, 'meta-2', 'GET, HEAD']);
      assert.equal(accessLine(gw, 'meta-1').route, '/.well-known/oauth-authorization-server');
      assert.equal(accessLine(gw, 'meta-2').status, 405);
    } finally {
      await gw.close();
    }
  });
});

describe('no credential in any log line', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'alice-password-Pw9', sub: 'user-1' } });
    upstream = await startUpstream();
    gw = await startTestGateway({
      authServerUrl: auth.url,
      upstreamUrl: upstream.url,
      oauth: '  introspection:\n    clients: [{ id: backend, secret: introspection-secret-0123 }]\n',
    });
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await upstream.close();
  });

  test('secrets, passwords, access and refresh tokens and Authorization headers, on success and on every failure, never reach the log', async () => {
    const secrets: string[] = ['alice-password-Pw9', 'introspection-secret-0123', 'wrong-secret-Zq1', 'query-secret-Xy7'];
    const hello = await gw.client('hello');
    const orders = await gw.client('orders');
    secrets.push(hello.secret, orders.secret, basic(hello.key, hello.secret).slice(6), basic(orders.key, orders.secret).slice(6));

    // client_secret_basic and client_secret_post
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, hello);
    assert.equal(issued.status, 200);
    const posted = await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: hello.key, client_secret: hello.secret });
    assert.equal(posted.status, 200);
    const password = await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'alice-password-Pw9' }, orders);
    assert.equal(password.status, 200, password.text);
    const refreshed = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: password.body.refresh_token }, orders);
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal((await call(`${gw.url}/v1/orders`, { headers: bearer(refreshed.body.access_token) })).status, 200);
    secrets.push(issued.body.access_token, posted.body.access_token, password.body.access_token, password.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token);

    // Failures that carry credentials: a wrong secret, a reused refresh token, a wrong password,
    // credentials in the query string, both ways of authenticating at once, a malformed Basic header.
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: hello.key, client_secret: 'wrong-secret-Zq1' })).status, 401);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: password.body.refresh_token }, orders)).status, 401);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wrong-secret-Zq1' }, orders)).status, 401);
    assert.equal((await call(`${gw.url}/oauth2/token?client_secret=query-secret-Xy7`, { method: 'POST' })).status, 400);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: hello.key, client_secret: hello.secret }, hello)).status, 400);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    assert.equal((await call(`${gw.url}/oauth2/token`, { method: 'POST', headers: { ...form, authorization: 'Basic wrong-secret-Zq1' }, body: 'grant_type=client_credentials' })).status, 401);

    // Routes: a good token, a revoked one, one in the query, a secret in a forwarded query.
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/hello?access_token=${posted.body.access_token}`)).status, 400);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: { authorization: 'Bearer wrong-secret-Zq1' } })).status, 401);
    assert.equal((await call(`${gw.url}/v1/backend/x?q=query-secret-Xy7`, { headers: bearer(issued.body.access_token) })).status, 200);

    // Introspection and revocation carry tokens in their forms.
    const introspected = await tokenRequest(gw.url, { token: issued.body.access_token }, { key: 'backend', secret: 'introspection-secret-0123' }, '/oauth2/introspect');
    assert.deepEqual([introspected.status, introspected.body.active], [200, true]);
    assert.equal((await tokenRequest(gw.url, { token: posted.body.access_token }, hello, '/oauth2/revoke')).status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(posted.body.access_token) })).status, 401);

    assert.deepEqual(
      upstream.received.map((r) => r.url),
      ['/v1/orders', '/v1/backend/x?q=query-secret-Xy7'],
    );
    assert.equal(auth.calls.length, 2);
    const log = gw.logs.join('');
    assert.ok(accessLines(gw).length >= 18, 'the calls were logged');
    for (const secret of secrets) assert.ok(!log.includes(secret), `the log holds a credential: ${secret}`);
    assert.ok(!/"authorization"/i.test(log), 'no Authorization header in the log');
    assert.ok(!/gw(at|rt)_[A-Za-z0-9_-]{16}/.test(log), 'no token of the gateway in the log');
  });
});

describe('upstreamMs of an answer a response policy holds', () => {
  test('it runs to the end of the body, not to the headers', async () => {
    const BODY_DELAY_MS = 300;
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kept":1,');
      res.flushHeaders();
      setTimeout(() => res.end('"secret":2}'), BODY_DELAY_MS);
    });
    const gw = await startTestGateway({
      upstreams: `  slowbody:\n    url: ${upstream.url}\n`,
      routes: '  held:\n    method: GET\n    path: /v1/held\n    upstream: slowbody\n    policies:\n      - transformResponse: { body: { remove: [/secret] } }\n',
      products: '  held:\n    routes: [held]\n',
    });
    try {
      const app = await gw.client('held');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      const res = await call(`${gw.url}/v1/held`, { headers: { ...bearer(token), 'x-request-id': 'held-1' } });
      assert.deepEqual([res.status, res.body], [200, { kept: 1 }]);
      const line = accessLine(gw, 'held-1');
      // A bound, not a timing: the gateway cannot have the whole body before the upstream sends its end.
      assert.ok(line.upstreamMs! >= BODY_DELAY_MS, `upstreamMs ${line.upstreamMs}`);
      assert.ok(line.upstreamMs! <= line.ms);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
