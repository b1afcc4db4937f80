// The authorization code grant with PKCE, users logging in on the gateway's own page against the
// product's authorization server (a stand-in over real HTTP), and consenting on its consent page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, call, startAuthServer, startUpstream, tokenRequest, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';
import { csrfOf, flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent } from './flow.ts';

describe('authorization code with the login page of an authorization server', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' } });
    upstream = await startUpstream();
    gw = await startFlowGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
    await upstream?.close();
  });

  function authorizeUrl(params: Record<string, string>): string {
    return `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge_method: 'S256', ...params })}`;
  }

  /** Through the login and the consent: the redirect to the app. */
  async function signIn(ua: UserAgent, params: Record<string, string>, decision = 'approve'): Promise<URL> {
    const start = await ua.visit(authorizeUrl(params));
    assert.equal(start.status, 303, start.text);
    assert.match(start.location!, new RegExp(`^${gw.url}/oauth2/login\\?tx=[A-Za-z0-9_-]{22}$`));
    const form = await ua.visit(start.location!);
    assert.equal(form.status, 200);
    assert.equal(form.headers.get('x-frame-options'), 'DENY');
    assert.match(form.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
    assert.equal(login.status, 303, login.text);
    if (!login.location!.startsWith(`${gw.url}/oauth2/consent`)) return new URL(login.location!);
    const consent = await ua.visit(login.location!);
    assert.equal(consent.status, 200);
    assert.match(consent.text, /Allow <q>app-\d+<\/q> to use your account\?/);
    assert.match(consent.text, /Dev \(dev@example\.com\)/);
    const answer = await ua.visit(login.location!, { form: { csrf: csrfOf(consent.text), decision } });
    assert.equal(answer.status, 303, answer.text);
    return new URL(answer.location!);
  }

  test('code with state and iss, exchanged with the verifier for tokens that call a user-bound route; the consent is remembered', async () => {
    const { verifier, challenge } = pkce();
    const back = await signIn(new UserAgent(), { code_challenge: challenge, state: 'st-1', scope: 'profile' });
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'st-1');
    assert.equal(back.searchParams.get('iss'), gw.issuer);
    const code = back.searchParams.get('code')!;
    assert.match(code, /^gwac_[A-Za-z0-9_-]{64}$/);
    const tokens = await tokenRequest(gw.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, app);
    assert.equal(tokens.status, 200, tokens.text);
    assert.deepEqual(Object.keys(tokens.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'refresh_token_expires_in', 'scope', 'token_type']);
    assert.equal(tokens.body.scope, 'profile');
    const me = await call(`${gw.url}/v1/me`, { headers: bearer(tokens.body.access_token) });
    assert.equal(me.status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'user-1');

    // The same user, app and scopes again: no consent page, the code at once.
    const second = pkce();
    const again = await signIn(new UserAgent(), { code_challenge: second.challenge, state: 'st-2', scope: 'profile' });
    assert.equal(again.searchParams.get('state'), 'st-2');
    assert.match(again.searchParams.get('code')!, /^gwac_/);
    // Neither the codes, the verifier, the tokens nor the password reach the log.
    const logged = gw.logs.join('');
    assert.ok(logged.includes('/oauth2/consent'), 'the scan reads the access lines');
    for (const secret of [code, again.searchParams.get('code')!, verifier, tokens.body.access_token, tokens.body.refresh_token, 'wonderland']) assert.ok(!logged.includes(secret), secret);
  });

  test('a denied consent: access_denied at the redirect URI, with state and iss', async () => {
    const back = await signIn(new UserAgent(), { code_challenge: pkce().challenge, state: 'deny-me', scope: 'email' }, 'deny');
    assert.deepEqual(Object.fromEntries(back.searchParams), { error: 'access_denied', error_description: 'the user denied the request', state: 'deny-me', iss: gw.issuer });
  });

  test('a code used twice: 401 invalid_grant, and the tokens it gave are revoked', async () => {
    const { verifier, challenge } = pkce();
    const code = (await signIn(new UserAgent(), { code_challenge: challenge, scope: 'profile' })).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const first = await tokenRequest(gw.url, exchange, app);
    assert.equal(first.status, 200);
    const second = await tokenRequest(gw.url, exchange, app);
    assert.equal(second.status, 401);
    assert.deepEqual(second.body, { error: 'invalid_grant', error_description: 'the authorization code is invalid, expired or already used' });
    assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(first.body.access_token) })).status, 401);
    const refresh = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, app);
    assert.equal(refresh.status, 401);
  });

  test('an authorization request without redirect_uri (the app has one): the code is exchanged without it, and not with it', async () => {
    const { verifier, challenge } = pkce();
    // An empty parameter is an absent one (RFC 6749 §3.1).
    const back = await signIn(new UserAgent(), { code_challenge: challenge, scope: 'profile', redirect_uri: '' });
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI, 'sent to the one registered');
    const code = back.searchParams.get('code')!;
    const named = await tokenRequest(gw.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }, app);
    assert.deepEqual([named.status, named.body.error], [401, 'invalid_grant']);
    const unnamed = await tokenRequest(gw.url, { grant_type: 'authorization_code', code, code_verifier: verifier }, app);
    assert.equal(unnamed.status, 200, unnamed.text);
  });

  test('a wrong or missing verifier, another redirect URI by one character, another app: refused', async () => {
    const { verifier, challenge } = pkce();
    const code = (await signIn(new UserAgent(), { code_challenge: challenge, scope: 'profile' })).searchParams.get('code')!;
    const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const missing = await tokenRequest(gw.url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, app);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, 'invalid_request');
    const wrong = await tokenRequest(gw.url, { ...base, code_verifier: pkce().verifier }, app);
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_grant']);
    const redirect = await tokenRequest(gw.url, { ...base, redirect_uri: `${REDIRECT_URI}x` }, app);
    assert.deepEqual([redirect.status, redirect.body.error], [401, 'invalid_grant']);
    const other = await flowApp(gw);
    const stolen = await tokenRequest(gw.url, base, other);
    assert.deepEqual([stolen.status, stolen.body.error], [401, 'invalid_grant']);
    // None of them spent it: the app's own exchange still works.
    assert.equal((await tokenRequest(gw.url, base, app)).status, 200);
  });
});
