// DPoP (RFC 9449) with the clients people use: openid-client's DPoP handle and oauth4webapi's,
// each discovering the gateway from its RFC 8414 metadata, getting a DPoP-bound token at the token
// endpoint and calling a route of a senderConstraint: dpop product, over real HTTP to a real
// upstream; and the same with nonces (oauth.dpop.nonce: true), which both clients must handle as
// §8 says: retry once with the nonce of DPoP-Nonce.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { freePort } from '../../src/http/listener.ts';
import { startTestGateway, startUpstream, type TestGateway, type Upstream } from '../helpers.ts';

/** One request a client made, and the answer's status and body as the gateway wrote them. */
interface Exchange {
  method: string;
  path: string;
  proof: boolean;
  status: number;
  body: string;
}

/** A fetch that records what it sends and gets, for the libraries' customFetch. */
function recordingFetch(exchanges: Exchange[]) {
  return async (url: string, options: { method: string; headers: Record<string, string>; body?: unknown; redirect?: 'manual'; signal?: AbortSignal }): Promise<Response> => {
    const res = await fetch(url, options as RequestInit);
    const headers = new Headers(options.headers);
    exchanges.push({ method: options.method, path: new URL(url).pathname, proof: headers.has('dpop'), status: res.status, body: await res.clone().text() });
    return res;
  };
}

/**
 * A gateway on a port known before it starts, so that its issuer (http://127.0.0.1:PORT, the one
 * plain-HTTP form oauth.issuer takes besides localhost) is the address the clients discover it at.
 */
async function startDpopGateway(upstreamUrl: string, oauthExtra = ''): Promise<TestGateway & { issuer: string }> {
  const port = await freePort('127.0.0.1');
  const issuer = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway(
    {
      upstreamUrl,
      oauth: `  issuer: ${issuer}\n${oauthExtra}`,
      routes: '  bound:\n    method: GET\n    path: /v1/bound/{id}\n    upstream: backend',
      products: '  bound:\n    routes: [bound]\n    senderConstraint: dpop\n    grants: [client_credentials]',
    },
    { port },
  );
  return { ...gw, issuer };
}

