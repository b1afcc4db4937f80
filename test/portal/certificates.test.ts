// An app's client certificates in the portal over real HTTP (RFC 8705 §2.2,
// self_signed_tls_client_auth): a developer pastes a PEM made by openssl, the app then gets tokens
// with that certificate and its key alone (through a trusted proxy's X-SSL-Client-Cert), not with
// its secret; a second one keeps the first, at most 4; a removal asks first, and removing the last
// gives the secret back. Every refusal: CSRF, another developer's app, garbage, a public app, one
// the API team registered, a disabled app, a gateway that takes no certificates.
// test/browser/portal.test.ts walks the same in Chromium.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setCertificateAuth } from '../../src/admin/app-certificates.ts';
import { createApp, createDeveloper, inviteDeveloper, setAppStatus } from '../../src/admin/operations.ts';
import { bearer, call, startTestGateway, tempDir, tokenRequest, type Answer, type TestGateway } from '../helpers.ts';
import { makeCertificates, type Pair } from '../oauth/mtls-certificates.ts';
import { SIGN_IN_OAUTH } from '../sign-in-products.ts';
import { Visitor, type Page } from './visitor.ts';

const PRODUCTS = `
  plain:
    displayName: Plain API
    description: Calls of your own server.
    routes: [hello]
    portal: true
  signin:
    displayName: Sign-in API
    description: Calls on behalf of your users.
    routes: [hello]
    grants: [authorization_code, refresh_token]
    login: users
    portal: true
`;
const PORTAL = 'portal:\n  listen: { port: 0 }\n  keyOverlap: 10m\n';
const PASSWORD = 'correct horse battery';
// This test is the proxy that ends TLS: it says which certificate the client presented.
const HEADER = 'X-SSL-Client-Cert';
const MUTUAL_TLS = `  trustedProxies: [127.0.0.1]\n  clientCertificateHeader:\n    name: ${HEADER}\n    format: nginx`;

const EXPLAINED =
  'Once a certificate is registered, the app authenticates at the token endpoint by presenting it (mutual TLS) and sending its key as client_id in the form, with no secret: its secret no longer works. Tokens requested that way are bound to the certificate, and removing every certificate gives the secret back.';
const GARBAGE = 'not a PEM certificate (-----BEGIN CERTIFICATE-----) nor a SHA-256 thumbprint';

/** HTML text as a reader sees it: the entities src/html.ts writes, decoded. */
const decoded = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&hellip;/g, '…')
    .replace(/&amp;/g, '&');

