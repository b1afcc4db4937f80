// The admin listener over real HTTP: liveness, readiness (the store answering, the gateway not
// stopping), reload, its refusals, where it binds, and the Prometheus metrics the calls leave behind.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.ts';
import { freePort } from '../../src/http/listener.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/host/index.ts';
import { bearer, call, configYaml, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway } from '../helpers.ts';

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

function headersOf(res: { headers: Headers }, names: string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));
}

async function token(gw: TestGateway, product: string): Promise<string> {
  const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client(product));
  assert.equal(res.status, 200, res.text);
  return res.body.access_token as string;
}

/** The gateway_* samples of the exposition, without the bucket and sum lines (their values are timings). */
async function samples(gw: TestGateway): Promise<string[]> {
  const res = await call(`${gw.gateway.adminUrl}/metrics`);
  assert.equal(res.status, 200);
  return res.text.split('\n').filter((l) => l.startsWith('gateway_') && !/_(bucket|sum)\{/.test(l));
}

/** Every gateway_* series (name and labels, without the value), buckets included. */
async function series(gw: TestGateway): Promise<string[]> {
  const res = await call(`${gw.gateway.adminUrl}/metrics`);
  return res.text
    .split('\n')
    .filter((l) => l.startsWith('gateway_'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}

function lineOf(text: string, fragment: string): number {
  const index = text.indexOf(fragment);
  assert.notEqual(index, -1, fragment);
  return text.slice(0, index).split('\n').length;
}

describe('admin listener endpoints', () => {
  test('GET /healthz: 200 alive; HEAD: the same headers, no body', async () => {
    const gw = await startTestGateway();
    try {
      const res = await call(`${gw.gateway.adminUrl}/healthz`);
      assert.equal(res.status, 200);
      assert.deepEqual(headersOf(res, ['content-type', 'cache-control']), JSON_HEADERS);
      assert.deepEqual(res.body, { status: 'alive' });
      const head = await call(`${gw.gateway.adminUrl}/healthz`, { method: 'HEAD' });
      assert.deepEqual([head.status, head.headers.get('content-length'), head.text], [200, '18', '']);
    } finally {
      await gw.close();
    }
  });

  test('GET /readyz: 200 ready while the store answers', async () => {
    const gw = await startTestGateway();
    try {
      const res = await call(`${gw.gateway.adminUrl}/readyz`);
      assert.equal(res.status, 200);
      assert.deepEqual(headersOf(res, ['content-type', 'cache-control']), JSON_HEADERS);
      assert.deepEqual(res.body, { status: 'ready' });
    } finally {
      await gw.close();
    }
  });

  test('an unknown path: 404 naming the paths served; a wrong method: 405 with Allow', async () => {
    const gw = await startTestGateway();
    const admin = gw.gateway.adminUrl!;
    try {
      const missing = await call(`${admin}/status`);
      assert.equal(missing.status, 404);
      assert.deepEqual(headersOf(missing, ['content-type', 'cache-control']), JSON_HEADERS);
      assert.deepEqual(missing.body, { error: 'not_found', paths: ['/healthz', '/readyz', '/metrics', '/reload'] });
      // The gateway's own paths are not served here.
      assert.equal((await call(`${admin}/oauth2/token`, { method: 'POST' })).status, 404);
      for (const [method, where, allow] of [
        ['POST', '/healthz', 'GET, HEAD'],
        ['DELETE', '/readyz', 'GET, HEAD'],
        ['PUT', '/metrics', 'GET, HEAD'],
        ['GET', '/reload', 'POST'],
        ['HEAD', '/reload', 'POST'],
      ] as const) {
        const res = await call(`${admin}${where}`, { method });
        assert.deepEqual([res.status, res.headers.get('allow'), res.headers.get('content-type')], [405, allow, 'application/json'], `${method} ${where}`);
        assert.equal(res.text, method === 'HEAD' ? '' : '{"error":"method_not_allowed"}', `${method} ${where}`);
      }
      // A query string does not change the path.
      assert.equal((await call(`${admin}/healthz?verbose=1`)).status, 200);
    } finally {
      await gw.close();
    }
  });

  test('a web page cannot reach it: a request with an Origin gets 403, a Host that is a name other than localhost (DNS rebinding) 421', async () => {
    const gw = await startTestGateway();
    const admin = gw.gateway.adminUrl!;
    const { port } = new URL(admin);
    const raw = (host: string, extra = '') =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', headers: { host, ...(extra === '' ? {} : { origin: extra }) } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      assert.equal(await raw('rebind.attacker.example'), '421 {"error":"misdirected_request","reason":"address the admin listener by IP address or localhost"}');
      assert.equal(await raw(`rebind.attacker.example:${port}`), '421 {"error":"misdirected_request","reason":"address the admin listener by IP address or localhost"}');
      assert.equal(await raw(`127.0.0.1:${port}`, 'https://attacker.example'), '403 {"error":"forbidden","reason":"requests from a web page are not served"}');
      const reload = await call(`${admin}/reload`, { method: 'POST', headers: { origin: 'https://attacker.example', 'content-type': 'text/plain' }, body: 'x' });
      assert.equal(reload.status, 403);
      assert.match(await raw(`localhost:${port}`), /^200 /);
      assert.match(await raw(`[::1]:${port}`), /^200 /);
      assert.match(await raw(`127.0.0.1:${port}`), /^200 /);
    } finally {
      await gw.close();
    }
  });

  test('POST /reload: 200 swaps in the file as it now is; a broken file or one that needs a restart: 422 with every reason, and the running config keeps serving', async () => {
    const gw = await startTestGateway();
    const admin = gw.gateway.adminUrl!;
    try {
      const access = await token(gw, 'hello');
      const hello = async () => (await call(`${gw.url}/v1/hello`, { headers: bearer(access) })).text;
      assert.equal(await hello(), '{"message":"hello"}');
      const original = readFileSync(gw.configFile, 'utf8');

      writeFileSync(gw.configFile, original.replace('body: { message: hello }', 'body: { message: reloaded }'));
      const reloaded = await call(`${admin}/reload`, { method: 'POST' });
      assert.equal(reloaded.status, 200);
      assert.deepEqual(headersOf(reloaded, ['content-type', 'cache-control']), JSON_HEADERS);
      assert.deepEqual(reloaded.body, { status: 'reloaded' });
      assert.equal(await hello(), '{"message":"reloaded"}');

      const broken = original.replace('    path: /v1/hello\n    upstream: mock', '    path: /v1/hello\n    upstream: nowhere');
      writeFileSync(gw.configFile, broken);
      const refused = await call(`${admin}/reload`, { method: 'POST' });
      assert.equal(refused.status, 422);
      assert.deepEqual(refused.body, { status: 'refused', errors: [`routes.hello.upstream: unknown upstream "nowhere" (gateway.yaml:${lineOf(broken, 'upstream: nowhere')})`] });
      assert.equal(await hello(), '{"message":"reloaded"}', 'the running config keeps serving');

      writeFileSync(gw.configFile, original.replace('  port: 0\n', '  port: 1\n'));
      const restart = await call(`${admin}/reload`, { method: 'POST', body: 'ignored' });
      assert.equal(restart.status, 422);
      assert.deepEqual(restart.body, { status: 'refused', errors: ["listen.port: the listener's port needs a restart; the running config keeps serving"] });

      const lines = await samples(gw);
      assert.ok(lines.includes('gateway_config_reloads_total{result="reloaded"} 1'), lines.join('\n'));
      assert.ok(lines.includes('gateway_config_reloads_total{result="refused"} 2'), lines.join('\n'));
      assert.ok(gw.logs.some((l) => l.includes('"audit":"config.reload"') && l.includes('"result":"refused"') && l.includes('unknown upstream')));
    } finally {
      await gw.close();
    }
  });

  test('GET /readyz: 503 once the store is closed, and a route that needs it counts a store error', async () => {
    const gw = await startTestGateway();
    try {
      const app = await gw.client('hello');
      const unverified = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      await gw.gateway.services.store.close();
      const res = await call(`${gw.gateway.adminUrl}/readyz`);
      assert.equal(res.status, 503);
      assert.deepEqual(headersOf(res, ['content-type', 'cache-control']), JSON_HEADERS);
      assert.deepEqual(res.body, { status: 'not_ready', reason: 'the store does not answer: the database is closed' });
      // Liveness does not depend on the store.
      assert.equal((await call(`${gw.gateway.adminUrl}/healthz`)).status, 200);
      assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(unverified) })).status, 503);
      assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 503);
      const lines = await samples(gw);
      assert.ok(lines.includes('gateway_store_errors_total{surface="request"} 1'), lines.join('\n'));
      assert.ok(lines.includes('gateway_store_errors_total{surface="token"} 1'), lines.join('\n'));
      assert.ok(lines.includes('gateway_requests_total{route="hello",product="",status="5xx"} 1'), lines.join('\n'));
    } finally {
      await gw.close().catch(() => {});
    }
  });

  test('GET /readyz: 503 when the database file is gone from under the gateway', async () => {
    const temp = tempDir();
    const gw = await startTestGateway({}, { dir: temp.dir });
    try {
      assert.equal((await call(`${gw.gateway.adminUrl}/readyz`)).status, 200);
      rmSync(path.join(temp.dir, 'gateway.db'));
      const res = await call(`${gw.gateway.adminUrl}/readyz`);
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, { status: 'not_ready', reason: `the store does not answer: the database file ${path.join(temp.dir, 'gateway.db')} was removed or replaced` });
    } finally {
      await gw.close().catch(() => {});
      temp.remove();
    }
  });

  test('GET /readyz: 503 stopping while a stop waits for a call in flight; a reload then is refused', async () => {
    const waiting: ServerResponse[] = [];
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const upstream = await startUpstream((_req, res) => {
      waiting.push(res);
      arrived();
    });
    const gw = await startTestGateway({
      upstreams: `  slow:\n    url: ${upstream.url}\n    timeout: 30s\n`,
      routes: '  slow:\n    method: GET\n    path: /v1/slow\n    upstream: slow\n',
      products: '  slow:\n    routes: [slow]\n',
    });
    const admin = gw.gateway.adminUrl!;
    try {
      const access = await token(gw, 'slow');
      const pending = call(`${gw.url}/v1/slow`, { headers: bearer(access) });
      await inFlight;
      const stopping = gw.close();
      const res = await call(`${admin}/readyz`);
      assert.equal(res.status, 503);
      assert.deepEqual(res.body, { status: 'not_ready', reason: 'stopping' });
      const reload = await call(`${admin}/reload`, { method: 'POST' });
      assert.deepEqual([reload.status, reload.body], [422, { status: 'refused', errors: ['the gateway is stopping'] }]);
      waiting[0]!.writeHead(200, { 'content-type': 'text/plain' }).end('finished');
      const answered = await pending;
      assert.deepEqual([answered.status, answered.text, answered.headers.get('connection')], [200, 'finished', 'close']);
      await stopping;
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('admin listener address', () => {
  /** Starts a gateway on `yaml` with the admin port overridden, as `gateway --config` would from a file. */
  async function startFrom(yaml: string) {
    const temp = tempDir();
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, yaml);
    const config = loadConfigFile(file, { env: {} });
    const gateway = await startGateway({ config, adminPort: 0, logger: createLogger('silent') });
    return {
      config,
      gateway,
      close: async () => {
        await gateway.close();
        temp.remove();
      },
    };
  }

  test('without an admin section it binds 127.0.0.1 (port 9901 unless overridden), even when the gateway listens on every address', async (t) => {
    const yaml = configYaml({ host: '0.0.0.0' });
    assert.ok(yaml.includes('admin:\n  port: 0\n'));
    const { config, gateway, close } = await startFrom(yaml.replace('admin:\n  port: 0\n', ''));
    try {
      assert.deepEqual(config.admin, { host: '127.0.0.1', port: 9901 });
      assert.match(gateway.adminUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(new URL(gateway.adminUrl!).port, '9901');
      assert.equal((await call(`${gateway.adminUrl}/healthz`)).status, 200);
      // From another address of this machine: the gateway answers there, the admin listener does not.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
      if (external === undefined) return t.diagnostic('no non-loopback IPv4 address here: the external reach is not checked');
      const reach = (port: string) =>
        new Promise<string>((resolve) => {
          const req = httpRequest({ host: external, port, path: '/healthz' }, (res) => {
            res.resume();
            resolve(String(res.statusCode));
          });
          req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
          req.end();
        });
      assert.equal(await reach(new URL(gateway.url).port), '401');
      assert.equal(await reach(new URL(gateway.adminUrl!).port), 'ECONNREFUSED');
    } finally {
      await close();
    }
  });

  test('admin: false: no admin listener at all', async () => {
    const { config, gateway, close } = await startFrom(configYaml().replace('admin:\n  port: 0\n', 'admin: false\n'));
    try {
      assert.equal(config.admin, undefined);
      assert.equal(gateway.adminUrl, undefined);
      assert.equal((await call(`${gateway.url}/healthz`)).status, 401, 'nor are its paths served by the gateway');
    } finally {
      await close();
    }
  });

  test('an admin host and port from the config', async () => {
    const port = await freePort('127.0.0.1');
    const temp = tempDir();
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, configYaml().replace('admin:\n  port: 0\n', `admin:\n  host: 127.0.0.1\n  port: ${port}\n`));
    const gateway = await startGateway({ config: loadConfigFile(file, { env: {} }), logger: createLogger('silent') });
    try {
      assert.equal(gateway.adminUrl, `http://127.0.0.1:${port}`);
      assert.equal((await call(`${gateway.adminUrl}/healthz`)).status, 200);
    } finally {
      await gateway.close();
      temp.remove();
    }
  });
});

const OBSERVED_ROUTES = `  metered:
    method: GET
    path: /v1/metered
    upstream: mock
    policies:
      - quota: { limit: 1, interval: minute }
  private:
    method: GET
    path: /v1/private
    upstream: mock
    policies:
      - ipAccess: { deny: [127.0.0.1, '::1'] }
  search:
    method: GET
    path: /v1/search
    upstream: real
    policies:
      - validateRequest:
          query: { type: object, required: [q] }
  down:
    method: GET
    path: /v1/down
    upstream: down
`;

describe('metrics', () => {
  test('each kind of answer leaves its exact samples: requests by route, product and class; refusals by policy and code; tokens by grant; upstream errors by upstream and kind; durations by route and upstream', async () => {
    const upstream = await startUpstream();
    const closed = await freePort('127.0.0.1');
    const gw = await startTestGateway({
      upstreams: `  real:\n    url: ${upstream.url}\n  down:\n    url: http://127.0.0.1:${closed}\n    connectTimeout: 1s\n`,
      routes: OBSERVED_ROUTES,
      products: '  observed:\n    routes: [metered, private, search, down]\n',
    });
    try {
      const hello = await token(gw, 'hello');
      const observed = await token(gw, 'observed');
      const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: (await gw.client('hello')).key, secret: 'not-the-secret' });
      assert.equal(refused.status, 401);
      const status = async (url: string, headers: Record<string, string> = {}) => (await call(`${gw.url}${url}`, { headers })).status;
      assert.equal(await status('/v1/hello', bearer(hello)), 200);
      assert.equal(await status('/v1/hello'), 401);
      assert.equal(await status('/v1/metered', bearer(observed)), 200);
      assert.equal(await status('/v1/metered', bearer(observed)), 429);
      assert.equal(await status('/v1/private', bearer(observed)), 403);
      assert.equal(await status('/v1/search', bearer(observed)), 400);
      assert.equal(await status('/v1/search?q=x', bearer(observed)), 200);
      assert.equal(await status('/v1/down', bearer(observed)), 502);

      const res = await call(`${gw.gateway.adminUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await samples(gw), [
        'gateway_requests_total{route="/oauth2/token",product="",status="2xx"} 2',
        'gateway_requests_total{route="/oauth2/token",product="",status="4xx"} 1',
        'gateway_requests_total{route="hello",product="hello",status="2xx"} 1',
        'gateway_requests_total{route="hello",product="",status="4xx"} 1',
        'gateway_requests_total{route="metered",product="observed",status="2xx"} 1',
        'gateway_requests_total{route="metered",product="observed",status="4xx"} 1',
        'gateway_requests_total{route="private",product="observed",status="4xx"} 1',
        'gateway_requests_total{route="search",product="observed",status="4xx"} 1',
        'gateway_requests_total{route="search",product="observed",status="2xx"} 1',
        'gateway_requests_total{route="down",product="observed",status="5xx"} 1',
        'gateway_request_duration_seconds_count{route="/oauth2/token"} 3',
        'gateway_request_duration_seconds_count{route="hello"} 2',
        'gateway_request_duration_seconds_count{route="metered"} 2',
        'gateway_request_duration_seconds_count{route="private"} 1',
        'gateway_request_duration_seconds_count{route="search"} 2',
        'gateway_request_duration_seconds_count{route="down"} 1',
        'gateway_upstream_duration_seconds_count{upstream="real"} 1',
        'gateway_upstream_duration_seconds_count{upstream="down"} 1',
        'gateway_tokens_issued_total{grant="client_credentials"} 2',
        'gateway_refusals_total{policy="gateway",code="invalid_client"} 1',
        'gateway_refusals_total{policy="gateway",code="unauthorized"} 1',
        'gateway_refusals_total{policy="quota",code="quota_exceeded"} 1',
        'gateway_refusals_total{policy="ipAccess",code="ip_denied"} 1',
        'gateway_refusals_total{policy="validateRequest",code="invalid_request"} 1',
        'gateway_upstream_errors_total{upstream="down",kind="upstream_unavailable"} 1',
        // Without telemetry.usage, at zero from the start, as a dashboard reads them.
        'gateway_usage_events_total{result="delivered"} 0',
        'gateway_usage_events_total{result="dropped"} 0',
        'gateway_config_reloads_total{result="reloaded"} 0',
        'gateway_config_reloads_total{result="refused"} 0',
      ]);
      // Histograms: every bucket, cumulative up to +Inf, labelled by route or upstream.
      const text = res.text;
      assert.match(text, /^# TYPE gateway_request_duration_seconds histogram$/m);
      assert.match(text, /^# TYPE gateway_upstream_duration_seconds histogram$/m);
      assert.match(text, /^gateway_request_duration_seconds_bucket\{le="\+Inf",route="search"\} 2$/m);
      assert.match(text, /^gateway_request_duration_seconds_bucket\{le="0\.0005",route="hello"\} [0-2]$/m);
      assert.match(text, /^gateway_upstream_duration_seconds_bucket\{le="30",upstream="real"\} 1$/m);
      assert.match(text, /^gateway_upstream_duration_seconds_sum\{upstream="real"\} 0\.\d+/m);
      // The process's own metrics, in the main thread.
      assert.match(text, /^process_cpu_seconds_total \d/m);
      assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
      // HEAD: the headers alone.
      const head = await call(`${gw.gateway.adminUrl}/metrics`, { method: 'HEAD' });
      assert.deepEqual([head.status, head.text], [200, '']);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test('a client that leaves in the middle of its answer is neither a refusal nor an upstream error', async () => {
    let held: ServerResponse | undefined;
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
      held = res;
    });
    const gw = await startTestGateway({ upstreamUrl: upstream.url });
    try {
      const access = await token(gw, 'hello');
      const { port } = new URL(gw.url);
      await new Promise<void>((resolve, reject) => {
        const socket = connectTcp(Number(port), '127.0.0.1', () => socket.write(`GET /v1/backend/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${access}\r\nX-Request-Id: left-1\r\n\r\n`));
        socket.on('data', (c: Buffer) => {
          if (c.toString().includes('first part')) {
            socket.destroy();
            resolve();
          }
        });
        socket.on('error', reject);
      });
      // The rest of the answer finds the client gone.
      held!.end('second part');
      const logged = () => gw.logs.some((l) => l.includes('"id":"left-1"') && l.includes('"msg":"request"'));
      for (let i = 0; i < 500 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(logged(), 'the call ended');
      assert.ok(gw.logs.some((l) => l.includes('"id":"left-1"') && l.includes('"error":"client_closed_request"')));
      const lines = await samples(gw);
      assert.deepEqual(
        lines.filter((l) => l.startsWith('gateway_refusals_total') || l.startsWith('gateway_upstream_errors_total')),
        [],
      );
      assert.ok(lines.includes('gateway_requests_total{route="backend",product="hello",status="2xx"} 1'), lines.join('\n'));
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  test("workers: 2: the admin listener adds up both threads' samples, with the process's own metrics once", async () => {
    const temp = tempDir();
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, `${configYaml().replace('log:\n  level: info', 'log:\n  level: silent')}\nworkers: 2\n`);
    const workers = await startGateway({ config: loadConfigFile(file, { env: {} }), env: {}, adminPort: 0, logger: createLogger('silent') });
    try {
      // A new connection per call (agent: false), so the kernel spreads them over both threads.
      const status = () =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(`${workers.url}/v1/hello`, { agent: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
      for (let i = 0; i < 40; i++) assert.equal(await status(), 401);
      const text = (await call(`${workers.adminUrl}/metrics`)).text;
      const lines = text.split('\n');
      assert.ok(lines.includes('gateway_requests_total{route="hello",product="",status="4xx"} 40'), text);
      assert.ok(lines.includes('gateway_request_duration_seconds_count{route="hello"} 40'), text);
      assert.ok(lines.includes('gateway_request_duration_seconds_bucket{le="+Inf",route="hello"} 40'), text);
      assert.ok(lines.includes('gateway_refusals_total{policy="gateway",code="unauthorized"} 40'), text);
      assert.equal(lines.filter((l) => l.startsWith('process_cpu_seconds_total ')).length, 1);
      assert.equal((await call(`${workers.adminUrl}/readyz`)).status, 200);
    } finally {
      await workers.close();
      temp.remove();
    }
  });

  test('the series do not grow with apps, tokens, paths or queries: 20 apps and 50 unknown paths leave the same series as one', async () => {
    const gw = await startTestGateway();
    try {
      /** One of each kind of call, with this app's token and this path's variant. */
      const round = async (access: string, i: number) => {
        const statuses = [
          (await call(`${gw.url}/v1/hello?n=${i}`, { headers: bearer(access) })).status,
          (await call(`${gw.url}/v1/nothing/${i}`, { headers: bearer(access) })).status,
          (await call(`${gw.url}/v1/nothing/${i}`)).status,
          (await call(`${gw.url}/unknown-${i}.php?x=${i}`, { headers: bearer(`gwat_${'A'.repeat(40)}${i}`) })).status,
          (await call(`${gw.url}/v1/hello`, { method: 'DELETE', headers: bearer(access) })).status,
        ];
        assert.deepEqual(statuses, [200, 404, 401, 401, 405]);
      };
      await round(await token(gw, 'hello'), 0);
      const before = await series(gw);
      assert.ok(before.length > 0);

      for (let app = 1; app <= 20; app++) await round(await token(gw, 'hello'), app);
      const access = await token(gw, 'hello');
      for (let i = 21; i <= 50; i++) await round(access, i);

      assert.deepEqual(await series(gw), before);
      const lines = await samples(gw);
      assert.ok(lines.includes('gateway_tokens_issued_total{grant="client_credentials"} 22'), lines.join('\n'));
      assert.ok(lines.includes('gateway_requests_total{route="(unmatched)",product="hello",status="4xx"} 102'), lines.join('\n'));
      assert.ok(lines.includes('gateway_requests_total{route="(unmatched)",product="",status="4xx"} 102'), lines.join('\n'));
    } finally {
      await gw.close();
    }
  });
});
