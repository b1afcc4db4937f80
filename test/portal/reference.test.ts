// The API reference of a product built from an OpenAPI document, over real HTTP: operations by
// tag in the document's order, parameters, request and response schemas as tables ($refs to a
// second file followed, nested objects and arrays under dotted names), examples, scopes, a curl
// line per operation, and everything the document says escaped. The try-it panels run in
// Chromium (test/browser/portal.test.ts).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper, inviteDeveloper } from '../../src/admin/operations.ts';
import { parse } from 'yaml';
import { call, startTestGateway, tempDir, type TestGateway } from '../helpers.ts';
import { writePets } from './pets.ts';
import { Visitor } from './visitor.ts';

const PASSWORD = 'correct horse battery';

/** Every match of `pattern`'s first group in `text`, in order. */
const all = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]);

/** The HTML of the section of one operation. */
function operation(page: string, id: string): string {
  const start = page.indexOf(`<section class="operation`, page.indexOf(`id="op-${id}"`) - 60);
  assert.ok(start !== -1, `no operation ${id}`);
  return page.slice(start, page.indexOf('</section>', start));
}

/**
 * A document titled as its one tag, spelt three ways (the tag and the title of
 * examples/orders.openapi.yaml, Orders and orders), with one Problem for all its errors.
 */
const SHOP = `openapi: 3.1.0
info: { title: Shop, version: '1' }
servers: [{ url: 'https://shop.example.com/v3' }]
tags: [{ name: Shop, description: Everything of the shop. }]
paths:
  /carts:
    get:
      operationId: listCarts
      tags: [shop]
      responses:
        '200': { description: the carts, content: { application/json: { schema: { $ref: '#/components/schemas/Cart' } } } }
        '401': { description: no token, content: { application/problem+json: { schema: { $ref: '#/components/schemas/Problem' } } } }
        '403': { description: no scope, content: { application/problem+json: { schema: { $ref: '#/components/schemas/Problem' } } } }
    post:
      operationId: createCart
      tags: [SHOP]
      responses:
        '201': { description: the cart, content: { application/json: { schema: { $ref: '#/components/schemas/Cart' } } } }
        '401': { description: no token, content: { application/problem+json: { schema: { $ref: '#/components/schemas/Problem' } } } }
components:
  schemas:
    Cart: { type: object, properties: { id: { type: string } } }
    Problem: { type: object, required: [type, status], properties: { type: { type: string }, status: { type: integer } } }
`;

