// Response validation from an OpenAPI document: off unless a route asks for it (`validateResponse`
// on the document, a tag or one operation, or on a route written out with `openapi: file`); the
// status, content type, body and required headers checked against the operation's responses; a
// mismatch logged with the route and pointer, then answered 502 (enforce) or passed on (report).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, call, configError, startTestGateway, startUpstream, tempDir, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';

const DOC = `openapi: 3.1.0
info: { title: Things, version: '1' }
servers:
  - url: /api
paths:
  /things/{id}:
    get:
      operationId: getThing
      tags: [things]
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
      responses:
        '200':
          description: a thing
          headers:
            X-Rate: { required: true, schema: { type: integer } }
            X-Note: { schema: { type: string, maxLength: 5 } }
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
        '4XX':
          description: a refusal
          content:
            application/problem+json:
              schema: { type: object, required: [title] }
    delete:
      operationId: deleteThing
      tags: [things]
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
      responses:
        '204': { description: deleted }
  /things:
    post:
      operationId: createThing
      tags: [things]
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/NewThing' }
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
  /mixed:
    post:
      operationId: postMixed
      tags: [things]
      requestBody:
        content:
          '*/*': {}
          'application/json; charset=utf-8':
            schema: { type: object, required: [x] }
      responses:
        '200':
          description: a thing, or anything
          content:
            '*/*': {}
            'application/json; charset=utf-8':
              schema: { $ref: '#/components/schemas/Thing' }
  /tree:
    get:
      operationId: getTree
      tags: [things]
      responses:
        '200':
          description: a tree
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Node' }
  /reported/{id}:
    get:
      operationId: reportThing
      parameters:
        - { name: id, in: path, required: true, schema: { type: integer } }
      responses:
        default:
          description: a thing
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
  /plain:
    get:
      operationId: plain
      responses:
        '200':
          description: a thing
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Thing' }
components:
  schemas:
    Node:
      type: object
      properties:
        child: { $ref: '#/components/schemas/Node' }
    Thing:
      type: object
      required: [id, name, password]
      properties:
        id: { $ref: '#/components/schemas/Id' }
        name: { type: string }
        password: { type: string, writeOnly: true }
    Id: { type: integer, readOnly: true }
    NewThing:
      allOf:
        - $ref: '#/components/schemas/Thing'
        - required: [id, tag]
          properties:
            tag: { type: string }
`;

/** What the upstream answers next. */
let next: { status: number; headers?: Record<string, string | string[]>; body?: string } = { status: 200 };

