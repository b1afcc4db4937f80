// The store failing under a running gateway: its folder removed, its disk full, its file
// read-only. Each surface answers what it cannot do with 503 and Retry-After, never 500, keeps
// serving what it can (tokens already verified), and never accepts a token it could not check.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bearer, call, startTestGateway, tempDir, tokenRequest, type Answer, type TestGateway } from '../helpers.ts';
import { Visitor } from '../portal/visitor.ts';

const PORTAL = 'portal:\n  listen: { port: 0 }\n  signup: invited\n';
const UNAVAILABLE = { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' };

async function issue(gw: TestGateway, app: { key: string; secret: string }): Promise<string> {
  const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 200, res.text);
  return (res.body as { access_token: string }).access_token;
}

function assertUnavailable(res: Answer, what: string): void {
  assert.deepEqual([res.status, res.headers.get('retry-after'), res.body], [503, '1', UNAVAILABLE], `${what}: ${res.text}`);
}

/** What every failing store must do: writes 503 on each surface, verified tokens still served, no 500. */
async function assertFailingStore(gw: TestGateway, app: { key: string; secret: string }, verified: string, unverified: string, cli = true): Promise<void> {
  assertUnavailable(await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app), 'token');
  assertUnavailable(await tokenRequest(gw.url, { token: verified }, app, '/oauth2/revoke'), 'revoke');
  const login = await new Visitor(gw.gateway.portalUrl!).submit('/login', '/login', { email: 'nobody@example.com', password: 'not the password' });
  assert.equal(login.status, 503, login.text);
  assert.match(login.text, /The service is temporarily unavailable; try again in a moment\./);
  assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(verified) })).status, 200, 'a verified token is still served');
  // Read from the database, which still reads, or refused with 503: never accepted unchecked.
  const fresh = await call(`${gw.url}/v1/hello`, { headers: bearer(unverified) });
  assert.ok(fresh.status === 200 || (fresh.status === 503 && fresh.headers.get('retry-after') === '1'), `${fresh.status} ${fresh.text}`);
  if (cli) {
    const admin = spawnSync(
      process.execPath,
      [path.join(import.meta.dirname, '../../bin/gateway.js'), 'admin', 'developers', 'create', '--config', gw.configFile, '--email', 'x@example.com', '--name', 'X'],
      { encoding: 'utf8' },
    );
    assert.equal(admin.status, 1, admin.stderr);
    assert.match(admin.stderr, /^error: the store is unavailable, nothing was changed; try again: .+\n$/);
  }
  assert.ok(!gw.logs.join('').includes('"status":500'), 'nothing answered 500');
}

const INTROSPECTOR = { key: 'backend', secret: 'introspection-secret-0123' };

async function started(dir: string): Promise<{ gw: TestGateway; app: { key: string; secret: string }; verified: string; unverified: string }> {
  const oauth = `  introspection:\n    clients: [{ id: ${INTROSPECTOR.key}, secret: ${INTROSPECTOR.secret} }]\n`;
  const gw = await startTestGateway({ extra: PORTAL, oauth }, { dir });
  const app = await gw.client('hello');
  const verified = await issue(gw, app);
  const unverified = await issue(gw, app);
  assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(verified) })).status, 200);
  return { gw, app, verified, unverified };
}

test('store-fault folder removed: writes answer 503 on every surface, verified tokens are served, nothing answers 500', async () => {
  const temp = tempDir();
  const dir = path.join(temp.dir, 'gateway');
  mkdirSync(dir);
  const { gw, app, verified, unverified } = await started(dir);
  try {
    rmSync(dir, { recursive: true });
    // The admin CLI is left out: it would make a new store where the folder was, as on a new machine.
    await assertFailingStore(gw, app, verified, unverified, false);
  } finally {
    await gw.close();
    temp.remove();
  }
});

test('store-fault disk full: writes answer 503 while the disk is full, and work again once there is room', async (t) => {
  const temp = tempDir();
  const dir = path.join(temp.dir, 'small');
  mkdirSync(dir);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    temp.remove();
    t.skip(`cannot mount a small tmpfs to fill (${(mounted.stderr || mounted.error?.message || '').trim()}): needs root`);
    return;
  }
  const { gw, app, verified, unverified } = await started(dir);
  try {
    // Fill what is left, then write tokens until SQLite's own pages find no room either.
    const filler = openSync(path.join(dir, 'filler'), 'w');
    const block = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) writeSync(filler, block);
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      closeSync(filler);
    }
    let full: Answer | undefined;
    for (let i = 0; i < 2000 && full === undefined; i++) {
      const res = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
      if (res.status !== 200) full = res;
    }
    assert.ok(full, 'the disk filled up');
    assertUnavailable(full, 'token');
    await assertFailingStore(gw, app, verified, unverified);
    rmSync(path.join(dir, 'filler'));
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 200, 'room again: tokens again');
  } finally {
    await gw.close();
    execFileSync('umount', [dir]);
    temp.remove();
  }
});

test('store-fault read-only database file: the gateway starts and serves what it reads; writes answer 503', async (t) => {
  const temp = tempDir();
  const dir = path.join(temp.dir, 'gateway');
  mkdirSync(dir);
  const first = await started(dir);
  await first.gw.close();
  // Root writes to any file: the gateway then runs as nobody, who owns the folder but may only read the database.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chownSync(temp.dir, 65534, 65534);
    for (const name of ['', ...readdirSync(dir)]) chownSync(path.join(dir, name), 65534, 65534);
    process.setegid?.(65534);
    process.seteuid?.(65534);
  }
  chmodSync(path.join(dir, 'gateway.db'), 0o400);
  let second: TestGateway | undefined;
  try {
    second = await startTestGateway({ extra: PORTAL }, { dir });
    await assertFailingStore(second, first.app, first.verified, first.unverified);
  } catch (err) {
    if (asRoot && (err as NodeJS.ErrnoException).code === 'EPERM') t.skip('cannot act as another user here');
    else throw err;
  } finally {
    await second?.close();
    if (asRoot) {
      process.seteuid?.(0);
      process.setegid?.(0);
    }
    temp.remove();
  }
});

test('store-fault a token that cannot be read is refused with 503 on a route and at introspection, never let through', async () => {
  const temp = tempDir();
  const { gw, unverified } = await started(temp.dir);
  try {
    // The database closed under the gateway: every read fails.
    await gw.gateway.services.store.close();
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(unverified) });
    assert.deepEqual([res.status, res.headers.get('retry-after'), res.headers.get('content-type')], [503, '1', 'application/problem+json'], res.text);
    assert.equal((res.body as { code: string }).code, 'temporarily_unavailable');
    assertUnavailable(await tokenRequest(gw.url, { token: unverified }, INTROSPECTOR, '/oauth2/introspect'), 'introspect');
  } finally {
    await gw.close().catch(() => {});
    temp.remove();
  }
});