describe('portal: API reference', () => {
  let gw: TestGateway;
  let base: string;

  before(async () => {
    const temp = tempDir();
    writePets(temp.dir);
    writeFileSync(path.join(temp.dir, 'shop.yaml'), SHOP);
    writeFileSync(
      path.join(temp.dir, 'me.yaml'),
      "openapi: 3.1.0\ninfo: { title: Me, version: '1' }\npaths:\n  /v2/me:\n    get:\n      operationId: whoAmI\n      responses: { '200': { description: the user } }\n",
    );
    gw = await startTestGateway(
      {
        extra: `openapi:
  pets:
    file: pets.yaml
    upstream: mock
  me:
    file: me.yaml
    upstream: mock
    requireSubject: true
  shop:
    file: shop.yaml
    upstream: mock
portal:
  listen: { port: 0 }
  gatewayUrl: https://api.example.com
  signup: invited
`,
        products: `  pets:
    displayName: Pets <API>
    openapi: [pets]
    routes: [hello]
    portal: true
  users-pets:
    openapi: [pets]
    grants: [password]
    authServer: users
    approval: auto
    portal: true
  plain:
    routes: [hello]
    portal: true
  mixed:
    openapi: [me]
    grants: [client_credentials, password]
    authServer: users
    approval: auto
    portal: true
  shop:
    openapi: [shop]
    portal: true
  signin-pets:
    openapi: [pets]
    grants: [authorization_code, client_credentials]
    login: users
    portal: true
`,
        oauth: '  issuer: http://127.0.0.1',
      },
      { dir: temp.dir },
    );
    base = gw.gateway.portalUrl!;
  });
  after(() => gw.close());

  /** A developer logged in through an invitation, as the portal's own forms do it. */
  async function loggedIn(email: string): Promise<Visitor> {
    await createDeveloper(gw.admin, { email, name: 'Dev' });
    const { code } = await inviteDeveloper(gw.admin, email);
    const visitor = new Visitor(base);
    assert.equal((await visitor.submit('/signup', '/signup', { email, password: PASSWORD, invitation: code })).status, 303);
    return visitor;
  }

  test('CSP: connect-src names the gateway, for the try-it panels; nothing else is loosened', async () => {
    const page = await new Visitor(base).get('/products/pets/reference');
    assert.equal(page.status, 200);
    assert.equal(
      page.headers.get('content-security-policy'),
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src https://api.example.com; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    // The page's one script is the portal's file; nothing inline, no handler attribute.
    assert.deepEqual(all(page.text, /<script([^>]*)>/g), [' src="/assets/portal.js" defer']);
    assert.doesNotMatch(page.text, /\son[a-z]+=/i);
  });

  test('the product page links to the reference, and each operation to its section; a route written out stays as it was', async () => {
    const page = await new Visitor(base).get('/products/pets');
    assert.match(page.text, /<p><a class="button" href="\/products\/pets\/reference">API reference and try-it<\/a><\/p>/);
    assert.match(page.text, /<td data-label="Path"><a href="\/products\/pets\/reference#op-updatePet"><code>\/v2\/pets\/\{petId\}<\/code><\/a><\/td>/);
    assert.match(page.text, /<td data-label="Path"><code>\/v1\/hello<\/code><\/td>/);
    const plain = await new Visitor(base).get('/products/plain');
    assert.doesNotMatch(plain.text, /API reference/);
    assert.equal((await new Visitor(base).get('/products/plain/reference')).status, 404, 'no document, no reference');
    assert.equal((await new Visitor(base).get('/products/hello/reference')).status, 404, 'not visible');
  });

  test("operations by tag in the document's order, untagged last; each with method, gateway path, summary, deprecation and scopes", async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    assert.match(text, /<h1>Pets &lt;API&gt;: API reference<\/h1>/);
    assert.match(text, /<h2 id="api-pet-store">Pet store <span class="hint">version 2.1<\/span><\/h2>\n<p>Pets and their &lt;b&gt;owners&lt;\/b&gt;.<\/p><p>Second paragraph.<\/p>/);
    assert.deepEqual(all(text, /<h3 id="tag-[^"]+">([^<]+)<\/h3>/g), ['pets', 'owners', 'Other operations']);
    assert.deepEqual(all(text, /<section class="operation[^"]*" id="op-([^"]+)"/g), ['getPet', 'updatePet', 'listOwners', 'health']);
    assert.match(text, /<h3 id="tag-owners">owners<\/h3>\n<p>The people who own them.<\/p>/);
    const put = operation(text, 'updatePet');
    assert.match(
      put,
      /^<section class="operation" id="op-updatePet" aria-labelledby="op-updatePet-title">\n<h4 id="op-updatePet-title"><span class="method method-put">PUT<\/span> <code>\/v2\/pets\/\{petId\}<\/code><\/h4>\n<p class="summary">Change a pet<\/p>/,
    );
    assert.match(put, /<dt>Scopes<\/dt><dd><code>pets:write<\/code> \(change pets\)<\/dd>/);
    assert.match(operation(text, 'listOwners'), /<h4 id="op-listOwners-title"><span class="method method-get">GET<\/span> <code>\/v2\/owners<\/code> <span class="badge">deprecated<\/span><\/h4>/);
    assert.match(operation(text, 'health'), /<dt>Scopes<\/dt><dd>none: any token of the product<\/dd>/);
    // The table of contents, in the same order.
    assert.deepEqual(all(text, /<li><a href="#op-([^"]+)">/g), ['getPet', 'updatePet', 'listOwners', 'health']);
  });

  test('parameters: name, location, type, whether required, description, and the serialization where it is not the default', async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    const get = operation(text, 'getPet');
    assert.match(get, /<thead><tr><th>Name<\/th><th>In<\/th><th>Type<\/th><th>Required<\/th><th>Description<\/th><th>Details<\/th><\/tr><\/thead>/);
    assert.ok(
      get.includes(
        '<tr><td data-label="Name"><code>petId</code></td><td data-label="In">path</td><td data-label="Type">integer</td><td data-label="Required">yes</td><td data-label="Description"><div><p>The pet&#39;s id</p></div></td><td data-label="Details"><ul class="details"><li>at least 1</li><li>example <code>42</code></li></ul></td></tr>',
      ),
      get,
    );
    assert.ok(
      get.includes(
        '<tr><td data-label="Name"><code>fields</code></td><td data-label="In">query</td><td data-label="Type">array of string</td><td data-label="Required">no</td><td data-label="Description"></td><td data-label="Details"><ul class="details"><li>explode <code>false</code></li><li>each item: one of <code>&quot;name&quot;</code>, <code>&quot;tags&quot;</code></li></ul></td></tr>',
      ),
      get,
    );
    const owners = operation(text, 'listOwners');
    assert.match(owners, /<tr><td data-label="Name"><code>X-Trace<\/code><\/td><td data-label="In">header<\/td><td data-label="Type">string<\/td><td data-label="Required">no<\/td>/);
    // OpenAPI ignores a header parameter named Authorization: the try-it panel has no field for it.
    assert.deepEqual(all(owners, /<input type="text" data-in="([^"]+)"/g), ['header']);
    assert.match(owners, /<input type="text" data-in="header" data-name="X-Trace"/);
  });

  test('request body: the schema of a $ref into a second file as a table, nested objects and arrays under dotted names, and its example', async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    const put = operation(text, 'updatePet');
    const body = put.slice(put.indexOf('<h5>Request body</h5>'), put.indexOf('<h5>Responses</h5>'));
    assert.match(
      body,
      /^<h5>Request body<\/h5>\n<p>The pet as it should be.<\/p>\n<div class="media">\n<p><code>application\/json<\/code><\/p>\n<p class="hint">Schema <code>Pet<\/code><\/p>\n<p>A pet of the store.<\/p>/,
    );
    const rows = all(body, /<tr><td data-label="Name"><code>(.*?)<\/code><\/td>/g).map((r) => r!.replace(/<wbr>/g, ''));
    assert.deepEqual(rows, [
      'id',
      'name',
      'owner',
      'owner.name',
      'owner.address',
      'owner.address.city',
      'owner.address.kind',
      'tags',
      'vaccinations',
      'vaccinations[].name',
      'vaccinations[].on',
      'parent',
    ]);
    const row = (name: string) =>
      body
        .split('\n')
        .flatMap((l) => l.split('</tr>'))
        .find((r) => r.includes(`<td data-label="Name"><code>${name}</code>`));
    assert.equal(
      row('name'),
      '<tr><td data-label="Name"><code>name</code></td><td data-label="Type">string</td><td data-label="Required">yes</td><td data-label="Description"><div><p>Its name, &lt;i&gt;escaped&lt;/i&gt;</p></div></td><td data-label="Details"><ul class="details"><li>1 to 64 characters</li></ul></td>',
    );
    assert.equal(
      row('id'),
      '<tr><td data-label="Name"><code>id</code></td><td data-label="Type">integer (int64)</td><td data-label="Required">no</td><td data-label="Description"></td><td data-label="Details"><ul class="details"><li>read-only: only in answers</li></ul></td>',
    );
    assert.equal(
      row('owner.<wbr>address.<wbr>kind'),
      '<tr><td data-label="Name"><code>owner.<wbr>address.<wbr>kind</code></td><td data-label="Type">string</td><td data-label="Required">no</td><td data-label="Description"></td><td data-label="Details"><ul class="details"><li>one of <code>&quot;home&quot;</code>, <code>&quot;work&quot;</code></li><li>default <code>&quot;home&quot;</code></li></ul></td>',
    );
    assert.match(row('owner')!, /<td data-label="Type">object \(Owner\)<\/td><td data-label="Required">no<\/td>/);
    assert.match(row('owner.<wbr>name')!, /<td data-label="Required">yes<\/td>/, "required within the Owner of the second file's own $ref");
    assert.match(row('tags')!, /<td data-label="Type">array of string<\/td>.*<li>at most 5 items<\/li><li>each item: one of <code>&quot;good&quot;<\/code>, <code>&quot;small&quot;<\/code><\/li>/);
    assert.match(row('vaccinations[].<wbr>on')!, /<td data-label="Type">string \(date\)<\/td><td data-label="Required">no<\/td>/);
    assert.match(row('parent')!, /<td data-label="Type">object \(Pet\)<\/td>.*<li>recursive: another <code>Pet<\/code> as above<\/li>/, 'a schema that holds itself is one row');
    // The first of the named examples.
    assert.ok(body.includes('<p class="hint">Example</p><pre class="example"><code>{\n  &quot;name&quot;: &quot;Rex&quot;,\n  &quot;owner&quot;: {'), body);
  });

  test('responses: each status with its description, headers, content type, schema table and example', async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    const get = operation(text, 'getPet');
    const responses = get.slice(get.indexOf('<h5>Responses</h5>'), get.indexOf('<div class="try"'));
    assert.deepEqual(all(responses, /<p><strong class="status">([^<]+)<\/strong>/g), ['200', '404']);
    assert.match(responses, /<p><strong class="status">200<\/strong> The pet<\/p>/);
    assert.match(
      responses,
      /<tr><td data-label="Header"><code>x-rate-left<\/code><\/td><td data-label="Type">integer<\/td><td data-label="Required">no<\/td><td data-label="Description"><div><p>Calls left<\/p><\/div><\/td><\/tr>/,
    );
    assert.match(responses, /<p><code>application\/json<\/code><\/p>\n<p class="hint">Schema <code>Pet<\/code><\/p>/);
    assert.ok(responses.includes('<pre class="example"><code>{\n  &quot;id&quot;: 42,\n  &quot;name&quot;: &quot;Rex&quot;\n}</code></pre>'), responses);
    assert.match(responses, /<p><strong class="status">404<\/strong> No such pet<\/p>\s*<\/div>\s*$/, 'no headers, no content');
    // An array of a $ref'd schema: a row for the array itself, its items' properties under [].
    const owners = operation(text, 'listOwners');
    assert.deepEqual(
      all(owners, /<tr><td data-label="Name"><code>(.*?)<\/code><\/td>/g).filter((n) => !['X-Trace', 'Authorization'].includes(n!)),
      ['(root)', '[].<wbr>name', '[].<wbr>address', '[].<wbr>address.<wbr>city', '[].<wbr>address.<wbr>kind'],
    );
    assert.match(owners, /<tr><td data-label="Name"><code>\(root\)<\/code><\/td><td data-label="Type">array of object \(Owner\)<\/td><td data-label="Required"><\/td>/);
  });

  test("a tag spelt as the title, in any case, is said once: one group, under the document's heading, in the contents and on the page", async () => {
    const { text } = await new Visitor(base).get('/products/shop/reference');
    const toc = text.slice(text.indexOf('<details class="toc"'), text.indexOf('</details>'));
    assert.match(toc, /<p class="toc-api"><a href="#api-shop">Shop<\/a><\/p>\n<ul>\n<li><a href="#op-listCarts">/);
    assert.doesNotMatch(toc, /toc-tag|>shop<|>SHOP</);
    assert.deepEqual(all(text, /<h3[^>]*>([^<]+)<\/h3>/g), ['Error schemas']);
    assert.equal(text.split('Everything of the shop.').length, 2, "the tag's description, once");
    assert.deepEqual(all(text, /<section class="operation[^"]*" id="op-([^"]+)"/g), ['listCarts', 'createCart']);
  });

  test('the schema of error responses is shown once, after the operations, and each error response links to it; success bodies keep their tables', async () => {
    const { text } = await new Visitor(base).get('/products/shop/reference');
    assert.equal(all(text, /(<section class="schema" id="schema-shop-problem")/g).length, 1);
    assert.equal(all(text, /(<a class="schema-link" href="#schema-shop-problem">)/g).length, 3, 'from the 401 and 403 of listCarts and the 401 of createCart');
    assert.ok(text.includes('<p><code>application/problem+json</code> <span class="hint">Schema</span> <a class="schema-link" href="#schema-shop-problem"><code>Problem</code></a></p>'));
    const shared = text.slice(text.indexOf('<section class="tag shared-schemas"'));
    assert.match(shared, /^<section class="tag shared-schemas" id="api-shop-errors">\n<h3>Error schemas<\/h3>/);
    assert.deepEqual(all(shared, /<tr><td data-label="Name"><code>(.*?)<\/code><\/td>/g), ['type', 'status']);
    assert.equal(all(operation(text, 'listCarts'), /(<p class="hint">Schema <code>Cart<\/code><\/p>)/g).length, 1, 'the 200 keeps its table');
    assert.doesNotMatch(operation(text, 'listCarts'), /<td data-label="Name"><code>status<\/code>/);
  });

  test("the OpenAPI document to download, one file: the product's operations with the gateway as their server, the schemas they use from the file beside it brought into its components; no other file", async () => {
    const page = await new Visitor(base).get('/products/pets/reference');
    assert.match(page.text, /<p class="download"><a href="\/products\/pets\/openapi\/pets\/pets.yaml" download>Download the OpenAPI document<\/a>/);
    const doc = await call(`${base}/products/pets/openapi/pets/pets.yaml`);
    assert.equal(doc.status, 200);
    assert.equal(doc.headers.get('content-type'), 'application/yaml; charset=utf-8');
    const served = parse(doc.text) as { servers: unknown; info: { title: string }; paths: Record<string, Record<string, unknown>> };
    assert.deepEqual(served.servers, [{ url: 'https://api.example.com/v2', description: 'the gateway' }]);
    assert.equal(served.info.title, 'Pet store');
    assert.deepEqual(Object.keys(served.paths), ['/owners', '/pets/{petId}', '/health']);
    assert.deepEqual((served.paths['/pets/{petId}']!.put as { requestBody: { content: Record<string, { schema: unknown }> } }).requestBody.content['application/json']!.schema, {
      $ref: '#/components/schemas/Pet',
    });
    const { schemas } = (served as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }).components;
    assert.deepEqual(Object.keys(schemas).sort(), ['Owner', 'Pet']);
    assert.deepEqual([schemas.Pet!.properties.owner, schemas.Pet!.properties.parent], [{ $ref: '#/components/schemas/Owner' }, { $ref: '#/components/schemas/Pet' }]);
    for (const path of [
      '/products/pets/openapi/pets/schemas.yaml',
      '/products/pets/openapi/pets/gateway.yaml',
      '/products/pets/openapi/me/me.yaml',
      '/products/plain/openapi/pets/pets.yaml',
      '/products/hello/openapi/pets/pets.yaml',
    ]) {
      assert.equal((await call(`${base}${path}`)).status, 404, path);
    }
  });

  test("escaping: the document's markup is text, and no script of the document's reaches the page", async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    assert.match(operation(text, 'getPet'), /<p>Returns the pet. &lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;<\/p>/);
    assert.ok(!text.includes('<script>alert'), 'the description is not markup');
    assert.ok(!text.includes('<b>owners') && !text.includes('<i>escaped'));
  });

  test('try-it without JavaScript: a token line and a curl line with the examples filled in; the form is hidden and its fields have no names', async () => {
    const { text } = await new Visitor(base).get('/products/pets/reference');
    const put = operation(text, 'updatePet');
    assert.ok(
      put.includes('<pre><code class="curl-token">curl -u &quot;$KEY:$SECRET&quot; -d grant_type=client_credentials -d scope=&quot;pets:write&quot; https://api.example.com/oauth2/token</code></pre>'),
      put,
    );
    assert.ok(
      put.includes(
        `<pre><code class="curl" id="op-updatePet-curl">curl -X PUT &#39;https://api.example.com/v2/pets/42&#39; \\\n  -H &quot;Authorization: Bearer $TOKEN&quot; \\\n  -H &#39;Content-Type: application/json&#39; \\\n  --data-binary &#39;{\n  &quot;name&quot;: &quot;Rex&quot;,`,
      ),
      put,
    );
    assert.match(
      operation(text, 'getPet'),
      /<code class="curl" id="op-getPet-curl">curl &#39;https:\/\/api.example.com\/v2\/pets\/42&#39; \\\n {2}-H &quot;Authorization: Bearer \$TOKEN&quot;<\/code>/,
    );
    assert.match(put, /<form class="try-form" hidden>/);
    assert.match(put, /<input type="text" data-in="path" data-name="petId" required value="42" autocomplete="off" spellcheck="false">/);
    assert.match(put, /<textarea data-body data-type="application\/json" rows="13" spellcheck="false">\{\n {2}&quot;name&quot;: &quot;Rex&quot;,/);
    const form = put.slice(put.indexOf('<form class="try-form"'), put.indexOf('</form>'));
    assert.doesNotMatch(form, /\sname=/, 'nothing in it could be submitted');
    assert.match(form, /<p class="hint"><a href="\/login">Log in<\/a> to send the call with one of your apps.<\/p>/);
  });

  test("logged in: the developer's apps of this product that can get a token, by name and key; never a secret", async () => {
    const visitor = await loggedIn('apps@example.com');
    const none = await visitor.get('/products/pets/reference');
    assert.match(operation(none.text, 'getPet'), /To send the call from here, <a href="\/apps\/new\?product=pets">register an app<\/a> for this product/);
    const mine = await createApp(gw.admin, { developer: 'apps@example.com', name: 'Mine <1>', product: 'pets' });
    const pending = await createApp(gw.admin, { developer: 'apps@example.com', name: 'Pending', product: 'pets' });
    await gw.gateway.services.store.apps.setAppApproval(pending.app.id, 'pending', Date.now());
    const other = await createApp(gw.admin, { developer: 'apps@example.com', name: 'Other product', product: 'plain' });
    const page = await visitor.get('/products/pets/reference');
    const get = operation(page.text, 'getPet');
    assert.ok(get.includes(`<label>App <select data-field="app"><option value="${mine.key}">Mine &lt;1&gt; (${mine.key})</option></select></label>`), get);
    assert.match(get, /<input type="password" data-field="secret" autocomplete="off" spellcheck="false">/);
    assert.match(get, /<p><button type="submit">Send<\/button><\/p>/);
    assert.doesNotMatch(get, /data-field="username"/, 'client_credentials: no user');
    for (const secret of [mine.secret, pending.secret, other.secret]) assert.ok(!page.text.includes(secret));
    assert.ok(!page.text.includes(pending.key) && !page.text.includes(other.key));
  });

  test('a public app is not offered: the panels get their tokens with a secret (client_credentials or password), which it does not have', async () => {
    const visitor = await loggedIn('public@example.com');
    const redirectUris = ['https://app.example.com/cb'];
    const server = await createApp(gw.admin, { developer: 'public@example.com', name: 'Server', product: 'signin-pets', redirectUris });
    const spa = await createApp(gw.admin, { developer: 'public@example.com', name: 'Spa', product: 'signin-pets', type: 'public', redirectUris });
    const get = operation((await visitor.get('/products/signin-pets/reference')).text, 'getPet');
    assert.ok(get.includes(`<select data-field="app"><option value="${server.key}">Server (${server.key})</option></select>`), get);
    assert.ok(!get.includes(spa.key));
  });

  test("an operation that requires a user asks for a user's token (the password grant) even where the product has client_credentials", async () => {
    const visitor = await loggedIn('mixed@example.com');
    await createApp(gw.admin, { developer: 'mixed@example.com', name: 'Mixed', product: 'mixed' });
    const me = operation((await visitor.get('/products/mixed/reference')).text, 'whoAmI');
    assert.match(me, /data-grant="password">/);
    assert.ok(
      me.includes('curl -u &quot;$KEY:$SECRET&quot; -d grant_type=password -d username=&quot;$USERNAME&quot; --data-urlencode password=&quot;$PASSWORD&quot; https://api.example.com/oauth2/token'),
      me,
    );
    assert.match(me, /data-field="username"/);
    const product = await visitor.get('/products/mixed');
    assert.match(product.text, /<pre><code id="example-token">curl -u &quot;\$KEY:\$SECRET&quot; -d grant_type=password /);
  });

  test("a product with the password grant and not client_credentials: the panel asks for the user's name and password too", async () => {
    const visitor = await loggedIn('users@example.com');
    const app = await createApp(gw.admin, { developer: 'users@example.com', name: 'For users', product: 'users-pets' });
    const page = await visitor.get('/products/users-pets/reference');
    const get = operation(page.text, 'getPet');
    assert.match(page.text, /<div class="reference" data-gateway="https:\/\/api.example.com">/);
    assert.match(get, /<div class="try" data-try="op-getPet" data-method="GET" data-path="\/v2\/pets\/\{petId\}" data-scopes="pets:read" data-grant="password">/);
    assert.ok(get.includes(`<option value="${app.key}">For users (${app.key})</option>`));
    assert.match(get, /<label>Username <input type="text" data-field="username" autocomplete="off" spellcheck="false"><\/label>/);
    assert.match(get, /<input type="password" data-field="password" autocomplete="off">/);
    assert.ok(
      get.includes(
        'curl -u &quot;$KEY:$SECRET&quot; -d grant_type=password -d username=&quot;$USERNAME&quot; --data-urlencode password=&quot;$PASSWORD&quot; -d scope=&quot;pets:read&quot; https://api.example.com/oauth2/token',
      ),
      get,
    );
  });
});
