// Guessing passwords through the password grant: slowed per username and app, per username across
// apps and per app, whatever the caller's address or the way the client authenticates; and no
// app can lock a user out of the others.
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

  const SLOW_DOWN = { error: 'slow_down', error_description: 'too many failed password attempts; try again later' };

  test('password-bruteforce-user: after 5 failures one app must wait 1 s, 2 s, 4 s … between attempts on a username, right password or not, whatever its address or client authentication', async () => {
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
      assert.deepEqual(res.body, SLOW_DOWN);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
    assert.equal(auth.calls.length, calls, 'the authorization server was not asked');
    for (const wait of [1, 2, 4, 8]) {
      now += wait * 1000;
      assert.equal((await attempt(app, 'alice', 'still-guessing')).status, 401, `after waiting ${wait} s`);
      const refused = await attempt(app, 'alice', 'wonderland');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), String(wait * 2), 'the wait doubles');
    }
    now += 16_000;
    assert.equal((await attempt(app, 'alice', 'wonderland')).status, 200, 'waited: the right password gets in');
    for (let i = 0; i < 5; i++) assert.equal((await attempt(app, 'alice', `again-${i}`)).status, 401, 'the success cleared the count');
  });

  test('password lockout: a stranger app cannot lock bob out of the real app', async () => {
    const stranger = await gw.client('orders');
    const real = await gw.client('orders');
    for (let i = 0; i < 8; i++) {
      const res = await attempt(stranger, 'BOB ', `guess-${i}`);
      assert.equal(res.status, i < 5 ? 401 : 429, `stranger attempt ${i}`);
    }
    const res = await attempt(real, 'bob', 'builder');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal((await attempt(stranger, 'bob', 'builder')).status, 429, 'the stranger only slowed itself');
  });

  test('password lockout ceiling: many apps together slow the apps failing for a username by at most a minute, never lock it', async () => {
    const apps = await Promise.all(Array.from({ length: 11 }, () => gw.client('orders')));
    // 10 apps × 5 failures: 50, the ceiling across apps.
    for (const app of apps.slice(0, 10)) for (let i = 0; i < 5; i++) assert.equal((await attempt(app, 'carol', `x-${i}`)).status, 401);
    const last = apps[10]!;
    assert.equal((await attempt(last, 'carol', 'x')).status, 401, 'an 11th app, clean so far, is admitted (and counted: 51)');
    const refused = await attempt(last, 'carol', 'singer');
    assert.equal(refused.status, 429, 'having failed, the 11th app waits out the ceiling');
    assert.deepEqual(refused.body, SLOW_DOWN);
    assert.equal(refused.headers.get('retry-after'), '2', '51 failures across apps: 2 s, where its own 1 failure is free');
    now += 2000;
    assert.equal((await attempt(last, 'carol', 'singer')).status, 200);
    // A long run of failures never makes the wait longer than a minute.
    for (const app of apps.slice(0, 10)) for (let i = 0; i < 5; i++) await attempt(app, 'dave', `y-${i}`);
    for (let i = 0; i < 12; i++) {
      now += 60_000;
      assert.equal((await attempt(apps[i % 10]!, 'dave', `z-${i}`)).status, 401, `after a minute (${i})`);
    }
    const capped = await attempt(apps[5]!, 'dave', 'anything');
    assert.equal(capped.status, 429);
    assert.equal(capped.headers.get('retry-after'), '60');
  });

  test("password lockout renewal: strangers keeping bob's cross-app count high cannot keep a clean app from bob's account", async () => {
    const strangers = await Promise.all(Array.from({ length: 12 }, () => gw.client('orders')));
    const real = await gw.client('orders');
    // 12 × 5 wrong passwords: 60 failures across apps, past the ceiling of 50. Each sits out the
    // ceiling's wait (at most a minute) on the test's clock.
    for (const stranger of strangers) {
      for (let i = 0; i < 5; i++) {
        now += 60_000;
        assert.equal((await attempt(stranger, 'bob', `guess-${i}`)).status, 401);
      }
    }
    // Renewing: each time the wait ends, one more wrong password starts a new minute.
    for (let round = 0; round < 6; round++) {
      const stranger = strangers[round]!;
      const held = await attempt(stranger, 'bob', `early-${round}`);
      assert.equal(held.status, 429, `round ${round}`);
      assert.equal(held.headers.get('retry-after'), '60');
      now += 60_000;
      assert.equal((await attempt(stranger, 'bob', `renew-${round}`)).status, 401, `round ${round}: the wait ended, renewed`);
    }
    const calls = auth.calls.length;
    const res = await attempt(real, 'bob', 'builder');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(auth.calls.length, calls + 1, 'admitted at once, while the renewed minute runs');
  });

  test("password lockout renewal: a clean app's parallel guesses pass the cross-app ceiling once, not once each", async () => {
    const apps = await Promise.all(Array.from({ length: 10 }, () => gw.client('orders')));
    for (const app of apps) for (let i = 0; i < 5; i++) assert.equal((await attempt(app, 'frank', `x-${i}`)).status, 401);
    const fresh = await gw.client('orders');
    const before = auth.calls.length;
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => attempt(fresh, 'frank', `burst-${i}`)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [401, 429, 429, 429, 429]);
    assert.equal(auth.calls.length - before, 1, 'the authorization server was asked once');
  });

  test('password lockout: attempts answered 503 (authorization server down) do not count', async () => {
    const app = await gw.client('orders');
    auth.answer = () => ({ status: 502 });
    try {
      for (let i = 0; i < 8; i++) {
        const res = await attempt(app, 'erin', `maybe-${i}`);
        assert.equal(res.status, 503, `attempt ${i}`);
        assert.equal(res.body.error, 'temporarily_unavailable');
      }
    } finally {
      auth.answer = undefined;
    }
    for (let i = 0; i < 5; i++) assert.equal((await attempt(app, 'erin', `wrong-${i}`)).status, 401, `failure ${i} after the outage`);
    assert.equal((await attempt(app, 'erin', 'wrong')).status, 429, 'only the five failures counted');
  });

  test('password-bruteforce-username-variants: case, spaces and compatibility forms share one count', async () => {
    const app = await gw.client('orders');
    for (const name of ['Alice', 'ALICE ', ' alice', 'ａｌｉｃｅ', 'aLiCe']) assert.equal((await attempt(app, name, 'guess')).status, 401, name);
    assert.equal((await attempt(app, 'alice', 'wonderland')).status, 429);
  });

  test("password-bruteforce-parallel: a burst of guesses cannot slip past the client's limit", async () => {
    const app = await gw.client('orders');
    const before = auth.calls.length;
    const answers = await Promise.all(Array.from({ length: 70 }, (_, i) => attempt(app, `burst-${i}`, 'guess')));
    assert.equal(answers.filter((a) => a.status === 401).length, 50);
    assert.equal(answers.filter((a) => a.status === 429).length, 20);
    assert.equal(auth.calls.length - before, 50, 'the authorization server was asked 50 times, not 70');
  });

  test("a success clears the username's count", async () => {
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
    assert.equal((await attempt({ key: rotated.key, secret: rotated.secret! }, 'bob', 'builder')).status, 429);
    assert.equal((await attempt(await gw.client('orders'), 'bob', 'builder')).status, 200, 'another client is not throttled');
  });
});
