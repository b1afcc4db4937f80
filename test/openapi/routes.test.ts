// An OpenAPI document as the source of a product's routes (`openapi:` in the YAML): each
// operation a route named by its operationId, at the document's base path, guarded by its
// security scopes, with policies attached to the document, a tag or one operation; $refs to
// files beside the document; clashes and broken documents refused with their lines.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfigFile } from '../../src/config/load.ts';
import { bearer, call, configYaml, rawExchange, startTestGateway, startUpstream, tempDir, tokenRequest, type Answer, type TestGateway, type Upstream } from '../helpers.ts';

const ORDERS = `openapi: 3.0.3
info: { title: Orders, version: '1.0' }
servers:
  - url: https://api.example.com/shop
security:
  - oauth: [orders:read]
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: /oauth2/token
          scopes: { 'orders:read': read orders, 'orders:write': place orders }
paths:
  /orders:
    get:
      operationId: listOrders
      tags: [orders]
      parameters:
        - { name: limit, in: query, schema: { type: integer, maximum: 100 } }
        - { name: status, in: query, explode: false, schema: { type: array, items: { type: string, enum: [open, shipped] } } }
      responses: { '200': { description: the orders } }
    post:
      operationId: createOrder
      tags: [orders]
      security:
        - oauth: [orders:write]
      requestBody:
        content:
          application/json:
            schema: { $ref: './common.yaml#/components/schemas/Order' }
      responses: { '201': { description: created } }
  /orders/{id}:
    parameters:
      - $ref: './common.yaml#/components/parameters/OrderId'
    get:
      operationId: getOrder
      tags: [orders]
      responses:
        '200':
          description: one order
          content:
            application/json:
              schema: { $ref: './common.yaml#/components/schemas/Order' }
  /admin/report:
    get:
      operationId: report
      tags: [admin]
      responses: { '200': { description: a report } }
`;

const COMMON = `components:
  parameters:
    OrderId:
      name: id
      in: path
      required: true
      schema: { type: string, pattern: '^[0-9]+$' }
  schemas:
    Order:
      type: object
      required: [item]
      properties:
        item: { type: string }
        quantity: { $ref: '#/components/schemas/Quantity' }
    Quantity: { type: integer, minimum: 1 }
`;

function writeDocs(dir: string, orders = ORDERS, common = COMMON): void {
  writeFileSync(path.join(dir, 'orders.yaml'), orders);
  writeFileSync(path.join(dir, 'common.yaml'), common);
}

const openapiYaml = (upstream: string, extra = '') => `openapi:
  orders:
    file: orders.yaml
    upstream: ${upstream}
${extra}`;

