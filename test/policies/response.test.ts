// Response validation and transforms on a real upstream's answers.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { bearer, call, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

// The upstream answers /v1/<route>/<status>/<body> with that status and body, chunked (no Content-Length).
function answer(url: string): { status: number; body: string } {
  const [, , , status = '200', body = ''] = url.split('/');
  return { status: Number(status), body: decodeURIComponent(body) };
}

const route = (name: string, policies: string) => `  ${name}:\n    method: GET\n    path: /v1/${name}/{status}/{body}\n    upstream: backend\n    policies:\n${policies}`;

const ROUTES = [
  route(
    'enforced',
    `      - validateResponse:\n          responses:\n            '200': { type: object, required: [id], properties: { id: { type: integer } } }\n            4XX: { type: object, required: [error] }\n`,
  ),
  route('reported', `      - validateResponse:\n          mode: report\n          responses:\n            default: { type: object, required: [id] }\n`),
  route('fromdoc', `      - validateResponse: { openapi: ./openapi.yaml }\n`),
  route('headers', `      - transformResponse:\n          headers:\n            set: { x-powered-by: token-gateway }\n            remove: [x-internal]\n`),
  route(
    'body',
    `      - transformResponse:\n          body:\n            remove: [/secret, /items/0]\n            rename: { /old: /renamed/new }\n            set:\n              - { pointer: /meta/app, from: app }\n              - { pointer: /meta/product, from: product }\n              - { pointer: /meta/developer, from: developer }\n              - { pointer: /meta/version, value: { major: 1 } }\n`,
  ),
].join('');

const OPENAPI = `openapi: 3.0.3
info: { title: t, version: '1' }
paths:
  /v1/fromdoc/{s}/{b}:
    parameters:
      - { name: s, in: path, required: true, schema: { type: integer } }
      - { name: b, in: path, required: true, schema: { type: string } }
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
components:
  schemas:
    Thing: { type: object, required: [name], properties: { name: { type: string } } }
`;

