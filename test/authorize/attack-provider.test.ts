// An outsider's attacks on the gateway as an OpenID relying party (issue 31, item 8): forged
// callbacks (state, iss, error), a provider code of another transaction, ID tokens that do not
// check out, a replayed callback, Host headers against the provider's redirect URI, and a
// provider that is down. The provider is a stub under the test's control (./stub-provider.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, call, rawExchange, rawHead, startUpstream, tokenRequest, type TestGateway, type Upstream } from '../helpers.ts';
import { assertRefusalPage, flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent } from './flow.ts';
import { startStubProvider, type ProviderLogin, type StubProvider } from './stub-provider.ts';

const FAILED = 'The answer of the sign-in service could not be verified, so you are not signed in.';
const UNAVAILABLE = 'The sign-in service cannot be reached right now. Try again in a few minutes.';
const EXPIRED = 'This sign-in has expired, was already completed, or was started in another browser.';

describe('attacks on the OpenID provider side of the flow', () => {
  let provider: StubProvider;
  let upstream: Upstream;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  before(async () => {
    provider = await startStubProvider();
    upstream = await startUpstream();
    gw = await startFlowGateway({
      login: 'corp',
      upstreamUrl: upstream.url,
      people: '    consent: skip\n',
      // `down` is a provider nobody answers for.
      extra: `identityProviders:\n${provider.yaml('corp')}  down:\n    issuer: http://127.0.0.1:9\n    clientId: gw\n    allowInsecureHttp: true\n    timeout: 1s\n`,
      products: '  offline:\n    routes: [me]\n    scopes: [profile]\n    grants: [authorization_code]\n    login: down\n',
    });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await provider?.close();
    await upstream?.close();
  });

  const authorizeUrl = (clientId = app.key, state = 'st') =>
    `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256', state })}`;

  /** An authorization started in `ua`, sent on to the provider: what the gateway asked of it. */
  async function begin(ua: UserAgent, state = 'st'): Promise<ProviderLogin> {
    const res = await ua.visit(authorizeUrl(app.key, state));
    assert.equal(res.status, 303, res.text);
    assert.ok(res.location!.startsWith(`${provider.issuer}/authorize?`), res.location);
    return provider.loginOf(res.location!);
  }

  const callback = (params: Record<string, string>) => `${gw.url}/oauth2/callback?${new URLSearchParams(params)}`;

  /** Why the last request failed, as its access line says (the page does not: it is the provider's business). */
  const lastDetail = (): string => JSON.parse(gw.logs.at(-1)!).detail;

  test("the provider's redirect URI and the code's iss are the gateway's whatever the Host; the provider's user is the token's subject", async () => {
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', state: 'st' });
    const raw = rawHead(
      await rawExchange(gw.url, `GET /oauth2/authorize?${query} HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n`),
    );
    assert.equal(raw.status, 'HTTP/1.1 303 See Other');
    const login = provider.loginOf(raw.headers.get('location')![0]!);
    assert.equal(login.redirectUri, `${gw.issuer}/oauth2/callback`);
    assert.match(login.state, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    const ua = new UserAgent();
    const [name, value] = raw.headers.get('set-cookie')![0]!.split(';')[0]!.split('=');
    ua.cookies.set(name!, value!);
    const res = await ua.visit(callback({ code: provider.issue(login, { sub: 'corp-user-1' }), state: login.state, iss: provider.issuer }), { headers: { 'x-forwarded-host': 'evil.example' } });
    assert.equal(provider.tokenRequests.at(-1)?.redirectUri, `${gw.issuer}/oauth2/callback`);
    const back = new URL(res.location!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.deepEqual([...back.searchParams.keys()], ['code', 'state', 'iss']);
    assert.equal(back.searchParams.get('iss'), gw.issuer);
    const tokens = await tokenRequest(gw.url, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: verifier }, app);
    assert.equal(tokens.status, 200, tokens.text);
    assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(tokens.body.access_token) })).status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'corp-user-1');
  });

  test('forged callbacks: another state, no state, the iss of another provider or none, access_denied with a forged state, a code of another transaction', async () => {
    const ua = new UserAgent();
    const mine = await begin(ua, 'mine');
    const txId = mine.state.split('.')[0]!;
    const exchanged = provider.tokenRequests.length;
    const cases: [string, Record<string, string>, number, string][] = [
      ['a forged state', { code: provider.issue(mine, { sub: 'x' }), state: `${txId}.forged`, iss: provider.issuer }, 502, FAILED],
      ['no state', { code: provider.issue(mine, { sub: 'x' }), iss: provider.issuer }, 400, EXPIRED],
      ['the state of no transaction', { code: provider.issue(mine, { sub: 'x' }), state: 'AAAAAAAAAAAAAAAAAAAAAA.x', iss: provider.issuer }, 400, EXPIRED],
      ['the iss of another provider', { code: provider.issue(mine, { sub: 'x' }), state: mine.state, iss: 'https://evil.example' }, 502, FAILED],
      ['no iss (the provider says it sends one)', { code: provider.issue(mine, { sub: 'x' }), state: mine.state }, 502, FAILED],
      ['access_denied with a forged state', { error: 'access_denied', state: `${txId}.forged`, iss: provider.issuer }, 502, FAILED],
    ];
    for (const [what, params, status, message] of cases) {
      assertRefusalPage(await ua.visit(callback(params)), status, message, what);
      if (status === 502) assert.equal(lastDetail(), 'identity provider corp: its answer did not check out (OAUTH_INVALID_RESPONSE)', what);
    }
    assert.equal(provider.tokenRequests.length, exchanged, 'no forged callback reached the token endpoint');
    // A provider code of another transaction in the same browser, with this one's state: the
    // provider refuses this transaction's PKCE verifier; one that checks no PKCE gives an ID token
    // with the other transaction's nonce.
    const other = await begin(ua, 'other');
    assertRefusalPage(await ua.visit(callback({ code: provider.issue(other, { sub: 'x' }), state: mine.state, iss: provider.issuer })), 502, FAILED, 'PKCE');
    assert.equal(lastDetail(), 'identity provider corp: token endpoint answered 400 invalid_grant');
    provider.checksPkce = false;
    try {
      assertRefusalPage(await ua.visit(callback({ code: provider.issue(other, { sub: 'x' }), state: mine.state, iss: provider.issuer })), 502, FAILED, 'nonce');
      assert.equal(lastDetail(), 'identity provider corp: its answer did not check out (OAUTH_JWT_CLAIM_COMPARISON_FAILED)');
    } finally {
      provider.checksPkce = true;
    }
    // None of it spent the transaction: its own answer still signs the user in.
    const res = await ua.visit(callback({ code: provider.issue(mine, { sub: 'corp-user-2' }), state: mine.state, iss: provider.issuer }));
    assert.equal(res.status, 303, res.text);
    assert.match(res.location!, /^http:\/\/127\.0\.0\.1:7777\/callback\?code=gwac_[^&]+&state=mine&iss=/);
  });

  test('ID tokens that do not check out: another issuer, audience or nonce, expired, no subject, a key not published', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, Record<string, unknown>, string][] = [
      ['another issuer', { sub: 'x', iss: 'https://evil.example' }, 'OAUTH_JWT_CLAIM_COMPARISON_FAILED'],
      ['another audience', { sub: 'x', aud: 'another-client' }, 'OAUTH_JWT_CLAIM_COMPARISON_FAILED'],
      ['another nonce', { sub: 'x', nonce: 'another' }, 'OAUTH_JWT_CLAIM_COMPARISON_FAILED'],
      ['expired', { sub: 'x', iat: now - 3600, exp: now - 1800 }, 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED'],
      ['no subject', {}, 'OAUTH_INVALID_RESPONSE'],
    ];
    for (const [what, claims, code] of cases) {
      const ua = new UserAgent();
      const login = await begin(ua);
      assertRefusalPage(await ua.visit(callback({ code: provider.issue(login, claims), state: login.state, iss: provider.issuer })), 502, FAILED, what);
      assert.equal(lastDetail(), `identity provider corp: its answer did not check out (${code})`, what);
    }
    provider.rogueKey = true;
    try {
      const ua = new UserAgent();
      const login = await begin(ua);
      assertRefusalPage(await ua.visit(callback({ code: provider.issue(login, { sub: 'x' }), state: login.state, iss: provider.issuer })), 502, FAILED, 'rogue key');
      assert.equal(lastDetail(), 'identity provider corp: its answer did not check out (OAUTH_INVALID_RESPONSE)');
    } finally {
      provider.rogueKey = false;
    }
  });

  test('the callback replayed: with the cookie of before, the provider refuses its code; a provider that accepts it again gets no second code', async () => {
    const ua = new UserAgent();
    const login = await begin(ua);
    const before = new Map(ua.cookies);
    const first = await ua.visit(callback({ code: provider.issue(login, { sub: 'x' }), state: login.state, iss: provider.issuer }));
    assert.match(first.location!, /code=gwac_/);
    const replay = new UserAgent();
    for (const [n, v] of before) replay.cookies.set(n, v);
    const reused = await replay.visit(callback({ code: 'provider-code-spent', state: login.state, iss: provider.issuer }));
    assertRefusalPage(reused, 502, FAILED, 'a spent provider code');
    assert.equal(lastDetail(), 'identity provider corp: token endpoint answered 400 invalid_grant');
    const again = await replay.visit(callback({ code: provider.issue(login, { sub: 'x' }), state: login.state, iss: provider.issuer }));
    assertRefusalPage(again, 400, EXPIRED, 'a second login of a spent transaction');
  });

  test('access_denied at the provider goes to the app with state and iss; other provider errors and a provider down are pages', async () => {
    const ua = new UserAgent();
    const login = await begin(ua, 'denied');
    const denied = await ua.visit(callback({ error: 'access_denied', state: login.state, iss: provider.issuer }));
    assert.equal(denied.status, 303);
    const back = new URL(denied.location!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.deepEqual(Object.fromEntries(back.searchParams), { error: 'access_denied', error_description: 'the user did not sign in', state: 'denied', iss: gw.issuer });
    // RFC 6749 §4.1.2.1: server_error and temporarily_unavailable say "try again later"; the others, that the request is wrong.
    for (const [error, status, message] of [
      ['server_error', 503, UNAVAILABLE],
      ['temporarily_unavailable', 503, UNAVAILABLE],
      ['invalid_request', 502, FAILED],
      ['unauthorized_client', 502, FAILED],
      ['invalid_scope', 502, FAILED],
      // Names of every object's own properties are no error codes of the table.
      ['constructor', 502, FAILED],
      ['__proto__', 502, FAILED],
      ['toString', 502, FAILED],
    ] as const) {
      const other = new UserAgent();
      const started = await begin(other);
      const res = await other.visit(callback({ error, state: started.state, iss: provider.issuer }));
      assertRefusalPage(res, status, message, error);
      assert.equal(res.headers.get('retry-after'), status === 503 ? '30' : null, error);
      assert.equal(lastDetail(), `identity provider corp answered ${error}`);
    }
    // Down at the first step (no discovery), and at the token endpoint.
    const offline = await gw.client('offline');
    const { store } = gw.gateway.services;
    await store.apps.setRedirectUris((await store.apps.findAppByKey(offline.key))!.id, [REDIRECT_URI], Date.now());
    const first = await new UserAgent().visit(authorizeUrl(offline.key));
    assertRefusalPage(first, 503, UNAVAILABLE, 'no discovery');
    assert.equal(first.headers.get('retry-after'), '30');
    const down = new UserAgent();
    const started = await begin(down);
    provider.failWith = 500;
    try {
      const res = await down.visit(callback({ code: provider.issue(started, { sub: 'x' }), state: started.state, iss: provider.issuer }));
      assertRefusalPage(res, 503, UNAVAILABLE, 'token endpoint down');
      assert.equal(res.headers.get('retry-after'), '30');
    } finally {
      provider.failWith = undefined;
    }
  });
});
