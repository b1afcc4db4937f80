// The gateway as an operator runs it for months, as a real process: reloads under constant load
// (by `gateway reload` and by SIGHUP, one of them a broken file) and a stop under load (SIGTERM
// with keep-alive clients at full speed and a slow call in flight), with one thread and with workers.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, configYaml, startUpstream, tempDir, tokenRequest, type Upstream } from '../helpers.ts';
import { gateway, serve, type Served } from './children.ts';
import { keepAliveLoad } from './load.ts';
import { freePort } from '../../src/http/listener.ts';

const SLOW_MS = 2000;
let adminPort = 0;

let upstream: Upstream;
/** Called when a call of /v1/hang reaches the upstream, which never answers it. */
let hangArrived = () => {};
before(async () => {
  upstream = await startUpstream((req: IncomingMessage, res: ServerResponse) => {
    const answer = () => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    if (req.url === '/v1/slow') setTimeout(answer, SLOW_MS);
    else if (req.url === '/v1/hang') hangArrived();
    else answer();
  });
});
after(() => upstream.close());

/** The test config with a slow route, `routes` added to product hello, and `workers`. */
function yaml(options: { routes?: string; product?: string[]; workers?: number; extra?: string } = {}): string {
  const base = configYaml({
    upstreamUrl: upstream.url,
    upstreams: `  slow:\n    url: ${upstream.url}\n    timeout: 10s\n`,
    routes: `  slow:\n    method: GET\n    path: /v1/slow\n    upstream: slow\n${options.routes ?? ''}`,
    extra: `${options.workers === undefined ? '' : `workers: ${options.workers}\n`}${options.extra ?? ''}`,
  });
  return base
    .replace('admin:\n  port: 0\n', `admin:\n  port: ${adminPort}\n`)
    .replace('log:\n  level: info', 'log:\n  level: info\n  access: false')
    .replace('routes: [hello, echo, backend, admin-only]', `routes: [hello, echo, backend, admin-only, slow${(options.product ?? []).map((r) => `, ${r}`).join('')}]`);
}

const ADDED = '  added:\n    method: GET\n    path: /v1/added\n    upstream: backend\n';

async function workspace(workers?: number) {
  const temp = tempDir();
  const config = path.join(temp.dir, 'gateway.yaml');
  // `gateway reload` finds the admin listener through the config: its port is fixed.
  adminPort = await freePort('127.0.0.1');
  writeFileSync(config, yaml({ ...(workers === undefined ? {} : { workers }) }));
  assert.equal((await gateway(['admin', 'developers', 'create', '--email', 'dev@example.com', '--name', 'Dev', '--config', config])).code, 0);
  const created = await gateway(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'busy', '--product', 'hello', '--json', '--config', config]);
  assert.equal(created.code, 0, created.stderr);
  const app = JSON.parse(created.stdout) as { key: string; secret: string };
  return { temp, config, app };
}

async function tokenFor(url: string, app: { key: string; secret: string }): Promise<string> {
  const issued = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(issued.status, 200, issued.text);
  return (issued.body as { access_token: string }).access_token;
}

