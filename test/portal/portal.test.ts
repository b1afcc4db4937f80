// The developer portal over real HTTP: accounts, sessions, CSRF, cookie flags, throttling,
// escaping, apps, rotation with overlap, usage. The browser tests (test/browser) walk the same
// flows in Chromium.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, beforeEach, describe, test } from 'node:test';
import { actingAs, createApp, createDeveloper, deleteApp, inviteDeveloper, listApps, setAppStatus, setDeveloperStatus } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/host/index.ts';
import { bearer, call, startTestGateway, TEST_REDIS_URL, tokenRequest, type TestGateway } from '../helpers.ts';
import { linkIn, signUpAndConfirm, startMailbox, type Mailbox } from './mailbox.ts';
import { Visitor, type Page } from './visitor.ts';

const PRODUCTS = `
  public:
    displayName: Public <API>
    description: Greetings & more, for <everyone>.
    routes: [hello]
    scopes: [hello:read]
    quota: { limit: 100, interval: day }
    portal: true
`;
let mailbox: Mailbox;
before(async () => {
  mailbox = await startMailbox();
});
after(() => mailbox.close());

const PORTAL = (extra = '') => `portal:
  listen: { port: 0 }
  keyOverlap: 10m
  gatewayUrl: https://api.example.com
${extra}`;
/** The portal with open sign-up, mailing through the test's SMTP server. */
const OPEN_PORTAL = () => `${PORTAL('  signup: open\n')}${mailbox.yaml}`;
// Each sign-up comes from an address of its own (X-Forwarded-For from this trusted proxy), as
// sign-ups are throttled per address.
const PROXIED = '  trustedProxies: [127.0.0.1]\n';

const PASSWORD = 'correct horse battery';

let counter = 0;
const email = () => `dev${++counter}@example.com`;

/** Signs up through the portal and confirms the address with the mailed link, as a developer would. */
function signUp(base: string, who = email(), name = 'Ada Lovelace'): Promise<{ visitor: Visitor; email: string }> {
  return signUpAndConfirm(base, mailbox, { email: who, name, password: PASSWORD, clientIp: `198.51.100.${counter % 250}` });
}

async function register(visitor: Visitor, name: string, product = 'public'): Promise<{ key: string; secret: string; id: string }> {
  const posted = await visitor.submit('/apps/new', '/apps', { name, product });
  assert.equal(posted.status, 303, posted.text);
  const page = await visitor.follow(posted);
  assert.equal(page.status, 200, page.text);
  const key = /id="app-key">([^<]+)</.exec(page.text)?.[1];
  const secret = /id="app-secret">([^<]+)</.exec(page.text)?.[1];
  const id = /href="\/apps\/([^"]+)">Go to the app/.exec(page.text)?.[1];
  assert.ok(key && secret && id, page.text);
  return { key, secret, id };
}

async function token(gw: TestGateway, app: { key: string; secret: string }): Promise<string> {
  const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 200, res.text);
  return (res.body as { access_token: string }).access_token;
}

describe('portal: where it is served', () => {
  test('absent unless the config declares it', async () => {
    const gw = await startTestGateway();
    try {
      assert.equal(gw.gateway.portalUrl, undefined);
    } finally {
      await gw.close();
    }
  });

  test('over TLS when the listener has a certificate: the cookie is Secure and __Host-, and HSTS is sent', async () => {
    const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
    const tls = `  tls: { cert: ${path.join(fixtures, 'localhost.crt')}, key: ${path.join(fixtures, 'localhost.key')} }\n`;
    const gw = await startTestGateway({ extra: `portal:\n  listen:\n    port: 0\n    host: 127.0.0.1\n  ${tls}` });
    try {
      const url = gw.gateway.portalUrl!.replace('127.0.0.1', 'localhost');
      assert.ok(url.startsWith('https://'), url);
      const visitor = new Visitor(url);
      const page = await visitor.get('/login');
      assert.equal(page.status, 200);
      assert.match(page.headers.get('set-cookie')!, /^__Host-portal=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=28800; Secure$/);
      assert.equal(page.headers.get('strict-transport-security'), 'max-age=31536000', 'hsts over TLS');
    } finally {
      await gw.close();
    }
  });
});

