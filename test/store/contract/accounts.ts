// The store contract, AccountStore: developers, and portal accounts (passwords, invitations,
// mailed links and sessions).
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { HOUR, T0, hash, isConflict, itWithStore, type OpenStore } from './fixture.ts';

export function accountsContract(open: OpenStore): void {
  const it = itWithStore(open);

  describe('developers', () => {
    it('creates and finds a developer', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
      assert.equal(typeof dev.id, 'string');
      assert.ok(dev.id.length > 0);
      assert.deepEqual(dev, { id: dev.id, email: 'ada@example.com', name: 'Ada', status: 'active', verified: true, createdAt: T0 });
      assert.deepEqual(await store.accounts.findDeveloper('ada@example.com'), dev);
      assert.equal(await store.accounts.findDeveloper('nobody@example.com'), undefined);
    });

    it('refuses a duplicate email with a conflict', async ({ store }) => {
      const first = await store.accounts.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
      await assert.rejects(store.accounts.createDeveloper({ email: 'ada@example.com', name: 'Other Ada', now: T0 + 1 }), isConflict);
      assert.deepEqual(await store.accounts.listDevelopers(), [first]);
    });

    it('lists developers', async ({ store }) => {
      assert.deepEqual(await store.accounts.listDevelopers(), []);
      const b = await store.accounts.createDeveloper({ email: 'b@example.com', name: 'B', now: T0 });
      const a = await store.accounts.createDeveloper({ email: 'a@example.com', name: 'A', now: T0 + 1 });
      const listed = await store.accounts.listDevelopers();
      assert.deepEqual(
        [...listed].sort((x, y) => x.email.localeCompare(y.email)),
        [a, b],
      );
    });

    it('disables and re-enables a developer', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'ada@example.com', name: 'Ada', now: T0 });
      assert.deepEqual(await store.accounts.setDeveloperStatus('ada@example.com', 'disabled', T0 + 1), { ...dev, status: 'disabled' });
      assert.equal((await store.accounts.findDeveloper('ada@example.com'))?.status, 'disabled');
      assert.deepEqual(await store.accounts.setDeveloperStatus('ada@example.com', 'active', T0 + 2), dev);
      assert.equal(await store.accounts.setDeveloperStatus('nobody@example.com', 'disabled', T0 + 3), undefined);
    });
  });

  describe('portal accounts', () => {
    it('creates a developer with a password, or without; sets a password', async ({ store }) => {
      await store.accounts.createDeveloper({ email: 'p@example.com', name: 'P', now: T0 });
      await store.accounts.createDeveloper({ email: 'q@example.com', name: 'Q', now: T0, passwordHash: 'hq' });
      assert.equal(await store.accounts.findPasswordHash('p@example.com'), null);
      assert.equal(await store.accounts.findPasswordHash('q@example.com'), 'hq');
      assert.equal(await store.accounts.findPasswordHash('nobody@example.com'), undefined);
      assert.equal(await store.accounts.setPasswordHash('p@example.com', 'h1'), true);
      assert.equal(await store.accounts.findPasswordHash('p@example.com'), 'h1');
      assert.equal(await store.accounts.setPasswordHash('nobody@example.com', 'h'), false);
    });

    it('an invitation sets the password once, before it expires, for its own email only; it ends the sessions', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'i@example.com', name: 'I', now: T0, passwordHash: 'h' });
      await store.accounts.createDeveloper({ email: 'j@example.com', name: 'J', now: T0 });
      const code = hash();
      assert.equal(await store.accounts.setInvitation('nobody@example.com', code, T0 + HOUR), false);
      assert.equal(await store.accounts.setInvitation('i@example.com', hash(), T0 + HOUR), true);
      assert.equal(await store.accounts.setInvitation('i@example.com', code, T0 + HOUR), true, 'replaces the earlier one');
      const session = hash();
      await store.accounts.createSession({ idHash: session, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      assert.equal(await store.accounts.acceptInvitation({ email: 'j@example.com', codeHash: code, passwordHash: 'x', now: T0 }), undefined, 'another email');
      assert.equal(await store.accounts.acceptInvitation({ email: 'i@example.com', codeHash: hash(), passwordHash: 'x', now: T0 }), undefined, 'another code');
      assert.equal(await store.accounts.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'x', now: T0 + HOUR }), undefined, 'expired');
      assert.deepEqual(await store.accounts.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'hi', now: T0 + 1 }), dev);
      const unverified = await store.accounts.createDeveloper({ email: 'u@example.com', name: 'U', now: T0, passwordHash: 'hu', verified: false });
      await store.accounts.setInvitation('u@example.com', code, T0 + HOUR);
      assert.deepEqual(await store.accounts.acceptInvitation({ email: 'u@example.com', codeHash: code, passwordHash: 'x', now: T0 + 1 }), { ...unverified, verified: true }, 'an invitation verifies');
      assert.equal(await store.accounts.findPasswordHash('i@example.com'), 'hi');
      assert.equal(await store.accounts.findSession(session, T0 + 2), undefined, 'sessions ended');
      assert.equal(await store.accounts.acceptInvitation({ email: 'i@example.com', codeHash: code, passwordHash: 'again', now: T0 + 2 }), undefined, 'spent');
      assert.equal(await store.accounts.findPasswordHash('j@example.com'), null);
    });

    it('finds a session until it expires, is deleted, or its developer is disabled (which ends it for good)', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 's@example.com', name: 'S', now: T0, passwordHash: 'h' });
      const [a, b, c] = [hash(), hash(), hash()];
      await store.accounts.createSession({ idHash: a, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      await store.accounts.createSession({ idHash: b, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      await store.accounts.createSession({ idHash: c, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      assert.deepEqual(await store.accounts.findSession(a, T0 + 1), dev);
      assert.equal(await store.accounts.findSession(a, T0 + HOUR), undefined, 'expired at expiresAt');
      assert.equal(await store.accounts.findSession(hash(), T0), undefined);
      await store.accounts.deleteSession(a);
      assert.equal(await store.accounts.findSession(a, T0 + 1), undefined);
      await store.accounts.setDeveloperStatus(dev.email, 'disabled', T0 + 1);
      assert.equal(await store.accounts.findSession(b, T0 + 1), undefined, 'developer disabled');
      await store.accounts.setDeveloperStatus(dev.email, 'active', T0 + 1);
      assert.equal(await store.accounts.findSession(b, T0 + 1), undefined, 'enabling does not bring it back');
      assert.equal(await store.accounts.findSession(c, T0 + 1), undefined);
      const d = hash();
      await store.accounts.createSession({ idHash: d, developerId: dev.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      await store.accounts.deleteSessions(dev.id);
      assert.equal(await store.accounts.findSession(d, T0 + 1), undefined);
    });

    it("starts a session only while the password checked is still the developer's, and the developer active; finds it only once confirmed", async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'p@example.com', name: 'P', now: T0, passwordHash: 'h1' });
      const session = (passwordHash: string, developerId = dev.id) => store.accounts.createSession({ idHash: hash(), developerId, passwordHash, now: T0, expiresAt: T0 + HOUR });
      assert.equal(await session('h1'), true);
      await store.accounts.setPasswordHash('p@example.com', 'h2');
      assert.equal(await session('h1'), false, 'a login checked against the old password, finishing after the change');
      assert.equal(await session('h2'), true);
      assert.equal(await session('h2', 'no-such-id'), false, 'a developer replaced meanwhile');
      await store.accounts.setDeveloperStatus('p@example.com', 'disabled', T0);
      assert.equal(await session('h2'), false, 'a disabled developer');
      const unconfirmed = await store.accounts.createDeveloper({ email: 'q@example.com', name: 'Q', now: T0, passwordHash: 'h', verified: false });
      const id = hash();
      assert.equal(await store.accounts.createSession({ idHash: id, developerId: unconfirmed.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR }), true);
      assert.equal(await store.accounts.findSession(id, T0 + 1), undefined, 'not confirmed');
    });

    it('a mailed confirmation link verifies its own developer, once, before it expires; a new one replaces the earlier', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'v@example.com', name: 'V', now: T0, passwordHash: 'h', verified: false });
      const other = await store.accounts.createDeveloper({ email: 'w@example.com', name: 'W', now: T0, passwordHash: 'h', verified: false });
      assert.equal(dev.verified, false);
      assert.equal((await store.accounts.findDeveloper('v@example.com'))?.verified, false);
      const [first, link] = [hash(), hash()];
      await store.accounts.saveEmailToken({ hash: first, developerId: dev.id, purpose: 'verify', now: T0, expiresAt: T0 + HOUR });
      await store.accounts.saveEmailToken({ hash: link, developerId: dev.id, purpose: 'verify', now: T0, expiresAt: T0 + HOUR });
      assert.equal(await store.accounts.confirmEmail({ hash: first, developerId: dev.id, now: T0 + 1 }), undefined, 'replaced');
      assert.equal(await store.accounts.confirmEmail({ hash: link, developerId: other.id, now: T0 + 1 }), undefined, "another developer's");
      assert.equal(await store.accounts.confirmEmail({ hash: link, developerId: dev.id, now: T0 + HOUR }), undefined, 'expired');
      assert.equal(await store.accounts.resetPassword({ hash: link, passwordHash: 'x', now: T0 + 1 }), undefined, 'not a reset link');
      assert.deepEqual(await store.accounts.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 1 }), { ...dev, verified: true });
      assert.equal((await store.accounts.findDeveloper('v@example.com'))?.verified, true);
      assert.equal(await store.accounts.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 2 }), undefined, 'spent');
      assert.equal((await store.accounts.findDeveloper('w@example.com'))?.verified, false);
    });

    it('a mailed reset link sets the password once, verifies the developer and ends their sessions', async ({ store }) => {
      const dev = await store.accounts.createDeveloper({ email: 'r@example.com', name: 'R', now: T0, passwordHash: 'old', verified: false });
      const session = hash();
      await store.accounts.createSession({ idHash: session, developerId: dev.id, passwordHash: 'old', now: T0, expiresAt: T0 + HOUR });
      const link = hash();
      await store.accounts.saveEmailToken({ hash: link, developerId: dev.id, purpose: 'reset', now: T0, expiresAt: T0 + HOUR });
      assert.equal(await store.accounts.confirmEmail({ hash: link, developerId: dev.id, now: T0 + 1 }), undefined, 'not a confirmation link');
      assert.equal(await store.accounts.resetPassword({ hash: link, passwordHash: 'new', now: T0 + HOUR }), undefined, 'expired');
      assert.equal(await store.accounts.findPasswordHash('r@example.com'), 'old');
      assert.deepEqual(await store.accounts.resetPassword({ hash: link, passwordHash: 'new', now: T0 + 1 }), { ...dev, verified: true });
      assert.equal(await store.accounts.findPasswordHash('r@example.com'), 'new');
      assert.equal(await store.accounts.findSession(session, T0 + 2), undefined, 'sessions ended');
      assert.equal(await store.accounts.resetPassword({ hash: link, passwordHash: 'again', now: T0 + 2 }), undefined, 'spent');
      assert.equal(await store.accounts.findPasswordHash('r@example.com'), 'new');
    });

    it('replaces an unverified developer with its apps, keys, tokens and sessions; never a verified one', async ({ store, seed, grant, found }) => {
      const squatter = await store.accounts.createDeveloper({ email: 'partner@example.org', name: 'Squatter', now: T0, passwordHash: 'h', verified: false });
      const f = await seed({ email: 'partner@example.org' });
      const { access } = await grant(f);
      assert.ok(await found(access.hash), 'cached before the replacement');
      const session = hash();
      await store.accounts.createSession({ idHash: session, developerId: squatter.id, passwordHash: 'h', now: T0, expiresAt: T0 + HOUR });
      const fresh = await store.accounts.replaceUnverifiedDeveloper({ email: 'partner@example.org', name: 'Partner', now: T0 + 2 });
      assert.ok(fresh);
      assert.notEqual(fresh.id, squatter.id);
      assert.deepEqual(fresh, { id: fresh.id, email: 'partner@example.org', name: 'Partner', status: 'active', verified: true, createdAt: T0 + 2 });
      assert.deepEqual(await store.accounts.findDeveloper('partner@example.org'), fresh);
      assert.equal(await store.accounts.findPasswordHash('partner@example.org'), null, 'no password: it comes with an invitation');
      assert.deepEqual(await store.apps.listApps({ developerEmail: 'partner@example.org' }), []);
      assert.equal(await store.cache.findClient(f.key), undefined, 'the key is gone');
      assert.equal(await found(access.hash), false, 'its tokens stopped');
      assert.equal(await store.accounts.findSession(session, T0 + 3), undefined);
      assert.equal(await store.accounts.replaceUnverifiedDeveloper({ email: 'partner@example.org', name: 'Again', now: T0 + 3 }), undefined, 'now verified');
      assert.equal(await store.accounts.replaceUnverifiedDeveloper({ email: 'nobody@example.org', name: 'N', now: T0 + 3 }), undefined);
      assert.deepEqual(await store.accounts.findDeveloper('partner@example.org'), fresh);
    });
  });
}