for (const workers of [undefined, 2]) {
  const label = workers === undefined ? 'one thread' : `${workers} workers`;

  describe(`reload under load (${label})`, () => {
    let ws: Awaited<ReturnType<typeof workspace>>;
    let gw: Served;
    before(async () => {
      ws = await workspace(workers);
      gw = await serve(ws.config, { args: [] });
    });
    after(async () => {
      await gw.stop('SIGKILL');
      ws.temp.remove();
    });

    test('1,000+ calls across two reloads and one broken file: none fails, and a route added by a reload answers right after it', async () => {
      const token = await tokenFor(gw.url, ws.app);
      const load = keepAliveLoad(gw.url, '/v1/backend/1', bearer(token));
      await load.reached(300);

      // 1. `gateway reload`, through the admin listener: a new route.
      assert.equal((await call(`${gw.url}/v1/added`, { headers: bearer(token) })).status, 404);
      writeFileSync(ws.config, yaml({ routes: ADDED, product: ['added'], ...(workers === undefined ? {} : { workers }) }));
      const reloaded = await gateway(['reload', '--config', ws.config]);
      assert.equal(reloaded.code, 0, reloaded.stderr);
      assert.equal(reloaded.stdout, `reloaded ${ws.config}\n`);
      // Several new connections, so that every worker answers some.
      for (let i = 0; i < 8; i++) {
        const added = await call(`${gw.url}/v1/added`, { headers: { ...bearer(token), connection: 'close' } });
        assert.equal(added.status, 200, added.text);
      }
      await load.reached(600);

      // 2. SIGHUP with a broken file: refused with its line, and the running config keeps serving.
      const before = gw.logs.length;
      writeFileSync(ws.config, yaml({ routes: ADDED.replace('upstream: backend', 'upstream: nowhere'), product: ['added'], ...(workers === undefined ? {} : { workers }) }));
      gw.signal('SIGHUP');
      const refused = await gw.nextLog((e) => e.audit === 'config.reload', before);
      assert.equal(refused.result, 'refused');
      assert.equal(refused.level, 50);
      assert.deepEqual(refused.errors, [`routes.added.upstream: unknown upstream "nowhere" (gateway.yaml:${lineOf(ws.config, 'upstream: nowhere')})`]);
      assert.equal((await call(`${gw.url}/v1/added`, { headers: bearer(token) })).status, 200);
      await load.reached(800);

      // 3. SIGHUP again, with a good file: the added route goes.
      const since = gw.logs.length;
      writeFileSync(ws.config, yaml({ ...(workers === undefined ? {} : { workers }) }));
      gw.signal('SIGHUP');
      assert.equal((await gw.nextLog((e) => e.audit === 'config.reload', since)).result, 'reloaded');
      assert.equal((await call(`${gw.url}/v1/added`, { headers: bearer(token) })).status, 404);
      await load.reached(1000);

      const tally = await load.stop();
      assert.deepEqual({ failures: tally.failures, statuses: tally.statuses, refused: tally.refused }, { failures: [], statuses: [], refused: 0 });
      assert.ok(tally.ok >= 1000, `${tally.ok} calls`);

      const metrics = await call(`${gw.adminUrl}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(metrics.text, /^gateway_config_reloads_total\{result="reloaded"\} 2$/m);
      assert.match(metrics.text, /^gateway_config_reloads_total\{result="refused"\} 1$/m);
    });

    test('a change only a restart can make is refused with a message, and nothing changes', async () => {
      writeFileSync(ws.config, yaml({ ...(workers === undefined ? {} : { workers }) }).replace('  host: 127.0.0.1\n', '  host: 127.0.0.2\n'));
      const refused = await gateway(['reload', '--config', ws.config]);
      assert.equal(refused.code, 1);
      assert.equal(refused.stderr, "error: reload refused; the running config keeps serving:\nlisten.host: the listener's address needs a restart; the running config keeps serving\n");
      assert.equal((await call(`${gw.adminUrl}/readyz`)).status, 200);
    });
  });

  describe(`graceful stop under load (${label})`, () => {
    let ws: Awaited<ReturnType<typeof workspace>>;
    before(async () => {
      ws = await workspace(workers);
    });
    after(() => ws.temp.remove());

    test('SIGTERM with 8 keep-alive clients at full speed: every call is answered 200 or refused at connect, and a 2 s call in flight finishes with 200', async () => {
      const gw = await serve(ws.config, { args: [] });
      const token = await tokenFor(gw.url, ws.app);
      const load = keepAliveLoad(gw.url, '/v1/backend/1', bearer(token));
      await load.reached(500);
      const slow = call(`${gw.url}/v1/slow`, { headers: bearer(token) });
      await sleep(200);
      const exited = gw.stop('SIGTERM');
      // While it drains, it says it is not ready.
      await sleep(200);
      const ready = await call(`${gw.adminUrl}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { status: 'not_ready', reason: 'stopping' });
      // A reload asked for now (logrotate, say) is refused; it does not end the process.
      gw.signal('SIGHUP');

      const tally = await load.refusedAll();
      assert.deepEqual(tally.failures, []);
      assert.deepEqual(tally.statuses, []);
      assert.equal(tally.refused, 8, 'each client ends at a refused connection');
      const finished = await slow;
      assert.equal(finished.status, 200);
      assert.deepEqual(finished.body, { path: '/v1/slow' });
      assert.deepEqual(await exited, { code: 0, signal: null });
      assert.ok(gw.logs.some((e) => e.msg === 'stopped'));
    });

    test('a second signal stops at once, without waiting for the call in flight', async () => {
      const gw = await serve(ws.config, { args: [] });
      const token = await tokenFor(gw.url, ws.app);
      const slow = call(`${gw.url}/v1/slow`, { headers: bearer(token) }).catch((err: unknown) => err);
      await sleep(200);
      gw.signal('SIGTERM');
      await sleep(100);
      const exited = gw.stop('SIGTERM');
      assert.deepEqual(await exited, { code: 1, signal: null });
      assert.ok((await slow) instanceof Error, 'the slow call was cut');
    });
  });
}

test('a call whose upstream never answers is cut when shutdownTimeout ends, and the stop ends', async () => {
  const ws = await workspace();
  writeFileSync(ws.config, yaml({ routes: '  hang:\n    method: GET\n    path: /v1/hang\n    upstream: slow\n', product: ['hang'], extra: 'shutdownTimeout: 1s\n' }));
  const gw = await serve(ws.config, { args: [] });
  try {
    const token = await tokenFor(gw.url, ws.app);
    const arrived = new Promise<void>((resolve) => (hangArrived = resolve));
    const hung = call(`${gw.url}/v1/hang`, { headers: bearer(token) }).then(
      (answer) => answer.status,
      () => 'closed',
    );
    // In flight when the stop begins: the upstream has it (a fixed wait lost that race on a loaded machine).
    await arrived;
    const stopped = performance.now();
    assert.deepEqual(await gw.stop('SIGTERM'), { code: 0, signal: null });
    // The upstream's own timeout is 10 s: the stop did not wait for it.
    assert.ok(performance.now() - stopped < 8000, 'stopped within the shutdown timeout, not the upstream timeout');
    assert.ok(['closed', 502].includes(await hung));
    assert.ok(gw.logs.some((e) => e.msg === 'stopping: cutting the calls still in flight at the end of shutdownTimeout'));
  } finally {
    ws.temp.remove();
  }
});

for (const workers of [undefined, 2]) {
  test(`an admin port already taken: the gateway says so and exits, rather than serve without it (${workers === undefined ? 'one thread' : `${workers} workers`})`, async () => {
    const ws = await workspace(workers);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(adminPort, '127.0.0.1', resolve));
    try {
      const result = await gateway(['--config', ws.config]);
      assert.equal(result.code, 70, result.stderr);
      assert.equal(result.stderr, `error: listen EADDRINUSE: address already in use 127.0.0.1:${adminPort}\n`);
    } finally {
      taken.close();
      ws.temp.remove();
    }
  });
}

/** The 1-based line of the first line of `file` that contains `text`. */
function lineOf(file: string, text: string): number {
  return (
    readFileSync(file, 'utf8')
      .split('\n')
      .findIndex((l) => l.includes(text)) + 1
  );
}
