// `gateway admin backup` against a live gateway whose store holds 200,000 tokens: calls keep
// being answered while it runs, tokens keep being issued (each commit would restart a backup
// that did not hold its snapshot), and a gateway started on the copy knows the apps and tokens.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { newToken, orderedId, PREFIX } from '../../src/crypto.ts';
import { bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';
import { gateway, serve, type Result, type Served } from './children.ts';

const BULK_TOKENS = 200_000;

function ok(r: Result): Result {
  assert.deepEqual({ code: r.code, signal: r.signal, stderr: r.stderr }, { code: 0, signal: null, stderr: '' }, `stdout: ${r.stdout}`);
  return r;
}

/** Exit 0, and on stderr only the change's one audit line. */
function changed(r: Result, action: string): Result {
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, `stderr: ${r.stderr}`);
  assert.match(r.stderr, /^\{[^\n]*\}\n$/, 'one JSON line on stderr');
  assert.equal((JSON.parse(r.stderr) as { audit: unknown }).audit, action);
  return r;
}

function fails(r: Result, message: string): void {
  assert.deepEqual({ code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr }, { code: 1, signal: null, stdout: '', stderr: `error: ${message}\n` });
}

async function issueToken(url: string, app: { key: string; secret: string }): Promise<string> {
  const res = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 200, res.text);
  return (res.body as { access_token: string }).access_token;
}

async function assertServes(url: string, token: string): Promise<void> {
  const res = await call(`${url}/v1/hello`, { headers: bearer(token) });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { message: 'hello' });
}

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

/** Writes `count` access tokens of `app` straight into the store, in one transaction; returns a sample of them. */
function insertTokens(database: string, app: { id: string; key: string }, count: number): string[] {
  const db = new DatabaseSync(database);
  try {
    const insert = db.prepare(
      `INSERT INTO tokens (hash, kind, app_id, key, product, scope, subject, family, issued_at, expires_at)
       VALUES (?, 'access', ?, ?, 'hello', 'hello:read hello:admin', NULL, ?, ?, ?)`,
    );
    const now = Date.now();
    const sample: string[] = [];
    db.exec('BEGIN');
    for (let i = 0; i < count; i++) {
      const { token, digest } = newToken(PREFIX.access);
      insert.run(digest, app.id, app.key, orderedId().toString('hex'), now, now + 3_600_000);
      if (i % 40_000 === 0) sample.push(token);
    }
    db.exec('COMMIT');
    return sample;
  } finally {
    db.close();
  }
}