describe('response validation from an OpenAPI document', () => {
  let gateway: TestGateway;
  let upstream: Upstream;
  let token: string;

  before(async () => {
    upstream = await startUpstream((_req, res) => void res.writeHead(next.status, next.headers ?? {}).end(next.body ?? ''));
    const temp = tempDir();
    writeFileSync(path.join(temp.dir, 'things.yaml'), DOC);
    gateway = await startTestGateway(
      {
        upstreamUrl: upstream.url,
        extra: `openapi:
  things:
    file: things.yaml
    upstream: backend
    tags:
      things:
        policies:
          - validateResponse: {}
    operations:
      reportThing:
        policies:
          - validateResponse: { mode: report }
`,
        routes: `  hand:
    method: GET
    path: /things/{thing}
    upstream: backend
    policies:
      - validateResponse: { openapi: things.yaml }
`,
        products: '  things:\n    openapi: [things]\n    routes: [hand]',
      },
      { dir: temp.dir },
    );
    const app = await gateway.client('things');
    token = (await tokenRequest(gateway.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const json = (value: unknown, headers: Record<string, string | string[]> = {}) => ({
    status: 200,
    headers: { 'content-type': 'application/json', 'x-rate': '7', ...headers },
    body: JSON.stringify(value),
  });

  /** Calls `path` with the upstream answering `answer`; returns the gateway's answer and the warning it logged, if any. */
  async function through(path: string, answer: typeof next, method = 'GET') {
    next = answer;
    const before = gateway.logs.length;
    const res = await call(`${gateway.url}${path}`, { method, headers: bearer(token) });
    const warning = gateway.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'upstream response does not match its schema');
    return { res, warning };
  }

  const BAD_GATEWAY = {
    type: 'about:blank',
    title: 'Bad Gateway',
    status: 502,
    detail: 'the upstream answered with a response that does not match its schema',
    code: 'invalid_upstream_response',
  };

  it('passes an answer the document allows, as it came', async () => {
    const { res, warning } = await through('/api/things/1', json({ id: 1, name: 'pot' }, { 'x-note': 'hi' }));
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"id":1,"name":"pot"}');
    assert.equal(res.headers.get('x-rate'), '7');
    assert.equal(warning, undefined);
  });

  it('enforce: a body its schema refuses is 502, logged with the route, the path and each pointer', async () => {
    const { res, warning } = await through('/api/things/1', json({ id: 'one', secret: 'internal' }));
    assert.equal(res.status, 502);
    assert.deepEqual(res.body, BAD_GATEWAY);
    assert.ok(!res.text.includes('internal'));
    assert.equal(warning.route, 'getThing');
    assert.equal(warning.path, '/api/things/1');
    assert.equal(warning.status, 200);
    assert.equal(warning.enforced, true);
    assert.deepEqual(warning.errors, [
      { in: 'body', pointer: '/body/name', message: 'is required' },
      { in: 'body', pointer: '/body/id', message: 'must be integer' },
    ]);
  });

  it('checks required headers, and the schemas of the headers present', async () => {
    const missing = await through('/api/things/1', { ...json({ id: 1, name: 'pot' }), headers: { 'content-type': 'application/json' } });
    assert.equal(missing.res.status, 502);
    assert.deepEqual(missing.warning.errors, [{ in: 'header', name: 'x-rate', pointer: '/header/x-rate', message: 'is required' }]);
    const wrong = await through('/api/things/1', json({ id: 1, name: 'pot' }, { 'x-rate': 'lots', 'x-note': 'far too long' }));
    assert.equal(wrong.res.status, 502);
    assert.deepEqual(wrong.warning.errors, [
      { in: 'header', name: 'x-rate', pointer: '/header/x-rate', message: 'must be integer' },
      { in: 'header', name: 'x-note', pointer: '/header/x-note', message: 'must NOT have more than 5 characters' },
    ]);
  });

  it('checks the content type against the media types declared for the status', async () => {
    const { res, warning } = await through('/api/things/1', json({ id: 1, name: 'pot' }, { 'content-type': 'text/html' }));
    assert.equal(res.status, 502);
    assert.deepEqual(warning.errors, [{ in: 'header', name: 'content-type', pointer: '/header/content-type', message: 'is text/html; the document declares application/json for 200' }]);
    const notJson = await through('/api/things/1', { ...json(null), body: '{"id":' });
    assert.deepEqual(notJson.warning.errors, [{ in: 'body', pointer: '/body', message: 'is not valid JSON' }]);
    const empty = await through('/api/things/1', { ...json(null), body: '' });
    assert.deepEqual(empty.warning.errors, [{ in: 'body', pointer: '/body', message: 'is empty; the document declares application/json for 200' }]);
  });

  it('matches the status exactly, then by its class (4XX), then default; an undeclared status is a mismatch', async () => {
    const refusal = await through('/api/things/1', { status: 404, headers: { 'content-type': 'application/problem+json' }, body: '{"title":"Not Found"}' });
    assert.equal(refusal.res.status, 404);
    assert.equal(refusal.warning, undefined);
    const badRefusal = await through('/api/things/1', { status: 409, headers: { 'content-type': 'application/problem+json' }, body: '{}' });
    assert.equal(badRefusal.res.status, 502);
    assert.deepEqual(badRefusal.warning.errors, [{ in: 'body', pointer: '/body/title', message: 'is required' }]);
    const undeclared = await through('/api/things/1', { status: 500, headers: { 'content-type': 'text/plain' }, body: 'stack trace' });
    assert.equal(undeclared.res.status, 502);
    assert.deepEqual(undeclared.warning.errors, [{ in: 'status', pointer: '/status', message: 'is 500, which the document does not declare for this operation' }]);
  });

  it('an answer without a body where the document declares none passes; one with a body does not', async () => {
    const deleted = await through('/api/things/1', { status: 204 }, 'DELETE');
    assert.equal(deleted.res.status, 204);
    assert.equal(deleted.warning, undefined);
    const undeclared = await through('/api/things/1', json({ id: 1, name: 'pot' }), 'DELETE');
    assert.equal(undeclared.res.status, 502);
    assert.deepEqual(undeclared.warning.errors, [{ in: 'status', pointer: '/status', message: 'is 200, which the document does not declare for this operation' }]);
  });

  it('a readOnly property is required of answers only, a writeOnly one of requests only', async () => {
    next = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":2,"name":"pot"}' };
    const post = (body: unknown) => call(`${gateway.url}/api/things`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // The flag may sit on the schema a property names ($ref), and `required` in another part of an allOf.
    const created = await post({ name: 'pot', password: 'pw', tag: 't' });
    assert.equal(created.status, 201, 'no id asked of the request');
    assert.deepEqual(created.body, { id: 2, name: 'pot' }, 'no password asked of the answer');
    const refused = await post({ name: 'pot' });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors, [
      { in: 'body', pointer: '/body/password', message: 'is required' },
      { in: 'body', pointer: '/body/tag', message: 'is required' },
    ]);
    next = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"name":"pot"}' };
    const before = gateway.logs.length;
    assert.equal((await post({ name: 'pot', password: 'pw', tag: 't' })).status, 502);
    const warning = gateway.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'upstream response does not match its schema');
    assert.deepEqual(warning.errors, [{ in: 'body', pointer: '/body/id', message: 'is required' }]);
  });

  it('the most specific media type applies, whatever the order listed; a key with parameters is matched by its type', async () => {
    next = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"id":1,"name":"pot"}' };
    const post = (type: string, body: string) => call(`${gateway.url}/api/mixed`, { method: 'POST', headers: { ...bearer(token), 'content-type': type }, body });
    const refused = await post('application/json', '{"y":1}');
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors, [{ in: 'body', pointer: '/body/x', message: 'is required' }]);
    assert.equal((await post('application/json', '{"x":1}')).status, 200);
    assert.equal((await post('text/plain', 'anything')).status, 200, '*/* takes any other type');
    next = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"one"}' };
    const before = gateway.logs.length;
    assert.equal((await post('application/json', '{"x":1}')).status, 502);
    const warning = gateway.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'upstream response does not match its schema');
    assert.deepEqual(warning.errors, [
      { in: 'body', pointer: '/body/name', message: 'is required' },
      { in: 'body', pointer: '/body/id', message: 'must be integer' },
    ]);
  });

  it('an answer nested deeper than a recursive schema can be checked is a mismatch, not a crash', async () => {
    const deep = `${'{"child":'.repeat(50_000)}{}${'}'.repeat(50_000)}`;
    const { res, warning } = await through('/api/tree', { status: 200, headers: { 'content-type': 'application/json' }, body: deep });
    assert.equal(res.status, 502);
    assert.deepEqual(res.body, BAD_GATEWAY);
    assert.deepEqual(warning.errors, [{ in: 'body', pointer: `/body${'/child'.repeat(64)}`, message: 'is nested more than 64 levels deep' }]);
    const shallow = await through('/api/tree', { status: 200, headers: { 'content-type': 'application/json' }, body: '{"child":{"child":{}}}' });
    assert.equal(shallow.res.status, 200);
  });

  it('enforce: an answer with two Content-Type headers is a mismatch (the check read the first, a browser reads the last)', async () => {
    const { res, warning } = await through('/api/things/1', json({ id: 1, name: 'pot' }, { 'content-type': ['application/json', 'text/html'] }));
    assert.equal(res.status, 502);
    assert.deepEqual(res.body, BAD_GATEWAY);
    assert.deepEqual(warning.errors, [{ in: 'header', name: 'content-type', pointer: '/header/content-type', message: 'is given more than once' }]);
  });

  it('enforce: a JSON answer that names a member twice is a mismatch (the check read the last, the client gets both)', async () => {
    const { res, warning } = await through('/api/things/1', { ...json(null), body: '{"id":1,"name":"<img src=x onerror=alert(1)>","name":"pot"}' });
    assert.equal(res.status, 502);
    assert.deepEqual(res.body, BAD_GATEWAY);
    assert.deepEqual(warning.errors, [{ in: 'body', pointer: '/body/name', message: 'is given more than once' }]);
  });

  it('enforce: a JSON answer with a number a double cannot hold (1e400, or more digits than it keeps) is a mismatch', async () => {
    const NOT_EXACT = 'must be a number a double holds exactly (no more digits than it keeps, within its range)';
    const huge = await through('/api/things/1', { ...json(null), body: '{"id":1,"name":"pot","size":1e400}' });
    assert.equal(huge.res.status, 502);
    assert.deepEqual(huge.res.body, BAD_GATEWAY);
    assert.deepEqual(huge.warning.errors, [{ in: 'body', pointer: '/body/size', message: NOT_EXACT }]);
    const inexact = await through('/api/things/1', { ...json(null), body: '{"id":1.0000000000000000001,"name":"pot"}' });
    assert.equal(inexact.res.status, 502);
    assert.deepEqual(inexact.warning.errors, [{ in: 'body', pointer: '/body/id', message: NOT_EXACT }]);
  });

  it('report: the mismatch is logged and the answer passed on', async () => {
    const { res, warning } = await through('/api/reported/1', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"other":true}' });
    assert.equal(res.status, 201);
    assert.equal(res.text, '{"other":true}');
    assert.equal(warning.route, 'reportThing');
    assert.equal(warning.enforced, false);
    assert.deepEqual(warning.errors, [
      { in: 'body', pointer: '/body/id', message: 'is required' },
      { in: 'body', pointer: '/body/name', message: 'is required' },
    ]);
  });

  it('is off where no validateResponse asks for it', async () => {
    const { res, warning } = await through('/api/plain', { status: 500, headers: { 'content-type': 'text/plain' }, body: 'anything' });
    assert.equal(res.status, 500);
    assert.equal(res.text, 'anything');
    assert.equal(warning, undefined);
  });

  it('a route written out checks against the operation of its shape in `openapi: file`, headers included', async () => {
    const ok = await through('/things/3', json({ id: 3, name: 'cup' }));
    assert.equal(ok.res.status, 200);
    const bad = await through('/things/3', { ...json({ id: 3, name: 'cup' }), headers: { 'content-type': 'application/json' } });
    assert.equal(bad.res.status, 502);
    assert.equal(bad.warning.route, 'hand');
    assert.deepEqual(bad.warning.errors, [{ in: 'header', name: 'x-rate', pointer: '/header/x-rate', message: 'is required' }]);
  });
});

describe('response validation: config errors', () => {
  it('on a route written out, validateResponse needs responses or openapi', async () => {
    assert.match(
      await configError({ routes: '  v:\n    method: GET\n    path: /v1/v\n    upstream: backend\n    policies:\n      - validateResponse: { mode: report }\n' }),
      /^routes\.v\.policies\[0\]\.validateResponse: needs responses or openapi, unless the route comes from an OpenAPI document \(openapi in the YAML\) \(gateway\.yaml:\d+\)$/,
    );
  });

  it('responses and openapi do not go together', async () => {
    assert.match(
      await configError({
        routes: "  v:\n    method: GET\n    path: /v1/v\n    upstream: backend\n    policies:\n      - validateResponse: { openapi: x.yaml, responses: { '200': { type: object } } }\n",
      }),
      /^routes\.v\.policies\[0\]\.validateResponse\.openapi: cannot go with responses: give the schemas, or the document that has them \(gateway\.yaml:\d+\)$/,
    );
  });
});
