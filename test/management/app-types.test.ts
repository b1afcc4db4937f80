// The management API's public and confidential apps with redirect URIs: created with them, read
// back, replaced by PATCH under If-Match, each refusal a problem with src/admin's code and message;
// every answer checked against the API's own document.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { tokenRequest } from '../helpers.ts';
import { SIGN_IN } from '../sign-in-products.ts';
import { api, startManagedGateway, type ManagedGateway } from './client.ts';

describe('management API: public and confidential apps, redirect URIs', () => {
  let gw: ManagedGateway;
  let request: ReturnType<typeof api>;

  before(async () => {
    gw = await startManagedGateway(SIGN_IN);
    request = api(gw.managementUrl, (await gw.managementToken()).token);
    await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'ada@example.com', name: 'Ada' } });
  });
  after(() => gw.close());

  test('a public app: its key, no secret; its type and redirect URIs in every answer', async () => {
    const uris = ['https://spa.example.com/cb', 'http://localhost/cb'];
    const created = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ada@example.com', name: 'spa', product: 'signin', type: 'public', redirectUris: uris } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.type, 'public');
    assert.deepEqual(created.body.redirectUris, uris);
    assert.equal('secret' in created.body, false);
    const read = await request('GET', '/v1/apps/{app}', `/v1/apps/${created.body.id}`);
    assert.deepEqual({ type: read.body.type, redirectUris: read.body.redirectUris }, { type: 'public', redirectUris: uris });
    const listed = await request('GET', '/v1/apps', '/v1/apps?developer=ada@example.com&name=spa');
    assert.deepEqual(listed.body.items[0], read.body);
    const rotated = await request('POST', '/v1/apps/{app}/keys', `/v1/apps/${created.body.id}/keys`);
    assert.equal(rotated.status, 201);
    assert.equal('secret' in rotated.body, false);

    const confidential = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ada@example.com', name: 'plain', product: 'hello' } });
    assert.deepEqual({ type: confidential.body.type, redirectUris: confidential.body.redirectUris }, { type: 'confidential', redirectUris: [] });
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, confidential.body)).status, 200);
  });

  test('PATCH replaces the redirect URIs, under If-Match; a refused list changes nothing else in the same PATCH', async () => {
    const created = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ada@example.com', name: 'web', product: 'signin', redirectUris: ['https://web.example.com/a'] } });
    const path = `/v1/apps/${created.body.id}`;
    const read = await request('GET', '/v1/apps/{app}', path);
    const stale = await request('PATCH', '/v1/apps/{app}', path, { body: { redirectUris: ['https://web.example.com/b'] }, headers: { 'if-match': '"stale"' } });
    assert.equal(stale.status, 412);
    const uris = ['https://web.example.com/b', 'https://web.example.com/c'];
    const changed = await request('PATCH', '/v1/apps/{app}', path, { body: { redirectUris: uris }, headers: { 'if-match': read.headers.get('etag')! } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.redirectUris, uris);
    assert.notEqual(changed.headers.get('etag'), read.headers.get('etag'));

    const refused = await request('PATCH', '/v1/apps/{app}', path, { body: { status: 'disabled', redirectUris: ['http://web.example.com/cb'] } });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(
      { code: refused.body.code, detail: refused.body.detail },
      {
        code: 'invalid_redirect_uri',
        detail: 'the redirect URI "http://web.example.com/cb" must be https, or http on a loopback address (127.0.0.1, [::1], localhost)',
      },
    );
    const after = await request('GET', '/v1/apps/{app}', path);
    assert.deepEqual({ status: after.body.status, redirectUris: after.body.redirectUris }, { status: 'active', redirectUris: uris });
  });

  test('refusals on create: a public app of a product without authorization_code, redirect URIs missing, unwanted or bad, an unknown type', async () => {
    const create = (body: Record<string, unknown>) => request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ada@example.com', name: 'refused', ...body } });
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { product: 'hello', type: 'public' },
        'public_client_grants',
        'a public app holds no secret, so it needs the authorization_code grant, and product "hello" offers client_credentials only: register a confidential app',
      ],
      [
        { product: 'signin', type: 'public' },
        'redirect_uri_required',
        'a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in',
      ],
      [
        { product: 'hello', redirectUris: ['https://a.example.com/cb'] },
        'redirect_uri_not_allowed',
        'product "hello" does not offer the authorization_code grant, the only one that sends users to a redirect URI: its apps take none',
      ],
      [{ product: 'signin', redirectUris: ['https://a.example.com/cb#x'] }, 'invalid_redirect_uri', 'the redirect URI "https://a.example.com/cb#x" must not have a fragment'],
    ];
    for (const [body, code, detail] of cases) {
      const answer = await create(body);
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual({ code: answer.body.code, detail: answer.body.detail }, { code, detail });
    }
    const badType = await create({ product: 'signin', type: 'native', redirectUris: ['https://a.example.com/cb'] });
    assert.equal(badType.status, 400);
    assert.equal(badType.body.code, 'invalid_request');
    assert.equal((await request('GET', '/v1/apps', '/v1/apps?name=refused')).body.items.length, 0);
  });

  test('PATCH certificateAuth: a refused registration (a public app) leaves the redirect URIs of the same PATCH unchanged; a confidential app takes one, and none', async () => {
    const spa = await request('POST', '/v1/apps', '/v1/apps', {
      body: { developer: 'ada@example.com', name: 'spa-cert', product: 'signin', type: 'public', redirectUris: ['https://spa.example.com/a'] },
    });
    const path = `/v1/apps/${spa.body.id}`;
    const refused = await request('PATCH', '/v1/apps/{app}', path, {
      body: { redirectUris: ['https://spa.example.com/b'], certificateAuth: { method: 'tls_client_auth', subjectDn: 'CN=spa' } },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.deepEqual(
      { code: refused.body.code, detail: refused.body.detail },
      { code: 'invalid_certificate', detail: 'a public app does not authenticate; its tokens are bound to the certificate it presents without registering one' },
    );
    assert.deepEqual((await request('GET', '/v1/apps/{app}', path)).body.redirectUris, ['https://spa.example.com/a'], 'nothing of the PATCH was made');

    const web = await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ada@example.com', name: 'svc-cert', product: 'hello' } });
    const webPath = `/v1/apps/${web.body.id}`;
    const set = await request('PATCH', '/v1/apps/{app}', webPath, { body: { certificateAuth: { method: 'tls_client_auth', san: 'dns', value: 'svc.example.com' } } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.certificateAuth, { method: 'tls_client_auth', subject: { san: 'dns', value: 'svc.example.com' } });
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, web.body)).status, 401, 'the secret no longer authenticates');
    const cleared = await request('PATCH', '/v1/apps/{app}', webPath, { body: { certificateAuth: { method: 'none' } } });
    assert.equal(cleared.status, 200);
    assert.equal('certificateAuth' in cleared.body, false);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, web.body)).status, 200, 'the secret authenticates again');
  });
});
