// The management API attacked from outside, over real sockets: what each test names must hold
// whatever a caller sends. Where a race is the attack, the store call it races is made to run
// the other request first, so the interleaving happens every time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openSignUp } from '../../src/admin/accounts.ts';
import { AdminError } from '../../src/admin/errors.ts';
import { deleteApp } from '../../src/admin/apps.ts';
import { deleteDeveloper } from '../../src/admin/developers.ts';
import { listManagementClients, MANAGEMENT_DEVELOPER } from '../../src/admin/management-clients.ts';
import { basic, bearer, call, tokenRequest, type Answer } from '../helpers.ts';
import { api, startManagedGateway, type ManagedGateway } from './client.ts';

/**
 * The next call of `target[method]` runs `meanwhile` first (or, with `afterwards`, right after
 * the call itself): another request that lands in the middle of one operation.
 */
function interleave<T extends object>(target: T, method: keyof T & string, meanwhile: () => Promise<unknown>, afterwards = false): void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  Object.defineProperty(target, method, {
    configurable: true,
    writable: true,
    async value(...args: unknown[]) {
      Reflect.deleteProperty(target, method);
      if (!afterwards) await meanwhile();
      const result = await original.apply(target, args);
      if (afterwards) await meanwhile();
      return result;
    },
  });
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('the management API attacked', () => {
  let gw: ManagedGateway;
  let request: ReturnType<typeof api>;
  let token: string;
  let victim: { key: string; secret: string; token: string };
  let victimAppId: string;

  before(async () => {
    gw = await startManagedGateway();
    ({ token } = await gw.managementToken());
    request = api(gw.managementUrl, token);
    victim = await gw.managementToken(['apps:read'], 'victim');
    victimAppId = (await gw.admin.store.apps.findAppByKey(victim.key))!.id;
    await request('POST', '/v1/developers', '/v1/developers', { body: { email: 'ann@example.com', name: 'Ann' } });
  });
  after(() => gw.close());

  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(`${gw.managementUrl}${path}`, {
      method: 'POST',
      headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const newApp = async (name: string, product = 'hello') =>
    (await request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'ann@example.com', name, product } })).body as { id: string; key: string; secret: string };

  test('usage: the management clients’ own calls are not listed, not even asked for by their app id', async () => {
    assert.equal((await call(`${gw.managementUrl}/v1/apps`, { headers: bearer(victim.token) })).status, 200);
    const app = await newApp('counted');
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);
    const all = await request('GET', '/v1/usage', '/v1/usage');
    assert.deepEqual(
      all.body.items.map((u: { app: string; product: string }) => [u.app, u.product]),
      [[app.id, 'hello']],
    );
    assert.deepEqual((await request('GET', '/v1/usage', `/v1/usage?app=${victimAppId}`)).body, { items: [], next: null });
    assert.deepEqual((await request('GET', '/v1/usage', '/v1/usage?product=gateway-management')).body, { items: [], next: null });
  });

  test('another management client and the reserved developer: as unknown as ones that do not exist, by id, email and key', async () => {
    const reservedId = (await gw.admin.store.apps.findAppById(victimAppId))!.developerId;
    const app = await newApp('reachable');
    const refusals: [string, string, string, { body?: unknown }, string][] = [
      ['GET', '/v1/developers/{developer}', `/v1/developers/${MANAGEMENT_DEVELOPER}`, {}, 'unknown_developer'],
      ['GET', '/v1/developers/{developer}', `/v1/developers/${reservedId}`, {}, 'unknown_developer'],
      ['PATCH', '/v1/developers/{developer}', `/v1/developers/${reservedId}`, { body: { status: 'disabled' } }, 'unknown_developer'],
      ['PATCH', '/v1/developers/{developer}', '/v1/developers/Management@Gateway.Invalid%20', { body: { status: 'disabled' } }, 'unknown_developer'],
      ['DELETE', '/v1/developers/{developer}', `/v1/developers/${MANAGEMENT_DEVELOPER}`, {}, 'unknown_developer'],
      ['POST', '/v1/developers/{developer}/invitations', `/v1/developers/${reservedId}/invitations`, { body: {} }, 'unknown_developer'],
      ['GET', '/v1/apps', `/v1/apps?developer=${reservedId}`, {}, 'unknown_developer'],
      ['POST', '/v1/apps', '/v1/apps', { body: { developer: MANAGEMENT_DEVELOPER, name: 'x', product: 'hello' } }, 'unknown_developer'],
      ['POST', '/v1/apps', '/v1/apps', { body: { developer: 'ann@example.com', name: 'x', product: 'gateway-management' } }, 'unknown_product'],
      ['GET', '/v1/apps/{app}', `/v1/apps/${victimAppId}`, {}, 'unknown_app'],
      ['PATCH', '/v1/apps/{app}', `/v1/apps/${victimAppId}`, { body: { status: 'disabled' } }, 'unknown_app'],
      ['DELETE', '/v1/apps/{app}', `/v1/apps/${victimAppId}`, {}, 'unknown_app'],
      ['GET', '/v1/apps/{app}/keys', `/v1/apps/${victimAppId}/keys`, {}, 'unknown_app'],
      ['POST', '/v1/apps/{app}/keys', `/v1/apps/${victimAppId}/keys`, {}, 'unknown_app'],
      ['POST', '/v1/apps/{app}/keys/import', `/v1/apps/${victimAppId}/keys/import`, { body: { key: 'attacker-key', secret: 'attacker-secret-0123' } }, 'unknown_app'],
      ['POST', '/v1/apps/{app}/keys/{key}/revoke', `/v1/apps/${victimAppId}/keys/${victim.key}/revoke`, {}, 'unknown_app'],
      ['POST', '/v1/apps/{app}/keys/{key}/revoke', `/v1/apps/${app.id}/keys/${victim.key}/revoke`, {}, 'unknown_key'],
      ['POST', '/v1/tokens/revoke', '/v1/tokens/revoke', { body: { app: victimAppId } }, 'unknown_app'],
      ['GET', '/v1/products/{product}', '/v1/products/gateway-management', {}, 'unknown_product'],
    ];
    for (const [method, template, path, options, code] of refusals) {
      const answer = await request(method, template, path, options);
      assert.deepEqual([method, path, answer.status, answer.body.code], [method, path, 404, code]);
    }
    assert.deepEqual((await request('GET', '/v1/apps', `/v1/apps?key=${victim.key}`)).body, { items: [], next: null });
    assert.ok(!(await request('GET', '/v1/developers', '/v1/developers')).text.includes(MANAGEMENT_DEVELOPER));
    assert.ok(!(await request('GET', '/v1/apps', '/v1/apps')).text.includes(victimAppId));
    // Subjects are users': a client's key names none of its tokens.
    assert.deepEqual((await request('POST', '/v1/tokens/revoke', '/v1/tokens/revoke', { body: { subject: victim.key } })).body, { revoked: 0 });
    assert.equal((await call(`${gw.managementUrl}/v1/apps`, { headers: bearer(victim.token) })).status, 200);
  });

  test('tokens: only a management client’s, with the scope, from the management listener, ever reach an operation', async () => {
    const app = await newApp('outsider');
    const managementToken = (creds: { key: string; secret: string }, body = 'grant_type=client_credentials') =>
      call(`${gw.managementUrl}/oauth2/token`, { method: 'POST', headers: { authorization: basic(creds.key, creds.secret), ...form }, body });
    const appAtManagement = await managementToken(app);
    assert.deepEqual([appAtManagement.status, appAtManagement.body.error], [400, 'unauthorized_client']);
    const widened = await managementToken(victim, 'grant_type=client_credentials&scope=apps:read+developers:read');
    assert.deepEqual([widened.status, widened.body.error], [400, 'invalid_scope']);
    const password = await managementToken(victim, 'grant_type=password&username=a&password=b');
    assert.deepEqual([password.status, password.body.error], [400, 'unauthorized_client']);
    const refused: [string, RequestInit, number, string][] = [
      [`${gw.managementUrl}/v1/developers`, { headers: bearer(victim.token) }, 403, 'insufficient_scope'],
      [`${gw.managementUrl}/v1/developers`, { headers: { authorization: basic(victim.key, victim.secret) } }, 401, 'unauthorized'],
      [`${gw.managementUrl}/v1/developers?access_token=${token}`, {}, 400, 'invalid_request'],
      [`${gw.managementUrl}/v1/developers`, { headers: { cookie: `access_token=${token}` } }, 401, 'unauthorized'],
      [`${gw.managementUrl}/v1/developers`, { headers: bearer(`${token}x`) }, 401, 'invalid_token'],
      [`${gw.url}/v1/developers`, { headers: bearer(token) }, 404, 'not_found'],
      [`${gw.url}/v1/apps/${app.id}`, { headers: bearer(token) }, 404, 'not_found'],
    ];
    for (const [url, init, status, code] of refused) {
      const answer = await call(url, init);
      assert.deepEqual([url, answer.status, answer.body.code], [url, status, code]);
    }
  });

  test('path, query, header and body tricks: the exact refusal, never a 500', async () => {
    const app = await newApp('tricks');
    const cases: [method: string, path: string, init: RequestInit, status: number, code: string][] = [
      ['GET', '/v1/developers/', {}, 404, 'not_found'],
      ['GET', '/V1/developers', {}, 404, 'not_found'],
      ['GET', '/v1//developers', {}, 400, 'invalid_path'],
      ['GET', '/v1/developers;x=1', {}, 400, 'invalid_path'],
      ['GET', '/v1/developers/%2e%2e', {}, 404, 'not_found'],
      ['GET', '/v1/developers/a%2fb', {}, 400, 'invalid_path'],
      ['GET', '/v1/developers/%ff', {}, 400, 'invalid_path'],
      ['GET', `/v1/apps/${app.id}/keys/..%2f/revoke`, {}, 400, 'invalid_path'],
      ['GET', `/v1/developers/${'a'.repeat(7000)}`, {}, 404, 'unknown_developer'],
      ['GET', '/v1/developers/%E2%80%AEann@example.com', {}, 400, 'invalid_email'],
      ['GET', '/v1/apps/__proto__', {}, 404, 'unknown_app'],
      ['GET', '/v1/products/constructor', {}, 404, 'unknown_product'],
      ['GET', '/v1/apps?limit=0', {}, 400, 'invalid_request'],
      ['GET', '/v1/apps?limit=-1', {}, 400, 'invalid_request'],
      ['GET', '/v1/apps?limit=1e2', {}, 400, 'invalid_request'],
      ['GET', '/v1/apps?limit=99999999999999999999', {}, 400, 'invalid_request'],
      ['GET', '/v1/apps?limit=1&limit=2', {}, 400, 'invalid_request'],
      ['GET', '/v1/apps?cursor=!!!', {}, 400, 'invalid_cursor'],
      ['GET', `/v1/apps?cursor=${'A'.repeat(1025)}`, {}, 400, 'invalid_request'],
      ['GET', '/v1/usage?from=2024-06-30T23:59:60Z', {}, 400, 'invalid_request'],
      ['GET', '/v1/usage?from=2020-01-01T00:00:00Z', {}, 400, 'invalid_request'],
      ['PUT', '/v1/developers', {}, 405, 'method_not_allowed'],
      ['POST', '/v1/developers', { body: '\ufeff{"email":"bom@example.com","name":"B"}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: '{"email":"d1@example.com","em\\u0061il":"d2@example.com","name":"D"}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: '{"email":"p@example.com","name":"P","__proto__":{"verified":false}}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: '{"email":"p@example.com","name":"P","verified":false}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: JSON.stringify({ email: ' MANAGEMENT@gateway.invalid ', name: 'M' }) }, 400, 'invalid_email'],
      ['POST', '/v1/developers', { body: JSON.stringify({ email: 'n@example.com', name: 'a\u202eb' }) }, 400, 'invalid_name'],
      ['POST', '/v1/developers', { body: '{}', headers: { 'content-type': 'application/json; charset=utf-16' } }, 415, 'unsupported_media_type'],
      ['POST', '/v1/developers', { body: 'email=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'unsupported_media_type'],
      ['POST', '/v1/apps', {}, 400, 'invalid_request'],
      ['POST', `/v1/apps/${app.id}/keys`, { body: '{"key":"chosen-by-me"}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers/ann@example.com/invitations', { body: '{"validDays":"7"}' }, 400, 'invalid_request'],
      ['POST', '/v1/tokens/revoke', { body: '{"app":"x","subject":"y"}' }, 400, 'invalid_request'],
      ['POST', '/v1/developers', { body: '{"email":"i@example.com","name":"I"}', headers: { 'idempotency-key': 'a b' } }, 400, 'invalid_request'],
      ['DELETE', `/v1/apps/${app.id}`, { body: '{}' }, 400, 'invalid_request'],
      ['PATCH', `/v1/apps/${app.id}`, { body: '{"status":"disabled"}', headers: { 'if-match': '"stale", W/"x"' } }, 412, 'precondition_failed'],
    ];
    for (const [method, path, init, status, code] of cases) {
      const headers = { ...bearer(token), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers as Record<string, string>) };
      const answer = await call(`${gw.managementUrl}${path}`, { ...init, method, headers });
      assert.deepEqual([method, path.slice(0, 80), answer.status, answer.body.code], [method, path.slice(0, 80), status, code]);
    }
    const etag = (await request('GET', '/v1/apps/{app}', `/v1/apps/${app.id}`)).headers.get('etag')!;
    const weak = await request('PATCH', '/v1/apps/{app}', `/v1/apps/${app.id}`, { body: { status: 'disabled' }, headers: { 'if-match': `W/${etag}` } });
    assert.equal(weak.status, 412);
    const listed = await request('PATCH', '/v1/apps/{app}', `/v1/apps/${app.id}`, { body: { status: 'disabled' }, headers: { 'if-match': `"stale", ${etag}` } });
    assert.equal(listed.status, 200);
    assert.ok(!gw.logs.some((line) => line.includes('"level":50')), 'no request failed inside');
  });

  test('Idempotency-Key: concurrent duplicates create once; another client, another path or another body never gets the answer; no replay holds a secret', async () => {
    const body = { developer: 'ann@example.com', name: 'once', product: 'hello' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => post('/v1/apps', body, { 'idempotency-key': 'create-once' })));
    // Each of the others waits for nothing: it gets the first's answer, or is told the first still runs.
    const created = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    assert.equal(created.length, 1);
    assert.match(created[0]!.body.secret, /^gws_/);
    const { secret: _once, ...replay } = created[0]!.body;
    for (const a of answers.filter((a) => a !== created[0])) {
      if (a.status === 409) assert.equal(a.body.code, 'idempotency_key_in_use');
      else assert.deepEqual([a.status, a.headers.get('idempotent-replayed'), a.body], [201, 'true', replay]);
    }
    assert.equal((await request('GET', '/v1/apps', '/v1/apps?developer=ann@example.com&name=once')).body.items.length, 1);

    // The other client's same key is its own: the create is judged afresh (the name is taken).
    const other = await gw.managementToken(['apps:write'], 'other-writer');
    const foreign = await call(`${gw.managementUrl}/v1/apps`, {
      method: 'POST',
      headers: { ...bearer(other.token), 'content-type': 'application/json', 'idempotency-key': 'create-once' },
      body: JSON.stringify(body),
    });
    assert.deepEqual([foreign.status, foreign.body.code, foreign.headers.get('idempotent-replayed')], [409, 'duplicate_app', null]);
    const elsewhere = await post('/v1/developers', { email: 'once@example.com', name: 'Once' }, { 'idempotency-key': 'create-once' });
    assert.deepEqual([elsewhere.status, elsewhere.body.code], [422, 'idempotency_key_reused']);
    const changed = await post('/v1/apps', { ...body, name: 'twice' }, { 'idempotency-key': 'create-once' });
    assert.deepEqual([changed.status, changed.body.code], [422, 'idempotency_key_reused']);

    const invited = await post('/v1/developers/ann@example.com/invitations', {}, { 'idempotency-key': 'invite-ann' });
    const reinvited = await post('/v1/developers/ann@example.com/invitations', {}, { 'idempotency-key': 'invite-ann' });
    assert.deepEqual([reinvited.status, reinvited.headers.get('idempotent-replayed'), reinvited.body], [201, 'true', { email: 'ann@example.com', expiresAt: invited.body.expiresAt }]);
    const app = created[0]!.body as { id: string };
    const rotated = await post(`/v1/apps/${app.id}/keys`, undefined, { 'idempotency-key': 'rotate-once' });
    const rerotated = await post(`/v1/apps/${app.id}/keys`, undefined, { 'idempotency-key': 'rotate-once' });
    assert.equal(rerotated.headers.get('idempotent-replayed'), 'true');
    const { secret: _shown, ...withoutSecret } = rotated.body;
    assert.deepEqual(rerotated.body, withoutSecret);
  });

  test('key import: refused keys and secrets; a taken key leaves its app alone; an imported key works at the public token endpoint', async () => {
    const holder = await newApp('holder');
    const importer = await newApp('importer', 'orders');
    const held = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, holder);
    const imports: [{ key: string; secret: string }, number, string][] = [
      [{ key: 'importedKey01', secret: 'fifteen-chars-x' }, 400, 'invalid_request'],
      [{ key: '--help-me-now', secret: 'a-secret-of-20-chars' }, 400, 'invalid_request'],
      [{ key: '-importedKey01', secret: 'a-secret-of-20-chars' }, 400, 'invalid_request'],
      [{ key: 'imported/Key01', secret: 'a-secret-of-20-chars' }, 400, 'invalid_request'],
      [{ key: 'imported Key01', secret: 'a-secret-of-20-chars' }, 400, 'invalid_request'],
      [{ key: 'importedKey01\n', secret: 'a-secret-of-20-chars' }, 400, 'invalid_request'],
      [{ key: 'importedKey01', secret: 'é-is-not-visible-ascii' }, 400, 'invalid_secret'],
      [{ key: 'importedKey01', secret: 'a\ttab-is-a-control-char' }, 400, 'invalid_secret'],
      [{ key: holder.key, secret: 'takeover-attempt-0123' }, 409, 'key_taken'],
      [{ key: victim.key, secret: 'takeover-attempt-0123' }, 409, 'key_taken'],
    ];
    for (const [input, status, code] of imports) {
      const answer = await request('POST', '/v1/apps/{app}/keys/import', `/v1/apps/${importer.id}/keys/import`, { body: input });
      assert.deepEqual([input.key, answer.status, answer.body.code], [input.key, status, code]);
    }
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: holder.key, secret: 'takeover-attempt-0123' })).status, 401);
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, holder)).status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(held.body.access_token) })).status, 200);

    const imported = { key: 'Apigee.consumer_key~01', secret: 'an apigee secret: with spaces & symbols!' };
    const answer = await request('POST', '/v1/apps/{app}/keys/import', `/v1/apps/${importer.id}/keys/import`, { body: imported });
    assert.equal(answer.status, 201);
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, imported);
    assert.deepEqual([issued.status, (await call(`${gw.url}/v1/orders`, { headers: bearer(issued.body.access_token) })).status], [200, 502]);
    const atManagement = await call(`${gw.managementUrl}/oauth2/token`, {
      method: 'POST',
      headers: form,
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: imported.key, client_secret: imported.secret }).toString(),
    });
    assert.deepEqual([atManagement.status, atManagement.body.error], [400, 'unauthorized_client']);
  });

  test('secrets: no answer but the one that made it, and no log line, ever holds an app secret, an imported secret, a token or an invitation code', async () => {
    const made = await post('/v1/apps', { developer: 'ann@example.com', name: 'secretive', product: 'hello' });
    const rotated = await post(`/v1/apps/${made.body.id}/keys`);
    const invitation = await post('/v1/developers/ann@example.com/invitations', {});
    const tried = ['short-secret-15', 'a-refused-imported-secret-é', 'the-imported-secret-0123'];
    await post(`/v1/apps/${made.body.id}/keys/import`, { key: 'refusedKey01', secret: tried[0] });
    await post(`/v1/apps/${made.body.id}/keys/import`, { key: 'refusedKey02', secret: tried[1] });
    await post(`/v1/apps/${made.body.id}/keys/import`, { key: 'takenKey0001', secret: tried[2] });
    await post(`/v1/apps/${made.body.id}/keys/import`, { key: 'takenKey0001', secret: 'another-secret-01234' });
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: rotated.body.key, secret: rotated.body.secret });
    const secrets = [made.body.secret, rotated.body.secret, invitation.body.code, ...tried, victim.secret, victim.token, token, issued.body.access_token];
    for (const s of secrets) assert.equal(typeof s, 'string');

    const reads: Answer[] = [
      await request('GET', '/v1/apps/{app}', `/v1/apps/${made.body.id}`),
      await request('GET', '/v1/apps', '/v1/apps'),
      await request('GET', '/v1/apps/{app}/keys', `/v1/apps/${made.body.id}/keys`),
      await request('GET', '/v1/developers/{developer}', '/v1/developers/ann@example.com'),
    ];
    for (const answer of reads) {
      const seen = `${answer.text}${JSON.stringify([...answer.headers])}`;
      for (const s of secrets) assert.ok(!seen.includes(s), `an answer holds ${s.slice(0, 6)}…`);
    }
    for (const [answer, shown] of [
      [made, made.body.secret],
      [rotated, rotated.body.secret],
      [invitation, invitation.body.code],
    ] as const) {
      assert.ok(!JSON.stringify([...answer.headers]).includes(shown));
    }
    const logs = gw.logs.join('');
    for (const s of secrets) assert.ok(!logs.includes(s), `a log line holds ${s.slice(0, 6)}…`);
  });
});

