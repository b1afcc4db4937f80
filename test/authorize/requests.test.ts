// The authorization endpoint's refusals, in the order that decides where they go: a page while the
// app or its redirect URI is in doubt (never a redirect: no open redirector), then the app's
// redirect URI with error, state and iss. And pushed requests (RFC 9126), public clients, metadata.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, tokenRequest, type TestGateway } from '../helpers.ts';
import { flowApp, pkce, REDIRECT_URI, startFlowGateway, UserAgent } from './flow.ts';

describe('authorization requests', () => {
  let gw: TestGateway & { issuer: string };
  let app: { key: string; secret: string; id: string };
  const { challenge } = pkce();
  before(async () => {
    gw = await startFlowGateway({
      products: `  pushed:
    routes: [me]
    scopes: [profile]
    grants: [authorization_code]
    login: users
    requirePushedAuthorizationRequests: true
`,
    });
    app = await flowApp(gw, [REDIRECT_URI, 'http://127.0.0.1/native', 'com.example.app:/cb']);
  });
  after(() => gw?.close());

  const authorize = (params: Record<string, string>) => new UserAgent().visit(`${gw.url}/oauth2/authorize?${new URLSearchParams(params)}`);
  const good = () => ({ response_type: 'code', client_id: app.key, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', state: 's1' });

  test('an unknown app, a redirect URI not registered (by one character, or another host), none, or a repeated parameter: a page, no redirect', async () => {
    const cases: Record<string, string>[] = [
      { ...good(), client_id: 'unknownunknownunknown' },
      { ...good(), redirect_uri: `${REDIRECT_URI}/` },
      { ...good(), redirect_uri: 'https://evil.example/callback' },
      { ...good(), redirect_uri: 'http://127.0.0.1:7777/callbacK' },
    ];
    for (const params of cases) {
      const res = await authorize(params);
      assert.equal(res.status, 400, JSON.stringify(params));
      assert.equal(res.location, undefined);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.doesNotMatch(res.text, /evil\.example/);
    }
    const { redirect_uri: _, ...without } = good();
    assert.equal((await authorize(without)).status, 400, 'three are registered: which one is not guessed');
    const repeated = await new UserAgent().visit(`${gw.url}/oauth2/authorize?${new URLSearchParams(good())}&redirect_uri=${encodeURIComponent('https://evil.example/')}`);
    assert.equal(repeated.status, 400);
    assert.equal(repeated.location, undefined);
  });

  test('once the redirect URI is known good: errors go there, with state and iss', async () => {
    const expectError = async (params: Record<string, string>, error: string) => {
      const res = await authorize(params);
      assert.equal(res.status, 303, res.text);
      const back = new URL(res.location!);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
      assert.equal(back.searchParams.get('error'), error, JSON.stringify(params));
      assert.equal(back.searchParams.get('state'), 's1');
      assert.equal(back.searchParams.get('iss'), gw.issuer);
    };
    await expectError({ ...good(), response_type: 'token' }, 'unsupported_response_type');
    const { response_type: _r, ...noType } = good();
    await expectError(noType, 'invalid_request');
    const { code_challenge: _c, ...noChallenge } = good();
    await expectError(noChallenge, 'invalid_request');
    await expectError({ ...good(), code_challenge_method: 'plain' }, 'invalid_request');
    const { code_challenge_method: _m, ...noMethod } = good();
    await expectError(noMethod, 'invalid_request');
    await expectError({ ...good(), scope: 'profile admin' }, 'invalid_scope');
    await expectError({ ...good(), request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported');
    await expectError({ ...good(), response_mode: 'fragment' }, 'invalid_request');
  });

  test('a loopback redirect URI may name any port (RFC 8252 §7.3); a private-use scheme is sent back to as registered', async () => {
    const loopback = await authorize({ ...good(), redirect_uri: 'http://127.0.0.1:51234/native' });
    assert.equal(loopback.status, 303);
    assert.match(loopback.location!, /\/oauth2\/login\?tx=/);
    const native = await authorize({ ...good(), redirect_uri: 'com.example.app:/cb', response_type: 'token' });
    assert.equal(native.status, 303);
    assert.match(native.location!, /^com\.example\.app:\/cb\?error=unsupported_response_type&/);
  });

  test('a product requiring pushed requests refuses a plain one; a pushed one (PAR, with client authentication) is taken', async () => {
    const pushedApp = await gw.client('pushed');
    const found = await gw.gateway.services.store.apps.findAppByKey(pushedApp.key);
    await gw.gateway.services.store.apps.setRedirectUris(found!.id, [REDIRECT_URI], Date.now());
    const plain = await authorize({ ...good(), client_id: pushedApp.key });
    assert.equal(new URL(plain.location!).searchParams.get('error'), 'invalid_request');
    const { client_id: _, ...params } = { ...good(), client_id: pushedApp.key };
    const par = await tokenRequest(gw.url, params, pushedApp, '/oauth2/par');
    assert.equal(par.status, 201, par.text);
    assert.equal(par.headers.get('cache-control'), 'no-store');
    assert.equal(par.body.expires_in, 60);
    assert.match(par.body.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]+$/);
    const viaPar = await authorize({ client_id: pushedApp.key, request_uri: par.body.request_uri });
    assert.equal(viaPar.status, 303);
    assert.match(viaPar.location!, /\/oauth2\/login\?tx=/);
    // Another app's client_id with the request_uri: not opened.
    const other = await authorize({ client_id: app.key, request_uri: par.body.request_uri });
    assert.equal(other.status, 400);
    assert.equal(other.location, undefined);
    // A pushed request is checked at once: a redirect URI not registered is a 400, never a redirect.
    const bad = await tokenRequest(gw.url, { ...params, redirect_uri: 'https://evil.example/' }, pushedApp, '/oauth2/par');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'invalid_request');
    const unauthenticated = await tokenRequest(gw.url, { ...params, client_id: pushedApp.key, client_secret: 'wrong' }, undefined, '/oauth2/par');
    assert.equal(unauthenticated.status, 401);
  });

  test('a public app: no client_credentials or password; client_id alone at the token endpoint, and a confidential app cannot go without its secret', async () => {
    const { store } = gw.gateway.services;
    const dev = await store.accounts.findDeveloper('dev@example.com');
    await store.apps.createApp({
      developerId: dev!.id,
      name: 'spa',
      product: 'people',
      key: 'publicpublicpublic01',
      secretHash: Buffer.alloc(32, 7),
      now: Date.now(),
      type: 'public',
      redirectUris: [REDIRECT_URI],
    });
    const cc = await tokenRequest(gw.url, { grant_type: 'client_credentials', client_id: 'publicpublicpublic01' });
    assert.equal(cc.status, 400);
    assert.deepEqual(cc.body, { error: 'unauthorized_client', error_description: "a public client (no secret) cannot use grant type 'client_credentials'" });
    const code = await tokenRequest(gw.url, { grant_type: 'authorization_code', client_id: 'publicpublicpublic01', code: 'gwac_nope', redirect_uri: REDIRECT_URI, code_verifier: pkce().verifier });
    assert.deepEqual([code.status, code.body.error], [401, 'invalid_grant'], 'authenticated by client_id, then the code is refused');
    const confidential = await tokenRequest(gw.url, { grant_type: 'authorization_code', client_id: app.key, code: 'gwac_nope', redirect_uri: REDIRECT_URI, code_verifier: pkce().verifier });
    assert.deepEqual([confidential.status, confidential.body.error], [401, 'invalid_client']);
  });

  test('metadata: the authorization and PAR endpoints, code only, S256 only, iss in responses, public clients', async () => {
    const res = await call(`${gw.url}/.well-known/oauth-authorization-server`);
    assert.equal(res.status, 200);
    const m = res.body;
    assert.equal(m.authorization_endpoint, `${gw.issuer}/oauth2/authorize`);
    assert.equal(m.pushed_authorization_request_endpoint, `${gw.issuer}/oauth2/par`);
    assert.deepEqual(m.response_types_supported, ['code']);
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    assert.equal(m.require_pushed_authorization_requests, false);
    assert.deepEqual(m.grant_types_supported, ['authorization_code', 'client_credentials', 'password', 'refresh_token']);
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
  });
});
