// A reload swaps the compiled runtime in one step: a call in flight finishes on the config it
// started with, the old runtime's upstream connections close once its calls are done, counts of
// quotas and spike arrests carry over, and the log level changes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, closeServer, configYaml, listenOn, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

const SLOW_MS = 1500;

describe('reload', () => {
  // The upstream's open connections: the gateway's pools hold them between calls.
  const sockets = new Set<Socket>();
  const upstreamServer = createServer((req: IncomingMessage, res: ServerResponse) => {
    setTimeout(() => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })), req.url === '/v1/slow' ? SLOW_MS : 0);
  }).on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const upstream = { url: '' };
  let gw: TestGateway;
  let token: string;

  const routes = (quota: number) =>
    `  slow:\n    method: GET\n    path: /v1/slow\n    upstream: slow\n  counted:\n    method: GET\n    path: /v1/counted\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 100pm, burst: 3 }\n      - quota: { limit: ${quota}, interval: hour }\n`;
  const yaml = (parts: { quota?: number; level?: string; withSlow?: boolean }) =>
    configYaml({
      upstreamUrl: upstream.url,
      upstreams: `  slow:\n    url: ${upstream.url}\n    timeout: 10s\n`,
      routes: routes(parts.quota ?? 5).replace(parts.withSlow === false ? / {2}slow:\n( {4}.*\n)+/ : /^$/, ''),
    })
      .replace('log:\n  level: info', `log:\n  level: ${parts.level ?? 'info'}`)
      .replace('routes: [hello, echo, backend, admin-only]', `routes: [hello, echo, backend, admin-only, counted${parts.withSlow === false ? '' : ', slow'}]`);

  before(async () => {
    upstream.url = await listenOn(upstreamServer);
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    writeFileSync(gw.configFile, yaml({}));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    const client = await gw.client('hello');
    token = ((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, client)).body as { access_token: string }).access_token;
  });
  after(async () => {
    await gw.close();
    await closeServer(upstreamServer);
  });

  test('a call in flight finishes on the config it started with; the route it used is gone for the next call', async () => {
    const slow = call(`${gw.url}/v1/slow`, { headers: bearer(token) });
    await sleep(300);
    writeFileSync(gw.configFile, yaml({ withSlow: false }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    const removed = await call(`${gw.url}/v1/slow`, { headers: bearer(token) });
    assert.equal(removed.status, 404);
    const finished = await slow;
    assert.equal(finished.status, 200);
    assert.deepEqual(finished.body, { path: '/v1/slow' });
  });

  test("the old runtime's upstream connections close once its calls are done, not before", async () => {
    writeFileSync(gw.configFile, yaml({}));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    assert.equal((await call(`${gw.url}/v1/backend/1`, { headers: bearer(token) })).status, 200);
    const slow = call(`${gw.url}/v1/slow`, { headers: bearer(token) });
    await sleep(300);
    const held = new Set(sockets);
    assert.equal(held.size, 2, 'an idle connection of the backend pool, and the slow call');
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    // The old runtime closes its pools once its last call is done: until then, both stay.
    await sleep(500);
    assert.ok([...held].every((s) => sockets.has(s)));
    assert.equal((await slow).status, 200);
    await until(() => [...held].every((s) => !sockets.has(s)));
  });

  test('quota and spike arrest counts carry over a reload; a changed limit applies to the count so far', async () => {
    writeFileSync(gw.configFile, yaml({ quota: 5 }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    for (let i = 0; i < 3; i++) assert.equal((await call(`${gw.url}/v1/counted`, { headers: bearer(token) })).status, 200);
    // The spike arrest's burst of 3 is spent: the next call within the interval is refused, reload or not.
    writeFileSync(gw.configFile, yaml({ quota: 5, level: 'debug' }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    const spiked = await call(`${gw.url}/v1/counted`, { headers: bearer(token) });
    assert.equal(spiked.status, 429);
    assert.equal((spiked.body as { code: string }).code, 'spike_arrest');
    await sleep(700);
    const fourth = await call(`${gw.url}/v1/counted`, { headers: bearer(token) });
    assert.equal(fourth.status, 200, fourth.text);
    assert.match(fourth.headers.get('ratelimit') ?? '', /^"spike-100pm";r=0;t=[12], "quota-hour";r=1;t=\d+$/);
    // Tightened to 4: the four calls so far use it up.
    writeFileSync(gw.configFile, yaml({ quota: 4 }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    await sleep(700);
    const over = await call(`${gw.url}/v1/counted`, { headers: bearer(token) });
    assert.equal(over.status, 429);
    assert.equal((over.body as { code: string }).code, 'quota_exceeded');
  });

  test('the log level follows the file', async () => {
    writeFileSync(gw.configFile, yaml({ level: 'warn' }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    const count = gw.logs.length;
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status, 200);
    assert.equal(gw.logs.length, count, 'no access line at warn');
    writeFileSync(gw.configFile, yaml({ level: 'info' }));
    assert.deepEqual(await gw.gateway.reload(), { ok: true });
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status, 200);
    assert.equal(JSON.parse(gw.logs.at(-1)!).msg, 'request');
  });

  test('a file that does not load is refused with every message and its line, and the running config keeps serving', async () => {
    const broken = yaml({}).replace('    upstream: slow\n', '    upstream: nowhere\n').replace('counted, slow]', 'counted, slow, nosuch]');
    writeFileSync(gw.configFile, broken);
    const lineOf = (text: string) => broken.split('\n').findIndex((l) => l.includes(text)) + 1;
    const result = await gw.gateway.reload();
    assert.equal(result.ok, false);
    assert.deepEqual(!result.ok && [...result.errors].sort(), [
      `products.hello.routes[6]: unknown route "nosuch" (gateway.yaml:${lineOf('nosuch')})`,
      `routes.slow.upstream: unknown upstream "nowhere" (gateway.yaml:${lineOf('upstream: nowhere')})`,
    ]);
    assert.equal((await call(`${gw.url}/v1/slow`, { headers: bearer(token) })).status, 200);
    const line = JSON.parse(gw.logs.findLast((l) => l.includes('config.reload'))!) as Record<string, unknown>;
    assert.equal(line.result, 'refused');
    assert.deepEqual(line.errors, !result.ok && result.errors);
  });
});

/** Waits until `done()`, checking every 20 ms; fails after 5 s (the pools' keep-alive is 4 s). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    assert.ok(waited < 5000, 'not within 5 s');
    await sleep(20);
  }
}