describe('the management API when a concurrent call deletes what it works on', () => {
  let gw: ManagedGateway;
  let request: ReturnType<typeof api>;

  before(async () => {
    gw = await startManagedGateway();
    request = api(gw.managementUrl, (await gw.managementToken()).token);
  });
  after(() => gw.close());

  const developer = async (email: string) => (await request('POST', '/v1/developers', '/v1/developers', { body: { email, name: 'Gone' } })).body as { id: string };
  const app = async (email: string) => (await request('POST', '/v1/apps', '/v1/apps', { body: { developer: email, name: 'gone', product: 'hello' } })).body as { id: string; key: string };

  test('a developer deleted while it is changed, invited or given an app: 404 unknown_developer, never a 500', async () => {
    const { accounts, apps } = gw.gateway.services.store;
    const races: [string, () => void, () => Promise<Answer>][] = [
      [
        'patch@example.com',
        () => interleave(accounts, 'setDeveloperStatus', () => deleteDeveloper(gw.admin, 'patch@example.com')),
        () => request('PATCH', '/v1/developers/{developer}', '/v1/developers/patch@example.com', { body: { status: 'disabled' } }),
      ],
      [
        'invite@example.com',
        () => interleave(accounts, 'setInvitation', () => deleteDeveloper(gw.admin, 'invite@example.com')),
        () => request('POST', '/v1/developers/{developer}/invitations', '/v1/developers/invite@example.com/invitations', { body: {} }),
      ],
      [
        'register@example.com',
        () => interleave(apps, 'createApp', () => deleteDeveloper(gw.admin, 'register@example.com')),
        () => request('POST', '/v1/apps', '/v1/apps', { body: { developer: 'register@example.com', name: 'late', product: 'hello' } }),
      ],
    ];
    for (const [email, race, run] of races) {
      await developer(email);
      race();
      const answer = await run();
      assert.deepEqual([email, answer.status, answer.body.code], [email, 404, 'unknown_developer']);
    }
    assert.ok(!gw.logs.some((line) => line.includes('"level":50')), 'no request failed inside');
  });

  test('an app deleted while its key is rotated or revoked: 404 unknown_app, never a 500', async () => {
    const { apps } = gw.gateway.services.store;
    await developer('apps@example.com');
    const rotating = await app('apps@example.com');
    interleave(apps, 'rotateCredential', () => deleteApp(gw.admin, { id: rotating.id }));
    const rotated = await request('POST', '/v1/apps/{app}/keys', `/v1/apps/${rotating.id}/keys`);
    assert.deepEqual([rotated.status, rotated.body.code], [404, 'unknown_app']);

    const revoking = await app('apps@example.com');
    interleave(apps, 'revokeCredential', () => deleteApp(gw.admin, { id: revoking.id }), true);
    const revoked = await request('POST', '/v1/apps/{app}/keys/{key}/revoke', `/v1/apps/${revoking.id}/keys/${revoking.key}/revoke`);
    assert.deepEqual([revoked.status, revoked.body.code], [404, 'unknown_app']);
    assert.ok(!gw.logs.some((line) => line.includes('"level":50')), 'no request failed inside');
  });
});

test('portal sign-up refuses the management clients’ reserved address, which stays theirs', async () => {
  const gw = await startManagedGateway({ extra: 'portal:\n  listen: { port: 0 }\n  signup: open\nmail:\n  log: true\n  from: portal@example.com\n' });
  try {
    const deps = { ...gw.admin, portal: gw.admin.portal! };
    await assert.rejects(
      openSignUp(deps, { email: 'Management@Gateway.invalid', name: 'Squatter', password: 'correct horse battery staple 42', clientIp: '192.0.2.1' }),
      (err: unknown) => err instanceof AdminError && err.code === 'invalid_email',
    );
    await gw.managementToken(['developers:read'], 'first');
    const [client] = await listManagementClients(gw.admin);
    const owner = await gw.admin.store.accounts.findDeveloperById(client!.developerId);
    assert.deepEqual([owner?.email, owner?.name, owner?.verified], [MANAGEMENT_DEVELOPER, 'Management clients', true]);
  } finally {
    await gw.close();
  }
});
