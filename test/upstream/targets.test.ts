// Upstreams with several targets: round-robin, passive health checks, retries.
import assert from 'node:assert/strict';
import { freePort } from '../../src/http/listener.ts';
import { describe, test } from 'node:test';
import { bearer, call, startTestGateway, startUpstream, tokenRequest } from '../helpers.ts';

/** A port nothing listens on. */
const deadPort = () => freePort('127.0.0.1');

const ROUTES = `  get:\n    method: GET\n    path: /v1/pool\n    upstream: pool\n  post:\n    method: POST\n    path: /v1/pool\n    upstream: pool\n`;

describe('several targets', () => {
  test('round-robin over the targets, each with its own base path', async () => {
    const a = await startUpstream((_req, res) => void res.writeHead(200).end('a'));
    const b = await startUpstream((_req, res) => void res.writeHead(200).end('b'));
    const gw = await startTestGateway({ upstreams: `  pool:\n    url: [${a.url}/one, ${b.url}/two]\n`, routes: ROUTES, products: `  pooled:\n    routes: [get, post]\n` });
    try {
      const app = await gw.client('pooled');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const bodies = [];
      for (let i = 0; i < 4; i++) bodies.push((await call(`${gw.url}/v1/pool`, { headers: bearer(token) })).text);
      assert.deepEqual(bodies, ['a', 'b', 'a', 'b']);
      assert.deepEqual([a.received[0]?.url, b.received[0]?.url], ['/one/v1/pool', '/two/v1/pool']);
    } finally {
      await gw.close();
      await a.close();
      await b.close();
    }
  });

  test('a dead target: idempotent calls retry on the next, others do not; then it is skipped', async () => {
    const live = await startUpstream((req, res) => void res.writeHead(200).end(req.method));
    const dead = `http://127.0.0.1:${await deadPort()}`;
    const gw = await startTestGateway({
      upstreams: `  pool:\n    url: [${dead}, ${live.url}]\n    healthCheck: { failures: 2, cooldown: 1h }\n`,
      routes: ROUTES,
      products: `  pooled:\n    routes: [get, post]\n`,
    });
    try {
      const app = await gw.client('pooled');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const post = () => call(`${gw.url}/v1/pool`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'text/plain' }, body: 'x' });
      // First pick is the dead target: GET is retried on the live one.
      const first = await call(`${gw.url}/v1/pool`, { headers: bearer(token) });
      assert.equal(first.status, 200);
      assert.equal(first.text, 'GET');
      // The retry moved the turn on: the next pick is the dead target again, and a POST is not retried.
      const refused = await post();
      assert.equal(refused.status, 502);
      assert.equal(refused.body.code, 'upstream_unavailable');
      // Two failures in a row: the dead target is skipped from now on.
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await post()).status);
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      assert.equal(live.received.filter((r) => r.method === 'POST').length, 4);
    } finally {
      await gw.close();
      await live.close();
    }
  });

  test('a skipped target gets its turn again after its cooldown', async () => {
    const live = await startUpstream((_req, res) => void res.writeHead(200).end('live'));
    const port = await deadPort();
    const clock = { now: Date.now() };
    const gw = await startTestGateway(
      { upstreams: `  pool:\n    url: [http://127.0.0.1:${port}, ${live.url}]\n    healthCheck: { failures: 1, cooldown: 30s }\n`, routes: ROUTES, products: `  pooled:\n    routes: [get, post]\n` },
      { clock: () => clock.now },
    );
    try {
      const app = await gw.client('pooled');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const post = () => call(`${gw.url}/v1/pool`, { method: 'POST', headers: bearer(token) });
      assert.equal((await post()).status, 502, 'the dead target, first in turn');
      assert.deepEqual([(await post()).status, (await post()).status], [200, 200], 'skipped during the cooldown');
      // After the cooldown the dead target gets its turn again (and fails again).
      clock.now += 30_000;
      assert.deepEqual([(await post()).status, (await post()).status].sort(), [200, 502]);
      assert.equal(live.received.length, 3);
    } finally {
      await gw.close();
      await live.close();
    }
  });

  test('a call that reached a target and timed out is not sent again', async () => {
    const slow = await startUpstream((_req, res) => void setTimeout(() => res.writeHead(200).end('late'), 4000).unref());
    const fast = await startUpstream((_req, res) => void res.writeHead(200).end('fast'));
    const gw = await startTestGateway({
      upstreams: `  pool:\n    url: [${slow.url}, ${fast.url}]\n    timeout: 1s\n    retries: 1\n`,
      routes: ROUTES,
      products: `  pooled:\n    routes: [get, post]\n`,
    });
    try {
      const app = await gw.client('pooled');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const res = await call(`${gw.url}/v1/pool`, { headers: bearer(token) });
      assert.equal(res.status, 504);
      assert.equal(fast.received.length, 0, 'not retried: the slow target may have acted on it');
    } finally {
      await gw.close();
      await slow.close();
      await fast.close();
    }
  });
});
