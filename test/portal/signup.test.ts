// Open sign-up proves the address (account pre-hijacking): a real gateway with its portal, a real
// SMTP server in this process, and the links followed over HTTP as a developer would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AdminError, createApp, createDeveloper, inviteDeveloper } from '../../src/admin/operations.ts';
import { newKey, newSecret, secretHash } from '../../src/crypto.ts';
import { bearer, call, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';
import { linkIn, startMailbox, type Mail, type Mailbox } from './mailbox.ts';
import { Visitor, type Page } from './visitor.ts';

const PRODUCTS = `
  public:
    displayName: Public API
    routes: [hello]
    scopes: [hello:read]
    portal: true
`;
const PASSWORD = 'correct horse battery';

describe('open sign-up with a mail transport', () => {
  let mailbox: Mailbox;
  let gw: TestGateway;
  let base: string;
  /** Where the mailed links point: the default publicUrl, http://localhost:<port>. */
  let origin: string;
  let address = 0;
  /** Sign-ups and mailed links are throttled per client address: each test comes from its own (trusted proxy). */
  const from = () => ({ 'x-forwarded-for': `203.0.113.${++address}` });

  before(async () => {
    mailbox = await startMailbox();
    gw = await startTestGateway({
      products: PRODUCTS,
      listen: '  trustedProxies: [127.0.0.1]\n',
      extra: `portal:\n  listen: { port: 0 }\n  title: Test portal\n  signup: open\n${mailbox.yaml}`,
    });
    base = gw.gateway.portalUrl!;
    origin = base.replace('127.0.0.1', 'localhost');
  });
  after(async () => {
    await gw.close();
    await mailbox.close();
  });

  async function post(visitor: Visitor, formPage: string, action: string, form: Record<string, string>, headers = from()): Promise<Page> {
    const page = await visitor.get(formPage);
    return visitor.post(action, { csrf: page.csrf!, ...form }, headers);
  }

  const tokenOf = (link: string) => new URLSearchParams(link.split('?')[1]).get('token')!;

  /** Registers an app and follows the redirect to the page that shows its secret. */
  async function register(visitor: Visitor, name: string): Promise<Page> {
    const posted = await post(visitor, '/apps/new', '/apps', { name, product: 'public' });
    return posted.status === 303 ? visitor.follow(posted) : posted;
  }

  /** Follows a confirmation link: its page, then its form with the account's email and password. */
  async function confirm(visitor: Visitor, mail: Mail, email: string, password = PASSWORD): Promise<Page> {
    const link = linkIn(mail, `${origin}/verify?`);
    return visitor.submit(`/verify?${link}`, '/verify', { token: tokenOf(`?${link}`), email, password });
  }

  test('account pre-hijack: sign up over HTTP, follow the mailed link, then register an app whose key gets tokens', async () => {
    const visitor = new Visitor(base);
    const signed = await post(visitor, '/signup', '/signup', { email: 'Ada@Example.com', name: 'Ada', password: PASSWORD });
    assert.equal(signed.status, 200);
    assert.match(signed.text, /<h1>Check your email<\/h1>/);
    const mail = await mailbox.next('ada@example.com');
    assert.deepEqual(mail.to, ['ada@example.com']);
    assert.equal(mail.subject, 'Confirm your email address for Test portal');
    const link = linkIn(mail, `${origin}/verify?token=`);
    assert.match(link, /^gwm_[A-Za-z0-9_-]{43}$/, '256 bits behind the prefix');

    const page = await visitor.get(`/verify?token=${link}`);
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`<input type="hidden" name="token" value="${link}">`));
    const confirmed = await visitor.post('/verify', { csrf: page.csrf!, token: link, email: 'ada@example.com', password: PASSWORD }, from());
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get('location'), '/apps?done=verified');
    assert.match((await visitor.get('/apps?done=verified')).text, /Your email address is confirmed: you can register apps\./);

    const registered = await register(visitor, 'first');
    assert.equal(registered.status, 200, registered.text);
    const key = /id="app-key">([^<]+)</.exec(registered.text)![1]!;
    const secret = /id="app-secret">([^<]+)</.exec(registered.text)![1]!;
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret })).status, 200);

    const again = await new Visitor(base).submit(`/verify?token=${link}`, '/verify', { token: link, email: 'ada@example.com', password: PASSWORD });
    assert.equal(again.status, 400, 'the link is spent');
    assert.match(again.text, /this link is wrong, used or expired, or the email or password is wrong: to get a new link, use &quot;Forgot your password\?&quot;/);
  });

  test('account pre-hijack: an unverified account cannot log in nor register an app, in the portal or through src/admin', async () => {
    const visitor = new Visitor(base);
    await post(visitor, '/signup', '/signup', { email: 'pending@example.com', name: 'Pending', password: PASSWORD });
    const mail = await mailbox.next('pending@example.com');
    // Else signing up with an address and logging in with the password just chosen would tell
    // whether the address had an account: the same answer as a wrong password.
    const login = await post(visitor, '/login', '/login', { email: 'pending@example.com', password: PASSWORD });
    const wrong = await post(visitor, '/login', '/login', { email: 'pending@example.com', password: 'not the password at all' });
    assert.equal(login.status, 401);
    assert.equal(login.text, wrong.text);
    assert.match(login.text, /wrong email or password, or the address is not confirmed yet \(follow the link we mailed you\)/);
    assert.equal((await visitor.get('/apps')).status, 303, 'no session');
    await assert.rejects(createApp(gw.admin, { developer: 'pending@example.com', name: 'cli', product: 'public' }), (err) => err instanceof AdminError && err.code === 'unverified_email');
    assert.equal((await confirm(visitor, mail, 'pending@example.com')).status, 303);
    assert.equal((await register(visitor, 'now')).status, 200);
  });

  test('account enumeration: sign-up then logins with the password just chosen are throttled alike for a taken address and a new one', async () => {
    await createDeveloper(gw.admin, { email: 'taken-probe@example.org', name: 'Taken' });
    const statuses: number[][] = [];
    for (const email of ['taken-probe@example.org', 'new-probe@example.org']) {
      const visitor = new Visitor(base);
      await post(visitor, '/signup', '/signup', { email, name: 'Probe', password: PASSWORD });
      const seen: number[] = [];
      for (let i = 0; i < 7; i++) seen.push((await post(visitor, '/login', '/login', { email, password: PASSWORD })).status);
      statuses.push(seen);
    }
    assert.deepEqual(statuses[0], [401, 401, 401, 401, 401, 429, 429]);
    assert.deepEqual(statuses[1], statuses[0]);
  });

  test('account pre-hijack: the confirmation form answers a wrong link and a wrong password alike', async () => {
    const visitor = new Visitor(base);
    await post(visitor, '/signup', '/signup', { email: 'alike@example.com', name: 'Alike', password: PASSWORD });
    const mail = await mailbox.next('alike@example.com');
    const badLink = await visitor.submit('/verify?token=gwm_x', '/verify', { token: 'gwm_x', email: 'alike@example.com', password: PASSWORD });
    const badPassword = await confirm(visitor, mail, 'alike@example.com', 'not the password at all');
    const noAccount = await visitor.submit('/verify?token=gwm_x', '/verify', { token: 'gwm_x', email: 'nobody@example.com', password: PASSWORD });
    for (const page of [badLink, badPassword, noAccount]) {
      assert.equal(page.status, 400);
      assert.match(page.text, /this link is wrong, used or expired, or the email or password is wrong: to get a new link, use &quot;Forgot your password\?&quot;/);
    }
    assert.equal((await confirm(visitor, mail, 'alike@example.com')).status, 303, 'the link still works');
  });

  test('account pre-hijack: the same page, status and headers for a taken address as for a new one; the owner gets a notice, not a link', async () => {
    await createDeveloper(gw.admin, { email: 'partner@example.org', name: 'Partner' });
    const answers = [];
    for (const email of ['partner@example.org', 'newcomer@example.org']) {
      const visitor = new Visitor(base);
      await visitor.get('/signup');
      answers.push(await post(visitor, '/signup', '/signup', { email, name: 'Someone', password: PASSWORD }));
    }
    const [taken, fresh] = answers as [Page, Page];
    assert.equal(taken.status, 200);
    assert.equal(fresh.status, 200);
    assert.equal(taken.text, fresh.text);
    const headers = (p: Page) => [...p.headers].filter(([name]) => name !== 'date');
    assert.deepEqual(headers(taken), headers(fresh));
    assert.equal(taken.headers.get('set-cookie'), null, 'nobody is logged in');

    const notice = await mailbox.next('partner@example.org');
    assert.equal(notice.subject, 'Sign-up attempt at Test portal');
    assert.match(notice.text, /which already has an account\. Nothing was changed\./);
    assert.equal(linkIn(notice, origin), '/forgot');
    assert.doesNotMatch(notice.text, /token=/);
    assert.equal((await mailbox.next('newcomer@example.org')).subject, 'Confirm your email address for Test portal');
    assert.equal((await post(new Visitor(base), '/login', '/login', { email: 'partner@example.org', password: PASSWORD })).status, 401, 'not taken over');
  });

  test("account pre-hijack: the mailed link confirms only with the account's password, so the address's owner cannot confirm an account someone else made", async () => {
    const attacker = new Visitor(base);
    await post(attacker, '/signup', '/signup', { email: 'victim@example.org', name: 'Victim', password: PASSWORD });
    const mail = await mailbox.next('victim@example.org');
    const owner = new Visitor(base);
    const refused = await confirm(owner, mail, 'victim@example.org', 'the owner does not know it');
    assert.equal(refused.status, 400);
    assert.match(refused.text, /this link is wrong, used or expired, or the email or password is wrong/);
    assert.equal((await post(attacker, '/login', '/login', { email: 'victim@example.org', password: PASSWORD })).status, 401, 'still unverified: no login');
    assert.equal((await gw.admin.store.accounts.findDeveloper('victim@example.org'))?.verified, false);
  });

  test('account pre-hijack: a password reset proves the address: it sets the password, verifies the account and ends every session', async () => {
    const attacker = new Visitor(base);
    await post(attacker, '/signup', '/signup', { email: 'owner@example.org', name: 'Not the owner', password: PASSWORD });
    const attackerLink = await mailbox.next('owner@example.org');

    const owner = new Visitor(base);
    await owner.get('/forgot');
    const asked = await post(owner, '/forgot', '/forgot', { email: 'owner@example.org' });
    const unknown = await post(owner, '/forgot', '/forgot', { email: 'nobody@example.org' });
    assert.equal(asked.status, 200);
    assert.equal(asked.text, unknown.text, 'the same answer for an address without an account');
    assert.match(asked.text, /If the address you gave has an account here, we mailed it a link to set a new password/);
    const mail = await mailbox.next('owner@example.org');
    assert.equal(mail.subject, 'Set a new password for Test portal');
    const link = linkIn(mail, `${origin}/reset?`);
    const token = tokenOf(`?${link}`);

    const weak = await owner.submit(`/reset?${link}`, '/reset', { token, password: 'short' });
    assert.equal(weak.status, 400);
    assert.match(weak.text, /the password must have at least 10 characters/);
    const reset = await owner.submit(`/reset?${link}`, '/reset', { token, password: 'the owner chose this' });
    assert.equal(reset.status, 303);
    assert.equal(reset.headers.get('location'), '/login?done=password');
    const spent = await owner.submit(`/reset?${link}`, '/reset', { token, password: 'and then this one' });
    assert.equal(spent.status, 400);
    assert.match(spent.text, /this link is wrong, used or expired: ask for a new one/);

    assert.equal((await post(new Visitor(base), '/login', '/login', { email: 'owner@example.org', password: PASSWORD })).status, 401);
    assert.equal((await confirm(attacker, attackerLink, 'owner@example.org')).status, 400, "the attacker's password no longer confirms anything");
    assert.equal((await post(owner, '/login', '/login', { email: 'owner@example.org', password: 'the owner chose this' })).status, 303);
    assert.equal((await register(owner, 'mine')).status, 200, 'verified by the reset');
  });

  test('mail-flood: sign-ups, new links and reset requests are throttled per client address: the 11th in an hour is 429 with Retry-After', async () => {
    const visitor = new Visitor(base);
    const one = { 'x-forwarded-for': '192.0.2.77' };
    for (let i = 0; i < 10; i++) assert.equal((await post(visitor, '/forgot', '/forgot', { email: `flood${i}@example.org` }, one)).status, 200);
    const refused = await post(visitor, '/forgot', '/forgot', { email: 'flood@example.org' }, one);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '3600');
    assert.match(refused.text, /too many sign-ups or mailed links from your address, or to this one: try again in 60 minutes/);
    const signup = await post(visitor, '/signup', '/signup', { email: 'flood-signup@example.org', name: 'F', password: PASSWORD }, one);
    assert.equal(signup.status, 429, 'sign-ups share the count');
    assert.equal(signup.headers.get('retry-after'), '3600');
    assert.equal((await post(visitor, '/forgot', '/forgot', { email: 'flood@example.org' })).status, 200, 'another address is not affected');
    assert.equal(mailbox.received.filter((m) => m.to.includes('flood-signup@example.org')).length, 0);
  });

  test('"send the link again": a new confirmation link that replaces the one before; the same page for a confirmed address (whose owner gets the sign-up notice) and for none; counted with sign-ups (429 with Retry-After)', async () => {
    const visitor = new Visitor(base);
    const checkEmail = await post(visitor, '/signup', '/signup', { email: 'again@example.org', name: 'Again', password: PASSWORD });
    assert.match(checkEmail.text, /<a id="resend" href="\/signup\/resend">send the link again<\/a>/);
    const first = await mailbox.next('again@example.org');
    const resend = await visitor.get('/signup/resend');
    assert.equal(resend.status, 200);
    assert.match(resend.text, /<h1>Send the confirmation link again<\/h1>/);

    await createDeveloper(gw.admin, { email: 'vouched@example.org', name: 'Vouched' });
    const answers: Page[] = [];
    for (const email of ['again@example.org', 'vouched@example.org', 'nobody-here@example.org']) answers.push(await post(new Visitor(base), '/signup/resend', '/signup/resend', { email }));
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.text, answers[0]!.text, 'one page, whichever the address');
      assert.match(answer.text, /We mailed a new link to the address you gave, if it is waiting for confirmation; the one before no longer works\./);
    }
    const second = await mailbox.next('again@example.org');
    assert.equal(second.subject, 'Confirm your email address for Test portal');
    assert.equal((await confirm(visitor, first, 'again@example.org')).status, 400, 'the first link was replaced');
    assert.equal((await confirm(visitor, second, 'again@example.org')).status, 303);
    assert.equal((await mailbox.next('vouched@example.org')).subject, 'Sign-up attempt at Test portal', 'a confirmed address gets the notice, not a link');
    assert.equal(mailbox.received.filter((m) => m.to.includes('nobody-here@example.org')).length, 0);

    const one = { 'x-forwarded-for': '192.0.2.78' };
    for (let i = 0; i < 10; i++) assert.equal((await post(visitor, '/signup/resend', '/signup/resend', { email: `resend${i}@example.org` }, one)).status, 200);
    const refused = await post(visitor, '/signup/resend', '/signup/resend', { email: 'again@example.org' }, one);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '3600');
    assert.match(refused.text, /too many sign-ups or mailed links from your address, or to this one: try again in 60 minutes/);
    assert.match(refused.text, /<input type="email" name="email" required autocomplete="username" value="again@example.org">/, 'the form again, as typed');
    assert.equal((await post(visitor, '/signup', '/signup', { email: 'after@example.org', name: 'A', password: PASSWORD }, one)).status, 429, 'sign-ups share the count');
  });

  test('mail-flood from many addresses: one address is mailed at most 5 times an hour, whoever asks; an IPv6 client is counted by its /64', async () => {
    const visitor = new Visitor(base);
    for (let i = 1; i <= 5; i++) assert.equal((await post(visitor, '/forgot', '/forgot', { email: 'flood-target@example.org' }, { 'x-forwarded-for': `198.51.100.${i}` })).status, 200);
    const sixth = await post(visitor, '/signup/resend', '/signup/resend', { email: 'Flood-Target@Example.org' }, { 'x-forwarded-for': '198.51.100.6' });
    assert.equal(sixth.status, 429);
    assert.equal(sixth.headers.get('retry-after'), '3600');
    assert.equal((await post(visitor, '/forgot', '/forgot', { email: 'someone-else@example.org' }, { 'x-forwarded-for': '198.51.100.6' })).status, 200, 'that client may still ask for others');
    for (let i = 0; i < 10; i++) {
      const from = { 'x-forwarded-for': `2001:db8:77:1::${(i + 1).toString(16)}` };
      assert.equal((await post(visitor, '/forgot', '/forgot', { email: `v6-${i}@example.org` }, from)).status, 200);
    }
    const sameNetwork = await post(visitor, '/forgot', '/forgot', { email: 'v6-10@example.org' }, { 'x-forwarded-for': '2001:db8:77:1:ffff:ffff:ffff:ffff' });
    assert.equal(sameNetwork.status, 429, 'another address of the /64 shares its count');
    assert.equal((await post(visitor, '/forgot', '/forgot', { email: 'v6-11@example.org' }, { 'x-forwarded-for': '2001:db8:77:2::1' })).status, 200, 'the next /64 does not');
  });

  test('"Forgot your password" has the way back to log in', async () => {
    const page = await new Visitor(base).get('/forgot');
    assert.match(page.text, /<p>Remembered it\? <a id="back-to-login" href="\/login">Back to log in<\/a>\.<\/p>/);
  });

  test("account pre-hijack: an operator's `developers create` replaces an unverified account and deletes its app, whose key stops getting tokens (401)", async () => {
    const squatter = new Visitor(base);
    await post(squatter, '/signup', '/signup', { email: 'acme@example.org', name: 'Acme (not really)', password: PASSWORD });
    await mailbox.next('acme@example.org');
    // An app the unverified account holds: registered before confirmation was required.
    const held = (await gw.admin.store.accounts.findDeveloper('acme@example.org'))!;
    assert.equal(held.verified, false);
    const key = newKey();
    const secret = newSecret();
    await gw.admin.store.apps.createApp({ developerId: held.id, name: 'squat', product: 'public', key, secretHash: secretHash(gw.admin.secretKey, secret), now: Date.now() });
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret });
    assert.equal(issued.status, 200);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);

    const created = await createDeveloper(gw.admin, { email: 'acme@example.org', name: 'Acme' });
    assert.deepEqual(created, { id: created.id, email: 'acme@example.org', name: 'Acme', status: 'active', verified: true, createdAt: created.createdAt });
    assert.notEqual(created.id, held.id);
    const refused = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key, secret });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 401, 'its token stopped too');
    assert.equal((await post(new Visitor(base), '/login', '/login', { email: 'acme@example.org', password: PASSWORD })).status, 401, "the squatter's password is gone");
    await assert.rejects(createDeveloper(gw.admin, { email: 'acme@example.org', name: 'Again' }), (err) => err instanceof AdminError && err.code === 'duplicate_developer', 'a verified account stays');
  });

  test('account pre-hijack: an invitation for an address an unverified account holds replaces it; for a verified one it keeps the account and its apps', async () => {
    await post(new Visitor(base), '/signup', '/signup', { email: 'invitee@example.org', name: 'Squatter', password: PASSWORD });
    await mailbox.next('invitee@example.org');
    const held = (await gw.admin.store.accounts.findDeveloper('invitee@example.org'))!;
    const { developer, code } = await inviteDeveloper(gw.admin, 'invitee@example.org');
    assert.notEqual(developer.id, held.id);
    assert.equal(developer.verified, true);
    assert.equal((await post(new Visitor(base), '/login', '/login', { email: 'invitee@example.org', password: PASSWORD })).status, 401);
    const invited = new Visitor(base);
    assert.equal((await post(invited, '/signup', '/signup', { email: 'invitee@example.org', password: 'the invitee chose', invitation: code })).status, 303);
    assert.equal((await register(invited, 'kept')).status, 200);
    const again = await inviteDeveloper(gw.admin, 'invitee@example.org');
    assert.equal(again.developer.id, developer.id, 'a verified account is kept');
    assert.equal((await gw.admin.store.apps.listApps({ developerEmail: 'invitee@example.org' })).length, 1);
  });
});