/** The page's text between tags, with whitespace runs as one space. */
const visible = (page: Page) => decoded(page.text.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

/** The certificates table's rows: thumbprint, subject and expiry as a reader sees them. */
const rows = (page: Page) =>
  [...page.text.matchAll(/<tr><td data-label="Thumbprint"><code>([^<]*)<\/code><\/td><td data-label="Subject">([^<]*)<\/td><td data-label="Expires">([^<]*)<\/td>/g)].map((m) =>
    m.slice(1).map(decoded),
  );

/** What the page shows of a certificate: its x5t#S256, its subject as Node prints it on one line, its notAfter in UTC. */
const shown = (pair: Pair) => {
  const x509 = new X509Certificate(pair.pem);
  return [pair.thumbprint, x509.subject.replaceAll('\n', ', '), `${x509.validToDate.toISOString().slice(0, 16).replace('T', ' ')} UTC`];
};

/** The error shown on the page, decoded. */
const errorOf = (page: Page) => decoded(/<p class="error" role="alert">([^<]*)<\/p>/.exec(page.text)?.[1] ?? '');

describe('portal: client certificates', () => {
  const temp = tempDir();
  let gw: TestGateway;
  let base: string;
  let developers = 0;
  const pairs: Pair[] = [];

  before(async () => {
    const certs = makeCertificates(temp.dir);
    pairs.push(certs.selfSigned('one', "/O=Tom & Jerry's/CN=<script>alert(1)<\\/script>"));
    for (const name of ['two', 'three', 'four', 'five']) pairs.push(certs.selfSigned(name, `/CN=orders client ${name}`));
    gw = await startTestGateway({ products: PRODUCTS, oauth: SIGN_IN_OAUTH, listen: MUTUAL_TLS, extra: PORTAL }, { dir: temp.dir });
    base = gw.gateway.portalUrl!;
  });
  after(async () => {
    await gw?.close();
    temp.remove();
  });

  /** A developer an operator invited, signed up with the code: logged in, with one confidential app. */
  async function developer(type: 'confidential' | 'public' = 'confidential') {
    const email = `dev${++developers}@example.com`;
    await createDeveloper(gw.admin, { email, name: `Dev ${developers}` });
    const { code } = await inviteDeveloper(gw.admin, email);
    const visitor = new Visitor(base);
    const form = await visitor.get('/signup');
    assert.equal((await visitor.post('/signup', { csrf: form.csrf!, email, password: PASSWORD, invitation: code })).status, 303);
    const created =
      type === 'public'
        ? await createApp(gw.admin, { developer: email, name: 'spa', product: 'signin', type, redirectUris: ['https://spa.example.com/cb'] })
        : await createApp(gw.admin, { developer: email, name: 'server', product: 'plain' });
    return { visitor, app: { id: created.app.id, key: created.key, secret: created.secret ?? '' }, path: `/apps/${created.app.id}` };
  }

  const stored = async (id: string) => (await gw.admin.store.apps.findAppById(id))?.certificateAuth;
  const add = (visitor: Visitor, path: string, pem: string) => visitor.submit(path, `${path}/certificates`, { certificate: pem });

  /** A token request with the key alone, through the proxy that says the client presented `pair`. */
  const withCertificate = (key: string, pair: Pair): Promise<Answer> =>
    call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', [HEADER]: encodeURIComponent(pair.pem) },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: key }).toString(),
    });
  const withSecret = (app: { key: string; secret: string }) => tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);

  test('register a pasted PEM: the page lists its thumbprint, subject (escaped) and expiry; the app then gets tokens with the certificate and its key alone, bound to it, and no longer with its secret', async () => {
    const { visitor, app, path } = await developer();
    const one = pairs[0]!;
    const before = await visitor.get(path);
    assert.match(
      visible(before),
      new RegExp(`Client certificates ${EXPLAINED.replace(/[.()]/g, '\\$&')} None registered: the app authenticates with its secret\\. Certificate \\(PEM\\) Paste the certificate`),
    );
    assert.match(before.text, new RegExp(`<form method="post" action="/apps/${app.id}/certificates" class="stack wide" id="certificate-form">`));
    assert.match(before.text, /<textarea name="certificate" rows="8" required spellcheck="false" autocapitalize="off" autocomplete="off"><\/textarea>/);
    assert.equal((await withSecret(app)).status, 200, 'the secret works before');

    const posted = await add(visitor, path, one.pem);
    assert.equal(posted.status, 303, posted.text);
    assert.equal(posted.headers.get('location'), `${path}?done=certificate-first`);
    const page = await visitor.follow(posted);
    assert.match(page.text, /<p class="notice" role="status">The certificate is registered: the app now authenticates with it, no longer with its secret\.<\/p>/);
    assert.deepEqual(rows(page), [shown(one)]);
    assert.equal(shown(one)[1], "O=Tom & Jerry's, CN=\\<script\\>alert(1)\\</script\\>");
    assert.ok(page.text.includes('<td data-label="Subject">O=Tom &amp; Jerry&#39;s, CN=\\&lt;script\\&gt;alert(1)\\&lt;/script\\&gt;</td>'), 'the subject is escaped');
    assert.doesNotMatch(page.text.slice(page.text.indexOf('<main>')), /<script|<\/script/, 'no markup from the subject');
    assert.ok(page.text.includes(`<a class="button danger" href="${path}/certificates/${one.thumbprint}/remove">Remove&hellip;</a>`));
    const x509 = new X509Certificate(one.pem);
    assert.deepEqual(await stored(app.id), { method: 'self_signed_tls_client_auth', certificates: [{ thumbprint: one.thumbprint, subject: shown(one)[1], expiresAt: x509.validToDate.getTime() }] });

    const issued = await withCertificate(app.key, one);
    assert.equal(issued.status, 200, issued.text);
    const hello = `${gw.url}/v1/hello`;
    assert.equal((await call(hello, { headers: { ...bearer(issued.body.access_token), [HEADER]: encodeURIComponent(one.pem) } })).status, 200, 'with the certificate it is bound to');
    assert.equal((await call(hello, { headers: bearer(issued.body.access_token) })).status, 401, 'bound: not without the certificate');
    const secret = await withSecret(app);
    assert.equal(secret.status, 401);
    assert.equal(secret.body.error, 'invalid_client');
    assert.equal((await withCertificate(app.key, pairs[1]!)).status, 401, 'another certificate');
  });

  test('rotation: a second certificate keeps the first with its subject and expiry; the same one again changes nothing; at most 4; a removal asks first and keeps the others; removing the last gives the secret back', async () => {
    const { visitor, app, path } = await developer();
    const [one, two, three, four, five] = pairs as [Pair, Pair, Pair, Pair, Pair];
    await add(visitor, path, one.pem);
    const second = await add(visitor, path, two.pem);
    assert.equal(second.headers.get('location'), `${path}?done=certificate-added`);
    const page = await visitor.follow(second);
    assert.match(page.text, /<p class="notice" role="status">The certificate is registered; the others still work\.<\/p>/);
    assert.deepEqual(rows(page), [shown(one), shown(two)]);
    assert.ok(
      page.text.includes(
        '<label>Another certificate (PEM) <span class="hint">Paste the certificate, from <code>-----BEGIN CERTIFICATE-----</code> to <code>-----END CERTIFICATE-----</code>, never its private key. Adding one keeps the others, so the app can move to the new one before you remove the old.</span>',
      ),
    );
    assert.equal((await withCertificate(app.key, one)).status, 200);
    assert.equal((await withCertificate(app.key, two)).status, 200);

    const again = await add(visitor, path, `\n${one.pem}\n`);
    assert.equal(again.headers.get('location'), `${path}?done=certificate-known`);
    const same = await visitor.follow(again);
    assert.match(same.text, /<p class="notice" role="status">That certificate was registered already: nothing changed\.<\/p>/);
    assert.deepEqual(rows(same), [shown(one), shown(two)]);

    await add(visitor, path, three.pem);
    const full = await visitor.follow(await add(visitor, path, four.pem));
    assert.deepEqual(rows(full), [shown(one), shown(two), shown(three), shown(four)]);
    assert.doesNotMatch(full.text, /certificate-form/);
    assert.match(visible(full), /An app has at most 4 certificates: remove one to add another\./);
    const fifth = await visitor.post(`${path}/certificates`, { csrf: full.csrf!, certificate: five.pem });
    assert.equal(fifth.status, 400);
    assert.equal(errorOf(fifth), 'at most 4 certificates per app');
    const held = await stored(app.id);
    assert.deepEqual(
      held?.method === 'self_signed_tls_client_auth' && held.certificates.map((c) => c.thumbprint),
      [one, two, three, four].map((p) => p.thumbprint),
      'still the four',
    );

    const confirm = await visitor.get(`${path}/certificates/${two.thumbprint}/remove`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.text, /<h1>Remove a certificate of <q>server<\/q>\?<\/h1>/);
    assert.match(
      visible(confirm),
      new RegExp(
        `Thumbprint ${two.thumbprint} Subject CN=orders client two Expires ${shown(two)[2]} The app can no longer authenticate with it; its other certificates keep working\\. Remove the certificate Cancel`,
      ),
    );
    const removed = await visitor.post(`${path}/certificates/${two.thumbprint}/remove`, { csrf: confirm.csrf! });
    assert.equal(removed.status, 303);
    assert.equal(removed.headers.get('location'), `${path}?done=certificate-removed`);
    const after = await visitor.follow(removed);
    assert.match(after.text, /<p class="notice" role="status">The certificate is removed\.<\/p>/);
    assert.deepEqual(rows(after), [shown(one), shown(three), shown(four)]);
    assert.equal((await withCertificate(app.key, two)).status, 401, 'the removed one no longer authenticates');
    assert.equal((await withCertificate(app.key, one)).status, 200);

    for (const pair of [three, four]) {
      const form = await visitor.get(`${path}/certificates/${pair.thumbprint}/remove`);
      assert.equal((await visitor.post(`${path}/certificates/${pair.thumbprint}/remove`, { csrf: form.csrf! })).status, 303);
    }
    const last = await visitor.get(`${path}/certificates/${one.thumbprint}/remove`);
    assert.match(visible(last), /It is the only certificate of the app: once it is removed, the app authenticates with its secret again\./);
    const gone = await visitor.post(`${path}/certificates/${one.thumbprint}/remove`, { csrf: last.csrf! });
    assert.equal(gone.headers.get('location'), `${path}?done=certificate-last`);
    const none = await visitor.follow(gone);
    assert.match(none.text, /<p class="notice" role="status">The certificate is removed: the app authenticates with its secret again\.<\/p>/);
    assert.match(visible(none), /None registered: the app authenticates with its secret\./);
    assert.equal(await stored(app.id), undefined);
    assert.equal((await withSecret(app)).status, 200, 'the secret works again');
    assert.equal((await withCertificate(app.key, one)).status, 401);
  });

  test("refusals: garbage (400, on the form as typed, nothing changed); no CSRF token (403); another developer's app and a thumbprint the app did not register (404)", async () => {
    const { visitor, app, path } = await developer();
    const one = pairs[0]!;
    await add(visitor, path, one.pem);
    const before = await stored(app.id);
    const unreadable = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----';
    for (const [typed, message] of [
      ['hello <b>world</b>', GARBAGE],
      ['', GARBAGE],
      [unreadable, 'a PEM certificate that cannot be read'],
    ] as const) {
      const refused = await add(visitor, path, typed);
      assert.equal(refused.status, 400, typed);
      const form = /<form method="post" action="\/apps\/[^"]+\/certificates"[^>]*>([\s\S]*?)<\/form>/.exec(refused.text)?.[1] ?? '';
      assert.equal(errorOf({ ...refused, text: form }), message, 'the error is on the form');
      assert.ok(form.includes(`autocomplete="off">${typed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</textarea>`), 'the form holds what was typed, escaped');
      assert.deepEqual(rows(refused), [shown(one)], 'the list is unchanged');
    }
    assert.deepEqual(await stored(app.id), before, 'nothing changed');
    // A private key pasted with its certificate, by mistake: refused, and not sent back.
    const withKey = `${pairs[1]!.pem}${readFileSync(pairs[1]!.key, 'utf8')}`;
    const keyRefused = await add(visitor, path, withKey);
    assert.equal(keyRefused.status, 400);
    assert.equal(errorOf(keyRefused), 'this holds a private key: register the certificate alone, and since the key has left its place, make a new key and certificate');
    assert.equal(keyRefused.text.includes('PRIVATE KEY'), false, 'the key is not on the page');
    assert.deepEqual(await stored(app.id), before, 'nothing changed');

    const page = await visitor.get(path);
    const noToken = await visitor.post(`${path}/certificates`, { certificate: pairs[1]!.pem });
    assert.equal(noToken.status, 403);
    const noTokenRemove = await visitor.post(`${path}/certificates/${one.thumbprint}/remove`, {});
    assert.equal(noTokenRemove.status, 403);
    assert.equal((await visitor.post(`${path}/certificates/${pairs[1]!.thumbprint}/remove`, { csrf: page.csrf! })).status, 404, 'not registered');
    assert.equal((await visitor.get(`${path}/certificates/${pairs[1]!.thumbprint}/remove`)).status, 404);
    assert.deepEqual(await stored(app.id), before);

    const { visitor: stranger } = await developer();
    const theirs = await stranger.get('/apps');
    assert.equal((await stranger.post(`${path}/certificates`, { csrf: theirs.csrf!, certificate: pairs[1]!.pem })).status, 404);
    assert.equal((await stranger.get(`${path}/certificates/${one.thumbprint}/remove`)).status, 404);
    assert.equal((await stranger.post(`${path}/certificates/${one.thumbprint}/remove`, { csrf: theirs.csrf! })).status, 404);
    assert.deepEqual(await stored(app.id), before, "another developer's requests changed nothing");
    const anonymous = await new Visitor(base).get(`${path}/certificates/${one.thumbprint}/remove`);
    assert.equal(anonymous.status, 303);
    assert.equal(anonymous.headers.get('location'), '/login');
  });

  test('a public app: a sentence and no form; a POST is refused (400) with the reason', async () => {
    const { visitor, app, path } = await developer('public');
    const page = await visitor.get(path);
    assert.match(
      visible(page),
      /Client certificate A public app has no secret, so it registers no certificate: a token it requests over a connection with a client certificate is bound to that certificate\./,
    );
    assert.doesNotMatch(page.text, /certificate-form/);
    const refused = await visitor.post(`${path}/certificates`, { csrf: page.csrf!, certificate: pairs[0]!.pem });
    assert.equal(refused.status, 400);
    assert.equal(errorOf(refused), 'a public app does not authenticate; its tokens are bound to the certificate it presents without registering one');
    assert.equal(await stored(app.id), undefined);
  });

  test('registered by the API team (tls_client_auth): read-only, no form, no Remove; a POST is refused (403)', async () => {
    const { visitor, app, path } = await developer();
    await setCertificateAuth(gw.admin, { id: app.id }, { method: 'tls_client_auth', subjectDn: 'CN=orders-client,O=Example\\, Inc.,C=US' });
    const page = await visitor.get(path);
    assert.match(
      page.text,
      /<p id="certificate-by-operator">Registered by the API team: the app authenticates at the token endpoint with a certificate from the gateway's certificate authority naming the subject <code>CN=orders-client,O=Example\\, Inc\.,C=US<\/code>, and sends its key as <code>client_id<\/code> with no secret: its secret no longer works\. Tokens requested that way are bound to the certificate\. Ask the API team to change it\.<\/p>/,
    );
    assert.doesNotMatch(page.text, /certificate-form|\/remove"/);
    const refused = await visitor.post(`${path}/certificates`, { csrf: page.csrf!, certificate: pairs[0]!.pem });
    assert.equal(refused.status, 403);
    assert.equal(errorOf(refused), 'The API team registered the certificate this app authenticates with: ask them to change it.');
    assert.equal((await stored(app.id))?.method, 'tls_client_auth');
  });

  test('a disabled app: its certificates are listed without the form or Remove; POSTs are refused (403)', async () => {
    const { visitor, app, path } = await developer();
    const one = pairs[0]!;
    await add(visitor, path, one.pem);
    await setAppStatus(gw.admin, { id: app.id }, 'disabled');
    const page = await visitor.get(path);
    assert.deepEqual(rows(page), [shown(one)]);
    assert.doesNotMatch(page.text, /certificate-form|\/remove"/);
    const added = await visitor.post(`${path}/certificates`, { csrf: page.csrf!, certificate: pairs[1]!.pem });
    assert.equal(added.status, 403);
    assert.equal(errorOf(added), 'the app "server" was disabled by the API team: it cannot be deleted or replaced here; ask the API team about it');
    const removed = await visitor.post(`${path}/certificates/${one.thumbprint}/remove`, { csrf: page.csrf! });
    assert.equal(removed.status, 403);
    assert.equal((await stored(app.id))?.method, 'self_signed_tls_client_auth');
  });
});

