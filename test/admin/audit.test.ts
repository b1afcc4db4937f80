// The audit trail: a real gateway with its portal and a real SMTP server, forms posted over HTTP
// from addresses of their own (X-Forwarded-For, from a trusted proxy), the operator's operations,
// and the real `gateway admin`. Each action writes exactly one audit line with exactly the fields
// checked here, and no log line holds a secret, password, token, code or session id.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { after, before, describe, test } from 'node:test';
import * as ops from '../../src/admin/operations.ts';
import type { App, Developer } from '../../src/store/port/index.ts';
import { gateway } from '../e2e/children.ts';
import { startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';
import { linkIn, startMailbox, type Mailbox } from '../portal/mailbox.ts';
import { Visitor, type Page } from '../portal/visitor.ts';

const PRODUCTS = `
  public:
    routes: [hello]
    scopes: [hello:read]
    portal: true
  reviewed:
    routes: [hello]
    portal: true
    approval: manual
`;
const NOW = Date.now();
const OVERLAP_MS = 10 * 60_000;
const INVITATION_MS = 7 * 86_400_000;

type Line = Record<string, unknown>;

const OPERATOR = { kind: 'operator', user: 'test' };
const visitor = (ip: string) => ({ kind: 'visitor', ip });
const ref = (dev: Developer) => ({ id: dev.id, email: dev.email });
const asDeveloper = (dev: Developer) => ({ kind: 'developer', id: dev.id, email: dev.email });
const appRef = (app: Pick<App, 'id' | 'name' | 'product'>) => ({ id: app.id, name: app.name, product: app.product, type: 'confidential' });
/** A line at info (30), or at warn (40) for a failed login, as pino writes it, without its time. */
const info = (audit: string, msg: string, fields: Line): Line => ({ level: 30, audit, ...fields, msg });
const loginFailed = (fields: Line): Line => ({ level: 40, audit: 'developer.login_failed', ...fields, msg: 'portal login failed' });

describe('audit trail', () => {
  let mailbox: Mailbox;
  let gw: TestGateway;
  let base: string;
  /** Where the mailed links point (the default publicUrl, http://localhost:<port>). */
  let origin: string;
  /** What no log line may hold, gathered as the tests make it. */
  const secrets: string[] = [];
  /** What `gateway admin` wrote on stderr. */
  const cliErrors: string[] = [];
  let address = 0;
  /** Each form comes from an address of its own, which its line must name. */
  const nextIp = () => `203.0.113.${++address}`;

  before(async () => {
    mailbox = await startMailbox();
    gw = await startTestGateway(
      { products: PRODUCTS, listen: '  trustedProxies: [127.0.0.1]\n', extra: `portal:\n  listen: { port: 0 }\n  signup: open\n  keyOverlap: 10m\n${mailbox.yaml}` },
      { clock: () => NOW },
    );
    base = gw.gateway.portalUrl!;
    origin = base.replace('127.0.0.1', 'localhost');
  });
  after(async () => {
    await gw.close();
    await mailbox.close();
  });

  /** The audit lines logged since `mark`, each without its time. */
  function auditSince(mark: number): Line[] {
    const lines = gw.logs
      .slice(mark)
      .join('')
      .split('\n')
      .filter((l) => l !== '');
    return lines
      .map((l) => JSON.parse(l) as Line)
      .filter((l) => 'audit' in l)
      .map(({ time, ...line }) => {
        assert.equal(typeof time, 'number');
        return line;
      });
  }

  /** Runs `act`, then checks that it logged exactly one audit line, `expected(its result)`. */
  async function logsOne<T>(act: () => Promise<T>, expected: (result: T) => Line | Promise<Line>): Promise<T> {
    const mark = gw.logs.length;
    const result = await act();
    assert.deepEqual(auditSince(mark), [await expected(result)]);
    return result;
  }

  /** Runs `act`, then checks that it logged no audit line. */
  async function logsNone<T>(act: () => Promise<T>): Promise<T> {
    const mark = gw.logs.length;
    const result = await act();
    assert.deepEqual(auditSince(mark), []);
    return result;
  }

  /** GETs `formPage`, then POSTs its form to `action` from `ip`, as a browser behind the proxy would. */
  async function send(who: Visitor, formPage: string, action: string, form: Record<string, string>, ip = nextIp()): Promise<Page> {
    const page = await who.get(formPage);
    assert.ok(page.csrf !== undefined, `${formPage} has a form (${page.status})`);
    return who.post(action, { csrf: page.csrf, ...form }, { 'x-forwarded-for': ip });
  }

  /** Keeps the session id in the visitor's cookie among the secrets. */
  function rememberSession(who: Visitor): void {
    secrets.push(who.cookie!.slice(who.cookie!.indexOf('=') + 1));
  }

  const developer = async (email: string) => (await gw.admin.store.accounts.findDeveloper(email))!;
  const tokenOf = (link: string) => new URLSearchParams(link.split('?')[1]).get('token')!;

  let invitee: Developer;
  let invitation: string;

  test('operator: a developer created, invited, disabled and enabled', async () => {
    invitee = await logsOne(
      () => ops.createDeveloper(gw.admin, { email: ' Invitee@Example.com ', name: 'Invitee' }),
      (dev) => info('developer.create', 'developer created', { actor: OPERATOR, developer: ref(dev), replaced: false }),
    );
    assert.equal(invitee.email, 'invitee@example.com');
    const invite = await logsOne(
      () => ops.inviteDeveloper(gw.admin, 'invitee@example.com'),
      () => info('developer.invite', 'developer invited', { actor: OPERATOR, developer: ref(invitee), replaced: false, expiresAt: NOW + INVITATION_MS }),
    );
    invitation = invite.code;
    secrets.push(invitation);
    await logsOne(
      () => ops.setDeveloperStatus(gw.admin, 'INVITEE@example.com', 'disabled'),
      () => info('developer.disable', 'developer disabled', { actor: OPERATOR, developer: ref(invitee) }),
    );
    await logsOne(
      () => ops.setDeveloperStatus(gw.admin, 'invitee@example.com', 'active'),
      () => info('developer.enable', 'developer enabled', { actor: OPERATOR, developer: ref(invitee) }),
    );
  });

  test('operator: an app registered, approved, disabled, enabled, its key rotated and revoked, and deleted', async () => {
    const created = await logsOne(
      () => ops.createApp(gw.admin, { developer: 'invitee@example.com', name: 'operator-app', product: 'public' }),
      (c) => info('app.register', 'app registered', { actor: OPERATOR, developer: ref(invitee), app: appRef(c.app), key: c.key, approval: 'approved', redirectUris: [] }),
    );
    secrets.push(created.secret);
    const about = { actor: OPERATOR, developer: ref(invitee), app: appRef(created.app) };
    await logsOne(
      () => ops.approveApp(gw.admin, { key: created.key }),
      () => info('app.approve', 'app approved', about),
    );
    await logsOne(
      () => ops.setAppStatus(gw.admin, { key: created.key }, 'disabled'),
      () => info('app.disable', 'app disabled', about),
    );
    await logsOne(
      () => ops.setAppStatus(gw.admin, { developer: 'invitee@example.com', name: 'operator-app' }, 'active'),
      () => info('app.enable', 'app enabled', about),
    );
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, created);
    assert.equal(res.status, 200, res.text);
    secrets.push((res.body as { access_token: string }).access_token);
    const rotated = await logsOne(
      () => ops.rotateKey(gw.admin, { key: created.key }),
      (r) => info('key.rotate', 'key rotated', { ...about, key: r.key, overlapUntil: NOW + OVERLAP_MS }),
    );
    secrets.push(rotated.secret!);
    await logsOne(
      () => ops.revokeKey(gw.admin, created.key),
      () => info('key.revoke', 'key revoked', { ...about, key: created.key }),
    );
    // A refused operation changed nothing, and writes no line.
    await logsNone(() => assert.rejects(ops.revokeKey(gw.admin, created.key), (err: unknown) => err instanceof ops.AdminError && err.code === 'already_revoked'));
    await logsOne(
      () => ops.deleteApp(gw.admin, { key: rotated.key }),
      () => info('app.delete', 'app deleted', about),
    );
  });

  test('portal: an invitation accepted, a logout, a login', async () => {
    const invited = new Visitor(base);
    const ip = nextIp();
    // The invitation link fills the form in; it carries the code in its query.
    const form = await invited.get(`/signup?${new URLSearchParams({ email: 'invitee@example.com', invitation })}`);
    const signed = await logsOne(
      () => invited.post('/signup', { csrf: form.csrf!, email: 'invitee@example.com', password: 'invitee password 1', invitation }, { 'x-forwarded-for': ip }),
      () => info('developer.signup', 'developer signed up', { actor: visitor(ip), developer: ref(invitee), signup: 'invitation' }),
    );
    assert.equal(signed.status, 303, signed.text);
    secrets.push('invitee password 1');
    rememberSession(invited);
    const out = await logsOne(
      () => send(invited, '/apps', '/logout', {}),
      () => info('developer.logout', 'developer logged out', { actor: asDeveloper(invitee), developer: ref(invitee) }),
    );
    assert.equal(out.status, 303);
    // A visitor without a session ends nothing.
    assert.equal((await logsNone(() => send(invited, '/login', '/logout', {}))).status, 303);

    const returning = new Visitor(base);
    const loginIp = nextIp();
    const login = await logsOne(
      () => send(returning, '/login', '/login', { email: 'INVITEE@example.com', password: 'invitee password 1' }, loginIp),
      () => info('developer.login', 'developer logged in', { actor: visitor(loginIp), developer: ref(invitee) }),
    );
    assert.equal(login.status, 303, login.text);
    rememberSession(returning);
  });

  test('portal: failed logins at warn, with the reason and the email tried (lower-cased), never the password', async () => {
    const stranger = new Visitor(base);
    const attempt = async (email: string, password: string, status: number, fields: Line) => {
      secrets.push(password);
      const ip = nextIp();
      const page = await logsOne(
        () => send(stranger, '/login', '/login', { email, password }, ip),
        () => loginFailed({ actor: visitor(ip), form: 'login', ...fields }),
      );
      assert.equal(page.status, status, page.text);
    };
    await attempt(' Invitee@Example.COM ', 'not the password 1', 401, { reason: 'wrong_password', email: 'invitee@example.com' });
    await attempt('nobody@example.com', 'not the password 2', 401, { reason: 'unknown_developer', email: 'nobody@example.com' });
    // A password typed where the email goes is not an email, and is not logged.
    secrets.push('typed-my-Passw0rd-here');
    await attempt('typed-my-Passw0rd-here', 'not the password 3', 401, { reason: 'invalid_email' });

    await ops.createDeveloper(gw.admin, { email: 'no-password@example.com', name: 'Never invited' });
    await attempt('no-password@example.com', 'not the password 4', 401, { reason: 'no_password', email: 'no-password@example.com' });

    await ops.setDeveloperStatus(gw.admin, 'invitee@example.com', 'disabled');
    await attempt('invitee@example.com', 'invitee password 1', 401, { reason: 'disabled', email: 'invitee@example.com' });
    await ops.setDeveloperStatus(gw.admin, 'invitee@example.com', 'active');

    // Five failures are free; then the account must wait (the test's clock stands still).
    for (let i = 0; i < 5; i++) await attempt('guessed@example.com', `guess number ${i}`, 401, { reason: 'unknown_developer', email: 'guessed@example.com' });
    await attempt('guessed@example.com', 'guess number 5', 429, { reason: 'throttled', email: 'guessed@example.com' });
  });

  let ada: Developer;
  /** Ada's browser, logged in. */
  let adaBrowser: Visitor;

  test('portal: an open sign-up, a login before the address is confirmed, a wrong link, the address confirmed, the address signed up again', async () => {
    adaBrowser = new Visitor(base);
    const ip = nextIp();
    secrets.push('ada password 1');
    const signed = await logsOne(
      () => send(adaBrowser, '/signup', '/signup', { email: 'Ada@Example.com', name: 'Ada', password: 'ada password 1' }, ip),
      async () => {
        ada = await developer('ada@example.com');
        return info('developer.signup', 'developer signed up', { actor: visitor(ip), developer: ref(ada), signup: 'open', result: 'created' });
      },
    );
    assert.equal(signed.status, 200, signed.text);

    const link = linkIn(await mailbox.next('ada@example.com'), origin);
    const token = tokenOf(link);
    secrets.push(token);
    await adaBrowser.get(link);

    const early = new Visitor(base);
    const earlyIp = nextIp();
    await logsOne(
      () => send(early, '/login', '/login', { email: 'ada@example.com', password: 'ada password 1' }, earlyIp),
      () => loginFailed({ actor: visitor(earlyIp), form: 'login', reason: 'unverified', email: 'ada@example.com' }),
    );

    const wrongIp = nextIp();
    const wrong = await logsOne(
      () => send(adaBrowser, link, '/verify', { token: `gwm_${'A'.repeat(43)}`, email: 'ada@example.com', password: 'ada password 1' }, wrongIp),
      () => loginFailed({ actor: visitor(wrongIp), form: 'confirm', reason: 'invalid_link', email: 'ada@example.com' }),
    );
    assert.equal(wrong.status, 400, wrong.text);

    const confirmIp = nextIp();
    const confirmed = await logsOne(
      () => send(adaBrowser, link, '/verify', { token, email: 'ada@example.com', password: 'ada password 1' }, confirmIp),
      () => info('developer.confirm', 'developer confirmed the email address', { actor: visitor(confirmIp), developer: ref(ada) }),
    );
    assert.equal(confirmed.status, 303, confirmed.text);
    rememberSession(adaBrowser);

    const takenIp = nextIp();
    secrets.push('someone else chose this');
    await logsOne(
      () => send(new Visitor(base), '/signup', '/signup', { email: 'ada@example.com', name: 'Not Ada', password: 'someone else chose this' }, takenIp),
      () => info('developer.signup', 'developer signed up', { actor: visitor(takenIp), developer: ref(ada), signup: 'open', result: 'taken' }),
    );
    assert.match((await mailbox.next('ada@example.com')).subject, /^Sign-up attempt at /);
  });

  test('operator: creating a developer whose address an unconfirmed sign-up holds replaces that account', async () => {
    secrets.push('squatter password');
    await send(new Visitor(base), '/signup', '/signup', { email: 'taken-over@example.com', name: 'Squatter', password: 'squatter password' });
    secrets.push(tokenOf(linkIn(await mailbox.next('taken-over@example.com'), origin)));
    await logsOne(
      () => ops.createDeveloper(gw.admin, { email: 'taken-over@example.com', name: 'The owner' }),
      (dev) => info('developer.create', 'developer created', { actor: OPERATOR, developer: ref(dev), replaced: true }),
    );
  });

  test('portal: a password changed, a reset requested for an account and for none, a reset done', async () => {
    const wrong = await logsOne(
      () => send(adaBrowser, '/account', '/account/password', { current: 'not ada password', next: 'ada password 2' }),
      () => loginFailed({ actor: asDeveloper(ada), form: 'password_change', reason: 'wrong_password', email: 'ada@example.com' }),
    );
    assert.equal(wrong.status, 400, wrong.text);
    secrets.push('not ada password', 'ada password 2');
    const changed = await logsOne(
      () => send(adaBrowser, '/account', '/account/password', { current: 'ada password 1', next: 'ada password 2' }),
      () => info('developer.password_change', 'developer changed the password', { actor: asDeveloper(ada), developer: ref(ada) }),
    );
    assert.equal(changed.status, 303, changed.text);
    rememberSession(adaBrowser);

    // The line is written once the link is made, after the answer: the mail says it was.
    const owner = new Visitor(base);
    const askIp = nextIp();
    let mark = gw.logs.length;
    assert.equal((await send(owner, '/forgot', '/forgot', { email: 'ADA@example.com' }, askIp)).status, 200);
    const link = linkIn(await mailbox.next('ada@example.com'), origin);
    const token = tokenOf(link);
    secrets.push(token);
    assert.deepEqual(auditSince(mark), [info('developer.reset_request', 'password reset requested', { actor: visitor(askIp), developer: ref(ada), result: 'link_made' })]);

    const noneIp = nextIp();
    mark = gw.logs.length;
    assert.equal((await send(owner, '/forgot', '/forgot', { email: 'nobody@example.com' }, noneIp)).status, 200);
    for (let i = 0; i < 100 && auditSince(mark).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(auditSince(mark), [info('developer.reset_request', 'password reset requested', { actor: visitor(noneIp), email: 'nobody@example.com', result: 'no_active_account' })]);

    const resetIp = nextIp();
    secrets.push('ada password 3');
    const reset = await logsOne(
      () => send(owner, link, '/reset', { token, password: 'ada password 3' }, resetIp),
      () => info('developer.reset', 'password reset', { actor: visitor(resetIp), developer: ref(ada) }),
    );
    assert.equal(reset.status, 303, reset.text);
  });

  test('portal: apps registered (one awaiting approval), a key rotated and revoked, an app deleted', async () => {
    const loginIp = nextIp();
    const browser = new Visitor(base);
    await logsOne(
      () => send(browser, '/login', '/login', { email: 'ada@example.com', password: 'ada password 3' }, loginIp),
      () => info('developer.login', 'developer logged in', { actor: visitor(loginIp), developer: ref(ada) }),
    );
    rememberSession(browser);
    const byAda = { actor: asDeveloper(ada), developer: ref(ada) };

    const register = async (name: string, product: string, approval: string) => {
      const mark = gw.logs.length;
      const page = await browser.follow(await send(browser, '/apps/new', '/apps', { name, product }));
      assert.equal(page.status, 200, page.text);
      const key = /id="app-key">([^<]+)</.exec(page.text)![1]!;
      const secret = /id="app-secret">([^<]+)</.exec(page.text)![1]!;
      const id = /href="\/apps\/([^"]+)">Go to the app/.exec(page.text)![1]!;
      secrets.push(secret);
      assert.deepEqual(auditSince(mark), [info('app.register', 'app registered', { ...byAda, app: { id, name, product, type: 'confidential' }, key, approval, redirectUris: [] })]);
      return { id, key, secret };
    };
    const app = await register('ada-app', 'public', 'approved');
    const about = { ...byAda, app: { id: app.id, name: 'ada-app', product: 'public', type: 'confidential' } };
    const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200, res.text);
    secrets.push((res.body as { access_token: string }).access_token);

    let fresh = '';
    const rotated = await logsOne(
      async () => browser.follow(await send(browser, `/apps/${app.id}`, `/apps/${app.id}/rotate`, {})),
      (page) => {
        fresh = /id="app-key">([^<]+)</.exec(page.text)![1]!;
        secrets.push(/id="app-secret">([^<]+)</.exec(page.text)![1]!);
        return info('key.rotate', 'key rotated', { ...about, key: fresh, overlapUntil: NOW + OVERLAP_MS });
      },
    );
    assert.equal(rotated.status, 200, rotated.text);
    const revoked = await logsOne(
      () => send(browser, `/apps/${app.id}`, `/apps/${app.id}/keys/${app.key}/revoke`, {}),
      () => info('key.revoke', 'key revoked', { ...about, key: app.key }),
    );
    assert.equal(revoked.status, 303, revoked.text);
    const deleted = await logsOne(
      () => send(browser, `/apps/${app.id}/delete`, `/apps/${app.id}/delete`, {}),
      () => info('app.delete', 'app deleted', about),
    );
    assert.equal(deleted.status, 303, deleted.text);

    const pending = await register('ada-reviewed', 'reviewed', 'pending');
    await logsOne(
      () => ops.approveApp(gw.admin, { key: pending.key }),
      () => info('app.approve', 'app approved', { actor: OPERATOR, developer: ref(ada), app: { id: pending.id, name: 'ada-reviewed', product: 'reviewed', type: 'confidential' } }),
    );
  });

  test('gateway admin: the audit line on stderr, by the OS account; stdout holds the --json output alone', async () => {
    const operator = { kind: 'operator', user: userInfo().username };
    /** The one line on stderr, without its time. */
    const stderrLine = (stderr: string): Line => {
      cliErrors.push(stderr);
      assert.match(stderr, /^\{[^\n]*\}\n$/, 'one JSON line');
      const { time, ...line } = JSON.parse(stderr) as Line;
      assert.equal(typeof time, 'number');
      return line;
    };

    const created = await gateway(['admin', 'apps', 'create', '--developer', 'Invitee@example.com', '--name', 'cli-app', '--product', 'public', '--json', '--config', gw.configFile]);
    assert.equal(created.code, 0, created.stderr);
    const app = JSON.parse(created.stdout) as App & { key: string; secret: string };
    secrets.push(app.secret);
    assert.deepEqual(
      stderrLine(created.stderr),
      info('app.register', 'app registered', { actor: operator, developer: ref(invitee), app: appRef(app), key: app.key, approval: 'approved', redirectUris: [] }),
    );

    const invited = await gateway(['admin', 'developers', 'invite', 'invitee@example.com', '--json', '--config', gw.configFile]);
    assert.equal(invited.code, 0, invited.stderr);
    const invite = JSON.parse(invited.stdout) as { code: string; expiresAt: number };
    secrets.push(invite.code);
    assert.deepEqual(stderrLine(invited.stderr), info('developer.invite', 'developer invited', { actor: operator, developer: ref(invitee), replaced: false, expiresAt: invite.expiresAt }));

    const listed = await gateway(['admin', 'apps', 'list', '--config', gw.configFile]);
    assert.deepEqual([listed.code, listed.stderr], [0, ''], 'a command that changes nothing writes no line');
  });

  test('no log line holds an app secret, a password, a token, an invitation code, a mailed link token or a session id', () => {
    const logged = [...gw.logs, ...cliErrors].join('');
    assert.ok(logged.includes('"audit":"key.revoke"') && logged.includes('ada@example.com'), 'the scan reads the audit lines');
    for (const prefix of ['gws_', 'gwat_', 'gwi_', 'gwm_'])
      assert.ok(
        secrets.some((s) => s.startsWith(prefix)),
        `a ${prefix}… value was gathered`,
      );
    for (const secret of secrets) {
      // A prefixed value (gws_, gwat_, gwi_, gwm_) is also looked for without its prefix.
      for (const text of [secret, secret.replace(/^gw[a-z]+_/, '')]) assert.equal(logged.includes(text), false, `a log line holds ${text.slice(0, 10)}…`);
    }
  });
});
