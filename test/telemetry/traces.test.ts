// OpenTelemetry traces (telemetry.traces), received by a real OTLP/HTTP receiver that this test
// runs and that decodes what the gateway sends (OTLP's JSON encoding): a call's span continues the
// caller's traceparent; under it, the token check, the counts that wait on Redis, the upstream
// call (whose traceparent reaches the upstream) and the password grant's authorization server
// call. Names, kinds, parentage and attributes are asserted, and no span holds a credential.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { createLogger } from '../../src/log.ts';
import { adminDeps, basic, call, configError, configYaml, listenOn, tempDir } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, unknown>;
}

/** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP receiver: every span of every POST, decoded from OTLP's JSON encoding (ids as hex, 64-bit integers as strings or numbers). */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const posts: { path: string; type: string | undefined; auth: string | undefined }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', type: req.headers['content-type'], auth: req.headers['x-api-key'] as string | undefined });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
      for (const resource of body.resourceSpans) {
        for (const scope of resource.scopeSpans) {
          for (const s of scope.spans) {
            const attributes = Object.fromEntries(
              ((s.attributes ?? []) as { key: string; value: Record<string, unknown> }[]).map(({ key, value }) => [
                key,
                value.stringValue ?? (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue)),
              ]),
            );
            spans.push({
              traceId: s.traceId as string,
              spanId: s.spanId as string,
              parentSpanId: (s.parentSpanId as string | undefined) ?? '',
              name: s.name as string,
              kind: s.kind as number,
              status: ((s.status as { code?: number } | undefined)?.code ?? 0) as number,
              attributes,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const url = await listenOn(server);
  return {
    url,
    spans,
    posts,
    /** The spans of `traceId`, once `count` of them have come (the gateway exports every second). */
    async trace(traceId: string, count: number): Promise<ReceivedSpan[]> {
      for (let i = 0; i < 100; i++) {
        const found = spans.filter((s) => s.traceId === traceId);
        if (found.length >= count) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail(`trace ${traceId}: ${spans.filter((s) => s.traceId === traceId).length} spans of ${count} came`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A server that answers `answer` and keeps the headers of every call. */
async function startRecorder(answer: string) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  });
  return { url: await listenOn(server), seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const TRACED = `  traced:\n    method: GET\n    path: /v1/traced\n    upstream: backend\n    policies:\n      - quota: { limit: 100, interval: minute }\n      - spikeArrest: { rate: 100ps, burst: 100 }\n`;

/** A gateway in process on `store` (YAML of the store section), exporting to `receiver`, with apps of `traced` and `orders` (password grant). */
async function tracedGateway(dir: string, store: string, telemetry: string, upstream: string, authServer: string) {
  const file = path.join(dir, 'gateway.yaml');
  const yaml = configYaml({ upstreamUrl: upstream, authServerUrl: authServer, routes: TRACED, products: '  traced:\n    routes: [traced]\n', extra: telemetry }).replace(
    'store:\n  path: ./gateway.db',
    store,
  );
  writeFileSync(file, yaml);
  const config = loadConfigFile(file, { env: {} });
  const gateway = await startGateway({ config, logger: createLogger('silent') });
  const admin = adminDeps(gateway, config);
  await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
  const traced = await createApp(admin, { developer: 'dev@example.com', name: 'traced', product: 'traced' });
  const orders = await createApp(admin, { developer: 'dev@example.com', name: 'orders', product: 'orders' });
  return { gateway, traced, orders };
}

const tokenFor = async (gateway: Gateway, app: { key: string; secret: string }, form: string) => {
  const res = await call(`${gateway.url}/oauth2/token`, { method: 'POST', headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  assert.equal(res.status, 200, res.text);
  return res.body.access_token as string;
};

/** Every attribute value of `spans`, as text, for the test that none holds a credential. */
const allValues = (spans: readonly ReceivedSpan[]) => spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)]).join('\n');

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

describe('traces over OTLP/HTTP, the store on Redis', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let upstream: Awaited<ReturnType<typeof startRecorder>>;
  let authServer: Awaited<ReturnType<typeof startRecorder>>;
  let gw: Awaited<ReturnType<typeof tracedGateway>>;

  before(async () => {
    redis = await startRedis();
    receiver = await startReceiver();
    upstream = await startRecorder('{"ok":true}');
    authServer = await startRecorder('{"sub":"alice"}');
    // The collector's address without a path: the gateway posts to /v1/traces.
    const telemetry = `telemetry:\n  traces:\n    endpoint: ${receiver.url}\n    headers: { x-api-key: collector-key }\n`;
    gw = await tracedGateway(dir.dir, `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "traces:"`, telemetry, upstream.url, `${authServer.url}/authenticate`);
  });
  after(async () => {
    await gw?.gateway.close();
    await Promise.all([receiver?.close(), upstream?.close(), authServer?.close(), redis?.close()]);
    dir.remove();
  });

  test("a call continues the caller's trace: the token check, the counts on Redis and the upstream call under it, whose traceparent the upstream gets", async () => {
    const token = await tokenFor(gw.gateway, gw.traced, 'grant_type=client_credentials');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await call(`${gw.gateway.url}/v1/traced?apikey=query-secret`, {
      headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'vendor=abc' },
    });
    assert.equal(res.status, 200);
    const spans = await receiver.trace(traceId, 4);
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.deepEqual({ name: server.name, parent: server.parentSpanId, status: server.status }, { name: 'GET traced', parent: callerSpan, status: 0 });
    assert.deepEqual(
      {
        route: server.attributes['http.route'],
        method: server.attributes['http.request.method'],
        status: server.attributes['http.response.status_code'],
        path: server.attributes['url.path'],
        scheme: server.attributes['url.scheme'],
        client: server.attributes['client.address'],
        product: server.attributes['gateway.product'],
        app: server.attributes['gateway.app'],
      },
      { route: 'traced', method: 'GET', status: 200, path: '/v1/traced', scheme: 'http', client: '127.0.0.1', product: 'traced', app: gw.traced.app.id },
    );
    const children = spans
      .filter((s) => s !== server)
      .map((s) => ({ name: s.name, kind: s.kind, parent: s.parentSpanId === server.spanId }))
      .sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(children, [
      { name: 'GET', kind: CLIENT, parent: true },
      { name: 'policy quota, spikeArrest', kind: INTERNAL, parent: true },
      { name: 'verify token', kind: INTERNAL, parent: true },
    ]);
    const client = spans.find((s) => s.kind === CLIENT)!;
    const { port } = new URL(upstream.url);
    assert.deepEqual(client.attributes, {
      'http.request.method': 'GET',
      'gateway.upstream': 'backend',
      'server.address': '127.0.0.1',
      'server.port': Number(port),
      'url.full': `${upstream.url}/v1/traced`,
      'http.response.status_code': 200,
    });
    // The upstream continues the trace from the gateway's client span; the caller's tracestate goes with it.
    const sent = upstream.seen.at(-1)!;
    assert.equal(sent.traceparent, `00-${traceId}-${client.spanId}-01`);
    assert.equal(sent.tracestate, 'vendor=abc');
    assert.ok(!allValues(spans).includes(token) && !allValues(spans).includes('query-secret'), 'no token, no query string');
    assert.ok(
      receiver.posts.every((p) => p.path === '/v1/traces' && p.type === 'application/json' && p.auth === 'collector-key'),
      JSON.stringify(receiver.posts),
    );
  });

  test("the password grant's call to the authorization server is a client span under the token request's, and the server gets its traceparent", async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const res = await call(`${gw.gateway.url}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: basic(gw.orders.key, gw.orders.secret), 'content-type': 'application/x-www-form-urlencoded', traceparent: `00-${traceId}-1111222233334444-01` },
      body: 'grant_type=password&username=alice&password=wonderland-secret',
    });
    assert.equal(res.status, 200, res.text);
    const spans = await receiver.trace(traceId, 2);
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.deepEqual([server.name, server.attributes['http.route'], server.attributes['http.response.status_code']], ['POST /oauth2/token', '/oauth2/token', 200]);
    const auth = spans.find((s) => s.kind === CLIENT)!;
    const { port } = new URL(authServer.url);
    assert.deepEqual(
      { name: auth.name, parent: auth.parentSpanId, attributes: auth.attributes },
      {
        name: 'POST',
        parent: server.spanId,
        attributes: {
          'http.request.method': 'POST',
          'server.address': '127.0.0.1',
          'server.port': Number(port),
          'url.full': `${authServer.url}/authenticate`,
          'gateway.auth_server': 'users',
          'http.response.status_code': 200,
        },
      },
    );
    assert.equal(authServer.seen.at(-1)!.traceparent, `00-${traceId}-${auth.spanId}-01`);
    const values = allValues(spans);
    assert.ok(!values.includes('wonderland-secret') && !values.includes(gw.orders.secret) && !values.includes(res.body.access_token), 'no password, secret or token');
  });
});

describe('traces, the store on SQLite', () => {
  const dir = tempDir();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let upstream: Awaited<ReturnType<typeof startRecorder>>;

  before(async () => {
    receiver = await startReceiver();
    upstream = await startRecorder('{"ok":true}');
  });
  after(async () => {
    await Promise.all([receiver?.close(), upstream?.close()]);
    dir.remove();
  });

  test('counts made in memory, and a token checked from memory, get no span', async () => {
    const gw = await tracedGateway(path.join(dir.dir), 'store:\n  path: ./one.db', `telemetry:\n  traces:\n    endpoint: ${receiver.url}/v1/traces\n`, upstream.url, 'http://127.0.0.1:9/authenticate');
    try {
      const token = await tokenFor(gw.gateway, gw.traced, 'grant_type=client_credentials');
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      assert.equal((await call(`${gw.gateway.url}/v1/traced`, { headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-b7ad6b7169203331-01` } })).status, 200);
      const spans = await receiver.trace(traceId, 2);
      assert.deepEqual(spans.map((s) => s.name).sort(), ['GET', 'GET traced']);
    } finally {
      await gw.gateway.close();
    }
  });

  test('sampleRatio 0: nothing is recorded, not even for a caller that asks; its trace goes on to the upstream, marked not sampled', async () => {
    const before = receiver.spans.length;
    const gw = await tracedGateway(
      path.join(dir.dir),
      'store:\n  path: ./two.db',
      `telemetry:\n  traces:\n    endpoint: ${receiver.url}/v1/traces\n    sampleRatio: 0\n`,
      upstream.url,
      'http://127.0.0.1:9/authenticate',
    );
    const token = await tokenFor(gw.gateway, gw.traced, 'grant_type=client_credentials');
    const traceId = '5b8efff798038103d269b633813fc60c';
    assert.equal((await call(`${gw.gateway.url}/v1/traced`, { headers: { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-eee19b7ec3c1b174-01` } })).status, 200);
    assert.match(upstream.seen.at(-1)!.traceparent as string, new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    assert.equal((await call(`${gw.gateway.url}/v1/traced`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.match(upstream.seen.at(-1)!.traceparent as string, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    // A stop exports every span still waiting: none came.
    await gw.gateway.close();
    assert.equal(receiver.spans.length, before);
  });
});

test('telemetry endpoints take no user and password in the URL: the log would show them', async () => {
  assert.match(
    await configError({ extra: 'telemetry:\n  traces:\n    endpoint: http://user:secret@127.0.0.1:4318\n' }),
    /^telemetry\.traces\.endpoint: give credentials in headers, not in the URL \(gateway\.yaml:\d+\)$/,
  );
  assert.match(
    await configError({ extra: 'telemetry:\n  usage:\n    url: https://billing:secret@billing.example.com/events\n' }),
    /^telemetry\.usage\.url: give credentials in headers, not in the URL \(gateway\.yaml:\d+\)$/,
  );
});
