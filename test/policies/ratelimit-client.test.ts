// The client of docs/policies.md that backs off by the RateLimit headers, run as a reader would
// copy it, against a gateway with a spike arrest: it waits out a 429's Retry-After, and paces
// itself by the headers so that its next call is not refused.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { bearer, startTestGateway, tokenRequest } from '../helpers.ts';

/** The ```js block of the section "RateLimit headers" of docs/policies.md. */
function documentedClient(): string {
  const text = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'policies.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('RateLimit headers\n')) ?? assert.fail('docs/policies.md: no section "RateLimit headers"');
  return /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? assert.fail('the section has no js block');
}

test("the documented client waits out a 429's Retry-After, then paces itself by RateLimit so that no call is refused", async () => {
  const gw = await startTestGateway({
    routes: '  paced:\n    method: GET\n    path: /v1/paced\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 2ps }\n',
    products: '  paced:\n    routes: [paced]\n',
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'ratelimit-client-'));
  const realFetch = globalThis.fetch;
  const seen: number[] = [];
  try {
    const app = await gw.client('paced');
    const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
    const init = { headers: bearer(token) };
    const url = `${gw.url}/v1/paced`;
    // Another caller of the same app has just used the rate up.
    assert.equal((await realFetch(url, init)).status, 200);
    writeFileSync(path.join(dir, 'client.mjs'), documentedClient());
    const { call } = (await import(pathToFileURL(path.join(dir, 'client.mjs')).href)) as { call: (url: string, init: RequestInit) => Promise<Response> };
    globalThis.fetch = async (input, options) => {
      const res = await realFetch(input, options);
      seen.push(res.status);
      return res;
    };
    const statuses = [(await call(url, init)).status, (await call(url, init)).status, (await call(url, init)).status];
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.deepEqual(seen, [429, 200, 200, 200], 'one 429, before the client knew the headers; none after');
  } finally {
    globalThis.fetch = realFetch;
    rmSync(dir, { recursive: true, force: true });
    await gw.close();
  }
});
