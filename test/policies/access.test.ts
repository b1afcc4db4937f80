// Quota, spike arrest and IP access lists on protected routes and on the token endpoint.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, test } from 'node:test';
import { bearer, call, configError, startTestGateway, startUpstream, tokenRequest, type ConfigParts, type TestGateway } from '../helpers.ts';

const T0 = Date.UTC(2026, 0, 7, 12, 0, 30); // a Wednesday, 30 s into a minute

interface Clock {
  now: number;
}

async function gatewayWith(parts: ConfigParts, clock?: Clock, dir?: string): Promise<TestGateway> {
  return startTestGateway(parts, { ...(clock ? { clock: () => clock.now } : {}), ...(dir ? { dir } : {}) });
}

async function tokenFor(gw: TestGateway, product: string): Promise<string> {
  const app = await gw.client(product);
  const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 200);
  return res.body.access_token;
}

const get = (gw: TestGateway, path: string, token: string, headers: Record<string, string> = {}) => call(`${gw.url}${path}`, { headers: { ...bearer(token), ...headers } });

const rateHeaders = (res: { headers: Headers }) => [res.headers.get('ratelimit-limit'), res.headers.get('ratelimit-remaining'), res.headers.get('ratelimit-reset')];

const QUOTA_ROUTES = `
  q1:
    method: GET
    path: /v1/q1
    upstream: mock
  q2:
    method: GET
    path: /v1/q2
    upstream: mock
    policies:
      - quota: { limit: 2, interval: minute }
`;

