// path-confusion: a target the gateway authorises as one route must reach the upstream as that
// route, whatever parser the upstream uses. The attack that found it: with a token for
// GET /v1/users/{id}/avatar only, `GET /v1/users/42#/avatar` was matched as the avatar route
// ({id} = "42#") and forwarded untouched; the upstream's WHATWG URL dropped "#/avatar" as a
// fragment and served the admin route GET /v1/users/{id}.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import FindMyWay from 'find-my-way';
import { closeServer, listenOn, rawExchange, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
// The JSON of the answer, whether it came with a Content-Length or chunked.
const bodyOf = (answer: string) => /\{.*\}/s.exec(answer.slice(answer.indexOf('\r\n\r\n') + 4))?.[0] ?? '';

// The upstream's own routes, as an application behind the gateway would declare them.
const UPSTREAM_ROUTES: [string, string][] = [
  ['avatar', '/v1/users/:id/avatar'],
  ['files', '/v1/files/:name'],
  ['user', '/v1/users/:id'],
  ['user-admin', '/v1/users/admin'],
  ['files-export', '/v1/files/$export'],
];
// RFC 3986 §3.3: what a path segment may hold, as sent.
const PCHAR_SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+$/;
/** The route a router that decodes the path before it routes (Werkzeug, Django, Go) picks: static segments before parameters. */
function decodingRouter(path: string): string | undefined {
  const segments = path
    .split('/')
    .slice(1)
    .map((s) => decodeURIComponent(s));
  const fits = (route: string) => {
    const parts = route.split('/').slice(1);
    return parts.length === segments.length && parts.every((p, i) => p.startsWith(':') || p === segments[i]);
  };
  const statics = UPSTREAM_ROUTES.filter(([, route]) => !route.includes(':'));
  return (statics.find(([, route]) => fits(route)) ?? UPSTREAM_ROUTES.find(([, route]) => fits(route)))?.[0];
}

interface Forwarded {
  /** The gateway route the request was authorised as: each reaches the upstream on its own port. */
  route: string;
  url: string;
}

describe('path-confusion', () => {
  let gw: TestGateway;
  let token: string;
  const servers: Server[] = [];
  const forwarded: Forwarded[] = [];
  const router = FindMyWay();
  for (const [name, path] of UPSTREAM_ROUTES) router.on('GET', path, () => {}, { name });

  const upstreamFor = async (route: string): Promise<string> => {
    const server = createServer((req, res) => {
      forwarded.push({ route, url: req.url ?? '' });
      const found = router.find('GET', req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ route: (found?.store as { name: string } | undefined)?.name ?? null }));
    });
    servers.push(server);
    return listenOn(server);
  };

  before(async () => {
    const avatar = await upstreamFor('avatar');
    const files = await upstreamFor('files');
    const admin = await upstreamFor('user');
    gw = await startTestGateway({
      upstreams: `  avatar-svc:\n    url: ${avatar}\n  files-svc:\n    url: ${files}\n  admin-svc:\n    url: ${admin}\n`,
      routes: `${[
        '  avatar:\n    method: GET\n    path: /v1/users/{id}/avatar\n    upstream: avatar-svc',
        '  files:\n    method: GET\n    path: /v1/files/{name}\n    upstream: files-svc',
        '  user:\n    method: GET\n    path: /v1/users/{id}\n    upstream: admin-svc\n    scopes: [users:admin]',
        '  user-admin:\n    method: GET\n    path: /v1/users/admin\n    upstream: admin-svc\n    scopes: [users:admin]',
        '  files-export:\n    method: GET\n    path: /v1/files/$export\n    upstream: admin-svc\n    scopes: [users:admin]',
      ].join('\n')}\n`,
      products: '  profiles:\n    routes: [avatar, files]\n  users:\n    routes: [user, user-admin, files-export]\n    scopes: [users:admin]\n',
    });
    const app = await gw.client('profiles', 'profiles-app');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await Promise.all(servers.map(closeServer));
  });

  const get = (target: string) => rawExchange(gw.url, `GET ${target} HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\n\r\n`);

  test('path-confusion-fragment: /v1/users/42#/avatar is 400, and the upstream sees nothing', async () => {
    const seen = forwarded.length;
    const answer = await get('/v1/users/42#/avatar');
    assert.equal(statusOf(answer), 400);
    assert.match(answer, /\r\ncontent-type: application\/problem\+json\r\n/i);
    assert.deepEqual(JSON.parse(bodyOf(answer)), {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'invalid_path',
      detail: 'request path rejected: "#" is not allowed in the path (a fragment is never sent); percent-encode it',
    });
    assert.equal(forwarded.length, seen);
  });

  // Each is a way to have the gateway match the avatar or files route while a common parser
  // routes the same bytes to the admin route, or decodes a parameter into another route's name.
  const refused: [string, string][] = [
    ['/v1/users/42?x=#/avatar', 'fragment in the query'],
    ['/v1/users/%61dmin/avatar', 'escaped unreserved character'],
    ['/v1/files/%2561dmin', 'escaped percent (double decoding)'],
    ['/v1/files/a?q=%FF%FF', 'a query escape that is not UTF-8, which a parser keeps as written'],
    ['/v1/files/%24export', 'escaped "$", which a decoding router reads as the admin route /v1/files/$export'],
    ['/v1/files/a%3Bb', 'escaped ;'],
    ['/v1/files/%EF%BC%8E%EF%BC%8E/admin', 'fullwidth dots, ".." to an upstream that folds Unicode (NFKC)'],
    ['/v1/files/%E2%80%A5', 'two-dot leader, ".." under NFKC'],
    ['/v1/files/a%EF%BC%8Fb', 'fullwidth solidus, "/" under NFKC'],
    ['/v1/files/%EF%BD%81dmin', 'fullwidth "a", "admin" under NFKC'],
    ['/v1/files/%EF%BC%85%32%65', 'fullwidth "%", a second decoding under NFKC'],
    ['/v1/files/..%E2%88%95admin', 'division slash U+2215, "/" under Windows best-fit'],
    ['/v1/files/..%E2%81%84admin', 'fraction slash U+2044, "/" under Windows best-fit'],
    ['/v1/files/..%E2%88%96admin', 'set minus U+2216, "\\" under Windows best-fit'],
    ['/v1/files/..%C2%A5admin', 'yen sign, "\\" under code page 932'],
    ['/v1/files/a%0Ab', 'escaped control'],
    ['/v1/files/a%zz', 'malformed escape'],
    ['/v1/files/a"b', 'quote, which WHATWG URL re-encodes'],
    ['/v1/files/a{b}', 'braces'],
    ['/v1/files/a|b', 'bar'],
    ['/v1/files/a^b', 'caret'],
    ['/v1/files/a`b', 'backtick'],
    ['/v1/files/a\x7fb', 'DEL'],
  ];
  for (const [target, what] of refused) {
    test(`path-confusion: ${JSON.stringify(target)} (${what}) is 400, and the upstream sees nothing`, async () => {
      const seen = forwarded.length;
      const answer = await get(target);
      assert.equal(statusOf(answer), 400, answer.split('\r\n')[0]);
      assert.equal(forwarded.length, seen);
    });
  }

  test('path-confusion: an escaped "@" or ":" that names the same route either way reaches the upstream as sent', async () => {
    const answer = await get('/v1/users/alice%40example.com/avatar');
    assert.equal(statusOf(answer), 200);
    assert.deepEqual(JSON.parse(bodyOf(answer)), { route: 'avatar' });
    assert.deepEqual(forwarded.at(-1), { route: 'avatar', url: '/v1/users/alice%40example.com/avatar' });
    assert.equal(statusOf(await get('/v1/files/urn%3Ax%3Ay')), 200);
  });

  test('path-confusion: an escaped reserved character reaches the upstream as sent, as the route the gateway authorised', async () => {
    const answer = await get('/v1/users/42%3F/avatar');
    assert.equal(statusOf(answer), 200);
    assert.deepEqual(JSON.parse(bodyOf(answer)), { route: 'avatar' });
    assert.deepEqual(forwarded.at(-1), { route: 'avatar', url: '/v1/users/42%3F/avatar' });
  });

  // A part of a target: any ASCII byte, any percent-escape (well-formed or not), or a piece that
  // separates or traverses.
  const piece = fc.oneof(
    { weight: 24, arbitrary: fc.constantFrom(..."abcAZ09-._~!$&'()*+,=:@".split('')) },
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)) },
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 255 }).map((c) => `%${c.toString(16).padStart(2, '0')}`) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((c) => `%${c.toString(16).toUpperCase().padStart(2, '0')}`) },
    { weight: 2, arbitrary: fc.constantFrom('/', '/avatar', '#', '#/avatar', '?', '?a=1', '%', '%g', '.', '..', '/..', '%2e', 'admin', '%2f', '\\', '$export', '%24export', '%24', '%40') },
  );
  const segment = (minLength: number) => fc.array(piece, { minLength, maxLength: 4 }).map((p) => p.join(''));
  const random = fc
    .tuple(fc.constantFrom('/v1/users/', '/v1/users/', '/v1/files/', '/v1/files/', '/v1/users/admin', '/v1/'), segment(1), fc.constantFrom('', '/avatar', '/avatar', '/'), segment(0))
    .map(([prefix, a, mid, b]) => prefix + a + mid + b);
  // The routes' own static segments, each character sent as itself or escaped (either case): the
  // spellings a router that decodes before it routes reads as those routes.
  const spelled = fc
    .tuple(
      fc.constantFrom('/v1/users/', '/v1/files/'),
      fc.constantFrom('admin', '$export', 'avatar'),
      fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 7, maxLength: 7 }),
      fc.constantFrom('', '/avatar'),
    )
    .map(([prefix, word, how, suffix]) => {
      const spell = [...word].map((c, i) => (how[i] === 0 ? c : `%${c.charCodeAt(0).toString(16)[how[i] === 1 ? 'toUpperCase' : 'toLowerCase']()}`)).join('');
      return prefix + spell + suffix;
    });
  const target = fc.oneof({ weight: 3, arbitrary: random }, { weight: 1, arbitrary: spelled });

  test('path-confusion property: every forwarded target routes the same in WHATWG URL, find-my-way and urllib, with pchar-only parameters', async () => {
    const before = forwarded.length;
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        sent++;
        const seen = forwarded.length;
        const answer = await get(t);
        const status = statusOf(answer);
        assert.ok(status === 200 || status === 400 || status === 403 || status === 404, `${JSON.stringify(t)} → ${answer.split('\r\n')[0]}`);
        if (forwarded.length === seen) return;
        const { route, url } = forwarded.at(-1)!;
        assert.equal(status, 200);
        assert.ok(route === 'avatar' || route === 'files', `forwarded as ${route}: ${JSON.stringify(url)}`);
        // The upstream got the target byte for byte (an empty query, a lone '?', is not sent).
        assert.equal(url, t.replace(/\?$/, ''));
        const path = url.split('?')[0]!;
        assert.equal(new URL(url, 'http://upstream.test').pathname, path, `WHATWG URL: ${JSON.stringify(url)}`);
        const found = router.find('GET', url);
        assert.equal((found?.store as { name: string } | undefined)?.name, route, `find-my-way: ${JSON.stringify(url)}`);
        for (const s of path.split('/').slice(1)) {
          assert.match(s, PCHAR_SEGMENT, `segment of ${JSON.stringify(url)}`);
        }
        assert.equal(decodingRouter(path), route, `a decoding router: ${JSON.stringify(url)}`);
        assert.deepEqual(JSON.parse(bodyOf(answer)), { route });
      }),
      { numRuns: 4000, seed: 13 },
    );
    const paths = forwarded.slice(before).map((f) => f.url);
    assert.ok(sent === 4000 && paths.length > 150, `only ${paths.length} of ${sent} targets were forwarded; the generator should reach the routes`);
    // Python's urllib.parse, as Starlette, Django and Flask split a target, in one process.
    const split = JSON.parse(
      execFileSync('python3', ['-c', 'import json,sys,urllib.parse\nprint(json.dumps([urllib.parse.urlsplit(u).path for u in json.load(sys.stdin)]))'], { input: JSON.stringify(paths) }).toString(),
    ) as string[];
    assert.deepEqual(
      split,
      paths.map((u) => u.split('?')[0]),
    );
  });
});