function raw(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('response policies', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let token: string;
  let dir: { dir: string; remove: () => void };
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const { status, body } = answer(req.url ?? '/');
      res.writeHead(status, { 'content-type': 'application/json', 'x-internal': 'yes', 'x-kept': 'yes' });
      res.write(body.slice(0, 3));
      res.end(body.slice(3));
    });
    dir = tempDir();
    writeFileSync(path.join(dir.dir, 'openapi.yaml'), OPENAPI);
    gw = await startTestGateway({ upstreamUrl: upstream.url, routes: ROUTES, products: `  shaped:\n    routes: [enforced, reported, fromdoc, headers, body]\n` }, { dir: dir.dir });
    const app = await gw.client('shaped', 'shaper');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    dir.remove();
  });

  const get = (name: string, status: number, body: unknown) =>
    call(`${gw.url}/v1/${name}/${status}/${encodeURIComponent(typeof body === 'string' ? body : JSON.stringify(body))}`, { headers: bearer(token) });

  test('enforce: a valid answer passes, an invalid one is a 502 and never reaches the client', async () => {
    const ok = await get('enforced', 200, { id: 7 });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, '{"id":7}');
    const bad = await get('enforced', 200, { id: 'seven', secret: 'internal' });
    assert.equal(bad.status, 502);
    assert.deepEqual(bad.body, {
      type: 'about:blank',
      title: 'Bad Gateway',
      status: 502,
      detail: 'the upstream answered with a response that does not match its schema',
      code: 'invalid_upstream_response',
    });
    assert.ok(!bad.text.includes('internal'));
    assert.equal((await get('enforced', 404, { error: 'nope' })).status, 404, '4XX schema matched');
    assert.equal((await get('enforced', 404, { nope: 1 })).status, 502, '4XX schema enforced');
    assert.equal((await get('enforced', 500, 'not json')).status, 500, 'no schema for 500: passed through');
    assert.equal((await get('enforced', 200, 'not json')).status, 502);
    const warning = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'upstream response does not match its schema');
    assert.deepEqual(warning?.errors, [{ pointer: '/id', message: 'must be integer' }]);
  });

  test('enforce: a JSON answer that names a member twice, or holds a number a double cannot (1e400), is a 502', async () => {
    const before = gw.logs.length;
    assert.equal((await get('enforced', 200, '{"id":"seven","id":7}')).status, 502);
    assert.equal((await get('enforced', 200, '{"id":7,"size":1e400}')).status, 502);
    const warnings = gw.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'upstream response does not match its schema');
    assert.deepEqual(
      warnings.map((w) => w.errors),
      [[{ pointer: '/id', message: 'is given more than once' }], [{ pointer: '/size', message: 'must be a number a double holds exactly (no more digits than it keeps, within its range)' }]],
    );
  });

  test('report: an invalid answer is logged and passed through', async () => {
    const before = gw.logs.length;
    const res = await get('reported', 201, { other: true });
    assert.equal(res.status, 201);
    assert.equal(res.text, '{"other":true}');
    const warning = gw.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'upstream response does not match its schema');
    assert.deepEqual(warning?.errors, [{ pointer: '/id', message: 'is required' }]);
    assert.equal(warning?.enforced, false);
  });

  test('OpenAPI 3: the operation’s response schema, with $ref', async () => {
    assert.equal((await get('fromdoc', 200, { name: 'pot' })).status, 200);
    assert.equal((await get('fromdoc', 200, { name: 3 })).status, 502);
  });

  test('header transforms keep the body streaming', async () => {
    const res = await raw(`${gw.url}/v1/headers/200/${encodeURIComponent('{"a":1}')}`, bearer(token));
    assert.equal(res.status, 200);
    assert.equal(res.body, '{"a":1}');
    assert.equal(res.headers['x-powered-by'], 'token-gateway');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.headers['x-kept'], 'yes');
    assert.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, not held');
    assert.equal(res.headers['content-length'], undefined);
  });

  test('body transforms: remove, rename and set by JSON pointer, with values from the request context', async () => {
    const res = await raw(`${gw.url}/v1/body/200/${encodeURIComponent(JSON.stringify({ secret: 's', old: 'o', items: ['a', 'b'], meta: { keep: 1 } }))}`, bearer(token));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      items: ['b'],
      meta: { keep: 1, app: 'shaper', product: 'shaped', developer: 'dev@example.com', version: { major: 1 } },
      renamed: { new: 'o' },
    });
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
    // Labelled JSON but unreadable: fail closed rather than let a field to remove slip out.
    const broken = await raw(`${gw.url}/v1/body/200/${encodeURIComponent('{"secret":"s"')}`, bearer(token));
    assert.equal(broken.status, 502);
    assert.ok(!broken.body.includes('"s"'));
  });
});

describe('held answers and compression', () => {
  test('a held route asks for identity; an upstream that compresses anyway is refused', async () => {
    const upstream = await startUpstream((req, res) => {
      if (req.url?.startsWith('/v1/stubborn')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync('{"secret":"s"}'));
        return;
      }
      const gzip = /gzip/.test(String(req.headers['accept-encoding']));
      res.writeHead(200, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
      res.end(gzip ? gzipSync('{"secret":"s","id":1}') : '{"secret":"s","id":1}');
    });
    const transform = '      - transformResponse: { body: { remove: [/secret] } }\n';
    const routes = `  plain:\n    method: GET\n    path: /v1/plain\n    upstream: backend\n    policies:\n${transform}  stubborn:\n    method: GET\n    path: /v1/stubborn\n    upstream: backend\n    policies:\n${transform}  empty:\n    method: GET\n    path: /v1/empty\n    upstream: mock204\n    policies:\n      - validateResponse: { responses: { 2XX: { type: object } } }\n`;
    const gw = await startTestGateway({
      upstreamUrl: upstream.url,
      upstreams: '  mock204:\n    mock: { status: 204, body: "" }\n',
      routes,
      products: `  zipped:\n    routes: [plain, stubborn, empty]\n`,
    });
    try {
      const app = await gw.client('zipped');
      const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
      const headers = { ...bearer(token), 'accept-encoding': 'gzip' };
      const plain = await raw(`${gw.url}/v1/plain`, headers);
      assert.equal(plain.body, '{"id":1}');
      assert.equal(upstream.received.at(-1)?.headers['accept-encoding'], 'identity');
      const stubborn = await raw(`${gw.url}/v1/stubborn`, headers);
      assert.equal(stubborn.status, 502);
      assert.equal(JSON.parse(stubborn.body).code, 'upstream_response_encoded');
      assert.equal((await raw(`${gw.url}/v1/empty`, headers)).status, 204, 'a 204 has no body to validate');
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