describe('quota', () => {
  test("a proxied answer carries the gateway's RateLimit-*, not the upstream's; so does a 502", async () => {
    const upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain', 'ratelimit-limit': '999', 'ratelimit-remaining': '998' }).end('ok'));
    const clock = { now: T0 };
    const gw = await gatewayWith(
      {
        upstreams: `  up:\n    url: ${upstream.url}\n  down:\n    url: http://127.0.0.1:9\n`,
        routes: `  p:\n    method: GET\n    path: /v1/p\n    upstream: up\n  d:\n    method: GET\n    path: /v1/d\n    upstream: down\n`,
        products: `  proxied:\n    routes: [p, d]\n    quota: { limit: 3, interval: minute }\n`,
      },
      clock,
    );
    try {
      const token = await tokenFor(gw, 'proxied');
      const ok = await get(gw, '/v1/p', token);
      assert.equal(ok.status, 200);
      assert.equal(ok.text, 'ok');
      assert.deepEqual(rateHeaders(ok), ['3', '2', '30']);
      const down = await get(gw, '/v1/d', token);
      assert.equal(down.status, 502);
      assert.deepEqual(rateHeaders(down), ['3', '1', '30']);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('5 per minute per app: the 6th call is 429, every answer carries RateLimit-*', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: QUOTA_ROUTES, products: `  metered:\n    routes: [q1, q2]\n    quota: { limit: 5, interval: minute }\n` }, clock);
    try {
      const token = await tokenFor(gw, 'metered');
      for (let i = 1; i <= 5; i++) {
        const res = await get(gw, '/v1/q1', token);
        assert.equal(res.status, 200);
        assert.deepEqual(rateHeaders(res), ['5', String(5 - i), '30']);
      }
      const over = await get(gw, '/v1/q1', token);
      assert.equal(over.status, 429);
      assert.equal(over.headers.get('retry-after'), '30');
      assert.deepEqual(rateHeaders(over), ['5', '0', '30']);
      assert.equal(over.headers.get('content-type'), 'application/problem+json');
      assert.deepEqual(over.body, { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'quota of 5 calls per minute exceeded', code: 'quota_exceeded' });
      // Another app has its own count.
      assert.equal((await get(gw, '/v1/q1', await tokenFor(gw, 'metered'))).status, 200);
      // The next calendar minute starts afresh.
      clock.now = T0 + 30_000;
      const next = await get(gw, '/v1/q1', token);
      assert.equal(next.status, 200);
      assert.deepEqual(rateHeaders(next), ['5', '4', '60']);
    } finally {
      await gw.close();
    }
  });

  test('exact under concurrency: 30 parallel calls against a limit of 10, exactly 10 pass', async () => {
    const gw = await gatewayWith({ routes: QUOTA_ROUTES, products: `  metered:\n    routes: [q1]\n    quota: { limit: 10, interval: hour }\n` });
    try {
      const token = await tokenFor(gw, 'metered');
      const answers = await Promise.all(Array.from({ length: 30 }, () => get(gw, '/v1/q1', token)));
      assert.equal(answers.filter((a) => a.status === 200).length, 10);
      assert.equal(answers.filter((a) => a.status === 429).length, 20);
    } finally {
      await gw.close();
    }
  });

  test("a route's quota tightens the product's, and the headers show the tightest", async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: QUOTA_ROUTES, products: `  metered:\n    routes: [q1, q2]\n    quota: { limit: 5, interval: minute }\n` }, clock);
    try {
      const token = await tokenFor(gw, 'metered');
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q2', token)), ['2', '1', '30']);
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q2', token)), ['2', '0', '30']);
      const over = await get(gw, '/v1/q2', token);
      assert.equal(over.status, 429);
      assert.equal(over.body.detail, 'quota of 2 calls per minute exceeded');
      // The product's quota counted the route's two calls, not the one the route's quota refused.
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), ['5', '2', '30']);
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), ['5', '1', '30']);
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), ['5', '0', '30']);
      assert.equal((await get(gw, '/v1/q1', token)).status, 429);
    } finally {
      await gw.close();
    }
  });

  test('calendar windows: the hour, the ISO week from Monday and the month, in UTC', async () => {
    const clock = { now: Date.UTC(2026, 0, 11, 23, 59, 0) }; // Sunday 23:59 UTC
    const routes = `  w:\n    method: GET\n    path: /v1/w\n    upstream: mock\n    policies:\n      - quota: { limit: 9, interval: week }\n  m:\n    method: GET\n    path: /v1/m\n    upstream: mock\n    policies:\n      - quota: { limit: 9, interval: month }\n  h:\n    method: GET\n    path: /v1/h\n    upstream: mock\n    policies:\n      - quota: { limit: 9, interval: hour }\n`;
    const gw = await gatewayWith({ routes, products: `  cal:\n    routes: [w, m, h]\n` }, clock);
    try {
      const token = await tokenFor(gw, 'cal');
      assert.equal((await get(gw, '/v1/w', token)).headers.get('ratelimit-reset'), '60');
      assert.equal((await get(gw, '/v1/h', token)).headers.get('ratelimit-reset'), '60');
      clock.now = Date.UTC(2026, 0, 31, 23, 59, 59); // the last second of January
      assert.equal((await get(gw, '/v1/m', await tokenFor(gw, 'cal'))).headers.get('ratelimit-reset'), '1');
    } finally {
      await gw.close();
    }
  });

  test('rolling windows: at most the limit within any interval, estimated from two windows', async () => {
    const clock = { now: T0 }; // 30 s into a minute
    const routes = `  r:\n    method: GET\n    path: /v1/r\n    upstream: mock\n    policies:\n      - quota: { limit: 2, interval: minute, window: rolling }\n`;
    const gw = await gatewayWith({ routes, products: `  roll:\n    routes: [r]\n` }, clock);
    try {
      const token = await tokenFor(gw, 'roll');
      assert.deepEqual(rateHeaders(await get(gw, '/v1/r', token)), ['2', '1', '30']);
      assert.deepEqual(rateHeaders(await get(gw, '/v1/r', token)), ['2', '0', '30']);
      const over = await get(gw, '/v1/r', token);
      assert.equal(over.status, 429);
      assert.equal(over.headers.get('retry-after'), '60', 'a minute after the two calls');
      // A calendar window would open at the full minute; the rolling one still counts the two calls.
      clock.now = T0 + 30_000;
      assert.equal((await get(gw, '/v1/r', token)).status, 429);
      clock.now = T0 + 59_999;
      assert.equal((await get(gw, '/v1/r', token)).status, 429);
      clock.now = T0 + 60_000;
      const next = await get(gw, '/v1/r', token);
      assert.equal(next.status, 200);
      assert.deepEqual(rateHeaders(next), ['2', '0', '30']);
    } finally {
      await gw.close();
    }
  });

  test('counts survive a restart', async () => {
    const clock = { now: T0 };
    const products = `  metered:\n    routes: [q1]\n    quota: { limit: 5, interval: day }\n`;
    const first = await gatewayWith({ routes: QUOTA_ROUTES, products }, clock);
    const dir = first.dir;
    const token = await tokenFor(first, 'metered');
    for (let i = 0; i < 3; i++) assert.equal((await get(first, '/v1/q1', token)).status, 200);
    await first.gateway.close();
    const second = await gatewayWith({ routes: QUOTA_ROUTES, products }, clock, dir);
    try {
      assert.deepEqual(rateHeaders(await get(second, '/v1/q1', token)), ['5', '1', String(11 * 3600 + 59 * 60 + 30)]);
      assert.equal((await get(second, '/v1/q1', token)).status, 200);
      assert.equal((await get(second, '/v1/q1', token)).status, 429);
    } finally {
      await second.close();
      first.logs.length = 0;
      (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('spike arrest', () => {
  const SPIKE_ROUTES = (options: string) => `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - spikeArrest: ${options}\n`;

  test('2ps: ten calls at once, one passes; 500 ms later the next passes', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: SPIKE_ROUTES('{ rate: 2ps }'), products: `  spiky:\n    routes: [s]\n` }, clock);
    try {
      const token = await tokenFor(gw, 'spiky');
      const answers = await Promise.all(Array.from({ length: 10 }, () => get(gw, '/v1/s', token)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 429, 429, 429, 429, 429, 429, 429, 429, 429]);
      const refused = answers.find((a) => a.status === 429)!;
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.deepEqual(refused.body, { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'rate of 2ps exceeded', code: 'spike_arrest' });
      clock.now = T0 + 499;
      assert.equal((await get(gw, '/v1/s', token)).status, 429);
      clock.now = T0 + 500;
      assert.equal((await get(gw, '/v1/s', token)).status, 200);
    } finally {
      await gw.close();
    }
  });

  test('a burst admits that many at once; 600pm is one per 100 ms', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: SPIKE_ROUTES('{ rate: 600pm, burst: 3 }'), products: `  spiky:\n    routes: [s]\n` }, clock);
    try {
      const token = await tokenFor(gw, 'spiky');
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await get(gw, '/v1/s', token)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      clock.now = T0 + 100;
      assert.equal((await get(gw, '/v1/s', token)).status, 200);
      assert.equal((await get(gw, '/v1/s', token)).status, 429);
    } finally {
      await gw.close();
    }
  });

  test('two spike arrests on one route keep separate counts', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith(
      {
        routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 100ps, burst: 100 }\n      - spikeArrest: { rate: 1pm }\n`,
        products: `  spiky:\n    routes: [s]\n`,
      },
      clock,
    );
    try {
      const token = await tokenFor(gw, 'spiky');
      assert.equal((await get(gw, '/v1/s', token)).status, 200);
      assert.equal((await get(gw, '/v1/s', token)).status, 429);
    } finally {
      await gw.close();
    }
  });

  test('a spike arrest and a quota side by side count as one: the quota counts what the arrest lets through, nothing it refuses', async () => {
    const clock = { now: T0 };
    const policies = '    policies:\n      - spikeArrest: { rate: 1pm }\n      - quota: { limit: 5, interval: hour }\n';
    const gw = await gatewayWith({ routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n${policies}`, products: `  spiky:\n    routes: [s]\n` }, clock);
    try {
      const token = await tokenFor(gw, 'spiky');
      const first = await get(gw, '/v1/s', token);
      assert.deepEqual([first.status, first.headers.get('ratelimit-remaining')], [200, '4']);
      const refused = await get(gw, '/v1/s', token);
      assert.deepEqual([refused.status, refused.body.code], [429, 'spike_arrest']);
      clock.now += 61_000;
      const later = await get(gw, '/v1/s', token);
      assert.deepEqual([later.status, later.headers.get('ratelimit-remaining')], [200, '3'], 'the refused call was not counted by the quota');
    } finally {
      await gw.close();
    }
  });

  test('keyed per app by default, per client IP or per route when asked', async () => {
    const clock = { now: T0 };
    const routes = `${SPIKE_ROUTES('{ rate: 1ps }')}  ip:\n    method: GET\n    path: /v1/ip\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 1ps, key: ip }\n`;
    const gw = await gatewayWith({ routes, products: `  spiky:\n    routes: [s, ip]\n` }, clock);
    try {
      const [a, b] = [await tokenFor(gw, 'spiky'), await tokenFor(gw, 'spiky')];
      assert.equal((await get(gw, '/v1/s', a)).status, 200);
      assert.equal((await get(gw, '/v1/s', b)).status, 200, 'another app has its own allowance');
      assert.equal((await get(gw, '/v1/ip', a)).status, 200);
      assert.equal((await get(gw, '/v1/ip', b)).status, 429, 'both apps call from 127.0.0.1');
    } finally {
      await gw.close();
    }
  });
});