describe('a mail server without TLS', () => {
  test('mail-plaintext: without allowPlaintext nothing is sent in the clear; the visitor gets the same page, the log an error without the link', async () => {
    const mailbox = await startMailbox();
    const gw = await startTestGateway({ products: PRODUCTS, extra: `portal:\n  listen: { port: 0 }\n  signup: open\n${mailbox.yaml.replace(', allowPlaintext: true', '')}` });
    try {
      const visitor = new Visitor(gw.gateway.portalUrl!);
      const form = await visitor.get('/signup');
      const page = await visitor.post('/signup', { csrf: form.csrf!, email: 'clear@example.com', name: 'C', password: PASSWORD });
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1>Check your email<\/h1>/);
      // The mail is sent after the answer: wait for its outcome in the log.
      while (!gw.logs.some((l) => l.includes('portal mail not sent'))) await new Promise((resolve) => setTimeout(resolve, 10));
      const line = JSON.parse(gw.logs.find((l) => l.includes('portal mail not sent'))!) as { level: number; subject: string; err: { message: string } };
      assert.equal(line.level, 50);
      assert.equal(line.subject, 'Confirm your email address for Developer portal');
      assert.doesNotMatch(gw.logs.join(''), /gwm_/, 'no link in the log');
      assert.deepEqual(mailbox.received, []);
    } finally {
      await gw.close();
      await mailbox.close();
    }
  });
});

