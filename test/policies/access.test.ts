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

/** An answer's RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers). */
const rateHeaders = (res: { headers: Headers }) => [res.headers.get('ratelimit-policy'), res.headers.get('ratelimit')];

/** The two headers for policies, each [name, q, w, r, t], in order. */
const limited = (...policies: [string, number, number, number, number][]) => [
  policies.map(([name, q, w]) => `"${name}";q=${q};w=${w}`).join(', '),
  policies.map(([name, , , r, t]) => `"${name}";r=${r};t=${t}`).join(', '),
];

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
  test("a proxied answer carries the gateway's RateLimit headers, not the upstream's (of this draft or an older one); so does a 502", async () => {
    const upstream = await startUpstream(
      (_req, res) =>
        void res.writeHead(200, { 'content-type': 'text/plain', 'ratelimit-limit': '999', 'ratelimit-remaining': '998', ratelimit: '"up";r=998;t=1', 'ratelimit-policy': '"up";q=999;w=1' }).end('ok'),
    );
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
      assert.deepEqual(rateHeaders(ok), limited(['product-quota-minute', 3, 60, 2, 30]));
      assert.deepEqual([ok.headers.get('ratelimit-limit'), ok.headers.get('ratelimit-remaining')], [null, null]);
      const down = await get(gw, '/v1/d', token);
      assert.equal(down.status, 502);
      assert.deepEqual(rateHeaders(down), limited(['product-quota-minute', 3, 60, 1, 30]));
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('5 per minute per app: the 6th call is 429 with Retry-After, every answer carries RateLimit-Policy and RateLimit', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: QUOTA_ROUTES, products: `  metered:\n    routes: [q1, q2]\n    quota: { limit: 5, interval: minute }\n` }, clock);
    try {
      const token = await tokenFor(gw, 'metered');
      for (let i = 1; i <= 5; i++) {
        const res = await get(gw, '/v1/q1', token);
        assert.equal(res.status, 200);
        assert.deepEqual(rateHeaders(res), limited(['product-quota-minute', 5, 60, 5 - i, 30]));
      }
      const over = await get(gw, '/v1/q1', token);
      assert.equal(over.status, 429);
      assert.equal(over.headers.get('retry-after'), '30');
      assert.deepEqual(rateHeaders(over), limited(['product-quota-minute', 5, 60, 0, 30]));
      assert.equal(over.headers.get('content-type'), 'application/problem+json');
      assert.deepEqual(over.body, { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'quota of 5 calls per minute exceeded', code: 'quota_exceeded' });
      // Another app has its own count.
      assert.equal((await get(gw, '/v1/q1', await tokenFor(gw, 'metered'))).status, 200);
      // The next calendar minute starts afresh.
      clock.now = T0 + 30_000;
      const next = await get(gw, '/v1/q1', token);
      assert.equal(next.status, 200);
      assert.deepEqual(rateHeaders(next), limited(['product-quota-minute', 5, 60, 4, 60]));
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

  test("a route's quota tightens the product's, and the headers show each, the route's first", async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith({ routes: QUOTA_ROUTES, products: `  metered:\n    routes: [q1, q2]\n    quota: { limit: 5, interval: minute }\n` }, clock);
    try {
      const token = await tokenFor(gw, 'metered');
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q2', token)), limited(['quota-minute', 2, 60, 1, 30], ['product-quota-minute', 5, 60, 4, 30]));
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q2', token)), limited(['quota-minute', 2, 60, 0, 30], ['product-quota-minute', 5, 60, 3, 30]));
      const over = await get(gw, '/v1/q2', token);
      assert.equal(over.status, 429);
      assert.equal(over.body.detail, 'quota of 2 calls per minute exceeded');
      // Refused by the route's quota, the call did not reach the product's.
      assert.deepEqual(rateHeaders(over), limited(['quota-minute', 2, 60, 0, 30]));
      // The product's quota counted the route's two calls, not the one the route's quota refused.
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), limited(['product-quota-minute', 5, 60, 2, 30]));
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), limited(['product-quota-minute', 5, 60, 1, 30]));
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), limited(['product-quota-minute', 5, 60, 0, 30]));
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
      assert.deepEqual(rateHeaders(await get(gw, '/v1/w', token)), limited(['quota-week', 9, 604_800, 8, 60]));
      assert.deepEqual(rateHeaders(await get(gw, '/v1/h', token)), limited(['quota-hour', 9, 3600, 8, 60]));
      clock.now = Date.UTC(2026, 0, 31, 23, 59, 59); // the last second of January, a month of 31 days
      assert.deepEqual(rateHeaders(await get(gw, '/v1/m', await tokenFor(gw, 'cal'))), limited(['quota-month', 9, 31 * 86_400, 8, 1]));
      clock.now = Date.UTC(2026, 1, 1); // February: 28 days
      assert.deepEqual(rateHeaders(await get(gw, '/v1/m', await tokenFor(gw, 'cal'))), limited(['quota-month', 9, 28 * 86_400, 8, 28 * 86_400]));
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
      assert.deepEqual(rateHeaders(await get(gw, '/v1/r', token)), limited(['quota-minute', 2, 60, 1, 30]));
      assert.deepEqual(rateHeaders(await get(gw, '/v1/r', token)), limited(['quota-minute', 2, 60, 0, 30]));
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
      assert.deepEqual(rateHeaders(next), limited(['quota-minute', 2, 60, 0, 30]));
    } finally {
      await gw.close();
    }
  });

  test('rateLimitHeaders: false on a route or a product: no RateLimit headers, the same counting, Retry-After still on the 429', async () => {
    const clock = { now: T0 };
    const quiet = `  q3:\n    method: GET\n    path: /v1/q3\n    upstream: mock\n    rateLimitHeaders: false\n    policies:\n      - quota: { limit: 2, interval: minute }\n      - spikeArrest: { rate: 100ps, burst: 100 }\n`;
    const products = `  metered:\n    routes: [q1, q2, q3]\n    quota: { limit: 5, interval: minute }\n  hushed:\n    routes: [q2]\n    quota: { limit: 5, interval: minute }\n    rateLimitHeaders: false\n`;
    const gw = await gatewayWith({ routes: QUOTA_ROUTES + quiet, products }, clock);
    try {
      const token = await tokenFor(gw, 'metered');
      const answers = [await get(gw, '/v1/q3', token), await get(gw, '/v1/q3', token), await get(gw, '/v1/q3', token)];
      assert.deepEqual(
        answers.map((a) => [a.status, ...rateHeaders(a), a.headers.get('retry-after')]),
        [
          [200, null, null, null],
          [200, null, null, null],
          [429, null, null, '30'],
        ],
      );
      // The route's calls counted in the product's quota as ever; another route shows it.
      assert.deepEqual(rateHeaders(await get(gw, '/v1/q1', token)), limited(['product-quota-minute', 5, 60, 2, 30]));
      // A product that turns them off: none on any of its routes, whatever the route says.
      const hushed = await tokenFor(gw, 'hushed');
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await get(gw, '/v1/q2', hushed);
        statuses.push([res.status, ...rateHeaders(res)]);
      }
      assert.deepEqual(statuses, [
        [200, null, null],
        [200, null, null],
        [429, null, null],
      ]);
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
      assert.deepEqual(rateHeaders(await get(second, '/v1/q1', token)), limited(['product-quota-day', 5, 86_400, 1, 11 * 3600 + 59 * 60 + 30]));
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
      // Two per second, none left at once; the one call that passed is back within the second.
      assert.deepEqual(rateHeaders(answers.find((a) => a.status === 200)!), limited(['spike-2ps', 2, 1, 0, 1]));
      assert.deepEqual(rateHeaders(refused), limited(['spike-2ps', 2, 1, 0, 1]));
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
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await get(gw, '/v1/s', token));
      assert.deepEqual(
        answers.map((a) => [a.status, ...rateHeaders(a)]),
        [
          [200, ...limited(['spike-600pm', 602, 60, 2, 1])],
          [200, ...limited(['spike-600pm', 602, 60, 1, 1])],
          [200, ...limited(['spike-600pm', 602, 60, 0, 1])],
          [429, ...limited(['spike-600pm', 602, 60, 0, 1])],
        ],
      );
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
      const first = await get(gw, '/v1/s', token);
      assert.deepEqual([first.status, ...rateHeaders(first)], [200, ...limited(['spike-100ps', 199, 1, 99, 1], ['spike-1pm', 1, 60, 0, 60])]);
      const second = await get(gw, '/v1/s', token);
      assert.deepEqual([second.status, ...rateHeaders(second)], [429, ...limited(['spike-100ps', 199, 1, 98, 1], ['spike-1pm', 1, 60, 0, 60])]);
    } finally {
      await gw.close();
    }
  });

  test('two spike arrests of the same rate get names of their own in the RateLimit headers', async () => {
    const clock = { now: T0 };
    const gw = await gatewayWith(
      {
        routes: `  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 5ps, burst: 5 }\n      - spikeArrest: { rate: 5ps, key: route }\n`,
        products: `  spiky:\n    routes: [s]\n`,
      },
      clock,
    );
    try {
      const first = await get(gw, '/v1/s', await tokenFor(gw, 'spiky'));
      assert.deepEqual([first.status, ...rateHeaders(first)], [200, ...limited(['spike-5ps', 9, 1, 4, 1], ['spike-5ps-2', 5, 1, 0, 1])]);
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
      assert.deepEqual([first.status, ...rateHeaders(first)], [200, ...limited(['spike-1pm', 1, 60, 0, 60], ['quota-hour', 5, 3600, 4, 3570])]);
      const refused = await get(gw, '/v1/s', token);
      // The quota was not asked: its state is not in the refusal's headers.
      assert.deepEqual([refused.status, refused.body.code, refused.headers.get('retry-after'), ...rateHeaders(refused)], [429, 'spike_arrest', '60', ...limited(['spike-1pm', 1, 60, 0, 60])]);
      clock.now += 61_000;
      const later = await get(gw, '/v1/s', token);
      assert.deepEqual([later.status, ...rateHeaders(later)], [200, ...limited(['spike-1pm', 1, 60, 0, 60], ['quota-hour', 5, 3600, 3, 3509])], 'the refused call was not counted by the quota');
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
      const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      assert.deepEqual([issued.status, ...rateHeaders(issued)], [200, ...limited(['spike-1pm', 1, 60, 0, 60])]);
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), '60');
      assert.deepEqual(rateHeaders(res), limited(['spike-1pm', 1, 60, 0, 60]));
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
