// Apps of a product that enables the password grant wait for an operator's approval when a
// developer registers them in the portal; routes that serve a user's data require a token issued
// for a user. Real HTTP to a gateway with its portal, and the real CLI for the approval.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.ts';
import { bearer, call, configYaml, startAuthServer, startTestGateway, tokenRequest, type AuthServer, type TestGateway } from '../helpers.ts';
import { signUpAndConfirm, startMailbox, type Mailbox } from '../portal/mailbox.ts';
import type { Visitor } from '../portal/visitor.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PASSWORD = 'correct horse battery';

/** `gateway …args`, as an operator runs it. */
function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['bin/gateway.js', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const ROUTES = `
  user-orders:
    method: GET
    path: /v1/user-orders
    upstream: mock
    scopes: [orders:read]
    requireSubject: true
`;
const PRODUCTS = `
  shop:
    displayName: Shop
    routes: [user-orders]
    scopes: [orders:read]
    grants: [password, refresh_token, client_credentials]
    authServer: users
    portal: true
  greetings:
    routes: [hello]
    portal: true
`;
const PORTAL = `portal:
  listen: { port: 0 }
  signup: open
`;

describe('approval of apps registered in the portal', () => {
  let auth: AuthServer;
  let gw: TestGateway;
  let portal: string;
  let mailbox: Mailbox;
  before(async () => {
    auth = await startAuthServer({ bob: { password: 'builder', sub: 'user-bob' } });
    mailbox = await startMailbox();
    gw = await startTestGateway({ authServerUrl: auth.url, routes: ROUTES, products: PRODUCTS, extra: PORTAL + mailbox.yaml });
    portal = gw.gateway.portalUrl!;
  });
  after(async () => {
    await gw.close();
    await auth.close();
    await mailbox.close();
  });

  async function registered(product: string, name: string): Promise<{ visitor: Visitor; page: string; key: string; secret: string; id: string }> {
    const { visitor } = await signUpAndConfirm(portal, mailbox, { email: `${name}@example.com`, name: 'Dev', password: PASSWORD });
    const page = await visitor.follow(await visitor.submit('/apps/new', '/apps', { name, product }));
    assert.equal(page.status, 200, page.text);
    return {
      visitor,
      page: page.text,
      key: /id="app-key">([^<]+)</.exec(page.text)![1]!,
      secret: /id="app-secret">([^<]+)</.exec(page.text)![1]!,
      id: /href="\/apps\/([^"]+)">Go to the app/.exec(page.text)![1]!,
    };
  }

  test('the default: manual with the password grant, auto without; a product can say either', () => {
    const config = parseConfig(
      configYaml({ products: `  open-shop:\n    routes: [orders]\n    scopes: [orders:read]\n    grants: [password]\n    authServer: users\n    approval: auto\n` }),
      'gateway.yaml',
      { env: {} },
    );
    assert.equal(config.products.get('orders')!.approval, 'manual');
    assert.equal(config.products.get('hello')!.approval, 'auto');
    assert.equal(config.products.get('open-shop')!.approval, 'auto');
  });

  test('pending app: its key gets 401 invalid_client until an operator approves it with `gateway admin apps approve`', async () => {
    const app = await registered('shop', 'pending-app');
    assert.match(app.page, /The API team approves apps for this product before they work/);
    assert.match(
      (await app.visitor.get('/apps')).text,
      /pending-app<\/a><\/td><td data-label="API product">Shop<\/td><td data-label="Type">confidential<\/td><td data-label="Status">waiting for approval<\/td>/,
    );
    assert.match((await app.visitor.get(`/apps/${app.id}`)).text, /<dt>Status<\/dt><dd>waiting for approval<\/dd>/);
    const calls = auth.calls.length;
    for (const params of [{ grant_type: 'password', username: 'bob', password: 'builder' }, { grant_type: 'client_credentials' }]) {
      const res = await tokenRequest(gw.url, params, app);
      assert.equal(res.status, 401, res.text);
      assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' });
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="test-realm", charset="UTF-8"');
    }
    assert.equal(auth.calls.length, calls, 'the authorization server was not asked');

    const listed = await cli(['admin', 'apps', 'list', '--developer', 'pending-app@example.com', '--config', gw.configFile]);
    assert.match(listed.stdout, /^pending-app@example\.com {2}pending-app {2}shop {5}confidential {2}pending {2}/m);
    const approved = await cli(['admin', 'apps', 'approve', app.key, '--config', gw.configFile]);
    assert.deepEqual([approved.code, approved.stdout], [0, 'app "pending-app" of pending-app@example.com is approved\n']);
    // On stderr, only the approval's audit line.
    assert.match(approved.stderr, /^\{[^\n]*"audit":"app\.approve"[^\n]*\}\n$/);

    const res = await tokenRequest(gw.url, { grant_type: 'password', username: 'bob', password: 'builder' }, app);
    assert.equal(res.status, 200, res.text);
    assert.equal((await call(`${gw.url}/v1/user-orders`, { headers: bearer(res.body.access_token) })).status, 200);
    assert.match((await app.visitor.get(`/apps/${app.id}`)).text, /<dt>Status<\/dt><dd>active<\/dd>/);

    // By developer and name too; approving again changes nothing; an unknown key is an error.
    const again = await cli(['admin', 'apps', 'approve', '--developer', 'pending-app@example.com', '--name', 'pending-app', '--json', '--config', gw.configFile]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).approval, 'approved');
    assert.deepEqual(await cli(['admin', 'apps', 'approve', 'no-such-key', '--config', gw.configFile]), { code: 1, stdout: '', stderr: 'error: no app with key no-such-key\n' });
  });

  test('an app of an approval: auto product, and an app an operator creates, work at once', async () => {
    const app = await registered('greetings', 'auto-app');
    assert.doesNotMatch(app.page, /approves apps/);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 200);
    const operatorMade = await gw.client('shop');
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, operatorMade)).status, 200);
  });

  test('requireSubject: a client_credentials token gets 403 insufficient_scope; a password token and its refreshed one get 200', async () => {
    const app = await gw.client('shop');
    const own = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(own.status, 200);
    const refused = await call(`${gw.url}/v1/user-orders`, { headers: bearer(own.body.access_token) });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('content-type'), 'application/problem+json');
    assert.equal(
      refused.headers.get('www-authenticate'),
      'Bearer realm="test-realm", error="insufficient_scope", error_description="this route needs a token issued for a user (password or refresh_token grant)", scope="orders:read"',
    );
    assert.deepEqual(refused.body, {
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: 'this route needs a token issued for a user (password or refresh_token grant)',
      code: 'insufficient_scope',
    });
    const user = await tokenRequest(gw.url, { grant_type: 'password', username: 'bob', password: 'builder' }, app);
    assert.equal(user.status, 200, user.text);
    assert.equal((await call(`${gw.url}/v1/user-orders`, { headers: bearer(user.body.access_token) })).status, 200);
    const refreshed = await tokenRequest(gw.url, { grant_type: 'refresh_token', refresh_token: user.body.refresh_token }, app);
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal((await call(`${gw.url}/v1/user-orders`, { headers: bearer(refreshed.body.access_token) })).status, 200);
  });
});