describe('portal: client certificates on a gateway that takes none', () => {
  test('no section on the app page; a POST is refused (400) and registers nothing, since the app could no longer get tokens', async () => {
    const temp = tempDir();
    const pem = makeCertificates(temp.dir).selfSigned('one', '/CN=one').pem;
    const gw = await startTestGateway({ products: PRODUCTS, oauth: SIGN_IN_OAUTH, extra: PORTAL });
    try {
      await createDeveloper(gw.admin, { email: 'solo@example.com', name: 'Solo' });
      const { code } = await inviteDeveloper(gw.admin, 'solo@example.com');
      const visitor = new Visitor(gw.gateway.portalUrl!);
      const form = await visitor.get('/signup');
      await visitor.post('/signup', { csrf: form.csrf!, email: 'solo@example.com', password: PASSWORD, invitation: code });
      const { app } = await createApp(gw.admin, { developer: 'solo@example.com', name: 'server', product: 'plain' });
      const page = await visitor.get(`/apps/${app.id}`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /Client certificate|certificate-form/);
      const refused = await visitor.post(`/apps/${app.id}/certificates`, { csrf: page.csrf!, certificate: pem });
      assert.equal(refused.status, 400);
      assert.equal(errorOf(refused), 'The gateway takes no client certificates at the moment: a certificate registered now would stop the app from getting tokens.');
      assert.equal((await gw.admin.store.apps.findAppById(app.id))?.certificateAuth, undefined);
    } finally {
      await gw.close();
      temp.remove();
    }
  });
});
