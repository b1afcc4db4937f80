// Public and confidential apps with redirect URIs, through src/admin as `gateway admin`, the portal
// and the management API call it: what each registers, the refusals (exact code and message), the
// audit lines, and what client authentication reads through the cache after a change.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as ops from '../../src/admin/operations.ts';
import { AdminError } from '../../src/admin/errors.ts';
import { importKey } from '../../src/admin/keys.ts';
import { secretHash } from '../../src/crypto.ts';
import { startTestGateway, type TestGateway } from '../helpers.ts';
import { SIGN_IN } from '../sign-in-products.ts';

const refusal = (code: string, message: string) => (err: unknown) => {
  assert.ok(err instanceof AdminError, String(err));
  assert.deepEqual({ code: err.code, message: err.message }, { code, message });
  return true;
};

describe('public and confidential apps with redirect URIs (src/admin)', () => {
  let gw: TestGateway;
  const developer = 'ada@example.com';
  /** The audit lines of `action` written since `mark`. */
  const audits = (mark: number, action: string) =>
    gw.logs
      .slice(mark)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.audit === action)
      .map(({ time: _t, pid: _p, hostname: _h, ...line }) => line);

  before(async () => {
    gw = await startTestGateway(SIGN_IN);
    await ops.createDeveloper(gw.admin, { email: developer, name: 'Ada' });
  });
  after(() => gw.close());

  test('a public app: a key and no secret, its redirect URIs in order, the type in the audit line', async () => {
    const mark = gw.logs.length;
    const uris = ['https://spa.example.com/callback', 'http://127.0.0.1/cb'];
    const created = await ops.createApp(gw.admin, { developer, name: 'spa', product: 'signin', type: 'public', redirectUris: uris });
    assert.equal(created.secret, undefined);
    assert.equal(created.app.type, 'public');
    assert.deepEqual(created.app.redirectUris, uris);
    assert.deepEqual(audits(mark, 'app.register'), [
      {
        level: 30,
        audit: 'app.register',
        actor: { kind: 'operator', user: 'test' },
        developer: { id: created.app.developerId, email: developer },
        app: { id: created.app.id, name: 'spa', product: 'signin', type: 'public' },
        key: created.key,
        approval: 'approved',
        redirectUris: uris,
        msg: 'app registered',
      },
    ]);
    // The credential's hash is of bytes thrown away: no secret of any kind matches it, not even an empty one.
    const client = await gw.gateway.services.store.cache.findClient(created.key);
    assert.ok(client);
    assert.equal(client.app.type, 'public');
    assert.equal(client.secretHash.length, 32);
    for (const guess of ['', created.key, 'undefined']) assert.ok(!client.secretHash.equals(secretHash(gw.admin.secretKey, guess)), guess);
  });

  test('a confidential app of a product that signs users in gets a secret and its redirect URIs; a public app of a product with client_credentials too', async () => {
    const web = await ops.createApp(gw.admin, { developer, name: 'web', product: 'signin', redirectUris: ['https://web.example.com/cb'] });
    assert.match(web.secret, /^gws_/);
    assert.equal(web.app.type, 'confidential');
    const cli = await ops.createApp(gw.admin, { developer, name: 'cli', product: 'mixed', type: 'public', redirectUris: ['com.example.cli:/done'] });
    assert.equal(cli.secret, undefined);
  });

  test('refusals: a public app of a product without authorization_code; redirect URIs missing, not wanted, or not registrable', async () => {
    const create = (product: string, more: { type?: 'public'; redirectUris?: string[] }) => ops.createApp(gw.admin, { developer, name: `refused-${product}`, product, ...more });
    await assert.rejects(
      create('orders', { type: 'public' }),
      refusal(
        'public_client_grants',
        'a public app holds no secret, so it needs the authorization_code grant, and product "orders" offers password, refresh_token, client_credentials only: register a confidential app',
      ),
    );
    await assert.rejects(
      create('signin', { type: 'public' }),
      refusal('redirect_uri_required', 'a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in'),
    );
    await assert.rejects(
      create('hello', { redirectUris: ['https://a.example.com/cb'] }),
      refusal('redirect_uri_not_allowed', 'product "hello" does not offer the authorization_code grant, the only one that sends users to a redirect URI: its apps take none'),
    );
    const cases: [string, string][] = [
      ['https://a.example.com/cb#top', 'the redirect URI "https://a.example.com/cb#top" must not have a fragment'],
      ['http://a.example.com/cb', 'the redirect URI "http://a.example.com/cb" must be https, or http on a loopback address (127.0.0.1, [::1], localhost)'],
      ['javascript:alert(1)', 'the redirect URI "javascript:alert(1)" must be https, http on a loopback address, or a private-use scheme in reverse domain order (com.example.app:/callback)'],
      ['/relative', 'the redirect URI "/relative" must be an absolute URI'],
      ['HTTPS://A.example.com/cb', 'the redirect URI "HTTPS://A.example.com/cb" must be written as "https://a.example.com/cb"'],
    ];
    for (const [uri, message] of cases) await assert.rejects(create('signin', { redirectUris: ['https://ok.example.com/cb', uri] }), refusal('invalid_redirect_uri', message));
    await assert.rejects(
      create('signin', { redirectUris: ['https://a.example.com/cb', 'https://a.example.com/cb'] }),
      refusal('invalid_redirect_uri', 'the redirect URI "https://a.example.com/cb" is listed twice'),
    );
    const eleven = Array.from({ length: 11 }, (_, i) => `https://a.example.com/cb${i}`);
    await assert.rejects(create('signin', { redirectUris: eleven }), refusal('invalid_redirect_uri', 'an app has at most 10 redirect URIs, not 11'));
    const long = `https://a.example.com/${'x'.repeat(2000)}`;
    await assert.rejects(create('signin', { redirectUris: [long] }), refusal('invalid_redirect_uri', `the redirect URI "${long.slice(0, 100)}…" must be at most 2000 characters`));
    assert.deepEqual(
      (await ops.listApps(gw.admin, { developer })).filter((a) => a.name.startsWith('refused-')),
      [],
      'nothing was written',
    );
  });

  test('replacing the redirect URIs: the cached client reads the new ones; the same rules; an audit line', async () => {
    const { app, key } = await ops.createApp(gw.admin, { developer, name: 'replaced', product: 'signin', type: 'public', redirectUris: ['https://old.example.com/cb'] });
    const { store } = gw.gateway.services;
    assert.deepEqual((await store.cache.findClient(key))?.app.redirectUris, ['https://old.example.com/cb'], 'cached');
    const mark = gw.logs.length;
    const uris = ['https://new.example.com/cb', 'http://[::1]/cb'];
    const updated = await ops.setRedirectUris(gw.admin, { key }, uris);
    assert.deepEqual(updated.redirectUris, uris);
    assert.deepEqual(
      updated.credentials.map((c) => c.key),
      [key],
    );
    assert.deepEqual((await store.cache.findClient(key))?.app.redirectUris, uris);
    assert.deepEqual(audits(mark, 'app.redirect_uris'), [
      {
        level: 30,
        audit: 'app.redirect_uris',
        actor: { kind: 'operator', user: 'test' },
        developer: { id: app.developerId, email: developer },
        app: { id: app.id, name: 'replaced', product: 'signin', type: 'public' },
        redirectUris: uris,
        msg: 'app redirect URIs replaced',
      },
    ]);
    await assert.rejects(
      ops.setRedirectUris(gw.admin, { key }, []),
      refusal('redirect_uri_required', 'a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in'),
    );
    await assert.rejects(ops.setRedirectUris(gw.admin, { key }, ['https://x.example.com/#']), refusal('invalid_redirect_uri', 'the redirect URI "https://x.example.com/#" must not have a fragment'));
    assert.deepEqual((await ops.findApp(gw.admin, { key })).redirectUris, uris, 'unchanged by a refusal');
    const plain = await gw.client('hello');
    await assert.rejects(
      ops.setRedirectUris(gw.admin, { key: plain.key }, ['https://a.example.com/cb']),
      refusal('redirect_uri_not_allowed', 'product "hello" does not offer the authorization_code grant, the only one that sends users to a redirect URI: its apps take none'),
    );
    await assert.rejects(ops.setRedirectUris(gw.admin, { key: 'no-such-key' }, uris), refusal('unknown_app', 'no app with key no-such-key'));
  });

  test("a public app's rotation gives a new key and no secret; no key with a secret is imported for it", async () => {
    const { key } = await ops.createApp(gw.admin, { developer, name: 'rotated', product: 'signin', type: 'public', redirectUris: ['https://r.example.com/cb'] });
    const rotated = await ops.rotateKey(gw.admin, { key });
    assert.equal(rotated.secret, undefined);
    assert.notEqual(rotated.key, key);
    assert.equal((await gw.gateway.services.store.cache.findClient(rotated.key))?.app.type, 'public');
    await assert.rejects(
      importKey(gw.admin, { key }, { key: 'imported-key-0001', secret: 'an-imported-secret-00000001' }),
      refusal('public_client_secret', 'the app "rotated" is public: it holds no secret, so no key with a secret can be imported for it'),
    );
  });
});
