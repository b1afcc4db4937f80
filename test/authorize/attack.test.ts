// An outsider's attacks on the authorization code flow (issue 31, item 8): the authorization
// endpoint used as an open redirector, codes injected, substituted, replayed or outlived, PKCE
// downgraded, pushed requests tampered with or overridden, client authentication spoofed. Each
// asserts the gateway's exact answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../src/http/listener.ts';
import { basic, bearer, call, startAuthServer, startTestGateway, startUpstream, tokenRequest, type Answer, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';
import { assertRefusalPage, csrfOf, flowApp, pkce, REDIRECT_URI, UserAgent } from './flow.ts';

const APP_URI = 'https://app.example.com/cb';
const NATIVE_URI = 'http://127.0.0.1/native';
const SCHEME_URI = 'com.example.app:/cb';
const INVALID_CODE = { error: 'invalid_grant', error_description: 'the authorization code is invalid, expired or already used' };

describe('attacks on the authorization endpoint and the codes', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  let issuer: string;
  let app: { key: string; secret: string; id: string };
  // The gateway's clock, moved forward to outlive codes and pushed requests.
  let shift = 0;
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' }, bob: { password: 'builder', sub: 'user-2' } });
    upstream = await startUpstream();
    const port = await freePort('127.0.0.1');
    issuer = `http://127.0.0.1:${port}`;
    gw = await startTestGateway(
      {
        authServerUrl: auth.url,
        upstreamUrl: upstream.url,
        oauth: `  issuer: ${issuer}\n`,
        routes: '  me:\n    method: GET\n    path: /v1/me\n    upstream: backend\n    requireSubject: true\n    scopes: [profile]\n',
        // First-party (no consent page): each code is one login away.
        products: `  people:
    routes: [me]
    scopes: [profile, email]
    grants: [authorization_code, refresh_token]
    login: users
    consent: skip
    accessTokenLifetime: 600
`,
      },
      { port, clock: () => Date.now() + shift },
    );
    app = await flowApp(gw, [REDIRECT_URI, APP_URI, NATIVE_URI, SCHEME_URI]);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
    await upstream?.close();
  });

  const authorizeUrl = (params: Record<string, string>) =>
    `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge_method: 'S256', ...params })}`;

  /** Through the login page: the redirect to the app (no consent: the product skips it). */
  async function signIn(params: Record<string, string>, user = 'alice', password = 'wonderland'): Promise<URL> {
    const ua = new UserAgent();
    const start = await ua.visit(authorizeUrl(params));
    assert.equal(start.status, 303, start.text);
    const form = await ua.visit(start.location!);
    const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: user, password } });
    assert.equal(login.status, 303, login.text);
    return new URL(login.location!);
  }

  const exchange = (code: string, verifier: string, redirectUri = REDIRECT_URI, creds: { key: string; secret: string } = app): Promise<Answer> =>
    tokenRequest(gw.url, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, creds);

  test('open redirect: a redirect URI differing from a registered one in any way is a page, never a redirect', async () => {
    const variants = [
      'https://APP.example.com/cb',
      'https://app.example.com/CB',
      'https://app.example.com/cb/',
      'https://app.example.com/c%62',
      'https://app.example.com/cb?',
      'https://app.example.com/cb?next=https://evil.example/',
      'https://app.example.com/cb#',
      'https://app.example.com/cb#x',
      'https://user@app.example.com/cb',
      'https://app.example.com@evil.example/cb',
      'https://app.example.com:443/cb',
      'https://app.example.com:8443/cb',
      'https://app.example.com/x/../cb',
      'https://app.example.com/./cb',
      'https://app.example.com\\cb',
      'https:\\\\app.example.com\\cb',
      'https://app.example.com\\@evil.example/cb',
      'https://app.example.com%2F@evil.example/cb',
      'https://app.example.com.evil.example/cb',
      'https://аpp.example.com/cb',
      'https://xn--pp-8cd.example.com/cb',
      '//app.example.com/cb',
      'http://app.example.com/cb',
      ' https://app.example.com/cb',
      'https://app.example.com/cb ',
      'http://127.0.0.1.evil.example/native',
      'http://127.0.0.1.evil.example:5000/native',
      'http://localhost@evil.example/native',
      'http://127.0.0.1:5000@evil.example/native',
      'http://127.0.0.1@evil.example:5000/native',
      'http://user:pass@127.0.0.1:5000/native',
      'http://127.0.0.1:5000/native/',
      'http://127.0.0.1:5000/Native',
      'http://127.0.0.1:5000/native#x',
      'http://127.0.0.1:5000/native?x=1',
      'http://127.0.0.1:5000/x/../native',
      'http://[::1]:5000/native',
      'http://localhost:5000/native',
      'http://127.1:5000/native',
      'http://0x7f000001:5000/native',
      'http://127.0.0.1:80/native',
      'HTTP://127.0.0.1:5000/native',
      'https://127.0.0.1:5000/native',
      'com.example.app:/cb/',
      'com.example.app://cb',
      'COM.EXAMPLE.APP:/cb',
      'com.example.app:/CB',
      'com.example.ap:/cb',
      'javascript:alert(1)//',
      'data:text/html,<script>alert(1)</script>',
    ];
    for (const redirectUri of variants) {
      const res = await new UserAgent().visit(authorizeUrl({ redirect_uri: redirectUri, code_challenge: pkce().challenge, state: 's', response_type: 'token' }));
      assertRefusalPage(res, 400, 'the redirect_uri of this request is not one the app registered', redirectUri);
      assert.doesNotMatch(res.text, /evil\.example|<script>/, redirectUri);
    }
    // Only a loopback http one may name another port (RFC 8252 §7.3), and the code then goes to that port.
    for (const redirectUri of ['http://127.0.0.1:5000/native', 'http://127.0.0.1:65535/native', 'http://127.0.0.1:1/callback']) {
      const res = await new UserAgent().visit(authorizeUrl({ redirect_uri: redirectUri, code_challenge: pkce().challenge }));
      assert.equal(res.status, 303, redirectUri);
      assert.match(res.location!, new RegExp(`^${gw.url}/oauth2/login\\?tx=[A-Za-z0-9_-]{22}$`), redirectUri);
    }
    const { verifier, challenge } = pkce();
    const back = await signIn({ redirect_uri: 'http://127.0.0.1:5000/native', code_challenge: challenge, state: 'port' });
    assert.equal(`${back.origin}${back.pathname}`, 'http://127.0.0.1:5000/native');
    const code = back.searchParams.get('code')!;
    // The code is bound to the port it was sent to: the registered spelling or another port is refused.
    for (const other of [NATIVE_URI, 'http://127.0.0.1:5001/native', 'http://127.0.0.1:5000/native/']) {
      const refused = await exchange(code, verifier, other);
      assert.deepEqual([refused.status, refused.body], [401, INVALID_CODE], other);
    }
    assert.equal((await exchange(code, verifier, 'http://127.0.0.1:5000/native')).status, 200);
  });

  test('open redirect: every error before the app and its redirect URI are known good is a page', async () => {
    const good = { code_challenge: pkce().challenge, state: 's1', redirect_uri: 'https://app.example.com/cb' };
    const url = (query: string) => `${gw.url}/oauth2/authorize?${query}`;
    const cases: [string, string, number, string][] = [
      ['no client_id', url('response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2F'), 400, 'the request names no app (client_id is missing)'],
      ['unknown app', authorizeUrl({ ...good, client_id: 'unknownunknownunknownunknown0000' }), 400, 'the app this request names is not known here'],
      ['not a key', authorizeUrl({ ...good, client_id: `${app.key}' OR 1=1 --` }), 400, 'the app this request names is not known here'],
      ['client_id twice', `${authorizeUrl(good)}&client_id=${app.key}`, 400, 'This request cannot be used: parameter &#39;client_id&#39; is repeated.'],
      ['redirect_uri twice', `${authorizeUrl(good)}&redirect_uri=${encodeURIComponent(APP_URI)}`, 400, 'parameter &#39;redirect_uri&#39; is repeated'],
      ['evil redirect_uri second', `${authorizeUrl(good)}&redirect_uri=https%3A%2F%2Fevil.example%2F`, 400, 'parameter &#39;redirect_uri&#39; is repeated'],
      ['state twice', `${authorizeUrl(good)}&state=s2`, 400, 'parameter &#39;state&#39; is repeated'],
      ['response_type twice', `${authorizeUrl(good)}&response_type=token`, 400, 'parameter &#39;response_type&#39; is repeated'],
      ['no redirect_uri of several', url(`response_type=code&client_id=${app.key}&code_challenge=${good.code_challenge}&code_challenge_method=S256`), 400, 'the app has registered more than one'],
      [
        'garbage request_uri',
        url(`client_id=${app.key}&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Agarbage&redirect_uri=https%3A%2F%2Fevil.example%2F`),
        400,
        'the request_uri is unknown, expired, or was pushed by another app',
      ],
      ['remote request_uri', url(`client_id=${app.key}&request_uri=https%3A%2F%2Fevil.example%2Frequest.jwt`), 400, 'the request_uri is unknown, expired, or was pushed by another app'],
      ['request_uri without client_id', url('request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Ax'), 400, 'a request_uri comes with the client_id of the app that pushed it'],
      ['unknown transaction', `${gw.url}/oauth2/login?tx=AAAAAAAAAAAAAAAAAAAAAA`, 400, 'This sign-in has expired, was already completed, or was started in another browser.'],
      ['no transaction', `${gw.url}/oauth2/login`, 400, 'This sign-in has expired'],
      ['consent of no transaction', `${gw.url}/oauth2/consent?tx=AAAAAAAAAAAAAAAAAAAAAA`, 400, 'This sign-in has expired'],
      ['callback without state', `${gw.url}/oauth2/callback?code=x`, 400, 'This sign-in has expired'],
      ['callback with a forged state', `${gw.url}/oauth2/callback?code=x&state=AAAAAAAAAAAAAAAAAAAAAA.x`, 400, 'This sign-in has expired'],
      ['access_denied of no transaction', `${gw.url}/oauth2/callback?error=access_denied&state=AAAAAAAAAAAAAAAAAAAAAA.x`, 400, 'This sign-in has expired'],
    ];
    for (const [what, target, status, message] of cases) assertRefusalPage(await new UserAgent().visit(target), status, message, what);
    const post = await new UserAgent().visit(authorizeUrl(good), { method: 'POST' });
    assertRefusalPage(post, 405, 'This page answers GET only.', 'POST');
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    // A disabled app: its redirect URI is no longer trusted either.
    const { store } = gw.gateway.services;
    const other = await flowApp(gw, [APP_URI]);
    await store.apps.setAppStatus(other.id, 'disabled', Date.now());
    assertRefusalPage(await new UserAgent().visit(authorizeUrl({ ...good, client_id: other.key })), 400, 'cannot sign users in now', 'disabled app');
  });

  test('once the redirect URI is known good, errors go to exactly it, with state and iss (RFC 9207)', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ code_challenge: pkce().challenge.slice(1) }, 'invalid_request', 'code_challenge must be 43 base64url characters (S256)'],
      [{ code_challenge: `${pkce().challenge}A` }, 'invalid_request', 'code_challenge must be 43 base64url characters (S256)'],
      [{ code_challenge: `${pkce().challenge.slice(1)}=` }, 'invalid_request', 'code_challenge must be 43 base64url characters (S256)'],
      [{ code_challenge: `+/${pkce().challenge.slice(2)}` }, 'invalid_request', 'code_challenge must be 43 base64url characters (S256)'],
      [{ code_challenge: pkce().verifier, code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256'],
      [{ code_challenge: pkce().challenge, code_challenge_method: 's256' }, 'invalid_request', 'code_challenge_method must be S256'],
      [{ code_challenge: pkce().challenge, response_type: 'code token' }, 'unsupported_response_type', 'response_type must be code'],
      [{ code_challenge: pkce().challenge, response_type: 'code id_token' }, 'unsupported_response_type', 'response_type must be code'],
      [{ code_challenge: pkce().challenge, response_mode: 'form_post' }, 'invalid_request', 'response_mode must be query'],
      [{ code_challenge: pkce().challenge, scope: 'profile admin' }, 'invalid_scope', "scope 'admin' is not available to this app"],
    ];
    for (const [params, error, description] of cases) {
      const res = await new UserAgent().visit(authorizeUrl({ redirect_uri: APP_URI, state: 'st', ...params }));
      assert.equal(res.status, 303, JSON.stringify(params));
      const back = new URL(res.location!);
      assert.equal(`${back.origin}${back.pathname}`, APP_URI);
      assert.deepEqual(Object.fromEntries(back.searchParams), { error, error_description: description, state: 'st', iss: issuer }, JSON.stringify(params));
    }
    const native = await new UserAgent().visit(authorizeUrl({ redirect_uri: SCHEME_URI, response_type: 'token' }));
    assert.equal(native.location, `com.example.app:/cb?error=unsupported_response_type&error_description=response_type+must+be+code&iss=${encodeURIComponent(issuer)}`);
    // The code itself comes with iss too.
    const back = await signIn({ code_challenge: pkce().challenge, state: 'with-code' });
    assert.deepEqual([...back.searchParams.keys()], ['code', 'state', 'iss']);
    assert.equal(back.searchParams.get('iss'), issuer);
  });

  test("code injection: another app's code, another user's code, another challenge's verifier, the challenge as verifier, other tokens as codes", async () => {
    const alice = pkce();
    const bob = pkce();
    const aliceCode = (await signIn({ code_challenge: alice.challenge, scope: 'profile' })).searchParams.get('code')!;
    const bobCode = (await signIn({ code_challenge: bob.challenge, scope: 'profile' }, 'bob', 'builder')).searchParams.get('code')!;
    const other = await flowApp(gw, [REDIRECT_URI]);
    const attempts: [string, Promise<Answer>][] = [
      ['another app', exchange(aliceCode, alice.verifier, REDIRECT_URI, other)],
      // Codes swapped between two users' sessions of the same app: each verifier only fits its own code.
      ["bob's verifier", exchange(aliceCode, bob.verifier)],
      ["alice's verifier", exchange(bobCode, alice.verifier)],
      // A downgrade to plain: the challenge itself presented as the verifier.
      ['challenge as verifier', exchange(aliceCode, alice.challenge)],
      ['another redirect URI', exchange(aliceCode, alice.verifier, APP_URI)],
      // OAuth 2.1 §4.1.3: the request named one, so the exchange must too.
      ['no redirect URI', tokenRequest(gw.url, { grant_type: 'authorization_code', code: aliceCode, code_verifier: alice.verifier }, app)],
      ['a code one character off', exchange(`${aliceCode.slice(0, -1)}${aliceCode.endsWith('A') ? 'B' : 'A'}`, alice.verifier)],
      ['a code of another prefix', exchange(`gwrt_${aliceCode.slice(5)}`, alice.verifier)],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt;
      assert.deepEqual([res.status, res.body], [401, INVALID_CODE], what);
    }
    const short = await exchange(aliceCode, alice.verifier.slice(0, 42));
    assert.deepEqual([short.status, short.body], [400, { error: 'invalid_request', error_description: 'code_verifier must be 43 to 128 unreserved characters (RFC 7636 section 4.1)' }]);
    // None of the attempts spent the codes: each user's own exchange gives that user's tokens.
    const aliceTokens = await exchange(aliceCode, alice.verifier);
    const bobTokens = await exchange(bobCode, bob.verifier);
    assert.equal(aliceTokens.status, 200);
    assert.equal(bobTokens.status, 200);
    for (const [tokens, subject] of [
      [aliceTokens, 'user-1'],
      [bobTokens, 'user-2'],
    ] as const) {
      assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(tokens.body.access_token) })).status, 200);
      assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], subject);
    }
    // Tokens of other kinds are no codes, and a code is no other token.
    for (const [what, token] of [
      ['refresh token', aliceTokens.body.refresh_token],
      ['access token', aliceTokens.body.access_token],
    ]) {
      const res = await exchange(token, alice.verifier);
      assert.deepEqual([res.status, res.body], [401, INVALID_CODE], what);
    }
    const fresh = pkce();
    const unspent = (await signIn({ code_challenge: fresh.challenge, scope: 'profile' })).searchParams.get('code')!;
    const asRefresh = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: unspent }, app);
    assert.deepEqual([asRefresh.status, asRefresh.body], [401, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' }]);
    const asBearer = await call(`${gw.url}/v1/me`, { headers: bearer(unspent) });
    assert.equal(asBearer.status, 401);
    const revoked = await tokenRequest(gw.url, { token: unspent }, app, '/oauth2/revoke');
    assert.equal(revoked.status, 200, 'RFC 7009 §2.2: an unknown token is no error');
    assert.equal((await exchange(unspent, fresh.verifier)).status, 200, 'and the code still works after all of that');
  });

  test('a code used twice revokes every token it gave, rotated ones included; a code outlives its lifetime by nothing', async () => {
    const { verifier, challenge } = pkce();
    const code = (await signIn({ code_challenge: challenge, scope: 'profile' })).searchParams.get('code')!;
    const first = await exchange(code, verifier);
    assert.equal(first.status, 200);
    const rotated = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, app);
    assert.equal(rotated.status, 200);
    const again = await exchange(code, verifier);
    assert.deepEqual([again.status, again.body], [401, INVALID_CODE]);
    for (const token of [first.body.access_token, rotated.body.access_token]) assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(token) })).status, 401);
    const refresh = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token }, app);
    assert.deepEqual([refresh.status, refresh.body.error], [401, 'invalid_grant']);

    // The same code sent twice at once: one exchange wins, the other is a reuse, which revokes the winner's tokens.
    const raced = pkce();
    const racedCode = (await signIn({ code_challenge: raced.challenge, scope: 'profile' })).searchParams.get('code')!;
    const answers = await Promise.all([exchange(racedCode, raced.verifier), exchange(racedCode, raced.verifier)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401]);
    const winner = answers.find((a) => a.status === 200)!;
    assert.equal((await call(`${gw.url}/v1/me`, { headers: bearer(winner.body.access_token) })).status, 401);

    const late = pkce();
    const lateCode = (await signIn({ code_challenge: late.challenge, scope: 'profile' })).searchParams.get('code')!;
    shift = 60_000; // authorizationCodeLifetime: 60s (the default)
    try {
      const expired = await exchange(lateCode, late.verifier);
      assert.deepEqual([expired.status, expired.body], [401, INVALID_CODE]);
    } finally {
      shift = 0;
    }
  });

  test('an expired transaction: the login page and its form are refused after ten minutes, and no code comes of it', async () => {
    const ua = new UserAgent();
    const start = await ua.visit(authorizeUrl({ code_challenge: pkce().challenge }));
    const form = await ua.visit(start.location!);
    shift = 600_000;
    try {
      assertRefusalPage(await ua.visit(start.location!), 400, 'This sign-in has expired', 'the login page');
      const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
      assertRefusalPage(login, 400, 'This sign-in has expired', 'the login form');
    } finally {
      shift = 0;
    }
  });

  test('PAR: another app, expired, tampered; query parameters cannot override the pushed ones; pushing needs authentication and no request_uri', async () => {
    const { verifier, challenge } = pkce();
    const pushed = { response_type: 'code', redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', scope: 'profile', state: 'pushed' };
    const par = await tokenRequest(gw.url, pushed, app, '/oauth2/par');
    assert.equal(par.status, 201, par.text);
    const requestUri: string = par.body.request_uri;
    const open = (query: Record<string, string>) => new UserAgent().visit(`${gw.url}/oauth2/authorize?${new URLSearchParams(query)}`);
    const unknown = 'the request_uri is unknown, expired, or was pushed by another app';
    const other = await flowApp(gw, [REDIRECT_URI]);
    assertRefusalPage(await open({ client_id: other.key, request_uri: requestUri }), 400, unknown, "another app's client_id");
    const body = requestUri.slice('urn:ietf:params:oauth:request_uri:'.length);
    const flipped = `${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
    for (const [what, tampered] of [
      ['a flipped character', `urn:ietf:params:oauth:request_uri:${flipped}`],
      ['truncated', requestUri.slice(0, -4)],
      ['another prefix', `urn:example:${body}`],
    ]) {
      assertRefusalPage(await open({ client_id: app.key, request_uri: tampered! }), 400, unknown, what);
    }
    shift = 60_000; // a pushed request lives 60 s
    try {
      assertRefusalPage(await open({ client_id: app.key, request_uri: requestUri }), 400, unknown, 'expired');
    } finally {
      shift = 0;
    }
    // RFC 9126 §4: only the pushed parameters count; the query's others, even a registered redirect URI, are ignored.
    const ua = new UserAgent();
    const overridden = { client_id: app.key, request_uri: requestUri, redirect_uri: APP_URI, state: 'evil', scope: 'email', code_challenge: pkce().challenge, response_type: 'token' };
    const start = await ua.visit(`${gw.url}/oauth2/authorize?${new URLSearchParams(overridden)}`);
    assert.equal(start.status, 303, start.text);
    const form = await ua.visit(start.location!);
    const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
    const back = new URL(login.location!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'pushed');
    const tokens = await exchange(back.searchParams.get('code')!, verifier);
    assert.deepEqual([tokens.status, tokens.body.scope], [200, 'profile']);

    const refusals: [string, Promise<Answer>, number, Record<string, string>][] = [
      [
        'a confidential app by client_id alone',
        tokenRequest(gw.url, { ...pushed, client_id: app.key }, undefined, '/oauth2/par'),
        401,
        { error: 'invalid_client', error_description: 'client authentication failed' },
      ],
      ['a wrong secret', tokenRequest(gw.url, pushed, { key: app.key, secret: `${app.secret}x` }, '/oauth2/par'), 401, { error: 'invalid_client', error_description: 'client authentication failed' }],
      [
        'a request_uri pushed',
        tokenRequest(gw.url, { ...pushed, request_uri: requestUri }, app, '/oauth2/par'),
        400,
        { error: 'invalid_request', error_description: 'request_uri cannot be pushed (RFC 9126 section 2.1)' },
      ],
      [
        'Basic of one app, client_id of another',
        tokenRequest(gw.url, { ...pushed, client_id: other.key }, app, '/oauth2/par'),
        400,
        { error: 'invalid_request', error_description: 'client_id differs from the Basic credentials' },
      ],
      [
        'a request object',
        tokenRequest(gw.url, { ...pushed, request: 'eyJhbGciOiJub25lIn0.e30.' }, app, '/oauth2/par'),
        400,
        { error: 'request_not_supported', error_description: 'request objects are not supported; push the request to /oauth2/par instead' },
      ],
      [
        'an unregistered redirect URI',
        tokenRequest(gw.url, { ...pushed, redirect_uri: 'https://evil.example/' }, app, '/oauth2/par'),
        400,
        { error: 'invalid_request', error_description: 'the redirect_uri of this request is not one the app registered' },
      ],
      [
        'PKCE plain',
        tokenRequest(gw.url, { ...pushed, code_challenge_method: 'plain' }, app, '/oauth2/par'),
        400,
        { error: 'invalid_request', error_description: 'code_challenge_method must be S256' },
      ],
    ];
    for (const [what, attempt, status, body] of refusals) {
      const res = await attempt;
      assert.deepEqual([res.status, res.body], [status, body], what);
      assert.equal(res.headers.get('location'), null, what);
    }
    const twice = await call(`${gw.url}/oauth2/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.key, app.secret) },
      body: `${new URLSearchParams(pushed)}&redirect_uri=${encodeURIComponent('https://evil.example/')}`,
    });
    assert.deepEqual([twice.status, twice.body], [400, { error: 'invalid_request', error_description: "parameter 'redirect_uri' is repeated" }]);
  });
});
