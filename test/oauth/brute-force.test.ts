// Guessing passwords through the password grant: throttled per username and per client, whatever
// the caller's address or the way the client authenticates.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { basic, call, startAuthServer, startTestGateway, type Answer, type AuthServer, type TestGateway } from '../helpers.ts';

describe('password grant brute force', () => {
  let auth: AuthServer;
  let gw: TestGateway;
  let now = Date.now();

  before(async () => {
    auth = await startAuthServer({ alice: { password: 'wonderland' }, bob: { password: 'builder' }, carol: { password: 'singer' } });
    gw = await startTestGateway({ authServerUrl: auth.url }, { clock: () => now });
  });
  after(async () => {
    await gw.close();
    await auth.close();
  });
  beforeEach(() => {
    now += 60 * 60_000; // every test starts after the previous one's windows ended
  });

  /** A password-grant request, authenticating with Basic or in the form, from a claimed address. */
  function attempt(app: { key: string; secret: string }, username: string, password: string, options: { form?: boolean; xff?: string } = {}): Promise<Answer> {
    const params: Record<string, string> = { grant_type: 'password', username, password };
    if (options.form === true) Object.assign(params, { client_id: app.key, client_secret: app.secret });
    return call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(options.form === true ? {} : { authorization: basic(app.key, app.secret) }),
        ...(options.xff === undefined ? {} : { 'x-forwarded-for': options.xff }),
      },
      body: new URLSearchParams(params).toString(),
    });
  }

  test('password-bruteforce-user: the 6th attempt on a username in 15 minutes is 429, right password, new address or form auth alike', async () => {
    const app = await gw.client('orders');
    for (let i = 0; i < 5; i++) {
      const res = await attempt(app, 'alice', `guess-${i}`, { xff: `203.0.113.${i}`, form: i % 2 === 0 });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'invalid_grant');
    }
    const calls = auth.calls.length;
    for (const options of [{}, { xff: '198.51.100.9' }, { form: true }]) {
      const res = await attempt(app, 'alice', 'wonderland', options);
      assert.equal(res.status, 429);
      assert.deepEqual(res.body, { error: 'slow_down', error_description: 'too many failed password attempts; try again later' });
      assert.equal(res.headers.get('retry-after'), '900');
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
    assert.equal(auth.calls.length, calls, 'the authorization server was not asked');
    assert.equal((await attempt(app, 'bob', 'builder')).status, 200, 'another username');
    assert.equal((await attempt(await gw.client('orders'), 'alice', 'wonderland')).status, 429, 'another client: the username is still throttled');
    now += 15 * 60_000;
    assert.equal((await attempt(app, 'alice', 'wonderland')).status, 200, 'the window ended');
  });

  test('password-bruteforce-username-variants: case, spaces and compatibility forms share one count', async () => {
    const app = await gw.client('orders');
    for (const name of ['Alice', 'ALICE ', ' alice', 'ａｌｉｃｅ', 'aLiCe']) assert.equal((await attempt(app, name, 'guess')).status, 401, name);
    assert.equal((await attempt(app, 'alice', 'wonderland')).status, 429);
  });

  test('password-bruteforce-parallel: a burst of guesses cannot slip past the client\'s limit', async () => {
    const app = await gw.client('orders');
    const before = auth.calls.length;
    const answers = await Promise.all(Array.from({ length: 70 }, (_, i) => attempt(app, `burst-${i}`, 'guess')));
    assert.equal(answers.filter((a) => a.status === 401).length, 50);
    assert.equal(answers.filter((a) => a.status === 429).length, 20);
    assert.equal(auth.calls.length - before, 50, 'the authorization server was asked 50 times, not 70');
  });

  test('a success clears the username\'s count', async () => {
    const app = await gw.client('orders');
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) assert.equal((await attempt(app, 'carol', `nope-${i}`)).status, 401);
      assert.equal((await attempt(app, 'carol', 'singer')).status, 200);
    }
  });

  test('password-bruteforce-client: after 50 failures a client gets 429 for any username', async () => {
    const app = await gw.client('orders');
    for (let i = 0; i < 50; i++) {
      const res = await attempt(app, `user-${i}`, 'guess', { form: i % 2 === 1, xff: `192.0.2.${i}` });
      assert.equal(res.status, 401, `attempt ${i}`);
    }
    const res = await attempt(app, 'bob', 'builder');
    assert.equal(res.status, 429);
    assert.equal(res.body.error, 'slow_down');
    // A new key for the same app does not bring a new budget.
    const { rotateKey } = await import('../../src/admin/operations.ts');
    const rotated = await rotateKey(gw.admin, { key: app.key });
    assert.equal((await attempt({ key: rotated.key, secret: rotated.secret }, 'bob', 'builder')).status, 429);
    assert.equal((await attempt(await gw.client('orders'), 'bob', 'builder')).status, 200, 'another client is not throttled');
  });
});
