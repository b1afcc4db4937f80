// credential-leak: a run through every way a credential enters the gateway, at debug level with
// access logs on, then a search of the whole log and of the database files for each credential.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inviteDeveloper, createDeveloper } from '../../src/admin/operations.ts';
import { linkIn, startMailbox, type Mailbox } from '../portal/mailbox.ts';
import { Visitor } from '../portal/visitor.ts';
import { basic, bearer, call, startAuthServer, startTestGateway, tokenRequest, type AuthServer, type TestGateway } from '../helpers.ts';

describe('credential-leak', () => {
  let auth: AuthServer;
  let mailbox: Mailbox;
  let gw: TestGateway;
  const secrets: [string, string][] = [];

  before(async () => {
    auth = await startAuthServer({ alice: { password: 'alice-password-1234', sub: 'user-1' } });
    mailbox = await startMailbox();
    gw = await startTestGateway({
      authServerUrl: auth.url,
      oauth: '  introspection:\n    clients:\n      - { id: backend, secret: introspection-secret-5678 }\n',
      products: '  public:\n    routes: [hello]\n    portal: true\n',
      extra: `portal:\n  listen: { port: 0 }\n  signup: open\n${mailbox.yaml}`,
    });
    gw.gateway.services.logger.level = 'debug';
    secrets.push(['introspection secret', 'introspection-secret-5678'], ['user password', 'alice-password-1234']);

    const app = await gw.client('orders', 'leaky');
    secrets.push(['app secret', app.secret]);
    const cc = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
    const pw = (await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'alice-password-1234' }, app)).body;
    const refreshed = (await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: pw.refresh_token }, app)).body;
    secrets.push(['access token', cc], ['access token', pw.access_token], ['refresh token', pw.refresh_token], ['access token', refreshed.access_token], ['refresh token', refreshed.refresh_token]);

    // Failures that carry a credential: a wrong secret, a refresh token reused, a token in the query, a bad password.
    await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: app.key, secret: 'gws_wrong-secret-9999' });
    secrets.push(['wrong secret', 'gws_wrong-secret-9999']);
    await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: pw.refresh_token }, app);
    await call(`${gw.url}/v1/orders?access_token=${cc}`);
    await tokenRequest(gw.url, { grant_type: 'password', username: 'alice', password: 'wrong-password-4321' }, app);
    await tokenRequest(gw.url, { grant_type: 'password', username: 'pasted-password-8642', password: 'x' }, app);
    secrets.push(['wrong password', 'wrong-password-4321'], ['a password typed as the username', 'pasted-password-8642']);
    await call(`${gw.url}/v1/hello`, { headers: bearer(cc) });
    await call(`${gw.url}/v1/hello?client_secret=${app.secret}`, { headers: bearer(refreshed.access_token) });
    await call(`${gw.url}/oauth2/introspect`, {
      method: 'POST',
      headers: { authorization: basic('backend', 'introspection-secret-5678'), 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${cc}`,
    });
    await call(`${gw.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${refreshed.refresh_token}`,
    });

    // The portal: a sign-up confirmed by its mailed link, a login, an invitation, a registered app, a password reset.
    const base = gw.gateway.portalUrl!;
    const origin = base.replace('127.0.0.1', 'localhost');
    const tokenIn = (link: string) => new URLSearchParams(link.split('?')[1]).get('token')!;
    const portal = new Visitor(base);
    await portal.submit('/signup', '/signup', { email: 'leak@example.com', name: 'Leak', password: 'portal-password-2468' });
    const confirmation = tokenIn(linkIn(await mailbox.next('leak@example.com'), origin));
    assert.equal((await portal.submit(`/verify?token=${confirmation}`, '/verify', { token: confirmation, email: 'leak@example.com', password: 'portal-password-2468' })).status, 303);
    secrets.push(['portal password', 'portal-password-2468'], ['session id', portal.cookie!.split('=')[1]!], ['confirmation link token', confirmation]);
    const registered = await portal.follow(await portal.submit('/apps/new', '/apps', { name: 'portal-app', product: 'public' }));
    secrets.push(['portal app secret', /id="app-secret">([^<]+)</.exec(registered.text)![1]!]);
    await createDeveloper(gw.admin, { email: 'invited@example.com', name: 'Invited' });
    const { code } = await inviteDeveloper(gw.admin, 'invited@example.com');
    await new Visitor(gw.gateway.portalUrl!).submit('/signup', '/signup', { email: 'invited@example.com', password: 'invited-password-1357', invitation: code });
    secrets.push(['invitation code', code], ['invited password', 'invited-password-1357']);
    await new Visitor(gw.gateway.portalUrl!).submit('/login', '/login', { email: 'leak@example.com', password: 'wrong-portal-password' });
    secrets.push(['wrong portal password', 'wrong-portal-password']);
    await new Visitor(base).submit('/forgot', '/forgot', { email: 'leak@example.com' });
    const reset = tokenIn(linkIn(await mailbox.next('leak@example.com'), origin));
    assert.equal((await new Visitor(base).submit(`/reset?token=${reset}`, '/reset', { token: reset, password: 'reset-password-9753' })).status, 303);
    secrets.push(['reset link token', reset], ['reset password', 'reset-password-9753']);
    await gw.gateway.services.usage.flush();
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await mailbox.close();
  });

  test('no credential appears in any log line', () => {
    const log = gw.logs.join('');
    const accessLines = log.split('\n').filter((l) => l.includes('"msg":"request"')).length;
    assert.ok(accessLines >= 10, `access logs were written (${accessLines} lines)`);
    for (const [what, value] of secrets) assert.ok(!log.includes(value), `${what} in the log`);
  });

  test('no credential appears in the database files (hashes only)', () => {
    const files = readdirSync(gw.dir).filter((f) => f.startsWith('gateway.db'));
    assert.ok(files.length >= 1);
    const bytes = Buffer.concat(files.map((f) => readFileSync(path.join(gw.dir, f))));
    for (const [what, value] of secrets) {
      assert.equal(bytes.indexOf(value), -1, `${what} in the database`);
      // A token's public id is stored (as bytes, in its digest); its random part never is.
      const random = value.replace(/^gw[a-z]+_/, '');
      if (random.length >= 64) assert.equal(bytes.indexOf(Buffer.from(random, 'base64url').subarray(16)), -1, `the random part of ${what}`);
    }
  });
});