function rawGet(host: string, port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('IP access list', () => {
  const IP_ROUTES = `  private:\n    method: GET\n    path: /v1/private\n    upstream: mock\n    policies:\n      - ipAccess: { deny: [127.0.0.1, '::1'] }\n  office:\n    method: GET\n    path: /v1/office\n    upstream: mock\n    policies:\n      - ipAccess: { allow: [10.0.0.0/8] }\n  local:\n    method: GET\n    path: /v1/local\n    upstream: mock\n    policies:\n      - ipAccess: { allow: [127.0.0.0/8, '::1'], deny: [127.0.0.2] }\n  forwarded:\n    method: GET\n    path: /v1/forwarded\n    upstream: backend\n    policies:\n      - ipAccess: { deny: [10.0.0.0/8] }\n`;

  test('deny, allow, and deny before allow; over IPv4, IPv6 and IPv4-mapped IPv6', async () => {
    const gw = await gatewayWith({ host: "'::'", routes: IP_ROUTES, products: `  ips:\n    routes: [private, office, local]\n` });
    try {
      const token = await tokenFor(gw, 'ips');
      const port = Number(new URL(gw.url).port);
      for (const host of ['127.0.0.1', '::1']) {
        const denied = await rawGet(host, port, '/v1/private', bearer(token));
        assert.equal(denied.status, 403, host);
        assert.deepEqual(JSON.parse(denied.body), { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'calls from this address are not allowed', code: 'ip_denied' });
        assert.equal((await rawGet(host, port, '/v1/office', bearer(token))).status, 403, `${host} is not in the allow list`);
        assert.equal((await rawGet(host, port, '/v1/local', bearer(token))).status, 200, `${host} is in the allow list`);
      }
    } finally {
      await gw.close();
    }
  });

  test('xff-spoof: X-Forwarded-For counts only from a trusted proxy, right-most untrusted hop first', async () => {
    const upstream = await startUpstream();
    const trusting = await gatewayWith({ upstreamUrl: upstream.url, routes: IP_ROUTES, listen: '  trustedProxies: [127.0.0.1, 192.168.0.0/16]\n', products: `  ips:\n    routes: [forwarded]\n` });
    const plain = await gatewayWith({ upstreamUrl: upstream.url, routes: IP_ROUTES, products: `  ips:\n    routes: [forwarded]\n` });
    try {
      const t1 = await tokenFor(trusting, 'ips');
      const t2 = await tokenFor(plain, 'ips');
      const xff = (value: string) => ({ 'x-forwarded-for': value });
      // Client 10.1.2.3 behind our proxy 192.168.1.1: denied, whatever it wrote to the left.
      assert.equal((await get(trusting, '/v1/forwarded', t1, xff('6.6.6.6, 10.1.2.3, 192.168.1.1'))).status, 403);
      // A client writing 10.x itself, then reaching our proxy from 6.6.6.6: judged as 6.6.6.6.
      assert.equal((await get(trusting, '/v1/forwarded', t1, xff('10.1.2.3, 6.6.6.6'))).status, 200);
      assert.equal(upstream.received.at(-1)?.headers['x-forwarded-for'], '6.6.6.6');
      // Hops written with a port, or bracketed IPv6, are read as their address.
      assert.equal((await get(trusting, '/v1/forwarded', t1, xff('10.1.2.3:4444'))).status, 403);
      assert.equal((await get(trusting, '/v1/forwarded', t1, xff('[2001:db8::1]:443'))).status, 200);
      assert.equal(upstream.received.at(-1)?.headers['x-forwarded-for'], '2001:db8::1');
      // A hop that is no address makes the client unknown: not the proxy's own address.
      assert.equal((await get(trusting, '/v1/forwarded', t1, xff('6.6.6.6, garbage'))).status, 200);
      assert.equal(upstream.received.at(-1)?.headers['x-forwarded-for'], 'unknown');
      // Without trusted proxies the header is ignored: the peer is 127.0.0.1.
      assert.equal((await get(plain, '/v1/forwarded', t2, xff('10.1.2.3'))).status, 200);
      assert.equal(upstream.received.at(-1)?.headers['x-forwarded-for'], '127.0.0.1');
    } finally {
      await trusting.close();
      await plain.close();
      await upstream.close();
    }
  });

  test('on the token endpoint: 403 in the RFC 6749 error shape, with no-store', async () => {
    const gw = await gatewayWith({ oauth: '  policies:\n    - ipAccess: { deny: [127.0.0.0/8] }\n' });
    try {
      const app = await gw.client('hello');
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.deepEqual(res.body, { error: 'ip_denied', error_description: 'calls from this address are not allowed' });
    } finally {
      await gw.close();
    }
  });

  test('a spike arrest on the token endpoint, per client IP', async () => {
    const gw = await gatewayWith({ oauth: '  policies:\n    - spikeArrest: { rate: 1pm }\n' });
    try {
      const app = await gw.client('hello');
      assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 200);
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), '60');
      assert.deepEqual(res.body, { error: 'spike_arrest', error_description: 'rate of 1pm exceeded' });
    } finally {
      await gw.close();
    }
  });
});

