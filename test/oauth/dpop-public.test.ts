// DPoP (RFC 9449 §5) for a public client: with no secret to authenticate a refresh, its refresh
// token is bound to the key of the proof it redeemed its code with. The flow is the real one over
// HTTP (authorization request, the gateway's login page against a stand-in authorization server,
// consent, the code at the redirect URI), on a product of senderConstraint: none, so that the
// binding comes from the proof alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, createDeveloper } from '../../src/admin/operations.ts';
import { call, startAuthServer, startUpstream, type Answer, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';
import { csrfOf, pkce, REDIRECT_URI, startFlowGateway, UserAgent } from '../authorize/flow.ts';
import { dpopKey, type DpopKey } from './dpop-proof.ts';

describe('DPoP for a public client (authorization code with PKCE)', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway & { issuer: string };
  let clientId: string;
  let key: DpopKey;
  let other: DpopKey;

  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland', sub: 'user-1' } });
    upstream = await startUpstream();
    gw = await startFlowGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url });
    await createDeveloper(gw.admin, { email: 'dev@example.com', name: 'Dev' });
    const created = await createApp(gw.admin, { developer: 'dev@example.com', name: 'spa', product: 'people', type: 'public', redirectUris: [REDIRECT_URI] });
    assert.equal(created.secret, undefined);
    clientId = created.key;
    key = await dpopKey('ES256');
    other = await dpopKey('ES256');
  });
  after(async () => {
    await gw?.close();
    await auth?.close();
    await upstream?.close();
  });

  /** Alice signs in and consents; the code the gateway sends back to the redirect URI. */
  async function code(challenge: string): Promise<string> {
    const ua = new UserAgent();
    const authorize = `${gw.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', scope: 'profile', state: 'st' })}`;
    const start = await ua.visit(authorize);
    assert.equal(start.status, 303, start.text);
    const form = await ua.visit(start.location!);
    assert.equal(form.status, 200, form.text);
    const login = await ua.visit(start.location!, { form: { csrf: csrfOf(form.text), username: 'alice', password: 'wonderland' } });
    assert.equal(login.status, 303, login.text);
    let back = login.location!;
    if (back.startsWith(`${gw.url}/oauth2/consent`)) {
      const consent = await ua.visit(back);
      assert.equal(consent.status, 200, consent.text);
      const answer = await ua.visit(back, { form: { csrf: csrfOf(consent.text), decision: 'approve' } });
      assert.equal(answer.status, 303, answer.text);
      back = answer.location!;
    }
    const url = new URL(back);
    assert.equal(`${url.origin}${url.pathname}`, REDIRECT_URI);
    assert.equal(url.searchParams.get('state'), 'st');
    return url.searchParams.get('code')!;
  }

  const tokenUrl = () => `${gw.url}/oauth2/token`;
  /** The public client's token request: client_id in the form, no secret, a proof of `k` (none when undefined). */
  async function tokenRequest(params: Record<string, string>, k: DpopKey | undefined): Promise<Answer> {
    return call(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(k === undefined ? {} : { dpop: await k.proof({ method: 'POST', url: tokenUrl() }) }) },
      body: new URLSearchParams({ client_id: clientId, ...params }).toString(),
    });
  }
  const refresh = (refreshToken: string, k: DpopKey | undefined) => tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, k);
  async function me(token: string, k: DpopKey): Promise<Answer> {
    const url = `${gw.url}/v1/me`;
    return call(url, { headers: { authorization: `DPoP ${token}`, dpop: await k.proof({ method: 'GET', url, accessToken: token }) } });
  }

  // RFC 6749 §5.2 as the gateway answers every refused grant: 401, with the Basic challenge every 401 of the endpoint carries (RFC 9110 §15.5.2).
  function assertRefusedGrant(res: Answer, what: string): void {
    assert.equal(res.status, 401, `${what}: ${res.text}`);
    assert.deepEqual(res.body, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' }, what);
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="test-realm", charset="UTF-8"', what);
    assert.equal(res.headers.get('cache-control'), 'no-store', what);
  }

  test('a code redeemed with a proof gets a DPoP access token and a refresh token bound to that key: only that key refreshes, and a refusal spends nothing', async () => {
    const { verifier, challenge } = pkce();
    const redeemed = await tokenRequest({ grant_type: 'authorization_code', code: await code(challenge), redirect_uri: REDIRECT_URI, code_verifier: verifier }, key);
    assert.equal(redeemed.status, 200, redeemed.text);
    assert.deepEqual(Object.keys(redeemed.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'refresh_token_expires_in', 'scope', 'token_type']);
    assert.equal(redeemed.body.token_type, 'DPoP');
    const first = redeemed.body.access_token as string;
    const refreshToken = redeemed.body.refresh_token as string;

    const since = upstream.received.length;
    const called = await me(first, key);
    assert.equal(called.status, 200, called.text);
    const got = upstream.received.slice(since);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers['x-gateway-subject'], 'user-1');
    assert.equal(got[0]!.headers.dpop, undefined);
    assert.equal(got[0]!.headers.authorization, undefined);

    // §5: another key's proof, or none, does not redeem a bound refresh token; it stays unspent and its family unrevoked.
    assertRefusedGrant(await refresh(refreshToken, other), 'a proof of another key');
    assertRefusedGrant(await refresh(refreshToken, undefined), 'no proof');
    assert.equal((await me(first, key)).status, 200, 'the refused refreshes revoked nothing');

    const refreshed = await refresh(refreshToken, key);
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(refreshed.body.token_type, 'DPoP');
    assert.equal(refreshed.body.scope, 'profile');
    const second = refreshed.body.access_token as string;
    assert.notEqual(second, first);
    assert.notEqual(refreshed.body.refresh_token, refreshToken);
    assert.equal((await me(second, key)).status, 200);
    assert.equal((await me(second, other)).status, 401, 'the new access token is bound to the key too');

    // The successor refresh token keeps the binding.
    assertRefusedGrant(await refresh(refreshed.body.refresh_token, other), "the successor, with another key's proof");
    const again = await refresh(refreshed.body.refresh_token, key);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.token_type, 'DPoP');
  });

  test('a code redeemed without a proof gets Bearer tokens on a product of senderConstraint: none; a refresh with a proof binds from then on', async () => {
    const { verifier, challenge } = pkce();
    const redeemed = await tokenRequest({ grant_type: 'authorization_code', code: await code(challenge), redirect_uri: REDIRECT_URI, code_verifier: verifier }, undefined);
    assert.equal(redeemed.status, 200, redeemed.text);
    assert.equal(redeemed.body.token_type, 'Bearer');
    // An unbound refresh token is redeemed with any proof, or none; the proof binds what it issues, its successor refresh token included.
    const refreshed = await refresh(redeemed.body.refresh_token, key);
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(refreshed.body.token_type, 'DPoP');
    assert.equal((await me(refreshed.body.access_token, key)).status, 200);
    assertRefusedGrant(await refresh(refreshed.body.refresh_token, other), "the successor, with another key's proof");
  });
});
