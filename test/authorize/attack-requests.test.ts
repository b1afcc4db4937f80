// An outsider's attacks on the authorization code flow with crafted requests (issue 31, item 8):
// text injected into the gateway's pages and the app's error redirects, public and confidential
// clients impersonated, Host and X-Forwarded-* headers, the cookie's attributes, framing, and
// oversized requests. Each asserts the gateway's exact answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawExchange, rawHead, startAuthServer, startTestGateway, tokenRequest, type AuthServer, type TestGateway } from '../helpers.ts';
import { assertRefusalPage, csrfOf, flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent, type Visit } from './flow.ts';

describe('attacks with crafted requests', () => {
  let auth: AuthServer;
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' } });
    gw = await startFlowGateway({ authServerUrl: auth.url });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
  });

  const query = (params: Record<string, string> = {}) =>
    new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's', ...params }).toString();

  test("text injection: the gateway's page names no parameter of the requester's choosing; error_description keeps to RFC 6749's characters", async () => {
    const lure = 'Your account is locked. Call +1 555 0100 or sign in at https://evil.example';
    const repeated = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query()}&${encodeURIComponent(lure)}=1&${encodeURIComponent(lure)}=2`);
    assertRefusalPage(repeated, 400, 'This request cannot be used: a parameter is repeated.', 'a repeated parameter of any name');
    assert.doesNotMatch(repeated.text, /evil\.example|locked/);
    const named = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query()}&state=t`);
    assertRefusalPage(named, 400, 'This request cannot be used: parameter &#39;state&#39; is repeated.', 'a repeated request parameter is named');
    // RFC 6749 §4.1.2.1: error_description holds %x20-21 / %x23-5B / %x5D-7E only, whatever scope was asked.
    const res = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ scope: 'profile ünï"\\<x>' })}`);
    assert.equal(res.status, 303);
    const back = new URL(res.location!);
    assert.deepEqual(Object.fromEntries(back.searchParams), { error: 'invalid_scope', error_description: "scope '?n???<x>' is not available to this app", state: 's', iss: gw.issuer });
  });

  test('clients: a public app gets no client_credentials or password and cannot authenticate with a secret; client_id spoofed against Basic', async () => {
    const { store } = gw.gateway.services;
    const dev = await store.accounts.findDeveloper('dev@example.com');
    await store.apps.createApp({
      developerId: dev!.id,
      name: 'spa',
      product: 'people',
      key: 'publicattackpublic01',
      secretHash: Buffer.alloc(32),
      now: Date.now(),
      type: 'public',
      redirectUris: [REDIRECT_URI],
    });
    const pub = 'publicattackpublic01';
    const other = await flowApp(gw);
    const unauthorized = (grant: string) => ({ error: 'unauthorized_client', error_description: `a public client (no secret) cannot use grant type '${grant}'` });
    const failed = { error: 'invalid_client', error_description: 'client authentication failed' };
    const cases: [string, Record<string, string>, { key: string; secret: string } | undefined, number, Record<string, string>][] = [
      ['client_credentials', { grant_type: 'client_credentials', client_id: pub }, undefined, 400, unauthorized('client_credentials')],
      ['password', { grant_type: 'password', client_id: pub, username: 'alice', password: 'wonderland' }, undefined, 400, unauthorized('password')],
      ['a public app with a secret in the form', { grant_type: 'client_credentials', client_id: pub, client_secret: 'anything' }, undefined, 401, failed],
      ['a public app with an empty Basic secret', { grant_type: 'client_credentials' }, { key: pub, secret: '' }, 401, failed],
      ['a public app with a Basic secret', { grant_type: 'client_credentials' }, { key: pub, secret: 'anything' }, 401, failed],
      [
        'a confidential app without its secret',
        { grant_type: 'authorization_code', client_id: app.key, code: 'gwac_x', redirect_uri: REDIRECT_URI, code_verifier: pkce().verifier },
        undefined,
        401,
        failed,
      ],
      [
        'Basic of one app, client_id of another',
        { grant_type: 'client_credentials', client_id: other.key },
        app,
        400,
        { error: 'invalid_request', error_description: 'client_id differs from the Basic credentials' },
      ],
      [
        'Basic of a confidential app, client_id of the public one',
        { grant_type: 'authorization_code', client_id: pub, code: 'gwac_x', redirect_uri: REDIRECT_URI, code_verifier: pkce().verifier },
        app,
        400,
        { error: 'invalid_request', error_description: 'client_id differs from the Basic credentials' },
      ],
      [
        'Basic and client_secret both',
        { grant_type: 'client_credentials', client_secret: app.secret },
        app,
        400,
        { error: 'invalid_request', error_description: 'use one client authentication method, not both Basic and client_secret' },
      ],
    ];
    for (const [what, form, creds, status, body] of cases) {
      const res = await tokenRequest(gw.url, form, creds);
      assert.deepEqual([res.status, res.body], [status, body], what);
    }
    const par = await tokenRequest(
      gw.url,
      { client_id: app.key, response_type: 'code', redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256' },
      undefined,
      '/oauth2/par',
    );
    assert.deepEqual([par.status, par.body], [401, failed], 'a confidential app pushes with its secret');
    const secretInQuery = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, undefined, `/oauth2/token?client_id=${app.key}&client_secret=${app.secret}`);
    assert.equal(secretInQuery.status, 400);
    assert.equal(secretInQuery.body.error, 'invalid_request');
  });

  test('header tricks: Host and X-Forwarded-* change neither where the browser goes nor the iss; an absolute target is refused', async () => {
    const target = `/oauth2/authorize?${query()}`;
    const forged = rawHead(
      await rawExchange(
        gw.url,
        `GET ${target} HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\nForwarded: host=evil.example;proto=https\r\nConnection: close\r\n\r\n`,
      ),
    );
    assert.equal(forged.status, 'HTTP/1.1 303 See Other');
    assert.match(forged.headers.get('location')![0]!, /^\/oauth2\/login\?tx=[A-Za-z0-9_-]{22}$/);
    const error = rawHead(
      await rawExchange(gw.url, `GET /oauth2/authorize?${query({ response_type: 'token' })} HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nConnection: close\r\n\r\n`),
    );
    assert.equal(error.headers.get('location')![0], `${REDIRECT_URI}?error=unsupported_response_type&error_description=response_type+must+be+code&state=s&iss=${encodeURIComponent(gw.issuer)}`);
    const absolute = rawHead(await rawExchange(gw.url, `GET http://evil.example${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`));
    assert.equal(absolute.status, 'HTTP/1.1 400 Bad Request');
    assert.equal(absolute.headers.get('location'), undefined);
  });

  test("the transaction cookie: this authorization's pages only, HttpOnly, SameSite=Lax, ten minutes; cleared with the code", async () => {
    const ua = new UserAgent();
    const res = await ua.visit(`${gw.url}/oauth2/authorize?${query({ scope: 'profile' })}`);
    const id = new URL(res.location!).searchParams.get('tx')!;
    const [cookie, ...more] = res.headers.getSetCookie();
    assert.deepEqual(more, []);
    assert.match(cookie!, new RegExp(`^gateway-authorize-${id}=[A-Za-z0-9_-]+; Path=/oauth2/; HttpOnly; SameSite=Lax; Max-Age=600$`));
    const form = await ua.visit(res.location!);
    const login = await ua.visit(res.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
    assert.match(login.headers.getSetCookie()[0]!, new RegExp(`^gateway-authorize-${id}=[A-Za-z0-9_-]+; Path=/oauth2/; HttpOnly; SameSite=Lax; Max-Age=(599|600)$`));
    const page = await ua.visit(login.location!);
    const approved = await ua.visit(login.location!, { form: { csrf: csrfOf(page.text), decision: 'approve' } });
    assert.deepEqual(approved.headers.getSetCookie(), [`gateway-authorize-${id}=; Path=/oauth2/; HttpOnly; SameSite=Lax; Max-Age=0`]);
  });

  test('clickjacking: every page and every redirect of the flow is unframeable, sends no referrer to other sites and is not cached', async () => {
    const ua = new UserAgent();
    const answers: [string, Visit][] = [];
    const keep = async (what: string, visit: Promise<Visit>) => {
      const res = await visit;
      answers.push([what, res]);
      return res;
    };
    await keep('a refused request', new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ redirect_uri: 'https://evil.example/' })}`));
    await keep('an error redirect', new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ response_type: 'token' })}`));
    await keep('a method not allowed', new UserAgent().visit(`${gw.url}/oauth2/authorize?${query()}`, { method: 'DELETE' }));
    await keep('an expired sign-in', new UserAgent().visit(`${gw.url}/oauth2/login?tx=AAAAAAAAAAAAAAAAAAAAAA`));
    await keep('a callback without state', new UserAgent().visit(`${gw.url}/oauth2/callback`));
    const start = await keep('the redirect to the login page', ua.visit(`${gw.url}/oauth2/authorize?${query({ scope: 'email' })}`));
    const form = await keep('the login page', ua.visit(start.location!));
    await keep('the login page, HEAD', ua.visit(start.location!, { method: 'HEAD' }));
    await keep('a wrong password', ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'nope' } }));
    await keep('a forged login', ua.visit(start.location!, { form: { username: 'alice', password: 'nope' } }));
    const login = await keep('the redirect to the consent page', ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } }));
    const consent = await keep('the consent page', ua.visit(login.location!));
    await keep('the code', ua.visit(login.location!, { form: { csrf: csrfOf(consent.text), decision: 'approve' } }));
    for (const [what, res] of answers) {
      assert.equal(res.headers.get('x-frame-options'), 'DENY', what);
      assert.match(
        res.headers.get('content-security-policy')!,
        /^default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'( http:\/\/127\.0\.0\.1:\*)?; frame-ancestors 'none'; base-uri 'none'$/,
        what,
      );
      assert.equal(res.headers.get('referrer-policy'), 'same-origin', what);
      assert.equal(res.headers.get('cache-control'), 'no-store', what);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
    }
  });

  test('oversized requests: a huge state, scope, number of parameters, query, header or body is a quick 4xx, never a 500', async () => {
    const tooLong = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ state: 'a'.repeat(2049) })}`);
    assert.deepEqual(Object.fromEntries(new URL(tooLong.location!).searchParams), { error: 'invalid_request', error_description: 'state must be at most 2048 characters', iss: gw.issuer });
    const huge = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ state: 'a'.repeat(9000) })}`);
    assert.deepEqual([huge.status, huge.location, JSON.parse(huge.text).detail], [414, undefined, 'the request target is longer than 8192 bytes']);
    const many = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query()}${'&x=1'.repeat(200)}`);
    assert.deepEqual([many.status, many.location, JSON.parse(many.text).detail], [414, undefined, 'the query has more than 100 parameters']);
    // The same scope a thousand times is one scope: the cookie stays small.
    const repeated = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ scope: 'profile email '.repeat(500) })}`);
    assert.equal(repeated.status, 303);
    assert.ok(repeated.headers.getSetCookie()[0]!.length < 1000, repeated.headers.getSetCookie()[0]);
    const unknown = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ scope: Array.from({ length: 700 }, (_, i) => `s${i}`.padEnd(9, 'x')).join(' ') })}`);
    assert.equal(new URL(unknown.location!).searchParams.get('error_description'), "scope 's0xxxxxxx' is not available to this app");
    // Node's limit on a request's head (16 KiB): 431, and a megabyte is cut off without an answer.
    const head = rawHead(await rawExchange(gw.url, `GET /oauth2/authorize?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    assert.equal(head.status, 'HTTP/1.1 431 Request Header Fields Too Large');
    const megabyte = await rawExchange(gw.url, `GET /oauth2/authorize?${'a'.repeat(1024 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`).catch((err: NodeJS.ErrnoException) => err.code!);
    assert.ok(megabyte === 'ECONNRESET' || megabyte.startsWith('HTTP/1.1 431 '), megabyte.slice(0, 100));
    const ua = new UserAgent();
    const start = await ua.visit(`${gw.url}/oauth2/authorize?${query()}`);
    const body = await ua.visit(start.location!, { form: { csrf: 'x', username: 'a'.repeat(64 * 1024) } });
    assertRefusalPage(body, 413, 'request body exceeds 16384 bytes', 'a 64 KiB login form');
    assert.equal((await ua.visit(start.location!)).status, 200, 'and the gateway goes on serving');
  });

  test('a cookie bomb: authorizations started in one browser keep at most three transaction cookies, each within 4096 bytes, so its Cookie header stays under the 16 KiB Node takes', async () => {
    // Each a top-level navigation an attacker's page can make (one click opens a window it then
    // navigates at will): with a 2 KiB state, five of them made every /oauth2/ request a 431 for ten minutes.
    const ua = new UserAgent();
    const started: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await ua.visit(`${gw.url}/oauth2/authorize?${query({ state: `${i}`.repeat(2048) })}`);
      assert.equal(res.status, 303, res.text);
      started.push(res.location!);
      assert.ok(ua.cookies.size <= 3, `${ua.cookies.size} transaction cookies after ${i + 1} authorizations`);
      for (const cookie of res.headers.getSetCookie()) assert.ok(cookie.length <= 4096, `${cookie.length} bytes`);
    }
    const header = [...ua.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    assert.ok(header.length < 12 * 1024, `${header.length} bytes of cookies`);
    // The oldest are given up; the newest three go on.
    assertRefusalPage(await ua.visit(started[0]!), 400, 'This sign-in has expired', 'the first');
    for (const loginUrl of started.slice(-3)) assert.equal((await ua.visit(loginUrl)).status, 200, loginUrl);
    // A state that JSON escapes to twice its size would make a cookie browsers drop: refused, with the app told why.
    const quoted = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${query({ state: '"'.repeat(2048) })}`);
    assert.deepEqual(Object.fromEntries(new URL(quoted.location!).searchParams), {
      error: 'invalid_request',
      error_description: 'the request is too large for this browser to hold while the user signs in: send a shorter state',
      state: '"'.repeat(2048),
      iss: gw.issuer,
    });
  });
});

describe('attacks on a gateway whose issuer is https (behind a TLS proxy)', () => {
  let auth: AuthServer;
  let gw: TestGateway;
  let app: { key: string; secret: string; id: string };
  const issuer = 'https://gateway.example';
  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' } });
    gw = await startTestGateway({
      authServerUrl: auth.url,
      oauth: `  issuer: ${issuer}\n`,
      products: '  people:\n    routes: [hello]\n    scopes: [profile]\n    grants: [authorization_code]\n    login: users\n    consent: skip\n',
    });
    app = await flowApp(gw);
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
  });

  test("the cookie is __Secure- and Secure; a form is taken from the issuer's origin only, not from the address it was reached at", async () => {
    const ua = new UserAgent();
    const query = new URLSearchParams({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const start = await ua.visit(`${gw.url}/oauth2/authorize?${query}`);
    const id = new URL(start.location!).searchParams.get('tx')!;
    assert.match(start.headers.getSetCookie()[0]!, new RegExp(`^__Secure-gateway-authorize-${id}=[A-Za-z0-9_-]+; Path=/oauth2/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$`));
    const form = await ua.visit(start.location!);
    const credentials = { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' };
    for (const origin of [gw.url, 'http://gateway.example', 'https://gateway.example:8443', 'https://evil.example']) {
      assertRefusalPage(await ua.visit(start.location!, { form: credentials, headers: { origin } }), 403, 'This form was sent from another site.', origin);
    }
    const login = await ua.visit(start.location!, { form: credentials, headers: { origin: issuer } });
    assert.match(login.location!, new RegExp(`^${REDIRECT_URI}\\?code=gwac_[^&]+&iss=https%3A%2F%2Fgateway\\.example$`));
  });
});
