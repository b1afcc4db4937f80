// Request validation: query and JSON body against JSON Schemas, or the request against an OpenAPI 3 operation.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/load.ts';
import { bearer, call, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const ROUTES = `
  search:
    method: GET
    path: /v1/search
    upstream: backend
    policies:
      - validateRequest:
          query:
            type: object
            required: [q]
            properties:
              q: { type: string, minLength: 1 }
              limit: { type: integer, minimum: 1, maximum: 100 }
              sort: { enum: [asc, desc] }
              ids: { type: array, items: { type: integer } }
  create:
    method: POST
    path: /v1/create
    upstream: backend
    policies:
      - validateRequest:
          maxBodySize: 64
          body:
            type: object
            required: [name]
            properties:
              name: { type: string }
              tags: { type: array, items: { type: string } }
            additionalProperties: false
  items:
    method: GET
    path: /v1/items/{id}
    upstream: backend
    policies:
      - validateRequest: { openapi: ./openapi.yaml }
  items-create:
    method: POST
    path: /v1/items
    upstream: backend
    policies:
      - validateRequest: { openapi: ./openapi.yaml }
`;

const OPENAPI = `openapi: 3.0.3
info: { title: items, version: '1' }
paths:
  /v1/items/{itemId}:
    parameters:
      - { name: itemId, in: path, required: true, schema: { type: string } }
    get:
      parameters:
        - $ref: '#/components/parameters/Limit'
        - { name: fields, in: query, schema: { type: string, pattern: '^[a-z,]+$' } }
      responses:
        '200': { description: ok }
  /v1/items:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Item' }
      responses:
        '201': { description: created }
components:
  parameters:
    Limit: { name: limit, in: query, required: true, schema: { type: integer, minimum: 1 } }
  schemas:
    Item:
      type: object
      required: [name, price]
      properties:
        name: { type: string }
        price: { type: number, minimum: 0 }
`;

describe('validateRequest', () => {
  let upstream: Upstream;
  let gw: TestGateway;
  let token: string;
  let dir: { dir: string; remove: () => void };
  before(async () => {
    upstream = await startUpstream();
    dir = tempDir();
    writeFileSync(path.join(dir.dir, 'openapi.yaml'), OPENAPI);
    gw = await startTestGateway({ upstreamUrl: upstream.url, routes: ROUTES, products: `  validated:\n    routes: [search, create, items, items-create]\n` }, { dir: dir.dir });
    const app = await gw.client('validated');
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    dir.remove();
  });

  async function refused(url: string, init: RequestInit, errors: { in?: string; name?: string; pointer: string; message: string }[]): Promise<void> {
    const seen = upstream.received.length;
    const res = await call(`${gw.url}${url}`, { ...init, headers: { ...bearer(token), ...(init.headers as Record<string, string> | undefined) } });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(res.body, { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'the request is not valid', code: 'invalid_request', errors });
    assert.equal(upstream.received.length, seen, 'the upstream never saw the call');
  }

  test('query: typed, required, enum; every failure listed', async () => {
    await refused('/v1/search', {}, [{ pointer: '/query/q', message: 'is required' }]);
    await refused('/v1/search?q=x&limit=0', {}, [{ pointer: '/query/limit', message: 'must be >= 1' }]);
    await refused('/v1/search?limit=abc&sort=up', {}, [
      { pointer: '/query/q', message: 'is required' },
      { pointer: '/query/limit', message: 'must be integer' },
      { pointer: '/query/sort', message: 'must be equal to one of the allowed values' },
    ]);
    // What ajv would coerce but an upstream would read otherwise.
    await refused('/v1/search?q=x&limit=0x64', {}, [{ pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    await refused('/v1/search?q=x&limit=1e2', {}, [{ pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    await refused('/v1/search?q=x&ids=1&ids=0x10', {}, [{ pointer: '/query/ids/1', message: 'must be a plain decimal integer, without a fraction' }]);
    // Found by the attack pass: 1 to ajv, 0 to parseInt and intval, under the schema's minimum;
    // 100.0 is 100 to ajv and an error to int() (Flask then applies no limit).
    await refused('/v1/search?q=x&limit=0.99999999999999999', {}, [{ pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    await refused('/v1/search?q=x&limit=100.0', {}, [{ pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    await refused('/v1/search?q=x&limit=12345678901234567890', {}, [{ pointer: '/query/limit', message: 'must be <= 100' }]);
    await refused('/v1/search?q=x&ids=12345678901234567890', {}, [{ pointer: '/query/ids/0', message: 'must be a plain decimal integer, without a fraction' }]);
    await refused('/v1/search?q=x&ids=1&ids=2.0', {}, [{ pointer: '/query/ids/1', message: 'must be a plain decimal integer, without a fraction' }]);
    const ok = await call(`${gw.url}/v1/search?q=tea&limit=100&sort=asc&extra=1`, { headers: bearer(token) });
    assert.equal(ok.status, 200);
    assert.equal(upstream.received.at(-1)?.url, '/v1/search?q=tea&limit=100&sort=asc&extra=1', 'forwarded as sent');
  });

  test("query-parser-differential: a ';' separator or an undeclared bracketed name is a 400, as Rack, PHP and qs would read limit=1000", async () => {
    await refused('/v1/search?q=x;limit=1000', {}, [{ pointer: '/query', message: "must separate parameters with '&' only, not ';'" }]);
    await refused('/v1/search?q=x&limit%5B%5D=1000', {}, [{ pointer: '/query/limit[]', message: 'is a bracketed name the schema does not declare' }]);
    await refused('/v1/search?q=x&limit[]=1000', {}, [{ pointer: '/query/limit[]', message: 'is a bracketed name the schema does not declare' }]);
    await refused('/v1/search?q=x&limit[a]=1000&limit]=1', {}, [
      { pointer: '/query/limit[a]', message: 'is a bracketed name the schema does not declare' },
      { pointer: '/query/limit]', message: 'is a bracketed name the schema does not declare' },
    ]);
    // A ';' inside a value is data, when it is sent encoded.
    const ok = await call(`${gw.url}/v1/search?q=a%3Bb&limit=100`, { headers: bearer(token) });
    assert.equal(ok.status, 200);
    assert.equal(upstream.received.at(-1)?.url, '/v1/search?q=a%3Bb&limit=100');
  });

  test('JSON body: schema failures, bad JSON, media type, size', async () => {
    const post = (body: string, type = 'application/json') => ({ method: 'POST', headers: { 'content-type': type }, body });
    await refused('/v1/create', post('{"tags":[1]}'), [
      { pointer: '/body/name', message: 'is required' },
      { pointer: '/body/tags/0', message: 'must be string' },
    ]);
    await refused('/v1/create', post('{"name":"a","x":1}'), [{ pointer: '/body/x', message: 'is not allowed' }]);
    await refused('/v1/create', post('{"name":'), [{ pointer: '/body', message: 'is not valid JSON' }]);
    await refused('/v1/create', { method: 'POST' }, [{ pointer: '/body', message: 'is required' }]);

    const wrongType = await call(`${gw.url}/v1/create`, { ...post('name=a', 'application/x-www-form-urlencoded'), headers: { ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(wrongType.status, 415);
    assert.equal(wrongType.body.code, 'unsupported_media_type');
    const tooBig = await call(`${gw.url}/v1/create`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(80) }) });
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.body.code, 'payload_too_large');

    // A chunked body (no Content-Length) is read and validated the same way.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'));
        controller.enqueue(new TextEncoder().encode('7}'));
        controller.close();
      },
    });
    const seen = upstream.received.length;
    const bad = await call(`${gw.url}/v1/create`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: chunked, duplex: 'half' } as RequestInit);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [{ pointer: '/body/name', message: 'must be string' }]);
    assert.equal(upstream.received.length, seen);
    const ok = await call(`${gw.url}/v1/create`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json; charset=utf-8' }, body: '{"name":"pot","tags":["tea"]}' });
    assert.equal(ok.status, 200);
    assert.equal(upstream.received.at(-1)?.body, '{"name":"pot","tags":["tea"]}', 'the upstream got the same bytes');
  });

  test('JSON body as the upstream reads it: a member twice or an inexact number is a 400; a charset other than UTF-8, 415', async () => {
    const post = (body: string, type = 'application/json') => ({ method: 'POST', headers: { 'content-type': type }, body });
    await refused('/v1/create', post('{"name":"a","name":7}'), [{ pointer: '/body/name', message: 'is given more than once' }]);
    await refused('/v1/create', post('{"name":"a","tags":[9007199254740993]}'), [
      { pointer: '/body/tags/0', message: 'must be a number a double holds exactly (no more digits than it keeps, within its range)' },
    ]);
    const seen = upstream.received.length;
    const utf7 = await call(`${gw.url}/v1/create`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json; charset=utf-7' }, body: '{"name":"a+ACIALAAi-x+ACIAOgA5-"}' });
    assert.deepEqual([utf7.status, utf7.body.detail, upstream.received.length], [415, 'a application/json body must be UTF-8 (charset=utf-8 or none)', seen]);
  });

  test('OpenAPI 3: query parameters (with $ref) of the operation the route matches', async () => {
    await refused('/v1/items/7', {}, [{ in: 'query', name: 'limit', pointer: '/query/limit', message: 'is required' }]);
    await refused('/v1/items/7?limit=2&fields=A', {}, [{ in: 'query', name: 'fields', pointer: '/query/fields', message: 'must match pattern "^[a-z,]+$"' }]);
    await refused('/v1/items/7?limit=2.0', {}, [{ in: 'query', name: 'limit', pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    assert.equal((await call(`${gw.url}/v1/items/7?limit=2&fields=name,price`, { headers: bearer(token) })).status, 200);
  });

  test('OpenAPI 3: a required JSON body with a $ref schema', async () => {
    const post = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await refused('/v1/items', { method: 'POST' }, [{ in: 'body', pointer: '/body', message: 'is required' }]);
    await refused('/v1/items', post('{"name":"pot","price":-1}'), [{ in: 'body', pointer: '/body/price', message: 'must be >= 0' }]);
    const ok = await call(`${gw.url}/v1/items`, { ...post('{"name":"pot","price":3}'), headers: { ...bearer(token), 'content-type': 'application/json' } });
    assert.equal(ok.status, 200);
  });
});

describe('validateRequest configuration errors', () => {
  async function configError(routes: string, files: Record<string, string> = {}): Promise<string> {
    const dir = tempDir();
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir.dir, name), text);
    try {
      const gw = await startTestGateway({ routes }, { dir: dir.dir });
      await gw.close();
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      throw err;
    } finally {
      dir.remove();
    }
    assert.fail('the configuration loaded');
  }

  test('a schema ajv cannot compile, a missing document, an operation the document lacks', async () => {
    const route = (options: string) => `  v:\n    method: GET\n    path: /v1/v\n    upstream: mock\n    policies:\n      - validateRequest: ${options}\n`;
    assert.match(await configError(route('{ query: { type: nonsense } }')), /^routes\.v\.policies\[0\]\.validateRequest\.query: is not a valid JSON Schema: .* \(gateway\.yaml:\d+\)$/);
    assert.match(await configError(route('{ openapi: ./missing.yaml }')), /^routes\.v\.policies\[0\]\.validateRequest\.openapi: cannot read \/.*\/missing\.yaml: no such file \(gateway\.yaml:\d+\)$/);
    assert.match(
      await configError(route('{ openapi: ./api.yaml }'), { 'api.yaml': OPENAPI }),
      /^routes\.v\.policies\[0\]\.validateRequest\.openapi: \.\/api\.yaml has no operation GET \/v1\/v \(gateway\.yaml:\d+\)$/,
    );
  });
});
