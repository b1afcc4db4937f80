// The CORS policy (Fetch §3.2): preflights answered by the gateway, exact origins, the headers
// on every answer of a route (its errors included), and the token endpoint from a browser origin.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bearer,
  call,
  configError,
  configYaml,
  rawExchange,
  rawHead,
  startTestGateway,
  startUpstream,
  tokenRequest,
  type Answer,
  type ConfigParts,
  type TestGateway,
  type Upstream,
} from '../helpers.ts';

const APP = 'https://app.example.com';

async function tokenFor(gw: TestGateway, product: string): Promise<string> {
  const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client(product));
  assert.equal(res.status, 200);
  return res.body.access_token;
}

/** The CORS headers of an answer, and Vary, by name; absent ones left out. */
function corsHeaders(res: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of res.headers) if (name.startsWith('access-control-') || name === 'vary') out[name] = value;
  return out;
}

function preflight(url: string, origin: string, method: string, requestHeaders?: string): Promise<Answer> {
  return call(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, ...(requestHeaders === undefined ? {} : { 'access-control-request-headers': requestHeaders }) },
  });
}

const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

/** A gateway whose `cors` route proxies to a real upstream; `policy` is the YAML of its cors options. */
async function corsGateway(policy: string, upstream: Upstream, more: ConfigParts = {}): Promise<TestGateway> {
  return startTestGateway({
    upstreams: `  api:\n    url: ${upstream.url}\n`,
    routes: `  cors:\n    method: GET\n    path: /v1/cors/{id}\n    upstream: api\n    policies:\n      - cors: ${policy}\n      - quota: { limit: 1, interval: day }\n${more.routes ?? ''}`,
    products: `  web:\n    routes: [cors]\n${more.products ?? ''}`,
  });
}

const LISTED = `{ origins: ['${APP}', 'HTTPS://Admin.Example.com:443', 'http://localhost:5173'], headers: [Authorization, Content-Type, X-Trace], exposeHeaders: [X-Request-Id, RateLimit], maxAge: 300 }`;

