// An outsider's attacks on the browser side of the authorization code flow (issue 31, item 8):
// forged login and consent forms (CSRF), framing (clickjacking), a transaction cookie planted in
// the victim's browser (session fixation) or tampered with, and a consent replayed, from two tabs
// or after a deny. Each asserts the gateway's exact answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, call, startAuthServer, startUpstream, tokenRequest, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';
import { assertRefusalPage, csrfOf, flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent, type Visit } from './flow.ts';

const CROSS_SITE = 'This form was sent from another site.';
const NOT_FORM = 'Forms are sent as application/x-www-form-urlencoded.';
const EXPIRED = 'This sign-in has expired, was already completed, or was started in another browser.';

describe('attacks on the login and consent pages', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  before(async () => {
    // A user per test: a consent one test gave would skip another's consent page.
    auth = await startAuthServer({
      alice: { password: 'wonderland', sub: 'user-1' },
      carol: { password: 'carol-pw', sub: 'user-4' },
      dave: { password: 'dave-pw', sub: 'user-5' },
      erin: { password: 'erin-pw', sub: 'user-6' },
      mallory: { password: 'attacker', sub: 'user-3' },
    });
    upstream = await startUpstream();
    gw = await startFlowGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
    await upstream?.close();
  });

  /** An authorization started in `ua`: the login page's URL and the app's PKCE pair. */
  async function start(ua: UserAgent, state = 'st', scope = 'profile'): Promise<{ loginUrl: string; verifier: string }> {
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', scope, state });
    const res = await ua.visit(`${gw.url}/oauth2/authorize?${query}`);
    assert.equal(res.status, 303, res.text);
    return { loginUrl: res.location!, verifier };
  }

  /** Logs `user` in on the login page: the consent page's URL. */
  async function logIn(ua: UserAgent, loginUrl: string, user = 'alice', password = 'wonderland'): Promise<string> {
    const form = await ua.visit(loginUrl);
    const res = await ua.visit(loginUrl, { form: { csrf: csrfOf(form.text), username: user, password } });
    assert.equal(res.status, 303, res.text);
    assert.match(res.location!, /\/oauth2\/consent\?tx=/);
    return res.location!;
  }

  test('CSRF on the login form: no token, another transaction’s, another origin, not a form, a GET, no cookie: nobody logs in', async () => {
    const ua = new UserAgent();
    const { loginUrl } = await start(ua);
    const csrf = csrfOf((await ua.visit(loginUrl)).text);
    const otherUa = new UserAgent();
    const other = await start(otherUa);
    const otherCsrf = csrfOf((await otherUa.visit(other.loginUrl)).text);
    const credentials = { username: 'alice', password: 'wonderland' };
    const calls = auth.calls.length;
    const attempts: [string, Promise<Visit>, number, string][] = [
      ['no token', ua.visit(loginUrl, { form: credentials }), 403, 'This form was not sent from this sign-in page.'],
      ['a wrong token', ua.visit(loginUrl, { form: { ...credentials, csrf: flip(csrf) } }), 403, 'This form was not sent from this sign-in page.'],
      ["another transaction's token", ua.visit(loginUrl, { form: { ...credentials, csrf: otherCsrf } }), 403, 'This form was not sent from this sign-in page.'],
      ['another origin', ua.visit(loginUrl, { form: { ...credentials, csrf }, headers: { origin: 'https://evil.example' } }), 403, CROSS_SITE],
      ['an opaque origin', ua.visit(loginUrl, { form: { ...credentials, csrf }, headers: { origin: 'null' } }), 403, CROSS_SITE],
      ['the same host by another name', ua.visit(loginUrl, { form: { ...credentials, csrf }, headers: { origin: gw.issuer.replace('127.0.0.1', 'localhost') } }), 403, CROSS_SITE],
      ['multipart', formAs(ua, loginUrl, 'multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${csrf}\r\n--x--\r\n`), 415, NOT_FORM],
      ['JSON', formAs(ua, loginUrl, 'application/json', JSON.stringify({ ...credentials, csrf })), 415, NOT_FORM],
      ['text/plain', formAs(ua, loginUrl, 'text/plain', new URLSearchParams({ ...credentials, csrf }).toString()), 415, NOT_FORM],
      ['UTF-16', formAs(ua, loginUrl, 'application/x-www-form-urlencoded; charset=utf-16', new URLSearchParams({ ...credentials, csrf }).toString()), 415, NOT_FORM],
      ['a repeated field', formAs(ua, loginUrl, 'application/x-www-form-urlencoded', `${new URLSearchParams({ ...credentials, csrf })}&csrf=${csrf}`), 400, 'a field was sent twice'],
      // A cross-site POST: SameSite=Lax keeps the transaction cookie at home.
      ['no cookie', new UserAgent().visit(loginUrl, { form: { ...credentials, csrf } }), 400, EXPIRED],
    ];
    for (const [what, attempt, status, message] of attempts) assertRefusalPage(await attempt, status, message, what);
    const asGet = await ua.visit(`${loginUrl}&${new URLSearchParams({ ...credentials, csrf })}`);
    assert.equal(asGet.status, 200, 'a GET only shows the form');
    assert.equal(asGet.location, undefined);
    assert.equal(auth.calls.length, calls, 'no password was checked');
    assert.match(await logIn(ua, loginUrl), /\/oauth2\/consent\?tx=/, 'the real form still works');
  });

  test('CSRF on the consent form: the same refusals, and a GET with decision=approve gives no code', async () => {
    const ua = new UserAgent();
    const consentUrl = await logIn(ua, (await start(ua, 'st', 'email')).loginUrl);
    const csrf = csrfOf((await ua.visit(consentUrl)).text);
    const approve = { decision: 'approve' };
    const attempts: [string, Promise<Visit>, number, string][] = [
      ['no token', ua.visit(consentUrl, { form: approve }), 403, 'This form was not sent from this consent page.'],
      ['a tampered token', ua.visit(consentUrl, { form: { ...approve, csrf: flip(csrf) } }), 403, 'This form was not sent from this consent page.'],
      ['another origin', ua.visit(consentUrl, { form: { ...approve, csrf }, headers: { origin: 'https://evil.example' } }), 403, CROSS_SITE],
      ['JSON', formAs(ua, consentUrl, 'application/json', JSON.stringify({ ...approve, csrf })), 415, NOT_FORM],
      ['no decision', ua.visit(consentUrl, { form: { csrf } }), 400, 'Choose Allow or Deny.'],
      ['decision twice', formAs(ua, consentUrl, 'application/x-www-form-urlencoded', `csrf=${csrf}&decision=deny&decision=approve`), 400, 'a field was sent twice'],
      ['no cookie', new UserAgent().visit(consentUrl, { form: { ...approve, csrf } }), 400, EXPIRED],
    ];
    for (const [what, attempt, status, message] of attempts) assertRefusalPage(await attempt, status, message, what);
    const asGet = await ua.visit(`${consentUrl}&${new URLSearchParams({ ...approve, csrf })}`);
    assert.equal(asGet.status, 200);
    assert.equal(asGet.location, undefined);
    const approved = await ua.visit(consentUrl, { form: { ...approve, csrf } });
    assert.match(approved.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_/);
  });

  test("session fixation: a transaction cookie planted by the attacker neither ends the victim's login in the attacker's account nor gives the attacker the victim's code", async () => {
    // Mallory goes as far as the consent page as herself, and plants her cookie in the victim's browser.
    const mallory = new UserAgent();
    const malloryConsent = await logIn(mallory, (await start(mallory, 'mallory-state')).loginUrl, 'mallory', 'attacker');
    const victim = new UserAgent();
    for (const [name, value] of mallory.cookies) victim.cookies.set(name, value);
    // The victim's own authorization is its own transaction: it ends in the victim's account.
    const own = await start(victim, 'victim-state');
    const ownConsent = await logIn(victim, own.loginUrl);
    assert.notEqual(ownConsent, malloryConsent);
    const page = await victim.visit(ownConsent);
    assert.match(page.text, /You are signed in as <strong>user-1<\/strong>/);
    const back = new URL((await victim.visit(ownConsent, { form: { csrf: csrfOf(page.text), decision: 'approve' } })).location!);
    assert.equal(back.searchParams.get('state'), 'victim-state');
    const tokens = await tokenRequest(gw.url, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: own.verifier }, app);
    assert.equal(tokens.status, 200);
    assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(tokens.body.access_token) })).status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'user-1');
    // Lured to Mallory's consent page, the victim sees whose account it is; approving it gives a
    // code with Mallory's state, bound to Mallory's challenge: the victim's app cannot redeem it.
    const lured = await victim.visit(malloryConsent);
    assert.match(lured.text, /You are signed in as <strong>user-3<\/strong>/);
    const luredBack = new URL((await victim.visit(malloryConsent, { form: { csrf: csrfOf(lured.text), decision: 'approve' } })).location!);
    assert.equal(luredBack.searchParams.get('state'), 'mallory-state');
    const injected = await tokenRequest(gw.url, { grant_type: 'authorization_code', code: luredBack.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: own.verifier }, app);
    assert.deepEqual([injected.status, injected.body.error], [401, 'invalid_grant']);
  });

  test('cookie tampering: a flipped byte, the cookie of another transaction, an old cookie after the code was issued', async () => {
    const ua = new UserAgent();
    const { loginUrl } = await start(ua);
    const [name, value] = [...ua.cookies][0]!;
    assert.match(name, /^gateway-authorize-[A-Za-z0-9_-]{22}$/);
    const id = name.slice('gateway-authorize-'.length);
    assert.equal(loginUrl, `${gw.url}/oauth2/login?tx=${id}`);
    const withCookie = (cookies: Record<string, string>) => {
      const forged = new UserAgent();
      for (const [n, v] of Object.entries(cookies)) forged.cookies.set(n, v);
      return forged;
    };
    const other = new UserAgent();
    const otherStart = await start(other);
    const otherId = new URL(otherStart.loginUrl).searchParams.get('tx')!;
    const cases: [string, UserAgent, string][] = [
      ['a flipped byte', withCookie({ [name]: flip(value, 30) }), loginUrl],
      ['truncated', withCookie({ [name]: value.slice(0, -2) }), loginUrl],
      ['not base64', withCookie({ [name]: '%%%' }), loginUrl],
      ["another transaction's cookie under this one's name", withCookie({ [name]: other.cookies.get(`gateway-authorize-${otherId}`)! }), loginUrl],
      ["this cookie, another transaction's id", withCookie({ [name]: value }), otherStart.loginUrl],
      ["this cookie renamed to the other's", withCookie({ [`gateway-authorize-${otherId}`]: value }), otherStart.loginUrl],
    ];
    for (const [what, forged, url] of cases) assertRefusalPage(await forged.visit(url), 400, EXPIRED, what);
    // The cookies of the login and of the consent, kept from before the code was issued, and replayed after.
    const beforeLogin = new Map(ua.cookies);
    const consentUrl = await logIn(ua, loginUrl, 'carol', 'carol-pw');
    const beforeConsent = new Map(ua.cookies);
    const csrf = csrfOf((await ua.visit(consentUrl)).text);
    const approved = await ua.visit(consentUrl, { form: { csrf, decision: 'approve' } });
    assert.match(approved.location!, /code=gwac_/);
    assert.equal(ua.cookies.size, 0, 'the code clears the transaction cookie');
    const consentReplay = await withCookie(Object.fromEntries(beforeConsent)).visit(consentUrl, { form: { csrf, decision: 'approve' } });
    assertRefusalPage(consentReplay, 400, EXPIRED, 'consent replayed');
    // Logging in again with the old cookie: the consent is remembered now, so the code would be
    // issued at once, but the transaction was spent.
    const loginReplay = await withCookie(Object.fromEntries(beforeLogin)).visit(loginUrl, { form: { csrf, username: 'carol', password: 'carol-pw' } });
    assertRefusalPage(loginReplay, 400, EXPIRED, 'login replayed');
  });

  test('consent replay: approved from two tabs at once gives one code; denied, then approved: no code and nothing remembered', async () => {
    const ua = new UserAgent();
    const consentUrl = await logIn(ua, (await start(ua, 'tabs', 'email')).loginUrl, 'dave', 'dave-pw');
    const csrf = csrfOf((await ua.visit(consentUrl)).text);
    const tab = new UserAgent();
    for (const [n, v] of ua.cookies) tab.cookies.set(n, v);
    const answers = await Promise.all([ua, tab].map((agent) => agent.visit(consentUrl, { form: { csrf, decision: 'approve' } })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [303, 400]);
    assert.match(answers.find((a) => a.status === 303)!.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_/);

    // Erin denies in one tab, then approves in another: the deny stands.
    const erin = new UserAgent();
    const erinConsent = await logIn(erin, (await start(erin, 'deny', 'email')).loginUrl, 'erin', 'erin-pw');
    const erinCsrf = csrfOf((await erin.visit(erinConsent)).text);
    const erinTab = new UserAgent();
    for (const [n, v] of erin.cookies) erinTab.cookies.set(n, v);
    const denied = await erin.visit(erinConsent, { form: { csrf: erinCsrf, decision: 'deny' } });
    assert.deepEqual(Object.fromEntries(new URL(denied.location!).searchParams), { error: 'access_denied', error_description: 'the user denied the request', state: 'deny', iss: gw.issuer });
    assertRefusalPage(await erinTab.visit(erinConsent, { form: { csrf: erinCsrf, decision: 'approve' } }), 400, EXPIRED, 'approve after deny');
    // The next authorization asks again: the refused approval was not remembered.
    const next = new UserAgent();
    assert.match(await logIn(next, (await start(next, 'again', 'email')).loginUrl, 'erin', 'erin-pw'), /\/oauth2\/consent\?tx=/);
    // And approved, then denied: the deny is too late, the code stands.
    const late = new UserAgent();
    const lateStart = await start(late, 'late', 'profile');
    const lateConsent = await logIn(late, lateStart.loginUrl, 'erin', 'erin-pw');
    const lateCsrf = csrfOf((await late.visit(lateConsent)).text);
    const lateTab = new UserAgent();
    for (const [n, v] of late.cookies) lateTab.cookies.set(n, v);
    const code = new URL((await late.visit(lateConsent, { form: { csrf: lateCsrf, decision: 'approve' } })).location!).searchParams.get('code')!;
    assertRefusalPage(await lateTab.visit(lateConsent, { form: { csrf: lateCsrf, decision: 'deny' } }), 400, EXPIRED, 'deny after approve');
    const tokens = await tokenRequest(gw.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: lateStart.verifier }, app);
    assert.equal(tokens.status, 200);
  });

  test("a developer's markup in its app's and its own name is text on the login and consent pages, which run no script", async () => {
    const { store } = gw.gateway.services;
    const developer = await store.accounts.createDeveloper({ email: 'evil@example.com', name: '"><script>alert(1)</script>', now: Date.now() });
    const name = '<img src=x onerror=alert(1)>';
    const created = await store.apps.createApp({
      developerId: developer.id,
      name,
      product: 'people',
      key: 'markupmarkupmarkup01',
      secretHash: Buffer.alloc(32),
      now: Date.now(),
      type: 'public',
      redirectUris: [REDIRECT_URI],
    });
    const ua = new UserAgent();
    const query = new URLSearchParams({ response_type: 'code', client_id: 'markupmarkupmarkup01', redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const start = await ua.visit(`${gw.url}/oauth2/authorize?${query}`);
    const form = await ua.visit(start.location!);
    assert.match(form.text, /continue to <strong>&lt;img src=x onerror=alert\(1\)&gt;<\/strong>/);
    const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
    const consent = await ua.visit(login.location!);
    assert.match(consent.text, /Allow <q>&lt;img src=x onerror=alert\(1\)&gt;<\/q>/);
    assert.match(consent.text, /&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt; \(evil@example\.com\)/);
    for (const page of [form, consent]) {
      assert.doesNotMatch(page.text, /<script|<img/);
      assert.match(page.headers.get('content-security-policy')!, /^default-src 'none'; style-src 'self';/);
    }
    assert.equal(created.name, name);
  });
});

/** `text` with its character at `at` changed. */
const flip = (text: string, at = 0) => `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;

/** A POST of `body` as `type`, with `ua`'s cookies. */
async function formAs(ua: UserAgent, url: string, type: string, body: string): Promise<Visit> {
  const cookie = [...ua.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': type, cookie }, body, redirect: 'manual' });
  const location = res.headers.get('location');
  return { status: res.status, headers: res.headers, text: await res.text(), location: location === null ? undefined : location };
}