describe('the log mail transport', () => {
  test('writes each message, link included, to the log at info level; the link works', async () => {
    const gw = await startTestGateway({ products: PRODUCTS, extra: 'portal:\n  listen: { port: 0 }\n  signup: open\nmail:\n  from: portal@example.com\n  log: true\n' });
    try {
      const base = gw.gateway.portalUrl!;
      const visitor = new Visitor(base);
      const form = await visitor.get('/signup');
      assert.equal((await visitor.post('/signup', { csrf: form.csrf!, email: 'logged@example.com', name: 'L', password: PASSWORD })).status, 200);
      const line = gw.logs.map((l) => JSON.parse(l) as { level: number; msg: string; mail?: { from: string; to: string; subject: string; text: string } }).find((l) => l.mail !== undefined);
      assert.ok(line, 'a log line with the message');
      assert.equal(line.level, 30);
      assert.equal(line.msg, 'mail (log transport: not sent)');
      assert.equal(line.mail!.from, 'portal@example.com');
      assert.equal(line.mail!.to, 'logged@example.com');
      assert.equal(line.mail!.subject, 'Confirm your email address for Developer portal');
      const token = new RegExp(`^${base.replace('127.0.0.1', 'localhost')}/verify\\?token=(gwm_[A-Za-z0-9_-]{43})$`, 'm').exec(line.mail!.text)?.[1];
      assert.ok(token, line.mail!.text);
      const confirmed = await visitor.submit(`/verify?token=${token}`, '/verify', { token, email: 'logged@example.com', password: PASSWORD });
      assert.equal(confirmed.status, 303);
    } finally {
      await gw.close();
    }
  });
});
