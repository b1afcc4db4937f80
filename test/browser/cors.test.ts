// The cors policy in real Chromium: a page served from one origin calls a gateway route on another
// port with a bearer token (so the browser preflights) and reads the JSON; a page of an origin the
// policy does not list cannot.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { closeServer, listenOn, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing) process.stderr.write(`\n!!! BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM} !!!\n\n`);

describe('cors in Chromium', { skip: missing }, () => {
  const page = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  let pageOrigin: string;
  let upstream: Upstream;
  let gw: TestGateway;
  let browser: Browser;
  let token: string;

  before(async () => {
    pageOrigin = await listenOn(page);
    upstream = await startUpstream();
    gw = await startTestGateway({
      upstreams: `  api:\n    url: ${upstream.url}\n`,
      routes: `  cors:\n    method: GET\n    path: /v1/cors\n    upstream: api\n    policies:\n      - cors: { origins: ['${pageOrigin}'], exposeHeaders: [X-Request-Id] }\n`,
      products: `  web:\n    routes: [cors]\n`,
    });
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('web'));
    token = res.body.access_token;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
    await closeServer(page);
  });

  /** Runs fetch in a page of `origin`: the answer's status, JSON and X-Request-Id, or the error fetch threw. */
  async function fetchFrom(origin: string, headers: Record<string, string>): Promise<unknown> {
    const tab = await browser.newPage();
    try {
      await tab.goto(`${origin}/`);
      return await tab.evaluate(
        async ([url, h]) => {
          try {
            const res = await fetch(url, { headers: h });
            return { status: res.status, body: await res.json(), requestId: res.headers.get('x-request-id') !== null };
          } catch (err) {
            return { error: (err as Error).name };
          }
        },
        [`${gw.url}/v1/cors`, headers] as const,
      );
    } finally {
      await tab.close();
    }
  }

  test('a page of a listed origin calls the route with a bearer token and reads the JSON and the exposed header', async () => {
    assert.deepEqual(await fetchFrom(pageOrigin, { authorization: `Bearer ${token}` }), { status: 200, body: { upstream: true, path: '/v1/cors' }, requestId: true });
    // It reads the gateway's own 401 too.
    assert.deepEqual(await fetchFrom(pageOrigin, { authorization: 'Bearer wrong' }), {
      status: 401,
      body: { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'the access token is invalid, expired or revoked', code: 'invalid_token' },
      requestId: true,
    });
    // The preflights never reached the upstream; the one good call did.
    assert.deepEqual(
      upstream.received.map((r) => r.method),
      ['GET'],
    );
  });

  test('a page of another origin (localhost is not 127.0.0.1) cannot read it', async () => {
    const other = pageOrigin.replace('127.0.0.1', 'localhost');
    assert.deepEqual(await fetchFrom(other, { authorization: `Bearer ${token}` }), { error: 'TypeError' });
  });
});
