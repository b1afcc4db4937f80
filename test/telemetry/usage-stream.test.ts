// telemetry.usage: an event per call made with an app's token, appended to a file rotated by size,
// or POSTed in batches to an HTTP endpoint that fails before it takes them; nothing lost on a
// graceful stop; a full buffer drops new events and counts them, and the calls do not wait.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bearer, call, configError, listenOn, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

const ROUTES = '  broken:\n    method: GET\n    path: /v1/broken\n    upstream: down\n';
const UPSTREAMS = '  down:\n    mock:\n      status: 503\n';
const PRODUCTS = '  billed:\n    routes: [hello, broken]\n';

/** A gateway with `usage` under telemetry, and a token of an app of `billed`. */
async function billedGateway(usage: string): Promise<{ gw: TestGateway; token: string; appId: string }> {
  const gw = await startTestGateway({ routes: ROUTES, upstreams: UPSTREAMS, products: PRODUCTS, extra: `telemetry:\n  usage:\n${usage}` });
  const app = await gw.client('billed');
  const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
  const apps = await gw.admin.store.apps.listApps();
  return { gw, token, appId: apps.find((a) => a.product === 'billed')!.id };
}

/** The calls of every test: three answered 200, one 503 from the upstream, one 401 without a valid token (no app: no event). */
async function calls(gw: TestGateway, token: string, prefix: string): Promise<void> {
  const statuses: number[] = [];
  for (const [i, path] of ['/v1/hello', '/v1/hello', '/v1/broken', '/v1/hello'].entries()) {
    statuses.push((await call(`${gw.url}${path}`, { headers: { ...bearer(token), 'x-request-id': `${prefix}-${i}` } })).status);
  }
  statuses.push((await call(`${gw.url}/v1/hello`, { headers: bearer('not-a-token') })).status);
  assert.deepEqual(statuses, [200, 200, 503, 200, 401]);
}

/** What every event of `calls` says, but its time and duration. */
const expected = (appId: string, prefix: string) =>
  (['hello', 'hello', 'broken', 'hello'] as const).map((route, i) => ({
    requestId: `${prefix}-${i}`,
    app: appId,
    developer: 'dev@example.com',
    product: 'billed',
    route,
    method: 'GET',
    status: route === 'broken' ? 503 : 200,
  }));

