// The portal's public and confidential apps with redirect URIs, over real HTTP: the registration
// form's fields (there without a script), a public app's reveal page (a key, no secret), the app's
// page with its redirect URIs and the form that replaces them, and each refusal on its form with
// the URI named. test/browser/portal.test.ts walks the same in Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDeveloper, inviteDeveloper, setAppStatus } from '../../src/admin/operations.ts';
import { startTestGateway, type TestGateway } from '../helpers.ts';
import { SIGN_IN_OAUTH } from '../sign-in-products.ts';
import { Visitor, type Page } from './visitor.ts';

const PRODUCTS = `
  signin:
    displayName: Sign-in API
    description: Calls on behalf of your users.
    routes: [hello]
    grants: [authorization_code, refresh_token]
    login: users
    portal: true
  plain:
    displayName: Plain API
    description: Calls of your own server.
    routes: [hello]
    portal: true
`;
const PASSWORD = 'correct horse battery';

/** The page's text between tags, with whitespace runs as one space: what a reader sees of it. */
const visible = (page: Page) =>
  page.text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

describe('portal: public and confidential apps, redirect URIs', () => {
  let gw: TestGateway;
  let base: string;
  let developers = 0;

  before(async () => {
    gw = await startTestGateway({ products: PRODUCTS, oauth: SIGN_IN_OAUTH, extra: 'portal:\n  listen: { port: 0 }\n  keyOverlap: 10m\n' });
    base = gw.gateway.portalUrl!;
  });
  after(() => gw.close());

  /** A developer an operator invited, signed up with the code: logged in. */
  async function developer(): Promise<{ visitor: Visitor; email: string }> {
    const email = `dev${++developers}@example.com`;
    await createDeveloper(gw.admin, { email, name: `Dev ${developers}` });
    const { code } = await inviteDeveloper(gw.admin, email);
    const visitor = new Visitor(base);
    const form = await visitor.get('/signup');
    const signedUp = await visitor.post('/signup', { csrf: form.csrf!, email, password: PASSWORD, invitation: code });
    assert.equal(signedUp.status, 303, signedUp.text);
    return { visitor, email };
  }

  const register = (visitor: Visitor, form: Record<string, string>) => visitor.submit('/apps/new', '/apps', form);

  test('the registration form always has the type and the redirect URIs, and says which products sign users in', async () => {
    const { visitor } = await developer();
    const form = await visitor.get('/apps/new');
    assert.equal(form.status, 200);
    assert.match(form.text, /<input type="radio" name="type" value="confidential" checked>/);
    assert.match(form.text, /<input type="radio" name="type" value="public" >/);
    assert.match(form.text, /<textarea name="redirect_uris" rows="3" spellcheck="false" autocapitalize="off"><\/textarea>/);
    const text = visible(form);
    assert.match(text, /Sign-in API Calls on behalf of your users\. Signs users in: an app that does \(a public app always\) needs redirect URIs\./);
    assert.match(text, /Plain API Calls of your own server\. Type of app/, 'no such hint for a product that does not sign users in');
    assert.match(text, /Public A single-page, mobile or command-line app, which cannot keep a secret: it gets a key only/);
  });

  test('a public app with two redirect URIs: the reveal page shows its key and says it has no secret; its page shows the type and the URIs', async () => {
    const { visitor, email } = await developer();
    const posted = await register(visitor, { name: 'spa', product: 'signin', type: 'public', redirect_uris: ' https://spa.example.com/cb \r\n\r\nhttp://127.0.0.1/cb\r\n' });
    assert.equal(posted.status, 303, posted.text);
    const reveal = await visitor.follow(posted);
    assert.equal(reveal.status, 200);
    const key = /id="app-key">([A-Za-z0-9]{32})</.exec(reveal.text)?.[1];
    assert.ok(key, reveal.text);
    assert.match(reveal.text, /<dd id="app-no-secret">none: a public app has no secret<\/dd>/);
    assert.doesNotMatch(reveal.text, /app-secret|gws_|will not be shown again/);
    const id = /href="\/apps\/([^"]+)">Go to the app/.exec(reveal.text)![1]!;

    const app = (await gw.admin.store.apps.findAppByKey(key))!;
    assert.deepEqual(
      { type: app.type, redirectUris: app.redirectUris, developerEmail: app.developerEmail },
      { type: 'public', redirectUris: ['https://spa.example.com/cb', 'http://127.0.0.1/cb'], developerEmail: email },
    );
    const gone = await visitor.get(`/apps/${id}/secret`);
    assert.equal(gone.status, 410);
    assert.match(visible(gone), /This page was shown once\. A public app has no secret: its keys are on its page\./);

    const page = await visitor.get(`/apps/${id}`);
    assert.match(page.text, /<dd id="app-type">public: a key, no secret<\/dd>/);
    assert.match(page.text, /<ul id="redirect-uris"><li><code>https:\/\/spa\.example\.com\/cb<\/code><\/li><li><code>http:\/\/127\.0\.0\.1\/cb<\/code><\/li><\/ul>/);
    assert.match(page.text, /<textarea name="redirect_uris" rows="3" spellcheck="false" autocapitalize="off">https:\/\/spa\.example\.com\/cb\nhttp:\/\/127\.0\.0\.1\/cb<\/textarea>/);
    assert.match(page.text, /<button type="submit">Rotate key<\/button>/);
    const list = await visitor.get('/apps');
    assert.match(list.text, /<td data-label="Type">public<\/td>/);
  });

  test('replacing the redirect URIs: saved with a notice; refused on the form, as typed, with the URI named, and nothing changed', async () => {
    const { visitor } = await developer();
    const reveal = await visitor.follow(await register(visitor, { name: 'web', product: 'signin', type: 'confidential', redirect_uris: 'https://web.example.com/cb' }));
    assert.match(reveal.text, /id="app-secret">gws_/);
    const id = /href="\/apps\/([^"]+)">Go to the app/.exec(reveal.text)![1]!;
    const appPath = `/apps/${id}`;

    const saved = await visitor.submit(appPath, `${appPath}/redirect-uris`, { redirect_uris: 'https://web.example.com/a\nhttps://web.example.com/b' });
    assert.equal(saved.status, 303);
    assert.equal(saved.headers.get('location'), `${appPath}?done=redirect-uris`);
    const after = await visitor.follow(saved);
    assert.match(after.text, /<p class="notice" role="status">The redirect URIs are saved\.<\/p>/);
    assert.match(after.text, /<ul id="redirect-uris"><li><code>https:\/\/web\.example\.com\/a<\/code><\/li><li><code>https:\/\/web\.example\.com\/b<\/code><\/li><\/ul>/);

    const eleven = Array.from({ length: 11 }, (_, i) => `https://web.example.com/${i}`).join('\n');
    const refusals: [string, string][] = [
      ['https://web.example.com/cb#frag', 'the redirect URI "https://web.example.com/cb#frag" must not have a fragment'],
      ['http://web.example.com/cb', 'the redirect URI "http://web.example.com/cb" must be https, or http on a loopback address (127.0.0.1, [::1], localhost)'],
      [
        'javascript:alert(document.cookie)',
        'the redirect URI "javascript:alert(document.cookie)" must be https, http on a loopback address, or a private-use scheme in reverse domain order (com.example.app:/callback)',
      ],
      [eleven, 'an app has at most 10 redirect URIs, not 11'],
      ['https://web.example.com/a\nhttps://web.example.com/a', 'the redirect URI "https://web.example.com/a" is listed twice'],
    ];
    for (const [typed, message] of refusals) {
      const refused = await visitor.submit(appPath, `${appPath}/redirect-uris`, { redirect_uris: typed });
      assert.equal(refused.status, 400, typed);
      const form = /<form method="post" action="\/apps\/[^"]+\/redirect-uris"[^>]*>([\s\S]*?)<\/form>/.exec(refused.text)?.[1] ?? '';
      assert.equal(
        /<p class="error" role="alert">([^<]*)<\/p>/
          .exec(form)?.[1]
          ?.replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'"),
        message,
        'the error is on the form',
      );
      assert.ok(form.includes(`>${typed.replace(/&/g, '&amp;')}</textarea>`), 'the form holds what was typed');
    }
    assert.deepEqual((await gw.admin.store.apps.findAppById(id))?.redirectUris, ['https://web.example.com/a', 'https://web.example.com/b'], 'unchanged');

    const noToken = await visitor.post(`${appPath}/redirect-uris`, { redirect_uris: 'https://evil.example.com/cb' });
    assert.equal(noToken.status, 403, 'no CSRF token: refused');
    assert.deepEqual((await gw.admin.store.apps.findAppById(id))?.redirectUris, ['https://web.example.com/a', 'https://web.example.com/b']);
  });

  test("refusals on registration, on the form as typed; another developer's app is not found; a disabled app has no form", async () => {
    const { visitor, email } = await developer();
    const cases: [Record<string, string>, string][] = [
      [
        { name: 'p', product: 'plain', type: 'public', redirect_uris: '' },
        'a public app holds no secret, so it needs the authorization_code grant, and product "plain" offers client_credentials only: register a confidential app',
      ],
      [
        { name: 'p', product: 'plain', type: 'confidential', redirect_uris: 'https://a.example.com/cb' },
        'product "plain" does not offer the authorization_code grant, the only one that sends users to a redirect URI: its apps take none',
      ],
      [{ name: 'p', product: 'signin', type: 'public', redirect_uris: 'https://a.example.com/cb#x' }, 'the redirect URI "https://a.example.com/cb#x" must not have a fragment'],
      [
        { name: 'p', product: 'signin', type: 'public', redirect_uris: '' },
        'a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in',
      ],
      [
        { name: 'p', product: 'signin', type: 'public', redirect_uris: 'javascript:alert(1)' },
        'the redirect URI "javascript:alert(1)" must be https, http on a loopback address, or a private-use scheme in reverse domain order (com.example.app:/callback)',
      ],
      [{ name: 'p', product: 'signin', type: 'native', redirect_uris: 'https://a.example.com/cb' }, 'choose the type of the app: confidential or public'],
    ];
    for (const [form, message] of cases) {
      const refused = await register(visitor, form);
      assert.equal(refused.status, 400, message);
      assert.equal(/<p class="error" role="alert">([^<]*)<\/p>/.exec(refused.text)?.[1]?.replace(/&quot;/g, '"'), message);
      assert.ok(refused.text.includes(`>${form.redirect_uris}</textarea>`), 'the URIs as typed');
      if (form.type !== 'native') assert.match(refused.text, new RegExp(`name="type" value="${form.type}" checked`), 'the type as chosen');
    }
    assert.equal((await gw.admin.store.apps.listApps({ developerEmail: email })).length, 0, 'nothing registered');

    const other = await createDeveloper(gw.admin, { email: 'other@example.com', name: 'Other' });
    const { createApp } = await import('../../src/admin/operations.ts');
    const theirs = await createApp(gw.admin, { developer: other.email, name: 'theirs', product: 'signin', type: 'public', redirectUris: ['https://theirs.example.com/cb'] });
    const page = await visitor.get('/apps');
    const foreign = await visitor.post(`/apps/${theirs.app.id}/redirect-uris`, { csrf: page.csrf!, redirect_uris: 'https://evil.example.com/cb' });
    assert.equal(foreign.status, 404);
    assert.deepEqual((await gw.admin.store.apps.findAppById(theirs.app.id))?.redirectUris, ['https://theirs.example.com/cb']);

    const mine = await visitor.follow(await register(visitor, { name: 'mine', product: 'signin', type: 'public', redirect_uris: 'https://mine.example.com/cb' }));
    const id = /href="\/apps\/([^"]+)">Go to the app/.exec(mine.text)![1]!;
    await setAppStatus(gw.admin, { id }, 'disabled');
    const disabled = await visitor.get(`/apps/${id}`);
    assert.match(disabled.text, /<ul id="redirect-uris"><li><code>https:\/\/mine\.example\.com\/cb<\/code><\/li><\/ul>/);
    assert.doesNotMatch(disabled.text, /redirect-uris-form/);
    const refused = await visitor.post(`/apps/${id}/redirect-uris`, { csrf: disabled.csrf!, redirect_uris: 'https://other.example.com/cb' });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /was disabled by the API team/);
  });

  test('an app of a product that does not sign users in: its page says it needs no redirect URIs, and has no form', async () => {
    const { visitor } = await developer();
    const reveal = await visitor.follow(await register(visitor, { name: 'server', product: 'plain', type: 'confidential', redirect_uris: '' }));
    const id = /href="\/apps\/([^"]+)">Go to the app/.exec(reveal.text)![1]!;
    const page = await visitor.get(`/apps/${id}`);
    assert.match(page.text, /<dd id="app-type">confidential: a key and a secret<\/dd>/);
    assert.match(visible(page), /Redirect URIs This product does not sign users in: the app needs no redirect URIs\./);
    assert.doesNotMatch(page.text, /redirect-uris-form/);
  });
});