describe('routes from an OpenAPI document', () => {
  let gateway: TestGateway;
  let upstream: Upstream;
  let read: string;
  let write: string;

  before(async () => {
    upstream = await startUpstream();
    const temp = tempDir();
    writeDocs(temp.dir);
    gateway = await startTestGateway(
      {
        upstreams: `  shop:\n    url: ${upstream.url}`,
        extra: openapiYaml(
          'shop',
          `    tags:
      admin:
        policies:
          - ipAccess: { deny: [127.0.0.0/8, '::1'] }
    operations:
      createOrder:
        policies:
          - quota: { limit: 1, interval: hour }`,
        ),
        products: '  shop:\n    openapi: [orders]',
      },
      { dir: temp.dir },
    );
    const app = await gateway.client('shop');
    read = (await tokenRequest(gateway.url, { grant_type: 'client_credentials', scope: 'orders:read' }, app)).body.access_token as string;
    write = (await tokenRequest(gateway.url, { grant_type: 'client_credentials', scope: 'orders:write' }, app)).body.access_token as string;
    assert.ok(read && write);
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('serves each operation at the base path of its first server, and forwards that very path', async () => {
    const list = await call(`${gateway.url}/shop/orders?page=2`, { headers: bearer(read) });
    assert.equal(list.status, 200);
    const one = await call(`${gateway.url}/shop/orders/42`, { headers: bearer(read) });
    assert.equal(one.status, 200);
    assert.deepEqual(
      upstream.received.slice(-2).map((r) => `${r.method} ${r.url}`),
      ['GET /shop/orders?page=2', 'GET /shop/orders/42'],
    );
  });

  it("asks for the scopes of each operation's security requirement, its own over the document's", async () => {
    const refused = await call(`${gateway.url}/shop/orders`, { method: 'POST', headers: { ...bearer(read), 'content-type': 'application/json' }, body: '{"item":"tea"}' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'insufficient_scope');
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="insufficient_scope", .*scope="orders:write"$/);
    assert.equal((await call(`${gateway.url}/shop/orders`, { headers: bearer(write) })).status, 403, 'listOrders needs orders:read');
  });

  it("attaches policies to one operation (by operationId) and to a tag's operations", async () => {
    const post = () => call(`${gateway.url}/shop/orders`, { method: 'POST', headers: { ...bearer(write), 'content-type': 'application/json' }, body: '{"item":"tea"}' });
    assert.equal((await post()).status, 200);
    const second = await post();
    assert.equal(second.status, 429);
    assert.equal(second.body.code, 'quota_exceeded');
    const report = await call(`${gateway.url}/shop/admin/report`, { headers: bearer(read) });
    assert.equal(report.status, 403);
    assert.equal(report.body.code, 'ip_denied');
  });

  it('validates path, query and body against the document: 400 listing each failure with where it was', async () => {
    const bad = await call(`${gateway.url}/shop/orders?limit=500&status=open,lost`, { headers: bearer(read) });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(bad.body.errors, [
      { in: 'query', name: 'limit', pointer: '/query/limit', message: 'must be <= 100' },
      { in: 'query', name: 'status', pointer: '/query/status/1', message: 'must be equal to one of the allowed values' },
    ]);
    assert.equal((await call(`${gateway.url}/shop/orders?limit=100&status=open,shipped`, { headers: bearer(read) })).status, 200);
    const id = await call(`${gateway.url}/shop/orders/abc`, { headers: bearer(read) });
    assert.equal(id.status, 400);
    assert.deepEqual(id.body.errors, [{ in: 'path', name: 'id', pointer: '/path/id', message: 'must match pattern "^[0-9]+$"' }]);
    const fraction = await call(`${gateway.url}/shop/orders?limit=10.0`, { headers: bearer(read) });
    assert.deepEqual(fraction.body.errors, [{ in: 'query', name: 'limit', pointer: '/query/limit', message: 'must be a plain decimal integer, without a fraction' }]);
    // Another app: the quota of createOrder counts each app's calls, and another test used this one's.
    const other = await gateway.client('shop');
    const writer = (await tokenRequest(gateway.url, { grant_type: 'client_credentials', scope: 'orders:write' }, other)).body.access_token as string;
    const body = await call(`${gateway.url}/shop/orders`, { method: 'POST', headers: { ...bearer(writer), 'content-type': 'application/json' }, body: '{"quantity":0}' });
    assert.equal(body.status, 400);
    assert.deepEqual(body.body.errors, [
      { in: 'body', pointer: '/body/item', message: 'is required' },
      { in: 'body', pointer: '/body/quantity', message: 'must be >= 1' },
    ]);
    const third = await gateway.client('shop');
    const writer3 = (await tokenRequest(gateway.url, { grant_type: 'client_credentials', scope: 'orders:write' }, third)).body.access_token as string;
    const text = await call(`${gateway.url}/shop/orders`, { method: 'POST', headers: { ...bearer(writer3), 'content-type': 'text/plain' }, body: 'tea' });
    assert.equal(text.status, 415);
    assert.equal(text.body.detail, 'the body must be application/json');
  });

  it('answers 404 for a path the document does not have, and 405 for a method it does not list', async () => {
    assert.equal((await call(`${gateway.url}/shop/invoices`, { headers: bearer(read) })).status, 404);
    assert.equal((await call(`${gateway.url}/shop/orders/42`, { method: 'DELETE', headers: bearer(read) })).status, 405);
  });
});

// The upstream must parse what the schema checked: every body below reads one way to the gateway's
// JSON.parse or undici's multipart parser and another way to a common upstream parser.
const BODIES = `openapi: 3.0.3
info: { title: Bodies, version: '1' }
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - { name: f, in: query, style: deepObject, explode: true, schema: { type: object, properties: { x: { type: integer, maximum: 5 } } } }
        - { name: X-Tier, in: header, schema: { type: string, enum: [t1, t2] } }
        - { name: tier, in: cookie, schema: { type: string, enum: [t1, t2] } }
      responses: { '200': { description: ok } }
    post:
      operationId: createItem
      requestBody:
        content:
          application/json: { schema: { type: object, properties: { limit: { type: integer, maximum: 100 }, note: { type: string, maxLength: 50 }, tags: { type: array, items: { type: string } } } } }
          application/x-www-form-urlencoded: { schema: { type: object, properties: { limit: { type: integer, minimum: 1, maximum: 100 } } } }
          multipart/form-data: { schema: { type: object, properties: { limit: { type: integer, minimum: 1, maximum: 100 }, upload: { type: string, format: binary } } } }
      responses: { '200': { description: ok } }
  /tree:
    post:
      operationId: tree
      requestBody: { content: { application/json: { schema: { $ref: '#/components/schemas/Tree' } } } }
      responses: { '200': { description: ok } }
components:
  schemas:
    Tree: { type: object, properties: { c: { type: array, items: { $ref: '#/components/schemas/Tree' } } } }
`;

describe('request bodies are refused when an upstream parser could read them otherwise', () => {
  let gateway: TestGateway;
  let upstream: Upstream;
  let token: string;

  before(async () => {
    upstream = await startUpstream();
    const temp = tempDir();
    writeFileSync(path.join(temp.dir, 'bodies.yaml'), BODIES);
    gateway = await startTestGateway(
      { upstreams: `  shop:\n    url: ${upstream.url}`, extra: 'openapi:\n  bodies:\n    file: bodies.yaml\n    upstream: shop', products: '  bodies:\n    openapi: [bodies]' },
      { dir: temp.dir },
    );
    const app = await gateway.client('bodies');
    token = (await tokenRequest(gateway.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  /** Sends the request; the answer, and whether the upstream received it. */
  async function send(url: string, init: RequestInit): Promise<{ status: number; body: Answer['body']; reached: boolean }> {
    const before = upstream.received.length;
    const answer = await call(`${gateway.url}${url}`, { ...init, headers: { ...bearer(token), ...(init.headers as Record<string, string>) } });
    return { status: answer.status, body: answer.body, reached: upstream.received.length > before };
  }
  const json = (body: string | Buffer, type = 'application/json') => send('/items', { method: 'POST', headers: { 'content-type': type }, body });
  const form = (body: string) => send('/items', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const part = (disposition: string, value: string) =>
    send('/items', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: `--XX\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n--XX--\r\n` });

  it('JSON in a charset other than UTF-8: 415 (body-parser reads utf-7, where +ACI- is a quote)', async () => {
    const utf7 = await json('{"note":"+ACIALAAi-limit+ACIAOgA5ADkAOQA5-"}', 'application/json; charset=utf-7');
    assert.deepEqual([utf7.status, utf7.body.detail, utf7.reached], [415, 'a application/json body must be UTF-8 (charset=utf-8 or none)', false]);
    assert.equal((await json('{"note":"x"}', 'application/json; charset=UTF-8')).status, 200);
    const twice = await json('{"note":"x"}', 'application/json; charset=utf-8; charset=utf-7');
    assert.deepEqual([twice.status, twice.reached], [415, false]);
  });

  it('JSON with a member twice, a number a double cannot hold, bytes that are not UTF-8, or nested deeper than 64: 400', async () => {
    const cases: [string | Buffer, string, string][] = [
      ['{"limit":1000,"limit":1}', '/body/limit', 'is given more than once'],
      ['{"note":"a","\\u006eote":"b"}', '/body/note', 'is given more than once'],
      ['{"limit":100.00000000000000001}', '/body/limit', 'must be a number a double holds exactly (no more digits than it keeps, within its range)'],
      ['{"limit":-1e400}', '/body/limit', 'must be a number a double holds exactly (no more digits than it keeps, within its range)'],
      [Buffer.from('{"note":"\xff"}', 'latin1'), '/body', 'is not valid UTF-8'],
      ['{"note":"a\\ud800"}', '/body/note', 'must not hold a lone UTF-16 surrogate (\\ud800 to \\udfff unpaired)'],
      ['{"\\udc00":"a"}', '/body', 'must not hold a lone UTF-16 surrogate (\\ud800 to \\udfff unpaired)'],
    ];
    for (const [body, pointer, message] of cases) {
      const answer = await json(body);
      assert.deepEqual([answer.status, answer.body.errors, answer.reached], [400, [{ in: 'body', pointer, message }], false], String(body));
    }
    for (const ok of ['{"limit":100.0,"note":"a\\ud83d\\ude00"}', '{"limit":1e2}', '{"limit":-0}', '[{"a":1},{"a":2}]']) assert.equal((await json(ok)).status, ok.startsWith('[') ? 400 : 200, ok);
    const deep = await send('/tree', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `${'{"c":['.repeat(20000)}{}${']}'.repeat(20000)}` });
    assert.deepEqual([deep.status, deep.body.errors[0].message, deep.reached], [400, 'is nested more than 64 levels deep', false]);
  });

  it("form and multipart fields: numbers as plain decimals, no ';' separator or undeclared bracketed name", async () => {
    for (const [body, pointer, message] of [
      ['limit=0x64', '/body/limit', 'must be a plain decimal integer, without a fraction'],
      ['limit=1e1', '/body/limit', 'must be a plain decimal integer, without a fraction'],
      ['limit=5&limit[]=1000', '/body/limit[]', 'is a bracketed name the schema does not declare'],
    ]) {
      const answer = await form(body!);
      assert.deepEqual([answer.status, answer.body.errors.map((e: { pointer: string; message: string }) => [e.pointer, e.message]), answer.reached], [400, [[pointer, message]], false], body);
    }
    const semicolon = await form('limit=5;limit=1000');
    assert.deepEqual([semicolon.status, semicolon.body.errors[0], semicolon.reached], [400, { in: 'body', pointer: '/body', message: "must separate parameters with '&' only, not ';'" }, false]);
    assert.equal((await form('limit=5')).status, 200);
    for (const [body, message] of [
      ['limit=5&note=%FF', 'has a percent-escape that is malformed or not UTF-8'],
      ['limit=5&note=%zz', 'has a percent-escape that is malformed or not UTF-8'],
      ['limit=5&note=caf\u00e9', 'must be ASCII, other characters percent-encoded as UTF-8'],
    ]) {
      const answer = await form(body!);
      assert.deepEqual([answer.status, answer.body.errors, answer.reached], [400, [{ in: 'body', pointer: '/body', message }], false], body);
    }
    assert.equal((await form('limit=5&note=caf%C3%A9')).status, 200);
    const hex = await part('form-data; name="limit"', '0x64');
    assert.deepEqual([hex.status, hex.body.errors, hex.reached], [400, [{ in: 'body', name: 'limit', pointer: '/body/limit', message: 'must be a plain decimal integer, without a fraction' }], false]);
  });

  it('multipart: a part named twice, by name*, or with two Content-Dispositions; two boundaries: refused', async () => {
    for (const [disposition, message] of [
      ['form-data; name="other"; name="limit"', 'has a part whose Content-Disposition gives a parameter twice, an RFC 2231 or 5987 one (name*, name*0), or one that cannot be read'],
      ['form-data; name="limit"; name*=UTF-8\'\'other', 'has a part whose Content-Disposition gives a parameter twice, an RFC 2231 or 5987 one (name*, name*0), or one that cannot be read'],
      // Werkzeug and Go join RFC 2231's continuations into the name: `limit` to them, '' to the schema.
      ['form-data; name=""; name*0="limit"', 'has a part whose Content-Disposition gives a parameter twice, an RFC 2231 or 5987 one (name*, name*0), or one that cannot be read'],
      // Python's email decodes RFC 2047's encoded words: `limit` to it.
      ['form-data; name="=?utf-8?q?limit?="', "has a part named with an RFC 2047 encoded word ('=?'), which some parsers decode"],
      // Werkzeug, cgi and email end a header line at a bare LF or CR: the second Content-Disposition is the one they read.
      ['form-data; name="note"\nContent-Disposition: form-data; name="limit"', 'has a part header holding a control character, such as a bare CR or LF, where some parsers end the line'],
      ['form-data; name="note"\rContent-Disposition: form-data; name="limit"', 'has a part header holding a control character, such as a bare CR or LF, where some parsers end the line'],
      // undici and Werkzeug decode WHATWG's escapes of a quote and line ends in a name.
      ['form-data; name="limit%22"', 'has a part named with %22, %0A or %0D, which some parsers decode'],
      // Werkzeug and email read charset* over charset: UTF-8 bytes read as Latin-1, twice as long as checked.
      [
        'form-data; name="note"\r\nContent-Type: text/plain; charset*=iso-8859-1\'\'iso-8859-1',
        'has a part whose Content-Type gives a parameter twice, an RFC 2231 one (charset*), or one that cannot be read',
      ],
      ['form-data; name="other"\r\nContent-Disposition: form-data; name="limit"', 'has a part with two Content-Disposition headers'],
    ]) {
      const answer = await part(disposition!, '1000');
      assert.deepEqual([answer.status, answer.body.errors, answer.reached], [400, [{ in: 'body', pointer: '/body', message }], false], disposition);
    }
    const boundaries = await send('/items', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX; boundary=YY' },
      body: '--YY\r\nContent-Disposition: form-data; name="limit"\r\n\r\n1000\r\n--YY--\r\n',
    });
    assert.deepEqual([boundaries.status, boundaries.reached], [415, false]);
    assert.equal((await part('form-data; name="upload"; filename="a; b.txt"', '5')).status, 200);
  });

  it('a body on an operation that declares none (a GET): 400, never forwarded unchecked', async () => {
    const text = await rawExchange(
      gateway.url,
      `GET /items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 14\r\nConnection: close\r\n\r\n{"limit":1000}`,
    );
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.ok(text.includes('{"in":"body","pointer":"/body","message":"is not allowed: the operation takes no request body"}'), text);
  });

  it('multipart: a part with a Content-Transfer-Encoding (base64, quoted-printable) is refused, not decoded one way and forwarded another', async () => {
    const encoded = (encoding: string, value: string) =>
      send('/items', {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        body: `--XX\r\nContent-Disposition: form-data; name="limit"\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n${value}\r\n--XX--\r\n`,
      });
    for (const [encoding, value] of [
      ['base64', 'N!Q==MTAwMA=='],
      ['quoted-printable', '=31=30=30=30'],
      ['8bit', '5'],
    ]) {
      const answer = await encoded(encoding!, value!);
      assert.deepEqual(
        [answer.status, answer.body.errors, answer.reached],
        [400, [{ in: 'body', pointer: '/body', message: 'has a part with a Content-Transfer-Encoding, which RFC 7578 §4.7 deprecates and parsers decode differently' }], false],
        encoding,
      );
    }
  });

  it('multipart: a file part where the schema describes no file, and filename="" with content, are refused', async () => {
    const file = await part('form-data; name="limit"; filename="n.txt"', '1000');
    assert.deepEqual(
      [file.status, file.body.errors, file.reached],
      [400, [{ in: 'body', name: 'limit', pointer: '/body/limit', message: 'is a file, and the schema does not describe a file here (format: binary, contentMediaType or contentEncoding)' }], false],
    );
    const undeclared = await part('form-data; name="other"; filename="n.txt"', 'x');
    assert.deepEqual([undeclared.status, undeclared.reached], [400, false]);
    // Go reads a part with filename="" as a text field: its content would reach the upstream as `limit` unchecked.
    const empty = await part('form-data; name="limit"; filename=""', '1000');
    assert.deepEqual(
      [empty.status, empty.body.errors, empty.reached],
      [400, [{ in: 'body', pointer: '/body', message: 'has a part with filename="" and content, which some parsers read as a text field' }], false],
    );
    // What a browser sends for a file input left empty.
    assert.deepEqual(await part('form-data; name="upload"; filename=""', '').then((a) => [a.status, a.reached]), [200, true]);
  });

  it('multipart: a preamble, an epilogue, padding after a boundary, LF line ends, a folded header or a text part not in UTF-8 are refused', async () => {
    const disposition = 'Content-Disposition: form-data; name="limit"';
    for (const [body, message] of [
      [`junk\r\n--XX\r\n${disposition}\r\n\r\n5\r\n--XX--\r\n`, 'must begin with its boundary (no preamble)'],
      [`--XX\r\n${disposition}\r\n\r\n5\r\n--XX--\r\n--XX\r\n${disposition}\r\n\r\n1000\r\n--XX--\r\n`, 'must end with its closing boundary (no epilogue)'],
      [`--XX \r\n${disposition}\r\n\r\n5\r\n--XX--\r\n`, 'has a boundary followed by something other than a line end'],
      [`--XX\n${disposition}\n\n5\n--XX--\n`, 'has its boundary after a bare LF, which some parsers read as a delimiter'],
      [`--XX\r\nContent-Disposition: form-data;\r\n name="limit"\r\n\r\n5\r\n--XX--\r\n`, 'has a part header that is not "Name: value"'],
      [`--XX\r\n${disposition}\r\nContent-Type: text/plain; charset=utf-16le\r\n\r\n5\r\n--XX--\r\n`, 'has a text part in a charset other than UTF-8'],
      [`--XX\r\nContent-Disposition: form-data; name="_charset_"\r\n\r\niso-8859-1\r\n--XX\r\n${disposition}\r\n\r\n5\r\n--XX--\r\n`, 'has a _charset_ field other than UTF-8'],
      [`--XX\r\nContent-Disposition: form-data; name="lim\\"it"\r\n\r\n5\r\n--XX--\r\n`, "has a part whose Content-Disposition holds a '\\', which parsers unescape differently"],
    ] as const) {
      const answer = await send('/items', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body });
      assert.deepEqual([answer.status, answer.body.errors, answer.reached], [400, [{ in: 'body', pointer: '/body', message }], false], body);
    }
    const latin1 = await send('/items', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX' },
      body: Buffer.from(`--XX\r\nContent-Disposition: form-data; name="note"\r\n\r\ncaf\xe9\r\n--XX--\r\n`, 'latin1'),
    });
    assert.deepEqual([latin1.status, latin1.body.errors, latin1.reached], [400, [{ in: 'body', pointer: '/body', message: 'has a text part that is not valid UTF-8' }], false]);
  });

  it('a body with a failure in every item is 400 with at most 100 failures, and a body over 64 KiB with its first: never a 500, nor seconds and gigabytes spent listing them', async () => {
    const items = (n: number) => `{"tags":[${'1,'.repeat(n - 1)}1]}`;
    const few = await json(items(3));
    assert.deepEqual([few.status, few.body.errors.map((e: { pointer: string }) => e.pointer)], [400, ['/body/tags/0', '/body/tags/1', '/body/tags/2']]);
    const many = await json(items(500));
    assert.deepEqual([many.status, many.body.errors.length, many.body.errors[99], many.reached], [400, 100, { in: 'body', pointer: '/body/tags/99', message: 'must be string' }, false]);
    // 150,000 failures once overflowed the stack of a spread: a 500.
    const large = await json(items(150_000));
    assert.deepEqual([large.status, large.body.errors, large.reached], [400, [{ in: 'body', pointer: '/body/tags/0', message: 'must be string' }], false]);
  });

  it('a deepObject property whose schema is an integer is refused written with a fraction, as a plain parameter is', async () => {
    const fraction = await send('/items?f[x]=1.0', {});
    assert.deepEqual(
      [fraction.status, fraction.body.errors, fraction.reached],
      [400, [{ in: 'query', name: 'f', pointer: '/query/f/x', message: 'must be a plain decimal integer, without a fraction' }], false],
    );
  });

  it('header and cookie parameters are checked as the upstream receives them: a percent-escape is refused, a cookie named with one too', async () => {
    assert.deepEqual(await send('/items', { headers: { 'x-tier': 't1', cookie: 'tier=t2' } }).then((a) => [a.status, a.reached]), [200, true]);
    const header = await send('/items', { headers: { 'x-tier': 't%31' } });
    assert.deepEqual(
      [header.status, header.body.errors, header.reached],
      [
        400,
        [{ in: 'header', name: 'X-Tier', pointer: '/header/X-Tier', message: "header parameter X-Tier must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it" }],
        false,
      ],
    );
    const cookie = await send('/items', { headers: { cookie: 'tier=t%31' } });
    assert.deepEqual(
      [cookie.status, cookie.body.errors[0].message, cookie.reached],
      [400, "cookie parameter tier must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it", false],
    );
    // PHP reads '.' in a cookie's name as '_'.
    const dotted = await send('/items', { headers: { cookie: 'x.tier=t3; tier=t1' } });
    assert.deepEqual([dotted.status, dotted.reached], [200, true]);
    const named = await send('/items', { headers: { cookie: 'ti%65r=t3; tier=t1' } });
    assert.deepEqual([named.status, named.body.errors[0].message, named.reached], [400, "cookie parameter tier is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name", false]);
  });

  it('multipart: a boundary after a bare LF or CR inside a part, an RFC 2231 boundary*, more than 1,000 parts or 8 KiB of part headers are refused', async () => {
    const limit = 'Content-Disposition: form-data; name="limit"';
    // Werkzeug, cgi and email take `\n--XX` for a delimiter: the part `limit` is theirs, the text of `note` the gateway's.
    for (const [cut, message] of [
      ['\n', 'has its boundary after a bare LF, which some parsers read as a delimiter'],
      ['\r', 'has its boundary after a bare CR, which some parsers read as a delimiter'],
    ]) {
      const body = `--XX\r\nContent-Disposition: form-data; name="note"\r\n\r\nA${cut}--XX\r\n${limit}\r\n\r\n1000\r\n--XX--\r\n`;
      const answer = await send('/items', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body });
      assert.deepEqual([answer.status, answer.body.errors, answer.reached], [400, [{ in: 'body', pointer: '/body', message }], false], JSON.stringify(cut));
    }
    // Werkzeug reads boundary* over boundary: the parts after --YY are the ones it sees.
    const starred = await send('/items', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX; boundary*=YY' },
      body: `--XX\r\nContent-Disposition: form-data; name="note"\r\n\r\nA\r\n--YY\r\n${limit}\r\n\r\n1000\r\n--YY--\r\n--XX--\r\n`,
    });
    assert.deepEqual(
      [starred.status, starred.body.detail, starred.reached],
      [415, 'the Content-Type gives a parameter twice, an RFC 2231 one (boundary*, charset*0), or one that cannot be read', false],
    );
    const parts = await send('/items', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: `${`--XX\r\n${limit}\r\n\r\n1\r\n`.repeat(1001)}--XX--\r\n` });
    assert.deepEqual([parts.status, parts.body.errors, parts.reached], [400, [{ in: 'body', pointer: '/body', message: 'has more than 1000 parts' }], false]);
    // A quoted name of millions of characters overflowed the stack of the parameter pattern: a 500.
    const long = await send('/items', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX' },
      body: `--XX\r\nContent-Disposition: form-data; name="${'a'.repeat(9_000_000)}"\r\n\r\n1\r\n--XX--\r\n`,
    });
    assert.deepEqual([long.status, long.body.errors, long.reached], [400, [{ in: 'body', pointer: '/body', message: 'has a part whose headers are longer than 8 KiB' }], false]);
  });

  it('a Cookie header not written as RFC 6265 writes it is refused where cookie parameters are declared: Werkzeug strips a name of a no-break space, SimpleCookie splits on a space', async () => {
    const message = 'cookie parameter tier: the Cookie header has a pair that is not name=value as RFC 6265 writes them (a space, a control or a non-ASCII character), which parsers split differently';
    // Rack before 2.2 splits on ',' too; PHP and Rack keep the space before ';' in the value.
    for (const cookie of ['\xa0tier=t3; tier=t1', 'a=x tier=t3', 'tier=t1; a=b c', 'tier', 'a=x,tier=t3', 'tier=t1 ; a=b']) {
      const answer = await rawExchange(gateway.url, `GET /items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /, cookie);
      assert.ok(answer.includes(message), answer);
    }
    assert.deepEqual(await send('/items', { headers: { cookie: 'a="quoted"; tier=t1; list=a,b' } }).then((a) => [a.status, a.reached]), [200, true]);
  });

  it('a deepObject query parameter passes with its brackets, raw or escaped', async () => {
    for (const query of ['f[x]=1', 'f%5Bx%5D=1']) assert.deepEqual(await send(`/items?${query}`, {}).then((a) => [a.status, a.reached]), [200, true], query);
    const over = await send('/items?f[x]=9', {});
    assert.deepEqual([over.status, over.body.errors], [400, [{ in: 'query', name: 'f', pointer: '/query/f/x', message: 'must be <= 5' }]]);
  });
});

describe("each version's schemas: 3.0's nullable and boolean exclusive bounds, 3.1's type arrays", () => {
  const doc = (version: string, n: string, path: string) => `openapi: ${version}
info: { title: T, version: '1' }
paths:
  ${path}:
    post:
      operationId: post${version.replace(/\./g, '')}
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, properties: { n: ${n} } }
      responses: { '200': { description: ok } }
`;
  let gateway: TestGateway;
  let token: string;

  before(async () => {
    const temp = tempDir();
    writeFileSync(path.join(temp.dir, 'v30.yaml'), doc('3.0.3', '{ type: integer, nullable: true, minimum: 0, exclusiveMinimum: true }', '/v30'));
    writeFileSync(path.join(temp.dir, 'v31.yaml'), doc('3.1.0', "{ type: [integer, 'null'], exclusiveMinimum: 0 }, pair: { type: array, prefixItems: [{ type: string }] }", '/v31'));
    gateway = await startTestGateway(
      { extra: 'openapi:\n  v30: { file: v30.yaml, upstream: echo }\n  v31: { file: v31.yaml, upstream: echo }', products: '  both:\n    openapi: [v30, v31]' },
      { dir: temp.dir },
    );
    token = (await tokenRequest(gateway.url, { grant_type: 'client_credentials' }, await gateway.client('both'))).body.access_token as string;
  });
  after(() => gateway?.close());

  for (const path of ['/v30', '/v31']) {
    it(`${path}: null passes, 0 is not above the exclusive bound, a string is not an integer`, async () => {
      const post = (body: string) => call(`${gateway.url}${path}`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body });
      assert.equal((await post('{"n":null}')).status, 200);
      assert.equal((await post('{"n":1}')).status, 200);
      assert.deepEqual((await post('{"n":0}')).body.errors, [{ in: 'body', pointer: '/body/n', message: 'must be > 0' }]);
      const text = await post('{"n":"x"}');
      assert.equal(text.status, 400);
      assert.equal(text.body.errors[0].pointer, '/body/n');
    });
  }

  it('/v31 is read as JSON Schema 2020-12 (prefixItems)', async () => {
    const answer = await call(`${gateway.url}/v31`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{"pair":[1]}' });
    assert.deepEqual(answer.body.errors, [{ in: 'body', pointer: '/body/pair/0', message: 'must be string' }]);
  });
});

describe('an OpenAPI document in the config', () => {
  /** The config's problems when the documents are as given. */
  function problems(extra: string, docs: { orders?: string; common?: string } = {}, routes = ''): string {
    const temp = tempDir();
    try {
      writeDocs(temp.dir, docs.orders, docs.common);
      const file = path.join(temp.dir, 'gateway.yaml');
      writeFileSync(file, configYaml({ extra, routes, products: '  shop:\n    openapi: [orders]' }));
      try {
        loadConfigFile(file, { env: {} });
      } catch (err) {
        if (err instanceof ConfigError) return err.message;
        throw err;
      }
      return '';
    } finally {
      temp.remove();
    }
  }

  it('loads, with its operations as routes of the product, their scopes declared by it', () => {
    const temp = tempDir();
    writeDocs(temp.dir);
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, configYaml({ extra: openapiYaml('backend'), products: '  shop:\n    openapi: [orders]' }));
    const config = loadConfigFile(file, { env: {} });
    temp.remove();
    const shop = config.products.get('shop')!;
    assert.deepEqual(shop.routes, ['listOrders', 'createOrder', 'getOrder', 'report']);
    assert.deepEqual([...shop.scopes].sort(), ['orders:read', 'orders:write']);
    const route = config.routes.get('getOrder')!;
    assert.deepEqual({ method: route.method, path: route.path, scopes: route.scopes, api: route.operation?.api }, { method: 'GET', path: '/shop/orders/{id}', scopes: ['orders:read'], api: 'orders' });
    assert.deepEqual([...route.products], ['shop']);
  });

  it("takes the base path from the first server's URL with its variables' defaults", () => {
    const temp = tempDir();
    writeDocs(
      temp.dir,
      ORDERS.replace(
        '  - url: https://api.example.com/shop',
        "  - url: 'http://localhost:{port}/{version}/shop'\n    variables:\n      port: { default: '8080' }\n      version: { default: v2, enum: [v1, v2] }",
      ),
    );
    const file = path.join(temp.dir, 'gateway.yaml');
    writeFileSync(file, configYaml({ extra: openapiYaml('backend'), products: '  shop:\n    openapi: [orders]' }));
    const config = loadConfigFile(file, { env: {} });
    temp.remove();
    assert.equal(config.routes.get('getOrder')!.path, '/v2/shop/orders/{id}');
  });

  it('refuses a route written out with the name or the method and path of an operation, on the line of that route', () => {
    const byName = problems(openapiYaml('backend'), {}, '  listOrders:\n    method: GET\n    path: /v2/orders\n    upstream: backend');
    assert.match(byName, /^routes\.listOrders: has the name of operation GET \/orders \(orders\.yaml:\d+\) of openapi\.orders \(gateway\.yaml:\d+\)$/m);
    const byPath = problems(openapiYaml('backend'), {}, '  mine:\n    method: GET\n    path: /shop/orders/{orderId}\n    upstream: backend');
    assert.match(byPath, /^routes\.mine\.path: same method and path as operation GET \/orders\/\{id\} \(orders\.yaml:\d+\) of openapi\.orders \(gateway\.yaml:\d+\)$/m);
  });

  it('names the file and line of a $ref that points nowhere, a remote $ref, an operation without operationId', () => {
    const nowhere = problems(openapiYaml('backend'), { common: COMMON.replace("'#/components/schemas/Quantity'", "'#/components/schemas/Missing'") });
    assert.match(nowhere, /openapi\.orders\.file: \$ref "#\/components\/schemas\/Missing" points nowhere \(common\.yaml has no \/components\/schemas\/Missing\) \(common\.yaml:14\)/);
    const remote = problems(openapiYaml('backend'), { orders: ORDERS.replace("'./common.yaml#/components/schemas/Order'", "'https://example.com/order.yaml'") });
    assert.match(remote, /\$ref "https:\/\/example\.com\/order\.yaml": only references to files beside the document are followed, never remote ones \(orders\.yaml:32\)/);
    const unnamed = problems(openapiYaml('backend'), { orders: ORDERS.replace('      operationId: report\n', '') });
    assert.match(unnamed, /openapi\.orders\.file: operation GET \/admin\/report \(orders\.yaml:47\) has no operationId: the gateway names its route by it/);
    const missing = problems(openapiYaml('backend'), { orders: ORDERS.replace("'./common.yaml#", "'./nope.yaml#") });
    assert.match(missing, /cannot read .*nope\.yaml: no such file \(orders\.yaml:32\)/);
  });

  it('refuses policies for a tag or an operationId the document does not have', () => {
    const text = problems(openapiYaml('backend', '    tags:\n      billing: { policies: [] }\n    operations:\n      deleteOrder: { policies: [] }'));
    assert.match(text, /openapi\.orders\.tags\.billing: no operation of orders\.yaml has the tag "billing" \(gateway\.yaml:\d+\)/);
    assert.match(text, /openapi\.orders\.operations\.deleteOrder: orders\.yaml has no operation "deleteOrder" \(gateway\.yaml:\d+\)/);
  });

  it("refuses a parameter the gateway cannot read: a matrix path parameter (';' is refused in paths), a style its location cannot have", () => {
    const matrix = problems(openapiYaml('backend'), { common: COMMON.replace('      in: path\n', '      in: path\n      style: matrix\n') });
    assert.match(
      matrix,
      /openapi\.orders\.file: operation GET \/orders\/\{id\} \(orders\.yaml:\d+\): path parameter id: style matrix puts ';' in the path, which the gateway refuses; use simple or label/,
    );
    const deep = problems(openapiYaml('backend'), { common: COMMON.replace('      in: path\n', '      in: path\n      style: deepObject\n') });
    assert.match(deep, /operation GET \/orders\/\{id\} \(orders\.yaml:\d+\): path parameter id: style deepObject is only for query parameters/);
  });

  it('refuses what is not an OpenAPI 3.0 or 3.1 document', () => {
    assert.match(problems(openapiYaml('backend'), { orders: 'swagger: "2.0"\ninfo: {}\n' }), /not an OpenAPI 3\.0 or 3\.1 document/);
  });
});