/** An event without its id, time and duration, once they are checked to be the stream's id and a number, an ISO time and a number of milliseconds. */
function stable(event: Record<string, unknown>): Record<string, unknown> {
  const { id, time, durationMs, ...rest } = event;
  assert.match(id as string, /^[\w-]{8}\.[1-9]\d*$/);
  assert.match(time as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.ok(typeof durationMs === 'number' && durationMs >= 0, String(durationMs));
  return rest;
}

const metric = async (gw: TestGateway, result: string) => {
  const text = await (await fetch(`${gw.gateway.adminUrl}/metrics`)).text();
  return Number(new RegExp(`^gateway_usage_events_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 'NaN');
};

describe('usage events to a file', () => {
  test('a JSON object a line, rotated at maxFileSize into <file>.1, .2…, every event there after a stop, the file for its owner only', async () => {
    const { gw, token, appId } = await billedGateway('    file: ./usage.ndjson\n    maxFileSize: 1024\n    keepFiles: 10\n    flushInterval: 50ms\n');
    const file = path.join(gw.dir, 'usage.ndjson');
    try {
      for (let round = 0; round < 6; round++) {
        await calls(gw, token, `r${round}`);
        // Each round written before the next, so that the file grows past its bound between writes.
        for (let i = 0; i < 50 && !readFileSync(file, { flag: 'a+' }).toString().includes(`r${round}-3`); i++) await new Promise((r) => setTimeout(r, 20));
      }
      await gw.gateway.close();
      const files = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((i) => `${file}.${i}`).filter(existsSync);
      assert.ok(files.length >= 2, `rotated into ${files.length} files`);
      const lines = [...files, file].flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      assert.deepEqual(
        lines.map((l) => stable(JSON.parse(l) as Record<string, unknown>)),
        [0, 1, 2, 3, 4, 5].flatMap((round) => expected(appId, `r${round}`)),
      );
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      await gw.close();
    }
  });

  test('only the newest keepFiles rotated files are kept', async () => {
    const { gw, token } = await billedGateway('    file: ./usage.ndjson\n    maxFileSize: 1024\n    keepFiles: 1\n    flushInterval: 50ms\n');
    const file = path.join(gw.dir, 'usage.ndjson');
    try {
      for (let round = 0; round < 4; round++) {
        await calls(gw, token, `k${round}`);
        for (let i = 0; i < 50 && !readFileSync(file, { flag: 'a+' }).toString().includes(`k${round}-3`); i++) await new Promise((r) => setTimeout(r, 20));
      }
      await gw.gateway.close();
      assert.deepEqual([existsSync(file), existsSync(`${file}.1`), existsSync(`${file}.2`)], [true, true, false]);
    } finally {
      await gw.close();
    }
  });
});

/**
 * The endpoint the events are POSTed to, on /events: it takes them (204), fails (503), redirects
 * elsewhere (302) or never answers, as `mode` says; what it took, a batch each, with the headers
 * of its POST; and the calls to any other path (a redirect followed).
 */
async function startEndpoint() {
  const endpoint = {
    mode: 'up' as 'up' | 'down' | 'redirect' | 'hang',
    posts: 0,
    elsewhere: 0,
    received: [] as { type: string | undefined; key: string | undefined; lines: string[] }[],
    url: '',
    /** Every event taken, in order, without its id, time and duration. */
    events: () => endpoint.received.flatMap((r) => r.lines).map((l) => stable(JSON.parse(l) as Record<string, unknown>)),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/events') {
        endpoint.elsewhere++;
        return void res.writeHead(200).end();
      }
      endpoint.posts++;
      if (endpoint.mode === 'hang') return;
      if (endpoint.mode === 'down') return void res.writeHead(503).end();
      if (endpoint.mode === 'redirect') return void res.writeHead(302, { location: '/elsewhere' }).end();
      const lines = Buffer.concat(chunks)
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '');
      endpoint.received.push({ type: req.headers['content-type'], key: req.headers['x-api-key'] as string | undefined, lines });
      res.writeHead(204).end();
    });
  });
  endpoint.url = `${await listenOn(server)}/events`;
  return endpoint;
}

describe('usage events to an HTTP endpoint', () => {
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  before(async () => {
    endpoint = await startEndpoint();
  });
  after(() => endpoint.close());

  test('batches POSTed as application/x-ndjson with the headers given, sent again while the endpoint fails, each event once, in order; what is left goes at a stop', async () => {
    endpoint.received = [];
    endpoint.mode = 'down';
    const { gw, token, appId } = await billedGateway(`    url: ${endpoint.url}\n    headers: { x-api-key: billing-key }\n    batchSize: 3\n    flushInterval: 50ms\n`);
    try {
      await calls(gw, token, 'a');
      for (let i = 0; i < 100 && endpoint.posts < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(endpoint.posts >= 2, 'the endpoint was asked, and failed');
      endpoint.mode = 'up';
      await calls(gw, token, 'b');
      await gw.gateway.close();
      assert.ok(endpoint.received.every((r) => r.type === 'application/x-ndjson' && r.key === 'billing-key' && r.lines.length <= 3));
      assert.deepEqual(endpoint.events(), [...expected(appId, 'a'), ...expected(appId, 'b')]);
    } finally {
      await gw.close();
    }
  });

  test('a full buffer drops new events and counts them, and the calls go on; the ones kept are delivered once the endpoint is back', async () => {
    endpoint.received = [];
    endpoint.mode = 'down';
    const { gw, token, appId } = await billedGateway(`    url: ${endpoint.url}\n    bufferSize: 2\n    flushInterval: 50ms\n`);
    try {
      await calls(gw, token, 'full');
      assert.deepEqual([await metric(gw, 'dropped'), await metric(gw, 'delivered')], [2, 0]);
      endpoint.mode = 'up';
      for (let i = 0; i < 200 && (await metric(gw, 'delivered')) < 2; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await metric(gw, 'delivered'), 2);
      assert.deepEqual(endpoint.events(), expected(appId, 'full').slice(0, 2));
    } finally {
      await gw.close();
    }
  });

  test('a redirect is a failure, not followed: the events are sent again to the endpoint, and its headers go nowhere else', async () => {
    endpoint.received = [];
    endpoint.mode = 'redirect';
    const posted = endpoint.posts;
    const { gw, token, appId } = await billedGateway(`    url: ${endpoint.url}\n    headers: { x-api-key: billing-key }\n    flushInterval: 50ms\n`);
    try {
      await calls(gw, token, 'r');
      for (let i = 0; i < 100 && endpoint.posts === posted; i++) await new Promise((r) => setTimeout(r, 20));
      endpoint.mode = 'up';
      await gw.gateway.close();
      assert.equal(endpoint.elsewhere, 0, 'the redirect was not followed');
      assert.deepEqual(endpoint.events(), expected(appId, 'r'));
    } finally {
      await gw.close();
    }
  });

  test('a stop gives up on an endpoint that does not answer within its 10 s, says how many events are lost, and ends', async () => {
    endpoint.mode = 'hang';
    const { gw, token } = await billedGateway(`    url: ${endpoint.url}\n    flushInterval: 50ms\n`);
    try {
      await calls(gw, token, 'h');
      const since = performance.now();
      await gw.gateway.close();
      assert.ok(performance.now() - since < 12_000, 'cut off within 12 s');
      const lost = gw.logs.map((l) => JSON.parse(l) as { msg: string; dropped?: number }).find((l) => l.msg === 'usage events could not be written before the stop; they are lost');
      assert.equal(lost?.dropped, 4);
    } finally {
      await gw.close();
    }
  });
});

test('telemetry.usage: one of file and url; a file only with one worker', async () => {
  assert.match(await configError({ extra: 'telemetry:\n  usage:\n    file: ./u.ndjson\n    url: http://127.0.0.1:9/e\n' }), /^telemetry\.usage: give one of file and url \(gateway\.yaml:\d+\)$/);
  assert.match(
    await configError({ extra: 'workers: 2\ntelemetry:\n  usage:\n    file: ./u.ndjson\n' }),
    /^telemetry\.usage\.file: with several workers, send the events to a url \(each worker would write and rotate the same file\) \(gateway\.yaml:\d+\)$/,
  );
});
