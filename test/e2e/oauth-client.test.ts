// A standard OAuth client library (simple-oauth2) getting and refreshing tokens the way users' code would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ClientCredentials, ResourceOwnerPassword } from 'simple-oauth2';
import { bearer, call, startAuthServer, startTestGateway, startUpstream, type AuthServer, type TestGateway, type Upstream } from '../helpers.ts';

interface LibraryError {
  output?: { statusCode: number };
  data?: { payload?: unknown };
}

describe('simple-oauth2 against the gateway', () => {
  let auth: AuthServer;
  let upstream: Upstream;
  let gw: TestGateway;
  before(async () => {
    auth = await startAuthServer();
    upstream = await startUpstream();
    gw = await startTestGateway({ authServerUrl: auth.url, upstreamUrl: upstream.url });
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await upstream.close();
  });

  const settings = (app: { key: string; secret: string }, method: 'header' | 'body') => ({
    client: { id: app.key, secret: app.secret },
    auth: { tokenHost: gw.url, tokenPath: '/oauth2/token' },
    options: { authorizationMethod: method },
  });

  for (const method of ['header', 'body'] as const) {
    test(`client credentials, client authentication in the ${method}`, async () => {
      const app = await gw.client('hello');
      const token = await new ClientCredentials(settings(app, method)).getToken({ scope: 'hello:read' });
      assert.equal(token.token.token_type, 'Bearer');
      assert.equal(token.token.expires_in, 3600);
      assert.equal(token.token.refresh_token, undefined);
      assert.equal(token.expired(), false);
      const res = await call(`${gw.url}/v1/hello`, { headers: bearer(token.token.access_token as string) });
      assert.equal(res.status, 200);
    });
  }

  test('password grant, then refresh twice; the old refresh token is spent', async () => {
    const app = await gw.client('orders');
    const client = new ResourceOwnerPassword(settings(app, 'header'));
    const first = await client.getToken({ username: 'alice', password: 'wonderland' });
    assert.equal(first.token.refresh_token_expires_in, '3600');
    const second = await first.refresh();
    const third = await second.refresh({ scope: 'orders:read' });
    assert.notEqual(second.token.access_token, first.token.access_token);
    assert.notEqual(third.token.refresh_token, second.token.refresh_token);
    const res = await call(`${gw.url}/v1/orders`, { headers: bearer(third.token.access_token as string) });
    assert.equal(res.status, 200);
    assert.equal(upstream.received.at(-1)?.headers['x-gateway-subject'], 'user-1');

    // simple-oauth2 raises a Boom error; the response body is in data.payload.
    await assert.rejects(first.refresh(), (err: LibraryError) => {
      assert.equal(err.output?.statusCode, 401);
      assert.deepEqual(err.data?.payload, { error: 'invalid_grant', error_description: 'the refresh token is invalid, expired or revoked' });
      return true;
    });
  });

  test('wrong user password: the library sees 401 invalid_grant', async () => {
    const app = await gw.client('orders');
    await assert.rejects(new ResourceOwnerPassword(settings(app, 'header')).getToken({ username: 'alice', password: 'nope' }), (err: LibraryError) => {
      assert.equal(err.output?.statusCode, 401);
      assert.equal((err.data?.payload as { error?: string } | undefined)?.error, 'invalid_grant');
      return true;
    });
  });
});