describe('gateway admin backup', () => {
  const { dir, remove } = tempDir();
  const live = path.join(dir, 'live');
  const restored = path.join(dir, 'restored');
  const liveConfig = path.join(live, 'gateway.yaml');
  const copyConfig = path.join(restored, 'gateway.yaml');
  // What the restored config's store.path and default secretKeyFile name.
  const copy = path.join(restored, 'gateway.db');
  let app: { id: string; key: string; secret: string };
  let bulk: string[];
  let gw: Served;
  let issuedBefore: string;

  before(async () => {
    for (const [folder, config] of [
      [live, liveConfig],
      [restored, copyConfig],
    ] as const) {
      mkdirSync(folder);
      writeFileSync(config, configYaml());
    }
    changed(await gateway(['admin', 'developers', 'create', '--email', 'dev@example.com', '--name', 'Dev', '--config', liveConfig]), 'developer.create');
    app = JSON.parse(
      changed(await gateway(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'kept', '--product', 'hello', '--json', '--config', liveConfig]), 'app.register').stdout,
    );
    bulk = insertTokens(path.join(live, 'gateway.db'), app, BULK_TOKENS);
    gw = await serve(liveConfig);
    issuedBefore = await issueToken(gw.url, app);
  });
  after(async () => {
    await gw.stop('SIGKILL');
    remove();
  });

  test('copies the live store while calls are answered and tokens issued', async (t) => {
    await assertServes(gw.url, issuedBefore);
    const calls: { status: number; ms: number }[] = [];
    let issued = 0;
    let backingUp = true;
    const callLoop = async () => {
      while (backingUp) {
        const started = performance.now();
        const res = await call(`${gw.url}/v1/hello`, { headers: bearer(issuedBefore) });
        calls.push({ status: res.status, ms: performance.now() - started });
      }
    };
    const issueLoop = async () => {
      while (backingUp) {
        await issueToken(gw.url, app);
        issued++;
      }
    };
    const loops = [callLoop(), callLoop(), callLoop(), issueLoop()];
    const started = performance.now();
    const result = await gateway(['admin', 'backup', '--config', liveConfig, '--to', copy]);
    const ms = performance.now() - started;
    backingUp = false;
    await Promise.all(loops);
    t.diagnostic(
      `backup of ${BULK_TOKENS} tokens: ${Math.round(ms)} ms (the command, start included); ${calls.length} calls, slowest ${Math.round(Math.max(...calls.map((c) => c.ms)))} ms; ${issued} tokens issued meanwhile`,
    );

    const m = /^backed up (.+) to (.+) \((\d+) pages, key file (.+)\)\n$/.exec(ok(result).stdout);
    assert.ok(m, result.stdout);
    assert.deepEqual([m[1], m[2], m[4]], [path.join(live, 'gateway.db'), copy, `${copy}.key`]);
    assert.ok(Number(m[3]) > 1000, `${m[3]} pages`);

    assert.ok(calls.length > 0 && issued > 0);
    for (const c of calls) {
      assert.equal(c.status, 200);
      assert.ok(c.ms < 1000, `a call took ${c.ms} ms`);
    }
    // Private, and nothing left aside.
    assert.deepEqual(readdirSync(restored).sort(), ['gateway.db', 'gateway.db.key', 'gateway.yaml']);
    assert.deepEqual([mode(copy), mode(`${copy}.key`)], ['600', '600']);
    assert.deepEqual(readFileSync(`${copy}.key`), readFileSync(path.join(live, 'gateway.db.key')));
    const db = new DatabaseSync(copy, { readOnly: true });
    try {
      assert.deepEqual({ ...db.prepare('PRAGMA integrity_check').get() }, { integrity_check: 'ok' });
      assert.ok((db.prepare('SELECT count(*) AS n FROM tokens').get() as { n: number }).n > BULK_TOKENS);
    } finally {
      db.close();
    }
  });

  test('a gateway started on the copy verifies the tokens and knows the app', async () => {
    const restoredGw = await serve(copyConfig);
    try {
      for (const token of [issuedBefore, ...bulk]) await assertServes(restoredGw.url, token);
      // The app's secret verifies: the key file came along.
      await assertServes(restoredGw.url, await issueToken(restoredGw.url, app));
      const apps = JSON.parse(ok(await gateway(['admin', 'apps', 'list', '--json', '--config', copyConfig])).stdout) as { name: string }[];
      assert.deepEqual(
        apps.map((a) => a.name),
        ['kept'],
      );
    } finally {
      assert.deepEqual(await restoredGw.stop(), { code: 0, signal: null });
    }
  });

  test('refuses a copy that exists, and the live store even with --force', async () => {
    const before = readFileSync(copy);
    const mtime = statSync(copy).mtimeMs;
    fails(await gateway(['admin', 'backup', '--config', liveConfig, '--to', copy]), `${copy} exists; name another file, or pass --force to replace it`);
    assert.deepEqual(readFileSync(copy), before);
    assert.equal(statSync(copy).mtimeMs, mtime);

    const liveDb = path.join(live, 'gateway.db');
    fails(await gateway(['admin', 'backup', '--config', liveConfig, '--to', liveDb, '--force']), `${liveDb} is the live store's own file; name another`);
    await assertServes(gw.url, issuedBefore);
  });

  test('--force replaces the copy, and drops a log left beside it', async () => {
    writeFileSync(`${copy}-wal`, 'not the log of the new copy');
    const out = ok(await gateway(['admin', 'backup', '--config', liveConfig, '--to', copy, '--force', '--json'])).stdout;
    const json = JSON.parse(out) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json).sort(), ['database', 'keyFile', 'pages', 'to']);
    assert.deepEqual(readdirSync(restored).sort(), ['gateway.db', 'gateway.db.key', 'gateway.yaml']);
    const restoredGw = await serve(copyConfig);
    try {
      await assertServes(restoredGw.url, issuedBefore);
    } finally {
      await restoredGw.stop();
    }
  });
});
