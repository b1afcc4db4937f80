// Streamed answers: undici writes the upstream's body straight into the client's response.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { bearer, call, rawExchange, rawHead, startTestGateway, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

describe('streamed answers', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let token: string;
  /** Resolves when the upstream sees the gateway's request to /slow closed. */
  let slowClosed: Promise<void>;
  let onSlowClosed: () => void;

  before(async () => {
    slowClosed = new Promise((resolve) => (onSlowClosed = resolve));
    upstream = await startUpstream((req, res) => {
      if (req.url === '/v1/big') {
        // 8 MiB in 64 KiB chunks, more than any socket buffer: the client reads under backpressure.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(8 * 1024 * 1024) });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = 128;
        const pump = () => {
          while (left > 0) {
            left--;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      } else if (req.url === '/v1/broken') {
        // Headers and part of the body, then the connection drops.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        res.write('partial');
        setTimeout(() => res.socket?.destroy(), 20);
      } else {
        // /v1/slow: a first chunk, then nothing until the client has gone.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first');
        res.once('close', () => onSlowClosed());
      }
    });
    const route = (name: string) => `  ${name}:\n    method: GET\n    path: /v1/${name}\n    upstream: up\n`;
    gw = await startTestGateway({ upstreams: `  up:\n    url: ${upstream.url}\n`, routes: route('big') + route('broken') + route('slow'), products: `  streams:\n    routes: [big, broken, slow]\n` });
    const app = await gw.client('streams');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('a large answer arrives whole, read slowly by the client', async () => {
    const res = await fetch(`${gw.url}/v1/big`, { headers: bearer(token) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(8 * 1024 * 1024));
    let size = 0;
    for await (const chunk of res.body!) {
      size += chunk.length;
      if (size < 1024 * 1024) await new Promise((r) => setTimeout(r, 1));
    }
    assert.equal(size, 8 * 1024 * 1024);
  });

  test('an upstream dropping mid-body: the client sees the connection end early; the gateway logs it and goes on', async () => {
    const res = await fetch(`${gw.url}/v1/broken`, { headers: bearer(token) });
    assert.equal(res.status, 200);
    await assert.rejects(res.text());
    await new Promise((r) => setTimeout(r, 50));
    const lines = gw.logs.filter((l) => l.includes('"path":"/v1/broken"'));
    assert.ok(
      lines.some((l) => l.includes('"level":50') && l.includes('the upstream could not be reached')),
      lines.join(''),
    );
    assert.ok(
      lines.some((l) => l.includes('"error":"upstream_unavailable"')),
      lines.join(''),
    );
    assert.equal((await call(`${gw.url}/v1/big`, { headers: bearer(token) })).status, 200);
  });

  test('a client leaving mid-answer: the upstream request is closed at once, logged as the client closing', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request(`${gw.url}/v1/slow`, { headers: bearer(token) }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
      req.once('error', reject);
      req.end();
    });
    await slowClosed;
    await new Promise((r) => setTimeout(r, 50));
    const line = gw.logs.find((l) => l.includes('"path":"/v1/slow"'));
    assert.ok(line?.includes('"error":"client_closed_request"'), line);
    assert.ok(!gw.logs.some((l) => l.includes('"level":50') && l.includes('/v1/slow')), 'no error-level line for a client leaving');
  });
});

describe('bodiless answers', () => {
  test('a 204 goes out without Content-Length or Transfer-Encoding, streamed or held (RFC 9110 §8.6); a 304 keeps the upstream Content-Length', async () => {
    const upstream = await startUpstream((req, res) => {
      // Node sends a Content-Length it is given, even on a 204.
      if (req.url!.startsWith('/v1/gone')) res.writeHead(204, { 'content-length': '0', 'x-upstream': 'yes' }).end();
      else res.writeHead(304, { 'content-length': '42', etag: '"v1"' }).end();
    });
    const held = '    policies:\n      - validateResponse: { responses: { 2XX: { type: object } } }\n';
    const route = (name: string, policies = '') => `  ${name}:\n    method: GET\n    path: /v1/${name}\n    upstream: up\n${policies}`;
    const gw = await startTestGateway({
      upstreams: `  up:\n    url: ${upstream.url}\n`,
      routes: route('gone') + route('gone-held', held) + route('same') + route('same-held', held),
      products: `  streams:\n    routes: [gone, gone-held, same, same-held]\n`,
    });
    try {
      const app = await gw.client('streams');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      /** The answer as the client's socket read it. */
      const head = async (path: string) => rawHead(await rawExchange(gw.url, `GET ${path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`));
      for (const path of ['/v1/gone', '/v1/gone-held']) {
        const answer = await head(path);
        assert.equal(answer.status, 'HTTP/1.1 204 No Content', path);
        assert.deepEqual(answer.headers.get('x-upstream'), ['yes'], path);
        assert.deepEqual([answer.headers.get('content-length'), answer.headers.get('transfer-encoding')], [undefined, undefined], path);
        assert.equal(answer.body, '', path);
      }
      for (const path of ['/v1/same', '/v1/same-held']) {
        const answer = await head(path);
        assert.equal(answer.status, 'HTTP/1.1 304 Not Modified', path);
        assert.deepEqual([answer.headers.get('content-length'), answer.headers.get('transfer-encoding')], [['42'], undefined], path);
        assert.equal(answer.body, '', path);
      }
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