describe('cors on a route', () => {
  test('a preflight is answered 204 by the gateway: no token, no upstream, no quota used', async () => {
    const upstream = await startUpstream();
    const gw = await corsGateway(LISTED, upstream);
    try {
      const res = await preflight(`${gw.url}/v1/cors/7`, APP, 'GET', 'authorization,x-trace');
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      assert.deepEqual(corsHeaders(res), {
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Trace',
        'access-control-max-age': '300',
        vary: PREFLIGHT_VARY,
      });
      // An origin listed with an upper-case host and its default port matches as browsers send it.
      const admin = await preflight(`${gw.url}/v1/cors/7`, 'https://admin.example.com', 'GET');
      assert.equal(admin.status, 204);
      assert.equal(admin.headers.get('access-control-allow-origin'), 'https://admin.example.com');
      assert.equal(upstream.received.length, 0);
      // The quota of one call a day is untouched by the preflights.
      const token = await tokenFor(gw, 'web');
      const ok = await call(`${gw.url}/v1/cors/7`, { headers: { ...bearer(token), origin: APP } });
      assert.equal(ok.status, 200);
      assert.equal(upstream.received.length, 1);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('a preflight from an unlisted origin, or for a header not allowed, is 403 without Access-Control-Allow-*', async () => {
    const upstream = await startUpstream();
    const gw = await corsGateway(LISTED, upstream);
    try {
      for (const origin of ['https://evil.example.com', 'https://app.example.com:8443', 'http://app.example.com', 'null']) {
        const res = await preflight(`${gw.url}/v1/cors/7`, origin, 'GET');
        assert.equal(res.status, 403, origin);
        assert.deepEqual(corsHeaders(res), { vary: PREFLIGHT_VARY });
        assert.deepEqual(res.body, { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'this origin may not call this resource from a browser', code: 'cors_rejected' });
      }
      const header = await preflight(`${gw.url}/v1/cors/7`, APP, 'GET', 'authorization,x-secret');
      assert.equal(header.status, 403);
      assert.deepEqual(corsHeaders(header), { vary: PREFLIGHT_VARY });
      assert.equal(header.body.detail, 'a requested header may not be sent from another origin');
      // A method the path has no route for: no CORS policy covers it, so it is what any OPTIONS was.
      const method = await preflight(`${gw.url}/v1/cors/7`, APP, 'DELETE');
      assert.equal(method.status, 401);
      assert.deepEqual(corsHeaders(method), {});
      assert.equal(upstream.received.length, 0);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('an allowed origin reads every answer: 200, 401 without a token, 429, 502; the upstream cannot widen the policy', async () => {
    const upstream = await startUpstream(
      (_req, res) =>
        void res
          .writeHead(200, {
            'content-type': 'application/json',
            vary: 'Accept-Encoding',
            'access-control-allow-origin': '*',
            'access-control-allow-credentials': 'true',
            'access-control-expose-headers': 'X-Internal',
          })
          .end('{"ok":true}'),
    );
    const gw = await corsGateway(LISTED, upstream, {
      routes: `  down:\n    method: GET\n    path: /v1/down\n    upstream: backend\n    policies:\n      - cors: { origins: ['${APP}'] }\n`,
      products: `  down:\n    routes: [down]\n`,
    });
    try {
      const allowed = { 'access-control-allow-origin': APP, 'access-control-expose-headers': 'X-Request-Id, RateLimit' };
      const token = await tokenFor(gw, 'web');
      const ok = await call(`${gw.url}/v1/cors/1`, { headers: { ...bearer(token), origin: APP } });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, { ok: true });
      assert.deepEqual(corsHeaders(ok), { ...allowed, vary: 'Accept-Encoding, Origin' });

      const noToken = await call(`${gw.url}/v1/cors/1`, { headers: { origin: APP } });
      assert.equal(noToken.status, 401);
      assert.deepEqual(corsHeaders(noToken), { ...allowed, vary: 'Origin' });
      assert.equal(noToken.headers.get('www-authenticate'), 'Bearer realm="test-realm"');

      const badToken = await call(`${gw.url}/v1/cors/1`, { headers: { ...bearer('nope'), origin: APP } });
      assert.equal(badToken.status, 401);
      assert.deepEqual(corsHeaders(badToken), { ...allowed, vary: 'Origin' });

      const over = await call(`${gw.url}/v1/cors/1`, { headers: { ...bearer(token), origin: APP } });
      assert.equal(over.status, 429);
      assert.equal(over.body.code, 'quota_exceeded');
      assert.deepEqual(corsHeaders(over), { ...allowed, vary: 'Origin' });
      assert.match(over.headers.get('ratelimit') ?? '', /;r=0;/);

      const down = await call(`${gw.url}/v1/down`, { headers: { ...bearer(await tokenFor(gw, 'down')), origin: APP } });
      assert.equal(down.status, 502);
      assert.deepEqual(corsHeaders(down), { 'access-control-allow-origin': APP, vary: 'Origin' });

      // An unlisted origin, and a call without one, get no CORS headers: not even the upstream's.
      const other = await call(`${gw.url}/v1/cors/2`, { headers: { ...bearer(await tokenFor(gw, 'web')), origin: 'https://evil.example.com' } });
      assert.equal(other.status, 200);
      assert.deepEqual(corsHeaders(other), { vary: 'Accept-Encoding, Origin' });
      const none = await call(`${gw.url}/v1/cors/3`, { headers: bearer(await tokenFor(gw, 'web')) });
      assert.equal(none.status, 200);
      assert.deepEqual(corsHeaders(none), { vary: 'Accept-Encoding, Origin' });
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('"*" without credentials answers * to every caller, without Vary: Origin (Fetch §3.2.5)', async () => {
    const upstream = await startUpstream();
    const gw = await corsGateway(`{ origins: ['*'], exposeHeaders: [X-Upstream] }`, upstream);
    try {
      const res = await preflight(`${gw.url}/v1/cors/1`, 'https://anyone.example', 'GET', 'authorization');
      assert.equal(res.status, 204);
      assert.deepEqual(corsHeaders(res), {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
        vary: PREFLIGHT_VARY,
      });
      const ok = await call(`${gw.url}/v1/cors/1`, { headers: { ...bearer(await tokenFor(gw, 'web')), origin: 'https://anyone.example' } });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, { upstream: true, path: '/v1/cors/1' });
      assert.deepEqual(corsHeaders(ok), { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'X-Upstream' });
      const denied = await call(`${gw.url}/v1/cors/1`);
      assert.equal(denied.status, 401);
      assert.deepEqual(corsHeaders(denied), { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'X-Upstream' });
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('credentials: true allows them on the preflight and the answers', async () => {
    const upstream = await startUpstream();
    const gw = await corsGateway(`{ origins: ['${APP}'], credentials: true }`, upstream);
    try {
      const res = await preflight(`${gw.url}/v1/cors/1`, APP, 'GET');
      assert.equal(res.status, 204);
      assert.deepEqual(corsHeaders(res), {
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
        vary: PREFLIGHT_VARY,
      });
      const denied = await call(`${gw.url}/v1/cors/1`, { headers: { origin: APP } });
      assert.equal(denied.status, 401);
      assert.deepEqual(corsHeaders(denied), { 'access-control-allow-origin': APP, 'access-control-allow-credentials': 'true', vary: 'Origin' });
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('cors on the answers given before a route takes the call', () => {
  const OTHER = 'https://other.example.com';
  const allowed = { 'access-control-allow-origin': APP, 'access-control-expose-headers': 'X-Request-Id, RateLimit', vary: 'Origin' };
  /** The `cors` route (GET, LISTED) and, on its path, a POST route whose policy allows OTHER only. */
  const gateway = (upstream: Upstream) =>
    corsGateway(LISTED, upstream, {
      routes: `  cors-post:\n    method: POST\n    path: /v1/cors/{id}\n    upstream: api\n    policies:\n      - cors: { origins: ['${OTHER}'] }\n`,
      products: `  posts:\n    routes: [cors-post]\n`,
    });

  test('a refused path is 400 with the CORS headers of the routes at its path as sent; one at no route has none', async () => {
    const upstream = await startUpstream();
    const gw = await gateway(upstream);
    try {
      const refused = await call(`${gw.url}/v1/cors/a;b`, { headers: { origin: APP } });
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'request path rejected: ";" is not allowed in the path', code: 'invalid_path' });
      assert.deepEqual(corsHeaders(refused), allowed);
      // Either route's policy, whichever allows the origin.
      const other = await call(`${gw.url}/v1/cors/a;b`, { headers: { origin: OTHER } });
      assert.deepEqual(corsHeaders(other), { 'access-control-allow-origin': OTHER, vary: 'Origin' });
      const unlisted = await call(`${gw.url}/v1/cors/a;b`, { headers: { origin: 'https://evil.example.com' } });
      assert.equal(unlisted.status, 400);
      assert.deepEqual(corsHeaders(unlisted), { vary: 'Origin' });
      // No route's policy can allow an origin for a path no route has.
      const nowhere = await call(`${gw.url}/v1/nowhere/a;b`, { headers: { origin: APP } });
      assert.equal(nowhere.status, 400);
      assert.deepEqual(corsHeaders(nowhere), {});
      assert.equal(upstream.received.length, 0);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('a method no route of the path takes is 405 (and 401 before it) with the CORS headers of its routes', async () => {
    const upstream = await startUpstream();
    const gw = await gateway(upstream);
    try {
      const notAllowed = await call(`${gw.url}/v1/cors/1`, { method: 'DELETE', headers: { ...bearer(await tokenFor(gw, 'web')), origin: APP } });
      assert.equal(notAllowed.status, 405);
      assert.equal(notAllowed.body.code, 'method_not_allowed');
      assert.equal(notAllowed.headers.get('allow'), 'GET, POST');
      assert.deepEqual(corsHeaders(notAllowed), allowed);
      const noToken = await call(`${gw.url}/v1/cors/1`, { method: 'DELETE', headers: { origin: OTHER } });
      assert.equal(noToken.status, 401);
      assert.deepEqual(corsHeaders(noToken), { 'access-control-allow-origin': OTHER, vary: 'Origin' });
      assert.equal(upstream.received.length, 0);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test("a body over the limit by its Content-Length is 413 with the CORS headers of the method's route", async () => {
    const upstream = await startUpstream();
    const gw = await gateway(upstream);
    try {
      /** The status and the CORS headers (and Vary) of a POST declaring 100 GB, read off the socket. */
      const tooLarge = async (origin: string) => {
        const answer = rawHead(
          await rawExchange(gw.url, `POST /v1/cors/1 HTTP/1.1\r\nHost: gateway\r\nOrigin: ${origin}\r\nContent-Type: text/plain\r\nContent-Length: 100000000000\r\nConnection: close\r\n\r\n`),
        );
        const headers = [...answer.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary').map(([name, values]) => [name, values.join(', ')]);
        return { status: answer.status, headers: Object.fromEntries(headers), body: JSON.parse(answer.body) };
      };
      const other = await tooLarge(OTHER);
      assert.equal(other.status, 'HTTP/1.1 413 Payload Too Large');
      assert.equal(other.body.code, 'payload_too_large');
      assert.deepEqual(other.headers, { 'access-control-allow-origin': OTHER, vary: 'Origin' });
      // The POST route's own policy, not the GET route's, which allows APP.
      const app = await tooLarge(APP);
      assert.equal(app.status, 'HTTP/1.1 413 Payload Too Large');
      assert.deepEqual(app.headers, { vary: 'Origin' });
      assert.equal(upstream.received.length, 0);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('cors on the token endpoint', () => {
  const oauth = `  policies:\n    - spikeArrest: { rate: 100ps, burst: 50 }\n    - cors: { origins: ['${APP}'], exposeHeaders: [X-Request-Id] }\n`;

  test('a browser origin preflights and POSTs /oauth2/token; its errors carry the CORS headers too', async () => {
    const gw = await startTestGateway({ oauth });
    try {
      const pre = await preflight(`${gw.url}/oauth2/token`, APP, 'POST', 'authorization,content-type');
      assert.equal(pre.status, 204);
      assert.deepEqual(corsHeaders(pre), {
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
        vary: PREFLIGHT_VARY,
      });
      assert.equal(pre.headers.get('cache-control'), null);

      const wrongMethod = await preflight(`${gw.url}/oauth2/token`, APP, 'PUT');
      assert.equal(wrongMethod.status, 403);
      assert.deepEqual(corsHeaders(wrongMethod), { vary: PREFLIGHT_VARY });
      assert.deepEqual(wrongMethod.body, { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'this method may not be used from another origin', code: 'cors_rejected' });

      const app = await gw.client('hello');
      const form = { 'content-type': 'application/x-www-form-urlencoded', origin: APP };
      const issued = await call(`${gw.url}/oauth2/token`, {
        method: 'POST',
        headers: { ...form, authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      assert.equal(issued.status, 200);
      assert.equal(issued.body.token_type, 'Bearer');
      assert.deepEqual(corsHeaders(issued), { 'access-control-allow-origin': APP, 'access-control-expose-headers': 'X-Request-Id', vary: 'Origin' });

      const refused = await call(`${gw.url}/oauth2/token`, { method: 'POST', headers: form, body: `grant_type=client_credentials&client_id=${app.key}&client_secret=wrong` });
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, { error: 'invalid_client', error_description: 'client authentication failed' });
      assert.deepEqual(corsHeaders(refused), { 'access-control-allow-origin': APP, 'access-control-expose-headers': 'X-Request-Id', vary: 'Origin' });

      // The revocation endpoint shares the policies.
      const revoked = await call(`${gw.url}/oauth2/revoke`, { method: 'POST', headers: form, body: `token=x&client_id=${app.key}&client_secret=${app.secret}` });
      assert.equal(revoked.status, 200);
      assert.equal(revoked.headers.get('access-control-allow-origin'), APP);
      const revokePreflight = await preflight(`${gw.url}/oauth2/revoke`, APP, 'POST');
      assert.equal(revokePreflight.status, 204);

      const stranger = await call(`${gw.url}/oauth2/token`, { method: 'POST', headers: { ...form, origin: 'https://evil.example.com' }, body: 'grant_type=client_credentials' });
      assert.equal(stranger.status, 401);
      assert.deepEqual(corsHeaders(stranger), { vary: 'Origin' });
    } finally {
      await gw.close();
    }
  });

  test('without a CORS policy, OPTIONS to the token endpoint is what it was: 405', async () => {
    const gw = await startTestGateway();
    try {
      const res = await preflight(`${gw.url}/oauth2/token`, APP, 'POST');
      assert.equal(res.status, 405);
      assert.deepEqual(corsHeaders(res), {});
      assert.equal(res.body.error, 'invalid_request');
    } finally {
      await gw.close();
    }
  });
});

describe('cors configuration errors name the YAML path and line', () => {
  const route = (policy: string) => ({ routes: `  x:\n    method: GET\n    path: /v1/x\n    upstream: mock\n    policies:\n${policy}` });

  test('"*" with credentials', async () => {
    const parts = route(`      - cors:\n          origins: ['*']\n          credentials: true\n`);
    const line =
      configYaml(parts)
        .split('\n')
        .findIndex((l) => l.includes("origins: ['*']")) + 1;
    assert.equal(await configError(parts), `routes.x.policies[0].cors.origins[0]: "*" cannot be used with credentials: true; list the origins (gateway.yaml:${line})`);
  });

  test("malformed origins, null, a path, a second cors policy, a method that is not the route's", async () => {
    const message = await configError(
      route(
        `      - cors:\n          origins: ['${APP}', 'app.example.com', 'null', 'https://app.example.com/', 'ftp://files.example.com', '*']\n          methods: [POST]\n      - cors: { origins: ['${APP}'] }\n`,
      ),
    );
    assert.deepEqual(
      message.split('\n').map((l) => l.replace(/ \(gateway\.yaml:\d+\)$/, '')),
      [
        'routes.x.policies[0].cors.origins[1]: "app.example.com" is not an origin (scheme://host[:port], no path)',
        'routes.x.policies[0].cors.origins[2]: the "null" origin cannot be allowed: any page can send it (a sandboxed frame, a file: page)',
        'routes.x.policies[0].cors.origins[3]: "https://app.example.com/" is not an origin (scheme://host[:port], no path)',
        'routes.x.policies[0].cors.origins[4]: "ftp://files.example.com" is not an http or https origin',
        'routes.x.policies[0].cors.origins[5]: "*" allows every origin: list it alone',
        'routes.x.policies[0].cors.methods: must include GET, the method of the route',
        'routes.x.policies[1].cors: a second cors policy: list one',
      ],
    );
  });
});