describe('policy configuration errors stop the start with the YAML path and line', () => {
  test('a bad rate string', async () => {
    const message = await configError({
      routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - quota: { limit: 1, interval: day }\n      - spikeArrest: { rate: 30 per second }\n`,
    });
    assert.match(message, /^routes\.s\.policies\[1\]\.spikeArrest\.rate: must be a rate such as 10ps or 600pm, found "30 per second" \(gateway\.yaml:\d+\)$/);
  });

  test('a bad CIDR', async () => {
    const message = await configError({ routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - ipAccess:\n          deny: [10.0.0.0/8, 10.0.0.300/8]\n` });
    assert.match(message, /^routes\.s\.policies\[0\]\.ipAccess\.deny\[1\]: "10\.0\.0\.300\/8" is not an IP address or CIDR range \(gateway\.yaml:\d+\)$/);
  });

  test('an unknown policy and a quota on the token endpoint', async () => {
    assert.match(
      await configError({ routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - rateLimit: { rate: 1ps }\n` }),
      /^routes\.s\.policies\[0\]\.rateLimit: unknown key \(expected one of: quota, spikeArrest, ipAccess, validateRequest, validateResponse, transformResponse, cors\) \(gateway\.yaml:\d+\)$/,
    );
    assert.match(
      await configError({ oauth: '  policies:\n    - quota: { limit: 1, interval: day }\n' }),
      /^oauth\.policies\[0\]\.quota: the token endpoint takes ipAccess, spikeArrest keyed by ip or route, and cors only \(gateway\.yaml:\d+\)$/,
    );
  });
});
