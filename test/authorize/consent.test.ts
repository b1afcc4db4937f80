// Consent and the login page: remembered per user, app and scopes; skipped for a first-party
// product; asked again for a new scope; the forms refused without their CSRF token, from another
// origin, or a second time (a replayed consent gets no second code); wrong passwords throttled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAuthServer, type AuthServer, type TestGateway } from '../helpers.ts';
import { csrfOf, flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent } from './flow.ts';

describe('consent and login', () => {
  let auth: AuthServer;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' }, bob: { password: 'builder', sub: 'user-2' } });
    gw = await startFlowGateway({
      authServerUrl: auth.url,
      products: `  staff:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code]
    login: users
    consent: skip
`,
    });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
  });

  const authorizeUrl = (clientId: string, scope: string) =>
    `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256', scope, state: 'x' })}`;

  /** Starts an authorization and logs in: the visit the login form's answer gave. */
  async function logIn(ua: UserAgent, clientId: string, scope: string, user = 'alice', password = 'wonderland') {
    const start = await ua.visit(authorizeUrl(clientId, scope));
    const form = await ua.visit(start.location!);
    return ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: user, password } });
  }

  test('a new scope asks again; approving remembers both; a first-party product (consent: skip) never asks', async () => {
    const ua = new UserAgent();
    const first = await logIn(ua, app.key, 'profile', 'bob', 'builder');
    assert.match(first.location!, /\/oauth2\/consent\?tx=/);
    const page = await ua.visit(first.location!);
    assert.match(page.text, /<code>profile<\/code>/);
    const approved = await ua.visit(first.location!, { form: { csrf: csrfOf(page.text), decision: 'approve' } });
    assert.match(approved.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_/);
    const wider = await logIn(new UserAgent(), app.key, 'profile email', 'bob', 'builder');
    assert.match(wider.location!, /\/oauth2\/consent\?tx=/, 'email was never granted');
    const widerUa = new UserAgent();
    const again = await logIn(widerUa, app.key, 'profile email', 'bob', 'builder');
    const widerPage = await widerUa.visit(again.location!);
    await widerUa.visit(again.location!, { form: { csrf: csrfOf(widerPage.text), decision: 'approve' } });
    const narrow = await logIn(new UserAgent(), app.key, 'email', 'bob', 'builder');
    assert.match(narrow.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_/, 'granted before');

    const staff = await gw.client('staff');
    const found = await gw.gateway.services.store.apps.findAppByKey(staff.key);
    await gw.gateway.services.store.apps.setRedirectUris(found!.id, [REDIRECT_URI], Date.now());
    const skipped = await logIn(new UserAgent(), staff.key, 'profile');
    assert.match(skipped.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_[^&]+&state=x&iss=/);
  });

  test('consent without its CSRF token, from another origin, or in another browser: refused; sent twice: no second code', async () => {
    const ua = new UserAgent();
    const login = await logIn(ua, app.key, 'profile email');
    const page = await ua.visit(login.location!);
    const csrf = csrfOf(page.text);
    const noToken = await ua.visit(login.location!, { form: { decision: 'approve' } });
    assert.equal(noToken.status, 403);
    const otherOrigin = await ua.visit(login.location!, { form: { csrf, decision: 'approve' }, headers: { origin: 'https://evil.example' } });
    assert.equal(otherOrigin.status, 403);
    const otherBrowser = await new UserAgent().visit(login.location!, { form: { csrf, decision: 'approve' } });
    assert.equal(otherBrowser.status, 400, 'the transaction lives in the browser that started it');
    // The same approval twice (a replay): the cookie is kept as it was before the first.
    const replay = new UserAgent();
    for (const [name, value] of ua.cookies) replay.cookies.set(name, value);
    const first = await ua.visit(login.location!, { form: { csrf, decision: 'approve' } });
    assert.equal(first.status, 303);
    assert.match(first.location!, /code=gwac_/);
    const second = await replay.visit(login.location!, { form: { csrf, decision: 'approve' } });
    assert.equal(second.status, 400);
    assert.match(second.text, /already completed/);
  });

  test('wrong passwords: 401 with the form again; then throttled (429 with Retry-After), never a 500', async () => {
    const ua = new UserAgent();
    const start = await ua.visit(authorizeUrl(app.key, 'profile'));
    let status = 0;
    let last = '';
    for (let i = 0; i < 7 && status !== 429; i++) {
      const form = await ua.visit(start.location!);
      const res = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'carol', password: `guess-${i}` } });
      status = res.status;
      last = res.text;
      if (status === 429) assert.match(res.headers.get('retry-after')!, /^\d+$/);
      else {
        assert.equal(status, 401);
        assert.match(last, /Wrong username or password/);
      }
    }
    assert.equal(status, 429);
    assert.match(last, /Too many failed attempts/);
  });
});
