// Another process holds the SQLite file's write lock for 8 s (BEGIN EXCLUSIVE, as a backup tool,
// a migration or a shell left open would). The gateway keeps verifying tokens without a pause,
// answers what must write 503 temporarily_unavailable with Retry-After once store.busyTimeout
// (2 s) has passed, never 500, and works again when the lock goes, without a restart.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { bearer, call, startTestGateway, tokenRequest, type Answer, type TestGateway } from '../helpers.ts';
import { Visitor } from '../portal/visitor.ts';

const LOCK_MS = 8000; // long enough for the admin CLI, another process, to start and meet it on a busy machine
const BUSY_TIMEOUT_MS = 2000;

/** A second process that takes the write lock, says "locked", holds it for `ms`, and says "released". */
function holdLock(file: string, ms: number): { child: ChildProcess; locked: Promise<void>; released: Promise<void> } {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1]);
    db.exec('BEGIN EXCLUSIVE');
    console.log('locked');
    setTimeout(() => { db.exec('COMMIT'); db.close(); console.log('released'); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', script, file, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => line === word && resolve());
      child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before "${word}"`)));
    });
  return { child, locked: said('locked'), released: said('released') };
}

let gw: TestGateway;
let app: { key: string; secret: string };
let cached: string;
let uncached: string;

before(async () => {
  gw = await startTestGateway({ extra: 'portal:\n  listen: { port: 0 }\n  signup: invited\n' });
  app = await gw.client('hello');
  const issue = async () => ((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body as { access_token: string }).access_token;
  cached = await issue();
  uncached = await issue();
  assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(cached) })).status, 200);
});
after(() => gw.close());

function assertUnavailable(res: Answer, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.text}`);
  assert.equal(res.headers.get('retry-after'), '1', what);
}

test('store-lock: under a foreign write lock of 8 s, verification flows, writes answer 503 after the busy timeout, and all works again after it', async () => {
  const lock = holdLock(path.join(gw.dir, 'gateway.db'), LOCK_MS);
  await lock.locked;
  const lockedAt = performance.now();

  // Twenty calls with a verified token, spread over the lock: none waits for it.
  const calls = (async () => {
    const durations: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const res = await call(`${gw.url}/v1/hello`, { headers: bearer(cached) });
      durations.push(performance.now() - started);
      assert.equal(res.status, 200, res.text);
      await new Promise((resolve) => setTimeout(resolve, (LOCK_MS - 500) / 20));
    }
    return durations;
  })();

  // A token never verified before is read from the database: WAL readers do not wait for writers.
  const first = await call(`${gw.url}/v1/hello`, { headers: bearer(uncached) });
  assert.equal(first.status, 200, first.text);

  const writes = await Promise.all([
    tokenRequest(gw.url, { grant_type: 'client_credentials' }, app).then((res) => ({ res, at: performance.now() - lockedAt })),
    tokenRequest(gw.url, { token: uncached }, app, '/oauth2/revoke').then((res) => ({ res, at: performance.now() - lockedAt })),
    new Visitor(gw.gateway.portalUrl!).submit('/login', '/login', { email: 'nobody@example.com', password: 'not the password' }).then((page) => ({ page, at: performance.now() - lockedAt })),
    // The admin CLI, another process on the same file.
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const argv = [path.join(import.meta.dirname, '../../bin/gateway.js'), 'admin', 'developers', 'create', '--config', gw.configFile, '--email', 'late@example.com', '--name', 'Late'];
      const child = execFile(process.execPath, argv, { encoding: 'utf8' }, (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
    }).then((cli) => ({ cli, at: performance.now() - lockedAt })),
  ]);
  const [issued, revoked, login, admin] = writes;
  assert.deepEqual(admin.cli, { code: 1, stdout: '', stderr: 'error: the store is unavailable, nothing was changed; try again: the database is locked by another connection\n' });
  assertUnavailable(issued.res, 'token');
  assert.deepEqual(issued.res.body, { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' });
  assertUnavailable(revoked.res, 'revoke');
  assert.deepEqual(revoked.res.body, { error: 'temporarily_unavailable', error_description: 'the authorization server is unavailable, try again later' });
  assert.equal(login.page.status, 503, login.page.text);
  assert.match(login.page.text, /The service is temporarily unavailable; try again in a moment\./);
  for (const { at } of writes) {
    assert.ok(at >= BUSY_TIMEOUT_MS - 50 && at < LOCK_MS, `answered ${Math.round(at)} ms into the lock: after the busy timeout, before the lock ended`);
  }

  const durations = await calls;
  assert.ok(Math.max(...durations) < 100, `the slowest verified call took ${Math.round(Math.max(...durations))} ms`);
  await lock.released;

  // After the lock: everything works again, in the same process.
  const again = await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app);
  assert.equal(again.status, 200, again.text);
  const token = (again.body as { access_token: string }).access_token;
  assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status, 200);
  assert.equal((await tokenRequest(gw.url, { token }, app, '/oauth2/revoke')).status, 200);
  assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token) })).status, 401);
  assert.ok(!gw.logs.join('').includes('"status":500'), 'nothing answered 500');
});
