// An outsider's attacks on the authorization code flow with crafted requests (issue 31, item 8):
// text injected into the gateway's pages and the app's error redirects, public and confidential
// clients impersonated, Host and X-Forwarded-* headers, the cookie's attributes, framing, and
// oversized requests. Each asserts the gateway's exact answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, rawExchange, rawHead, startAuthServer, tokenRequest, type AuthServer, type TestGateway } from '../helpers.ts';
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
});