for (const nonce of [false, true]) {
  describe(`real DPoP clients against the gateway${nonce ? ', with nonces' : ''}`, () => {
    let upstream: Upstream;
    let gw: TestGateway & { issuer: string };
    let app: { key: string; secret: string };

    before(async () => {
      upstream = await startUpstream();
      gw = await startDpopGateway(upstream.url, nonce ? '  dpop:\n    nonce: true\n' : '');
      app = await gw.client('bound');
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
    });

    /** What the upstream got from `since` on: the call, without the proof or the token (§7: they are the gateway's to check). */
    function assertForwarded(since: number): void {
      const got = upstream.received.slice(since);
      assert.equal(got.length, 1);
      assert.equal(got[0]!.method, 'GET');
      assert.equal(got[0]!.url, '/v1/bound/42');
      assert.equal(got[0]!.headers.dpop, undefined);
      assert.equal(got[0]!.headers.authorization, undefined);
    }

    /** §8: without nonces, one token request; with them, a use_dpop_nonce answer first, then the token. */
    function assertTokenExchanges(exchanges: Exchange[]): void {
      const token = exchanges.filter((e) => e.path === '/oauth2/token');
      assert.ok(token.every((e) => e.method === 'POST' && e.proof));
      if (!nonce) {
        assert.deepEqual(
          token.map((e) => e.status),
          [200],
        );
        return;
      }
      assert.deepEqual(
        token.map((e) => e.status),
        [400, 200],
      );
      assert.deepEqual(JSON.parse(token[0]!.body), { error: 'use_dpop_nonce', error_description: 'the DPoP proof must carry the nonce in DPoP-Nonce' });
    }

    test('openid-client: discovery, clientCredentialsGrant with a DPoP handle, fetchProtectedResource to the route', async () => {
      const exchanges: Exchange[] = [];
      const config = await client.discovery(new URL(gw.issuer), app.key, undefined, client.ClientSecretBasic(app.secret), {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
        [client.customFetch]: recordingFetch(exchanges),
      });
      assert.equal(config.serverMetadata().token_endpoint, `${gw.issuer}/oauth2/token`);
      const keyPair = await client.randomDPoPKeyPair();
      const DPoP = client.getDPoPHandle(config, keyPair);
      const tokens = await client.clientCredentialsGrant(config, {}, { DPoP });
      // oauth4webapi, under openid-client, lowercases token_type; on the wire it is DPoP (§5).
      assert.equal(tokens.token_type, 'dpop');
      assertTokenExchanges(exchanges);
      assert.equal(JSON.parse(exchanges.findLast((e) => e.path === '/oauth2/token')!.body).token_type, 'DPoP');

      const since = upstream.received.length;
      const res = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${gw.url}/v1/bound/42`), 'GET', undefined, undefined, { DPoP });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { upstream: true, path: '/v1/bound/42' });
      assertForwarded(since);
      // One proof, taken at once: with nonces on, the handle kept the token endpoint's (it keeps one per origin).
      assert.deepEqual(
        exchanges.filter((e) => e.path === '/v1/bound/42').map((e) => [e.proof, e.status]),
        [[true, 200]],
      );

      // A new handle of the same key knows no nonce: with nonces on, the route's use_dpop_nonce challenge (§9) is what it retries on.
      exchanges.length = 0;
      const fresh = client.getDPoPHandle(config, keyPair);
      const again = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${gw.url}/v1/bound/42`), 'GET', undefined, undefined, { DPoP: fresh });
      assert.equal(again.status, 200);
      assert.deepEqual(
        exchanges.map((e) => e.status),
        nonce ? [401, 200] : [200],
      );
    });

    /** oauth4webapi's client of the app, from the gateway's metadata, with a DPoP handle of a new ES256 key, and its client_credentials grant. */
    async function oauth4webapiClient(http: { [oauth.allowInsecureRequests]: true; [oauth.customFetch]?: ReturnType<typeof recordingFetch> }) {
      const issuer = new URL(gw.issuer);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...http }));
      const oauthClient: oauth.Client = { client_id: app.key };
      const DPoP = oauth.DPoP(oauthClient, await oauth.generateKeyPair('ES256'));
      const grant = async () =>
        oauth.processClientCredentialsResponse(as, oauthClient, await oauth.clientCredentialsGrantRequest(as, oauthClient, oauth.ClientSecretBasic(app.secret), {}, { DPoP, ...http }));
      return { DPoP, grant };
    }

    test('oauth4webapi: generateKeyPair and DPoP, clientCredentialsGrantRequest, protectedResourceRequest', async () => {
      const exchanges: Exchange[] = [];
      const http = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: recordingFetch(exchanges) } as const;
      const { DPoP, grant } = await oauth4webapiClient(http);
      const first = await grant().catch((err: unknown) => err);
      // oauth4webapi leaves the retry to its caller: its handle has kept the nonce the refusal gave (§8).
      if (nonce) assert.ok(oauth.isDPoPNonceError(first), String(first));
      const tokens = nonce ? await grant() : (first as oauth.TokenEndpointResponse);
      assert.equal(tokens.token_type, 'dpop');
      assert.equal(typeof tokens.access_token, 'string');
      assertTokenExchanges(exchanges);

      const since = upstream.received.length;
      const res = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${gw.url}/v1/bound/42`), new Headers(), null, { DPoP, ...http });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { upstream: true, path: '/v1/bound/42' });
      assertForwarded(since);
    });

    test('oauth4webapi: the token sent without the DPoP handle (as a bearer token) is refused, and nothing reaches the upstream', async () => {
      const http = { [oauth.allowInsecureRequests]: true } as const;
      const { grant } = await oauth4webapiClient(http);
      const tokens = await grant().catch((err: unknown) => (nonce && oauth.isDPoPNonceError(err) ? grant() : Promise.reject(err)));
      const since = upstream.received.length;
      // oauth4webapi throws on an answer with a WWW-Authenticate challenge; the refusal is in it.
      const refused = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${gw.url}/v1/bound/42`), new Headers(), null, http).then(
        () => assert.fail('a DPoP-bound token was taken as a bearer token'),
        (err: unknown) => err,
      );
      assert.ok(refused instanceof oauth.WWWAuthenticateChallengeError, String(refused));
      assert.equal(refused.status, 401);
      assert.equal(
        refused.response.headers.get('www-authenticate'),
        'Bearer realm="test-realm", error="invalid_token", error_description="this access token is DPoP-bound: send it with the DPoP scheme and a proof"',
      );
      assert.equal(upstream.received.length, since);
    });
  });
}