describe('portal', () => {
  let gw: TestGateway;
  let base: string;
  let now = Date.now();

  before(async () => {
    gw = await startTestGateway({ products: PRODUCTS, listen: PROXIED, extra: OPEN_PORTAL() }, { clock: () => now });
    base = gw.gateway.portalUrl!;
  });
  after(() => gw.close());
  beforeEach(() => {
    now = Date.now();
  });

  test('every page: CSP without framing, reaching only the gateway (portal.gatewayUrl), nosniff, no-store; an HttpOnly SameSite=Lax cookie, not Secure over http', async () => {
    const page = await new Visitor(base).get('/');
    assert.equal(page.status, 200);
    assert.equal(
      page.headers.get('content-security-policy'),
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src https://api.example.com; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.equal(page.headers.get('strict-transport-security'), null, 'no HSTS over plain http');
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('set-cookie')!, /^portal=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=28800$/);
    const put = await call(`${base}/`, { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
    const css = await call(`${base}/assets/portal.css`);
    assert.equal(css.status, 200);
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  });

  test('products: only the visible ones, with routes, scopes, quota, grants and a curl example; names escaped', async () => {
    const list = await new Visitor(base).get('/');
    assert.match(list.text, /<a href="\/products\/public">Public &lt;API&gt;<\/a>/);
    assert.match(list.text, /Greetings &amp; more, for &lt;everyone&gt;\./);
    assert.doesNotMatch(list.text, /\/products\/hello"/, 'hello is not marked visible');
    const page = await new Visitor(base).get('/products/public');
    assert.equal(page.status, 200);
    assert.match(page.text, /<td data-label="Method"><code>GET<\/code><\/td><td data-label="Path"><code>\/v1\/hello<\/code><\/td>/);
    assert.match(page.text, /<dt>Scopes<\/dt><dd>hello:read<\/dd>/);
    assert.match(page.text, /<dt>Quota<\/dt><dd>100 calls per day per app<\/dd>/);
    assert.match(page.text, /<dt>Grant types<\/dt><dd>client_credentials<\/dd>/);
    assert.match(page.text, /curl -u &quot;\$KEY:\$SECRET&quot; -d grant_type=client_credentials -d scope=&quot;hello:read&quot; https:\/\/api\.example\.com\/oauth2\/token/);
    assert.match(page.text, /curl -H &quot;Authorization: Bearer \$TOKEN&quot; https:\/\/api\.example\.com\/v1\/hello/);
    assert.equal((await new Visitor(base).get('/products/hello')).status, 404, 'not visible');
    assert.equal((await new Visitor(base).get('/products/nope')).status, 404);
    assert.equal((await new Visitor(base).get('/products/%E0')).status, 400, 'an escape that is not UTF-8: not a 500');
  });

  test('sign up, log out, log in: the session id changes at login and dies at logout', async () => {
    const visitor = new Visitor(base);
    await visitor.get('/signup');
    const anonymous = visitor.cookie;
    const who = email();
    const signed = await visitor.submit('/signup', '/signup', { email: who, name: 'Grace', password: PASSWORD });
    assert.equal(signed.status, 200);
    assert.equal(visitor.cookie, anonymous, 'signing up logs nobody in');
    assert.equal((await visitor.submit('/login', '/login', { email: who, password: PASSWORD })).status, 401, 'nor can it log in before the address is confirmed');
    const link = linkIn(await mailbox.next(who), base.replace('127.0.0.1', 'localhost'));
    const confirmed = await visitor.submit(link, '/verify', { token: new URLSearchParams(link.split('?')[1]).get('token')!, email: who, password: PASSWORD });
    assert.equal(confirmed.status, 303);
    assert.equal((await visitor.submit('/apps', '/logout', {})).status, 303);
    const loggedOut = visitor.cookie;
    const first = await visitor.submit('/login', '/login', { email: who, password: PASSWORD });
    assert.equal(first.status, 303);
    assert.notEqual(visitor.cookie, loggedOut, 'a new id at every login');
    assert.notEqual(visitor.cookie, anonymous, 'a new id once logged in');
    assert.match((await visitor.get('/apps')).text, /You have no apps yet/);
    const session = visitor.cookie;

    const out = await visitor.submit('/apps', '/logout', {});
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/');
    assert.notEqual(visitor.cookie, session);
    // The old session cookie no longer logs anyone in.
    const replay = new Visitor(base);
    replay.cookie = session;
    const denied = await replay.get('/apps');
    assert.equal(denied.status, 303);
    assert.equal(denied.headers.get('location'), '/login');

    const before = visitor.cookie;
    const login = await visitor.submit('/login', '/login', { email: who.toUpperCase(), password: PASSWORD });
    assert.equal(login.status, 303);
    assert.equal(login.headers.get('location'), '/apps');
    assert.notEqual(visitor.cookie, before, 'the id changes at login');
    assert.match((await visitor.get('/apps')).text, /My apps/);
  });

  test('sign-up problems: weak password, taken email, bad email; what was typed comes back escaped', async () => {
    const visitor = new Visitor(base);
    const weak = await visitor.submit('/signup', '/signup', { email: 'weak@example.com', name: '<b>x</b>', password: 'short' });
    assert.equal(weak.status, 400);
    assert.match(weak.text, /the password must have at least 10 characters/);
    assert.match(weak.text, /value="&lt;b&gt;x&lt;\/b&gt;"/);
    const { email: taken } = await signUp(base);
    const again = await new Visitor(base).submit('/signup', '/signup', { email: taken, name: 'Again', password: 'another password' });
    assert.equal(again.status, 200, 'the same answer as for a new address (test/portal/signup.test.ts)');
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: taken, password: 'another password' })).status, 401, 'not taken over');
    // An account an operator created (no password yet) is not taken over by signing up with its email.
    await createDeveloper(gw.admin, { email: 'operator-made@example.com', name: 'Made' });
    const takeover = await new Visitor(base).submit('/signup', '/signup', { email: 'operator-made@example.com', name: 'Me', password: PASSWORD });
    assert.equal(takeover.status, 200);
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: 'operator-made@example.com', password: PASSWORD })).status, 401);
    const bad = await new Visitor(base).submit('/signup', '/signup', { email: '"><script>alert(1)</script>', name: 'X', password: PASSWORD });
    assert.equal(bad.status, 400);
    assert.doesNotMatch(bad.text, /<script>alert/);
    assert.match(bad.text, /&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });

  test("CSRF: a form without the token, with another browser's, or with one from before login is refused (403)", async () => {
    const visitor = new Visitor(base);
    const form = await visitor.get('/login');
    const missing = await visitor.post('/login', { email: 'x@example.com', password: PASSWORD });
    assert.equal(missing.status, 403);
    assert.match(missing.text, /This form was not sent from this portal page in this browser session/);
    assert.match(missing.text, /<h1>Forbidden<\/h1>/);
    const other = new Visitor(base);
    await other.get('/login');
    const foreign = await other.post('/login', { csrf: form.csrf!, email: 'x@example.com', password: PASSWORD });
    assert.equal(foreign.status, 403, "another browser's token");

    const { visitor: dev } = await signUp(base);
    const stale = await dev.get('/apps/new');
    await dev.submit('/apps', '/logout', {});
    await dev.submit('/login', '/login', { email: `dev${counter}@example.com`, password: PASSWORD });
    const old = await dev.post('/apps', { csrf: stale.csrf!, name: 'x', product: 'public' });
    assert.equal(old.status, 403, 'a token from an earlier session');
    const noToken = await dev.post('/apps', { name: 'x', product: 'public' });
    assert.equal(noToken.status, 403);
    assert.match((await dev.get('/apps')).text, /You have no apps yet/, 'nothing was registered');
  });

  test('login is throttled per account: after 5 failures each attempt must wait 1 s, 2 s, 4 s … after the last, right password or not, whatever X-Forwarded-For says', async () => {
    const { email: who } = await signUp(base);
    const { email: bystander } = await signUp(base);
    const attacker = new Visitor(base);
    for (let i = 0; i < 5; i++) {
      const page = await attacker.submit('/login', '/login', { email: who, password: `wrong-${i}-password` });
      assert.equal(page.status, 401);
      assert.match(page.text, /wrong email or password/);
    }
    for (const ip of ['203.0.113.7', '198.51.100.1']) {
      const page = await attacker.get('/login');
      const refused = await attacker.post('/login', { csrf: page.csrf!, email: who, password: PASSWORD }, { 'x-forwarded-for': ip });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(refused.text, /too many failed logins for this account: try again in 1 second</);
    }
    const other = await new Visitor(base).submit('/login', '/login', { email: bystander, password: PASSWORD });
    assert.equal(other.status, 303, 'another account is not affected');
    now += 1000;
    assert.equal((await attacker.submit('/login', '/login', { email: who, password: 'wrong-again-password' })).status, 401, 'after the wait');
    const doubled = await new Visitor(base).submit('/login', '/login', { email: who, password: PASSWORD });
    assert.equal(doubled.status, 429);
    assert.equal(doubled.headers.get('retry-after'), '2');
    now += 2000;
    const later = await new Visitor(base).submit('/login', '/login', { email: who, password: PASSWORD });
    assert.equal(later.status, 303, 'the owner gets in once the short wait is over');
  });

  test('register an app for a visible product: key and secret shown once, and they work at the token endpoint at once', async () => {
    const { visitor } = await signUp(base, email(), '<img src=x onerror=alert(1)>');
    const app = await register(visitor, '<script>alert("app")</script>');
    const listing = await visitor.get('/apps');
    assert.match(listing.text, /&lt;script&gt;alert\(&quot;app&quot;\)&lt;\/script&gt;/);
    assert.doesNotMatch(listing.text, /<script>alert/);
    assert.match(listing.text, new RegExp(`<code>${app.key}</code>`));
    assert.doesNotMatch((await visitor.get('/apps?done=constructor')).text, /native code|class="notice"/);
    assert.doesNotMatch(listing.text, new RegExp(app.secret), 'the secret is never shown again');
    const appPage = await visitor.get(`/apps/${app.id}`);
    assert.doesNotMatch(appPage.text, new RegExp(app.secret));
    const answer = await call(`${gw.url}/v1/hello`, { headers: bearer(await token(gw, app)) });
    assert.equal(answer.status, 200);

    const hidden = await visitor.submit('/apps/new', '/apps', { name: 'sneaky', product: 'hello' });
    assert.equal(hidden.status, 400, 'a product not visible in the portal');
    assert.match(hidden.text, /choose one of the API products/);
    const duplicate = await visitor.submit('/apps/new', '/apps', { name: '<script>alert("app")</script>', product: 'public' });
    assert.equal(duplicate.status, 409);
  });

  test('terminal-escape: names with control characters or bidi overrides are refused (400) at sign-up and registration; nothing is written', async () => {
    const signup = await new Visitor(base).submit('/signup', '/signup', { email: 'mallory@example.com', name: 'Mallory\u202eexe', password: PASSWORD });
    assert.equal(signup.status, 400);
    assert.match(signup.text, /the name must not contain control characters or bidirectional text overrides/);
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: 'mallory@example.com', password: PASSWORD })).status, 401, 'no account was made');
    const { visitor } = await signUp(base);
    for (const name of ['red\x1b[31m', 'csi\u009b2J', 'mark\u200e']) {
      const page = await visitor.submit('/apps/new', '/apps', { name, product: 'public' });
      assert.equal(page.status, 400, JSON.stringify(name));
      assert.match(page.text, /the app name must not contain control characters or bidirectional text overrides/);
    }
    assert.match((await visitor.get('/apps')).text, /You have no apps yet/);
  });

  /** What the reveal page shows: the key and secret, or nothing. */
  const shownPair = (page: { text: string }) => ({ key: /id="app-key">([^<]+)</.exec(page.text)?.[1], secret: /id="app-secret">([^<]+)</.exec(page.text)?.[1] });
  const GONE = /This secret was shown once and is no longer available: the gateway keeps only a hash of it\. If you did not copy it, rotate the key to get a new one\./;

  test('new secret, once (Post/Redirect/Get): POST /apps answers 303 to a GET that shows the key and secret once, from a sealed cookie it clears; a reload shows a notice and registers nothing', async () => {
    const { visitor, email: who } = await signUp(base);
    const form = await visitor.get('/apps/new');
    const posted = await visitor.post('/apps', { csrf: form.csrf!, name: 'once', product: 'public' });
    assert.equal(posted.status, 303);
    assert.equal(posted.text, '');
    const location = posted.headers.get('location')!;
    const id = /^\/apps\/([A-Za-z0-9_-]+)\/secret$/.exec(location)?.[1];
    assert.ok(id, location);
    const [sealed, ...others] = posted.headers.getSetCookie();
    assert.deepEqual(others, [], 'the session cookie stays as it is');
    assert.match(sealed!, new RegExp(`^portal-reveal=[A-Za-z0-9_-]{100,}; Path=/apps/${id}/secret; HttpOnly; SameSite=Strict; Max-Age=120$`));

    const shown = await visitor.get(location);
    assert.equal(shown.status, 200);
    assert.equal(shown.headers.get('cache-control'), 'no-store');
    assert.deepEqual(shown.headers.getSetCookie(), [`portal-reveal=; Path=/apps/${id}/secret; HttpOnly; SameSite=Strict; Max-Age=0`]);
    assert.match(shown.text, /<h1>App <q>once<\/q> registered<\/h1>/);
    const pair = shownPair(shown);
    assert.ok(pair.key && pair.secret, shown.text);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(await token(gw, { key: pair.key, secret: pair.secret })) })).status, 200);
    assert.ok(!sealed!.includes(pair.secret) && !location.includes(pair.secret), 'the secret is in neither the URL nor the cookie in clear');
    assert.ok(!gw.logs.some((line) => line.includes(pair.secret!)), 'nor in a log line');

    const reloaded = await visitor.get(location);
    assert.equal(reloaded.status, 410);
    assert.equal(reloaded.headers.get('cache-control'), 'no-store');
    assert.match(reloaded.text, GONE);
    assert.match(reloaded.text, new RegExp(`<a href="/apps/${id}">Go to the app <q>once</q></a>`));
    assert.deepEqual(shownPair(reloaded), { key: undefined, secret: undefined });
    assert.deepEqual(
      (await listApps(gw.admin, { developer: who })).map((a) => a.name),
      ['once'],
      'one app: the GET registers nothing',
    );

    // The cookie's value sent again (a copy kept): it expires with the sealed time, whatever the browser does.
    const replay = new Visitor(base);
    replay.cookie = `${visitor.cookie}; ${sealed!.split(';')[0]}`;
    now += 2 * 60_000 + 1;
    const late = await replay.get(location);
    assert.equal(late.status, 410);
    assert.equal(shownPair(late).secret, undefined);
  });

  test('new secret, once: rotating answers 303 to the reveal page; the previous key works until the overlap ends; a reload rotates nothing', async () => {
    const { visitor } = await signUp(base);
    const app = await register(visitor, 'turning');
    const page = await visitor.get(`/apps/${app.id}`);
    const posted = await visitor.post(`/apps/${app.id}/rotate`, { csrf: page.csrf! });
    assert.equal(posted.status, 303);
    assert.equal(posted.headers.get('location'), `/apps/${app.id}/secret`);
    assert.match(posted.headers.getSetCookie()[0]!, new RegExp(`^portal-reveal=[A-Za-z0-9_-]+; Path=/apps/${app.id}/secret; HttpOnly; SameSite=Strict; Max-Age=120$`));
    const shown = await visitor.follow(posted);
    assert.equal(shown.status, 200);
    assert.match(shown.text, /<h1>New key and secret for <q>turning<\/q><\/h1>/);
    assert.match(shown.text, new RegExp(`The previous key and secret keep working until ${new Date(now + 10 * 60_000).toISOString().slice(0, 16).replace('T', ' ')} UTC\\.`));
    const pair = shownPair(shown);
    assert.notEqual(pair.key, app.key);
    const again = await visitor.get(`/apps/${app.id}/secret`);
    assert.equal(again.status, 410);
    assert.match(again.text, GONE);
    assert.equal(shownPair(again).secret, undefined);
    const credentials = await gw.admin.store.apps.listCredentials(app.id);
    assert.deepEqual(credentials.map((c) => c.key).sort(), [app.key, pair.key].sort(), 'exactly one rotation');
  });

  test('new secret, once: the sealed cookie opens for its own session and app only; an altered one is refused cleanly', async () => {
    const { visitor, email: who } = await signUp(base);
    const form = await visitor.get('/apps/new');
    const posted = await visitor.post('/apps', { csrf: form.csrf!, name: 'sealed', product: 'public' });
    const location = posted.headers.get('location')!;
    const sealed = visitor.cookies.get('portal-reveal')!;

    // Another developer: the app is not theirs, and their own app's reveal page does not open it.
    const { visitor: stranger } = await signUp(base);
    const theirs = await register(stranger, 'theirs');
    stranger.cookies.set('portal-reveal', sealed);
    assert.equal((await stranger.get(location)).status, 404);
    stranger.cookies.set('portal-reveal', sealed);
    const crossed = await stranger.get(`/apps/${theirs.id}/secret`);
    assert.equal(crossed.status, 410);
    assert.equal(shownPair(crossed).secret, undefined);

    // The same session, another of its apps: the cookie names the app it was sealed for.
    const second = await register(visitor, 'second');
    visitor.cookies.set('portal-reveal', sealed);
    const otherApp = await visitor.get(`/apps/${second.id}/secret`);
    assert.equal(otherApp.status, 410);
    assert.equal(shownPair(otherApp).secret, undefined);
    visitor.cookies.set('portal-reveal', sealed); // the refusal cleared it (this jar ignores Path): the last step below opens it

    // The same developer in another session (another browser).
    const elsewhere = new Visitor(base);
    assert.equal((await elsewhere.submit('/login', '/login', { email: who, password: PASSWORD })).status, 303);
    elsewhere.cookies.set('portal-reveal', sealed);
    const otherSession = await elsewhere.get(location);
    assert.equal(otherSession.status, 410);
    assert.equal(shownPair(otherSession).secret, undefined);

    for (const altered of [`${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`, `${sealed.startsWith('A') ? 'B' : 'A'}${sealed.slice(1)}`, 'x', '', '%%%']) {
      const owner = new Visitor(base);
      owner.cookie = visitor.cookie;
      owner.cookies.set('portal-reveal', altered);
      const refused = await owner.get(location);
      assert.equal(refused.status, 410, altered);
      assert.match(refused.text, GONE);
      assert.deepEqual(refused.headers.getSetCookie(), [`portal-reveal=; Path=${location}; HttpOnly; SameSite=Strict; Max-Age=0`]);
    }
    const shown = await visitor.get(location);
    assert.equal(shown.status, 200, 'its own session still opens it');
    assert.ok(shownPair(shown).secret);
    assert.equal((await visitor.post(location, { csrf: shown.csrf! })).status, 404, 'the reveal page is only read');
  });

  /**
   * Registers an app through the portal and answers the 303 to its reveal page, the page's path,
   * and the Cookie header a saved copy of the redirected request would send again: the session and the sealed reveal.
   */
  async function registerForReveal(visitor: Visitor, name: string): Promise<{ posted: Page; location: string; saved: string }> {
    const posted = await visitor.submit('/apps/new', '/apps', { name, product: 'public' });
    assert.equal(posted.status, 303, posted.text);
    const saved = visitor.cookie!;
    assert.match(saved, /(^|; )portal-reveal=[A-Za-z0-9_-]{100,}/);
    return { posted, location: posted.headers.get('location')!, saved };
  }

  test('the reveal page is single-use on the server: replaying its sealed cookie with the session shows nothing', async () => {
    const { visitor } = await signUp(base);
    const { posted, location, saved } = await registerForReveal(visitor, 'replayed');
    const shown = await visitor.follow(posted);
    assert.equal(shown.status, 200, shown.text);
    const { secret } = shownPair(shown);
    assert.ok(secret, shown.text);

    // The same request again, cookies and all, within the two minutes: the browser's clearing is not what stops it.
    const replay = new Visitor(base);
    replay.cookie = saved;
    const replayed = await replay.get(location);
    assert.equal(replayed.status, 410);
    assert.match(replayed.text, GONE);
    assert.ok(!replayed.text.includes(secret), 'the secret is not shown again');
    assert.deepEqual(replayed.headers.getSetCookie(), [`portal-reveal=; Path=${location}; HttpOnly; SameSite=Strict; Max-Age=0`]);
    // Exactly what the same session gets without the cookie.
    assert.equal(visitor.cookies.has('portal-reveal'), false);
    const absent = await visitor.get(location);
    assert.deepEqual([replayed.status, replayed.text], [absent.status, absent.text]);
  });

  test('the reveal page is single-use across instances: its sealed cookie, shown by one gateway, shows nothing on another on the same store', async () => {
    const other = await startGateway({ config: loadConfigFile(gw.configFile, { env: {} }), logger: createLogger('silent') });
    try {
      const { visitor } = await signUp(base);
      const { posted, location, saved } = await registerForReveal(visitor, 'elsewhere');
      const shown = await visitor.follow(posted);
      assert.equal(shown.status, 200, shown.text);
      const { secret } = shownPair(shown);
      assert.ok(secret, shown.text);

      const replay = new Visitor(other.portalUrl!);
      replay.cookie = saved;
      const replayed = await replay.get(location);
      assert.equal(replayed.status, 410);
      assert.match(replayed.text, GONE);
      assert.ok(!replayed.text.includes(secret), 'the other instance does not show it again');
    } finally {
      await other.close();
    }
  });

  test('the reveal page fails closed: when the store cannot spend the reveal, 503 and the usual page, no secret, and the cookie is kept until the store answers', {
    skip: TEST_REDIS_URL === undefined ? false : "holds the SQLite file's write lock",
  }, async () => {
    const { visitor } = await signUp(base);
    const { posted } = await registerForReveal(visitor, 'locked');
    // Another connection holds the write lock past the store's busy timeout (2 s).
    const lock = new DatabaseSync(path.join(gw.dir, 'gateway.db'));
    lock.exec('BEGIN IMMEDIATE');
    let refused: Page;
    try {
      refused = await visitor.follow(posted);
    } finally {
      lock.exec('ROLLBACK');
      lock.close();
    }
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.text, /The service is temporarily unavailable; try again in a moment\./);
    assert.equal(shownPair(refused).secret, undefined);
    assert.doesNotMatch(refused.text, /locked|database/i, 'no internal message');
    assert.deepEqual(refused.headers.getSetCookie(), [], 'the sealed cookie is not cleared');
    const shown = await visitor.follow(posted);
    assert.equal(shown.status, 200, shown.text);
    assert.ok(shownPair(shown).secret);
  });

  test("another developer's app is not found; logged out, app pages send to the login", async () => {
    const { visitor: owner } = await signUp(base);
    const app = await register(owner, 'mine');
    const { visitor: stranger } = await signUp(base);
    assert.equal((await stranger.get(`/apps/${app.id}`)).status, 404);
    const page = await stranger.get('/apps');
    const del = await stranger.post(`/apps/${app.id}/delete`, { csrf: page.csrf! });
    assert.equal(del.status, 404);
    const anonymous = await new Visitor(base).get(`/apps/${app.id}`);
    assert.equal(anonymous.status, 303);
    assert.equal(anonymous.headers.get('location'), '/login');
    assert.equal((await owner.get(`/apps/${app.id}`)).status, 200, 'still there');
  });

  test('rotate: a new key and secret; the old pair works through the overlap, then stops, its tokens too', async () => {
    const { visitor } = await signUp(base);
    const app = await register(visitor, 'rotating');
    const oldToken = await token(gw, app);
    const page = await visitor.get(`/apps/${app.id}`);
    const rotated = await visitor.follow(await visitor.post(`/apps/${app.id}/rotate`, { csrf: page.csrf! }));
    assert.equal(rotated.status, 200);
    assert.match(rotated.text, /will not be shown again/);
    assert.match(rotated.text, /The previous key and secret keep working until/);
    const fresh = { key: /id="app-key">([^<]+)</.exec(rotated.text)![1]!, secret: /id="app-secret">([^<]+)</.exec(rotated.text)![1]! };
    assert.notEqual(fresh.key, app.key);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(await token(gw, fresh)) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(oldToken) })).status, 200, 'within the overlap');
    await token(gw, app);
    now += 10 * 60_000;
    const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(refused.status, 401);
    assert.equal((refused.body as { error: string }).error, 'invalid_client');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(oldToken) })).status, 401, "the old key's token stopped too");
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(await token(gw, fresh)) })).status, 200);
    assert.match((await visitor.get(`/apps/${app.id}`)).text, new RegExp(`<code>${app.key}</code></td><td data-label="State">expired`));
  });

  test('revoke a key and delete an app: their tokens stop at once', async () => {
    const { visitor } = await signUp(base);
    const kept = await register(visitor, 'kept');
    const revoked = await register(visitor, 'revoked');
    const deleted = await register(visitor, 'deleted');
    const [keptToken, revokedToken, deletedToken] = [await token(gw, kept), await token(gw, revoked), await token(gw, deleted)];

    const page = await visitor.get(`/apps/${revoked.id}`);
    const revoke = await visitor.post(`/apps/${revoked.id}/keys/${revoked.key}/revoke`, { csrf: page.csrf! });
    assert.equal(revoke.status, 303);
    assert.equal(revoke.headers.get('location'), `/apps/${revoked.id}?done=revoked`);
    assert.match((await visitor.get(revoke.headers.get('location')!)).text, /The key is revoked\./);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(revokedToken) })).status, 401);

    const confirm = await visitor.get(`/apps/${deleted.id}/delete`);
    assert.match(confirm.text, /This cannot be undone/);
    const del = await visitor.post(`/apps/${deleted.id}/delete`, { csrf: confirm.csrf! });
    assert.equal(del.status, 303);
    assert.equal(del.headers.get('location'), '/apps?done=deleted');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(deletedToken) })).status, 401);
    assert.equal((await visitor.get(`/apps/${deleted.id}`)).status, 404);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(keptToken) })).status, 200);
  });

  test('revoking a key asks first, on a page of its own (no script needed): it says when the key is the only working one; the app then reads "no working key" and offers a new one', async () => {
    const { visitor } = await signUp(base);
    const app = await register(visitor, 'only key');
    const page = await visitor.get(`/apps/${app.id}`);
    assert.ok(page.text.includes(`<a class="button danger" href="/apps/${app.id}/keys/${app.key}/revoke">Revoke&hellip;</a>`), 'a link to the question, not a button that revokes');
    assert.doesNotMatch(page.text, /action="\/apps\/[^"]+\/keys\//);

    const ask = await visitor.get(`/apps/${app.id}/keys/${app.key}/revoke`);
    assert.equal(ask.status, 200);
    assert.match(ask.text, /<h1>Revoke a key of <q>only key<\/q>\?<\/h1>/);
    assert.match(
      ask.text,
      /<p id="revoke-effect">It is the app&#39;s only working key: once it is revoked, the app cannot get tokens until you get a new key and secret on its page\. The tokens issued with it stop working at once\. This cannot be undone\.<\/p>/,
    );
    assert.match(
      ask.text,
      new RegExp(
        `<form method="post" action="/apps/${app.id}/keys/${app.key}/revoke" class="actions"><input type="hidden" name="csrf" value="[^"]+"><button type="submit" class="danger">Revoke the key</button> <a href="/apps/${app.id}">Cancel</a></form>`,
      ),
    );
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 200, 'asking revokes nothing');
    assert.equal((await visitor.get(`/apps/${app.id}/keys/nokey/revoke`)).status, 404);

    const revoked = await visitor.post(`/apps/${app.id}/keys/${app.key}/revoke`, { csrf: ask.csrf! });
    assert.equal(revoked.headers.get('location'), `/apps/${app.id}?done=revoked`);
    const after = await visitor.get(`/apps/${app.id}?done=revoked`);
    assert.match(after.text, /<dt>Status<\/dt><dd>no working key<\/dd>/);
    assert.match(after.text, /<p class="notice pending" role="status" id="no-working-key"><strong>This app has no working key:<\/strong> it cannot get tokens\./);
    assert.match(after.text, /<button type="submit">Get a new key and secret<\/button>/);
    assert.match((await visitor.get('/apps')).text, /<td data-label="Status">no working key<\/td><td data-label="Key"><code>none<\/code>/);
    assert.match((await visitor.get(`/apps/${app.id}/keys/${app.key}/revoke`)).text, /<h1>Key already revoked<\/h1>/);

    // A new key and secret: the reveal page promises no overlap, since no earlier key works.
    const rotated = await visitor.follow(await visitor.submit(`/apps/${app.id}`, `/apps/${app.id}/rotate`, {}));
    assert.match(rotated.text, /New key and secret for/);
    assert.doesNotMatch(rotated.text, /keep working until/);
    const fresh = { key: /id="app-key">([^<]+)</.exec(rotated.text)![1]!, secret: /id="app-secret">([^<]+)</.exec(rotated.text)![1]! };
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, fresh)).status, 200);
    assert.match((await visitor.get(`/apps/${app.id}`)).text, /<dt>Status<\/dt><dd>active<\/dd>/);
  });

  test('every page names its icon, which the portal serves (and at /favicon.ico, which browsers ask for otherwise); a logged-in page names the developer in its header', async () => {
    const page = await new Visitor(base).get('/login');
    assert.match(page.text, /<link rel="icon" href="\/assets\/favicon.svg" type="image\/svg\+xml">/);
    for (const path of ['/assets/favicon.svg', '/favicon.ico']) {
      const icon = await call(`${base}${path}`);
      assert.equal(icon.status, 200, path);
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.match(icon.text, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
    assert.match((await new Visitor(base).get('/nothing-here')).text, /<link rel="icon"/, 'a page not found too');
    const { visitor, email: who } = await signUp(base);
    const apps = await visitor.get('/apps');
    assert.ok(apps.text.includes(`<span class="signed-in" id="signed-in" title="${who}">Logged in as <strong>${who}</strong></span>`), apps.text);
    assert.doesNotMatch(page.text, /signed-in/, 'nobody, logged out');
  });

  test('usage: the app page counts the last 24 hours and the product quota used, and links to its analytics (test/portal/analytics.test.ts)', async () => {
    const { visitor } = await signUp(base);
    const app = await register(visitor, 'busy');
    const t = await token(gw, app);
    for (let i = 0; i < 3; i++) assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(t) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/admin`, { headers: bearer(t) })).status, 403, 'a refused call counts as usage too');
    const page = await visitor.get(`/apps/${app.id}`);
    assert.match(page.text, /<p id="usage-24h">In the last 24 hours: <strong>4 calls<\/strong>, 25\.0\u00a0% of them answered 4xx or 5xx\.<\/p>/);
    assert.ok(page.text.includes(`<a href="/apps/${app.id}/analytics" id="analytics-link">Analytics</a>`), page.text);
    assert.match(page.text, /Quota used: <strong>3<\/strong> of 100 calls per day\./);
  });

  test('change password: the old one stops working, and every other session ends', async () => {
    const { visitor, email: who } = await signUp(base);
    const elsewhere = new Visitor(base);
    await elsewhere.submit('/login', '/login', { email: who, password: PASSWORD });
    const wrong = await visitor.submit('/account', '/account/password', { current: 'not my password', next: 'a new password 1' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /the current password is wrong/);
    const changed = await visitor.submit('/account', '/account/password', { current: PASSWORD, next: 'a new password 1' });
    assert.equal(changed.status, 303);
    assert.match((await visitor.get('/account?done=password')).text, /Your password is changed/);
    assert.equal((await elsewhere.get('/apps')).status, 303, 'the other session ended');
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: who, password: PASSWORD })).status, 401);
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: who, password: 'a new password 1' })).status, 303);
  });

  test('session-resurrection: disabling a developer ends their sessions; enabling them again does not bring the sessions back', async () => {
    const { visitor, email: who } = await signUp(base);
    const cookie = visitor.cookie;
    assert.equal((await visitor.get('/apps')).status, 200);
    await setDeveloperStatus(gw.admin, who, 'disabled');
    await setDeveloperStatus(gw.admin, who, 'active');
    const replay = new Visitor(base);
    replay.cookie = cookie;
    const denied = await replay.get('/apps');
    assert.equal(denied.status, 303);
    assert.equal(denied.headers.get('location'), '/login');
    assert.equal((await new Visitor(base).submit('/login', '/login', { email: who, password: PASSWORD })).status, 303, 'the developer can log in again');
  });

  test('session-held-form: a form held open while its session ends (the developer disabled) acts as no one', async () => {
    const { visitor, email: who } = await signUp(base);
    const form = await visitor.get('/apps/new');
    const body = new URLSearchParams({ csrf: form.csrf!, name: 'held-open', product: 'public' }).toString();
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /apps HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${visitor.cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    // The portal has the headers, and waits for the rest of the body.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await setDeveloperStatus(gw.admin, who, 'disabled');
    socket.write(body.slice(5));
    await ended;
    assert.match(answer, /^HTTP\/1\.1 303 /);
    assert.match(answer, /\r\nlocation: \/login\r\n/i);
    await setDeveloperStatus(gw.admin, who, 'active');
    assert.deepEqual(
      (await listApps(gw.admin, { developer: who })).map((a) => a.name),
      [],
      'nothing was registered',
    );
  });

  test('login-race: logins checked against a password start no session once a reset has changed it', async () => {
    const { email: who } = await signUp(base);
    // Logins queue behind each other for scrypt; the reset's comes after some of them.
    let resetDone = false;
    const attempts = Array.from({ length: 6 }, async () => {
      const cookies: string[] = [];
      while (!resetDone) {
        const v = new Visitor(base);
        const page = await v.submit('/login', '/login', { email: who, password: PASSWORD });
        if (page.status === 303) cookies.push(v.cookie!);
      }
      return cookies;
    });
    const owner = new Visitor(base);
    await owner.submit('/forgot', '/forgot', { email: who });
    const link = linkIn(await mailbox.next(who), base.replace('127.0.0.1', 'localhost'));
    const reset = await owner.submit(link, '/reset', { token: new URLSearchParams(link.split('?')[1]).get('token')!, password: 'the owner chose this' });
    assert.equal(reset.status, 303);
    resetDone = true;
    const cookies = (await Promise.all(attempts)).flat();
    assert.ok(cookies.length > 0, 'some logins finished while the reset was under way');
    for (const cookie of cookies) {
      const replay = new Visitor(base);
      replay.cookie = cookie;
      assert.equal((await replay.get('/apps')).status, 303, 'no session with the old password outlives the reset');
    }
  });

  test("an app registered with the CLI operations shows up in its developer's portal", async () => {
    const { visitor, email: who } = await signUp(base);
    const { createApp } = await import('../../src/admin/operations.ts');
    const created = await createApp(gw.admin, { developer: who, name: 'from-the-cli', product: 'public' });
    assert.match(
      (await visitor.get('/apps')).text,
      new RegExp(
        `from-the-cli</a></td><td data-label="API product">Public &lt;API&gt;</td><td data-label="Type">confidential</td><td data-label="Status">active</td><td data-label="Key"><code>${created.key}</code>`,
      ),
    );
  });
});

describe('portal: invited sign-up', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ products: PRODUCTS, extra: PORTAL('  signup: invited\n') });
  });
  after(() => gw.close());

  test('only with the invitation code an operator made, for its email, once', async () => {
    const base = gw.gateway.portalUrl!;
    const stranger = await new Visitor(base).submit('/signup', '/signup', { email: 'stranger@example.com', password: PASSWORD });
    assert.equal(stranger.status, 403);
    assert.match(stranger.text, /sign-up is by invitation: enter the invitation code/);
    await createDeveloper(gw.admin, { email: 'invited@example.com', name: 'Invited' });
    const noCode = await new Visitor(base).submit('/signup', '/signup', { email: 'invited@example.com', password: PASSWORD });
    assert.equal(noCode.status, 403, 'knowing the email is not enough');
    const { code } = await inviteDeveloper(gw.admin, 'invited@example.com');
    const form = await new Visitor(base).get(`/signup?${new URLSearchParams({ email: 'invited@example.com', invitation: code })}`);
    assert.match(form.text, new RegExp(`name="invitation" required autocomplete="off" value="${code}"`), 'the link fills the form in');
    const wrongEmail = await new Visitor(base).submit('/signup', '/signup', { email: 'stranger@example.com', password: PASSWORD, invitation: code });
    assert.equal(wrongEmail.status, 403);
    const invited = new Visitor(base);
    assert.equal((await invited.submit('/signup', '/signup', { email: 'invited@example.com', password: PASSWORD, invitation: code })).status, 303);
    assert.match((await invited.get('/apps')).text, /My apps/);
    const twice = await new Visitor(base).submit('/signup', '/signup', { email: 'invited@example.com', password: 'another password', invitation: code });
    assert.equal(twice.status, 403);
    assert.match(twice.text, /this invitation code is wrong, used or expired/);
  });
});

/** A GET with a Host header of our choosing (fetch will not send one), resolving to status, headers and body. */
async function rawGet(base: string, target: string, host: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { port } = new URL(base);
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: target, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('portal: DNS rebinding and cross-site forms', () => {
  let gw: TestGateway;
  let base: string;
  before(async () => {
    gw = await startTestGateway({ products: PRODUCTS, extra: PORTAL() });
    base = gw.gateway.portalUrl!;
  });
  after(() => gw.close());

  test('dns-rebinding: a request naming another host gets 421 and no page; the loopback names and localhost are served', async () => {
    const { port } = new URL(base);
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`, '127.0.0.1']) {
      const refused = await rawGet(base, '/signup', host);
      assert.equal(refused.status, 421, host);
      assert.equal(refused.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(refused.headers['set-cookie'], undefined, 'no cookie either');
      assert.equal(refused.body, 'This portal does not answer for the host named in the request.\n');
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      assert.equal((await rawGet(base, '/signup', host)).status, 200, host);
    }
  });

  test('cross-origin-post: a form with a valid session and CSRF token is refused (403) when its Origin, Sec-Fetch-Site or Referer is another site', async () => {
    const visitor = new Visitor(base);
    const who = email();
    await createDeveloper(gw.admin, { email: who, name: 'Dev' });
    const { code } = await inviteDeveloper(gw.admin, who);
    assert.equal((await visitor.submit('/signup', '/signup', { email: who, password: PASSWORD, invitation: code })).status, 303);
    const page = await visitor.get('/apps/new');
    const form = { csrf: page.csrf!, name: 'rebound', product: 'public' };
    for (const headers of [{ origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { referer: 'http://evil.example/page' }]) {
      const refused = await visitor.post('/apps', form, headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.match(refused.text, /This form was sent from another site\. Open the portal itself and send it from there\./);
    }
    assert.match((await visitor.get('/apps')).text, /You have no apps yet/, 'nothing was registered');
    const registered = await visitor.post('/apps', { ...form, name: 'same-origin' }, { origin: base, 'sec-fetch-site': 'same-origin', referer: `${base}/apps/new` });
    assert.equal(registered.status, 303, 'its own origin');
    assert.equal((await visitor.post('/apps', { ...form, name: 'no-origin' }, { referer: `${base}/apps/new` })).status, 303, 'its own Referer');
  });
});

describe('portal: behind a proxy, at its publicUrl', () => {
  test('dns-rebinding: publicUrl names the host it answers (with or without its default port), and the origin its forms may come from', async () => {
    const gw = await startTestGateway({ products: PRODUCTS, extra: PORTAL('  publicUrl: https://Developers.Example.com\n') });
    try {
      const base = gw.gateway.portalUrl!;
      for (const host of ['developers.example.com', 'developers.example.com:443']) assert.equal((await rawGet(base, '/login', host)).status, 200, host);
      assert.equal((await rawGet(base, '/login', 'developers.example.com:80')).status, 421);
      const visitor = new Visitor(base);
      const form = await visitor.get('/login');
      const proxied = await visitor.post('/login', { csrf: form.csrf!, email: 'nobody@example.com', password: PASSWORD }, { origin: 'https://developers.example.com' });
      assert.equal(proxied.status, 401, 'the public origin passes the origin check (and the login fails)');
      const lookalike = await visitor.post('/login', { csrf: form.csrf!, email: 'nobody@example.com', password: PASSWORD }, { origin: 'https://developers.example.com.evil.example' });
      assert.equal(lookalike.status, 403);
    } finally {
      await gw.close();
    }
  });
});

describe('portal: paths', () => {
  test('dot segments and encoded separators are refused, not normalised (400)', async () => {
    const gw = await startTestGateway({ products: PRODUCTS, extra: PORTAL() });
    try {
      const { port } = new URL(gw.gateway.portalUrl!);
      const { request } = await import('node:http');
      for (const target of ['/apps/../account', '/products/%2e%2e/x', '/apps%2fnew']) {
        const status = await new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: target }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
            .on('error', reject)
            .end();
        });
        assert.equal(status, 400, target);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('portal: disable undo', () => {
  const METERED = `
  metered:
    displayName: Metered
    routes: [hello]
    quota: { limit: 3, interval: day, per: developer }
    portal: true
`;
  let gw: TestGateway;
  let base: string;
  before(async () => {
    gw = await startTestGateway({ products: METERED, listen: PROXIED, extra: `${PORTAL('  signup: open\n  maxAppsPerDeveloper: 3\n')}${mailbox.yaml}` });
    base = gw.gateway.portalUrl!;
  });
  after(() => gw.close());

  const DISABLED = 'the app &quot;NAME&quot; was disabled by the API team: it cannot be deleted or replaced here; ask the API team about it';
  const disabledMessage = (name: string) => new RegExp(DISABLED.replace('NAME', name));

  test('disable undo: a developer cannot delete a disabled app from the portal; the operator still can', async () => {
    const { visitor, email: who } = await signUp(base);
    const app = await register(visitor, 'naughty', 'metered');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(await token(gw, app)) })).status, 200);
    await setAppStatus(gw.admin, { key: app.key }, 'disabled');

    const shown = await visitor.get(`/apps/${app.id}`);
    assert.match(shown.text, /<dt>Status<\/dt><dd>disabled by the API team<\/dd>/);
    assert.doesNotMatch(shown.text, /Delete this app/);
    assert.match((await visitor.get(`/apps/${app.id}/delete`)).text, /The API team disabled this app: it cannot be deleted or replaced here/);
    const del = await visitor.post(`/apps/${app.id}/delete`, { csrf: shown.csrf! });
    assert.equal(del.status, 403);
    assert.match(del.text, disabledMessage('naughty'));
    assert.equal((await visitor.get(`/apps/${app.id}`)).status, 200, 'still there');
    const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');

    await deleteApp(gw.admin, { developer: who, name: 'naughty' });
    assert.equal((await visitor.get(`/apps/${app.id}`)).status, 404, "the operator's delete works");
  });

  test('disable undo: a new app cannot take the name of a disabled app', async () => {
    const { visitor } = await signUp(base);
    const app = await register(visitor, 'held', 'metered');
    await setAppStatus(gw.admin, { key: app.key }, 'disabled');
    const again = await visitor.submit('/apps/new', '/apps', { name: 'held', product: 'metered' });
    assert.equal(again.status, 403);
    assert.match(again.text, disabledMessage('held'));
    assert.equal((await listApps(gw.admin)).filter((a) => a.name === 'held').length, 1, 'nothing was written');
  });

  test("disable undo: a disabled developer's apps cannot be deleted: the session ends, and src/admin refuses", async () => {
    const { visitor, email: who } = await signUp(base);
    const app = await register(visitor, 'kept', 'metered');
    const page = await visitor.get(`/apps/${app.id}`);
    await setDeveloperStatus(gw.admin, who, 'disabled');
    const del = await visitor.post(`/apps/${app.id}/delete`, { csrf: page.csrf! });
    assert.equal(del.status, 303);
    assert.equal(del.headers.get('location'), '/login');
    const developer = (await gw.admin.store.accounts.findDeveloper(who))!;
    await assert.rejects(deleteApp(actingAs({ ...gw.admin, portal: gw.admin.portal! }, developer), { id: app.id }), { code: 'developer_disabled', message: `developer ${who} is disabled` });
    assert.ok(await gw.admin.store.apps.findAppById(app.id), 'still there');
  });

  test('disable undo: portal.maxAppsPerDeveloper bounds the apps a developer holds through the portal', async () => {
    const { visitor, email: who } = await signUp(base);
    for (const name of ['one', 'two', 'three']) await register(visitor, name, 'metered');
    const fourth = await visitor.submit('/apps/new', '/apps', { name: 'four', product: 'metered' });
    assert.equal(fourth.status, 403);
    assert.match(fourth.text, /you already have 3 apps, the most the portal allows: delete one first/);
    assert.equal((await listApps(gw.admin, { developer: who })).length, 3, 'nothing was written');
    await createApp(gw.admin, { developer: who, name: 'by-the-operator', product: 'metered' });
    assert.equal((await listApps(gw.admin, { developer: who })).length, 4, 'an operator is not bound by it');
  });

  test('disable undo: a per-developer quota holds across two apps of one developer, and deleting one does not reset it', async () => {
    const { visitor } = await signUp(base);
    const first = await register(visitor, 'first', 'metered');
    const second = await register(visitor, 'second', 'metered');
    const [a, b] = [await token(gw, first), await token(gw, second)];
    const hello = (t: string) => call(`${gw.url}/v1/hello`, { headers: bearer(t) });
    assert.equal((await hello(a)).status, 200);
    assert.equal((await hello(a)).status, 200);
    const last = await hello(b);
    assert.equal(last.status, 200);
    assert.match(last.headers.get('ratelimit') ?? '', /^"product-quota-day";r=0;t=\d+$/);
    for (const t of [a, b]) {
      const refused = await hello(t);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'quota_exceeded');
    }
    assert.match((await visitor.get(`/apps/${second.id}`)).text, /Quota used: <strong>3<\/strong> of 3 calls per day, across all your apps\./);
    const page = await visitor.get(`/apps/${first.id}/delete`);
    assert.equal((await visitor.post(`/apps/${first.id}/delete`, { csrf: page.csrf! })).status, 303);
    const third = await register(visitor, 'third', 'metered');
    assert.equal((await hello(await token(gw, third))).status, 429, 'a new app brings no new budget');
    assert.match((await new Visitor(base).get('/products/metered')).text, /<dt>Quota<\/dt><dd>3 calls per day per developer<\/dd>/);
  });
});
