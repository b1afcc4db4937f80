// End to end: the real `bin/gateway.js` as a child process, against a real SQLite file in a temp
// dir. The admin CLI, `config check`, serving, revocation from another process, restart and
// kill -9 durability.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { userInfo } from 'node:os';
import { freePort } from '../../src/http/listener.ts';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { bearer, call, configYaml, tempDir, TEST_REDIS_URL, tokenRequest, type Answer } from '../helpers.ts';
import { gateway, serve, type Env, type Result, type Served } from './children.ts';

/** Tests of the SQLite files themselves, skipped when the suite runs on Redis (test/e2e/on-redis.test.ts). */
const sqliteOnly = TEST_REDIS_URL === undefined ? {} : { skip: 'reads the SQLite files' };

// ---------------------------------------------------------------------------------------------
// Workspaces: a temp dir holding gateway.yaml; the store lands next to it (./gateway.db)

interface Workspace {
  dir: string;
  config: string;
  /** `gateway …args --config <this workspace's file>` */
  cli(...args: string[]): Promise<Result>;
  remove(): void;
}

function workspace(yaml = configYaml()): Workspace {
  const { dir, remove } = tempDir();
  const config = path.join(dir, 'gateway.yaml');
  writeFileSync(config, yaml);
  return { dir, config, cli: (...args) => gateway([...args, '--config', config]), remove };
}

interface CreatedApp {
  id: string;
  developerEmail: string;
  name: string;
  product: string;
  status: string;
  approval: string;
  createdAt: number;
  key: string;
  secret: string;
}

async function addDeveloper(ws: Workspace, email: string, name = 'Dev'): Promise<void> {
  changed(await ws.cli('admin', 'developers', 'create', '--email', email, '--name', name), 'developer.create');
}

async function addApp(ws: Workspace, developer: string, name: string, product = 'hello'): Promise<CreatedApp> {
  return parse<CreatedApp>(changed(await ws.cli('admin', 'apps', 'create', '--developer', developer, '--name', name, '--product', product, '--json'), 'app.register'));
}

/** Every file of the store (database, WAL, shared memory) as one buffer. */
function storeBytes(dir: string): Buffer {
  return Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith('gateway.db'))
      .map((f) => readFileSync(path.join(dir, f))),
  );
}

/** 1-based number of the only line of `text` that contains `needle`. */
function lineOf(text: string, needle: string): number {
  const lines = text.split('\n');
  const found = lines.flatMap((l, i) => (l.includes(needle) ? [i + 1] : []));
  assert.equal(found.length, 1, `"${needle}" must occur on exactly one line`);
  return found[0]!;
}

/** ISO date as the CLI tables print it. */
const isoDate = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

// ---------------------------------------------------------------------------------------------
// Assertions

/** Exit 0, nothing on stderr (a command that changes nothing writes no audit line); returns the result. */
function ok(r: Result): Result {
  assert.deepEqual({ code: r.code, signal: r.signal, stderr: r.stderr }, { code: 0, signal: null, stderr: '' }, `stdout: ${r.stdout}`);
  return r;
}

/**
 * Exit 0, and on stderr exactly one line: the change's audit line, by the operator running the
 * tests (test/admin/audit.test.ts checks each line's fields). Returns the result.
 */
function changed(r: Result, action: string): Result {
  assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, `stderr: ${r.stderr}`);
  assert.match(r.stderr, /^\{[^\n]*\}\n$/, 'one JSON line on stderr');
  const line = JSON.parse(r.stderr) as { audit: unknown; actor: unknown };
  assert.deepEqual([line.audit, line.actor], [action, { kind: 'operator', user: userInfo().username }]);
  return r;
}

function parse<T>(r: Result): T {
  return JSON.parse(r.stdout) as T;
}

/** Exit `code`, nothing on stdout, and exactly the one line `error: <message>` on stderr. */
function fails(r: Result, code: number, message: string): void {
  assert.deepEqual({ code: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr }, { code, signal: null, stdout: '', stderr: `error: ${message}\n` });
}

async function issueToken(url: string, app: { key: string; secret: string }): Promise<string> {
  const res = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 200, res.text);
  const token = (res.body as { access_token: unknown }).access_token;
  assert.ok(typeof token === 'string' && token.startsWith('gwat_'), res.text);
  return token;
}

const hello = (url: string, token: string): Promise<Answer> => call(`${url}/v1/hello`, { headers: bearer(token) });

async function assertServes(url: string, token: string): Promise<void> {
  const res = await hello(url, token);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, { message: 'hello' });
}

async function assertTokenRejected(url: string, token: string): Promise<void> {
  const res = await hello(url, token);
  assert.equal(res.status, 401, res.text);
  assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="test-realm", error="invalid_token", error_description="the access token is invalid, expired or revoked"');
  assert.equal((res.body as { code: unknown }).code, 'invalid_token');
}

async function assertClientRejected(url: string, app: { key: string; secret: string }): Promise<void> {
  const res = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(res.status, 401, res.text);
  assert.deepEqual(res.body, { error: 'invalid_client', error_description: 'client authentication failed' });
  assert.equal(res.headers.get('www-authenticate'), 'Basic realm="test-realm", charset="UTF-8"');
}

// ---------------------------------------------------------------------------------------------
// 1. Developers

describe('gateway admin developers', () => {
  let ws: Workspace;
  before(() => (ws = workspace()));
  after(() => ws.remove());

  test('create lower-cases and trims the email; --json prints the developer', async () => {
    assert.equal(changed(await ws.cli('admin', 'developers', 'create', '--email', '  Ada@Example.COM ', '--name', 'Ada Lovelace'), 'developer.create').stdout, 'created developer ada@example.com\n');
    const grace = parse<Record<string, unknown>>(changed(await ws.cli('admin', 'developers', 'create', '--email', 'GRACE@example.com', '--name', 'Grace Hopper', '--json'), 'developer.create'));
    assert.deepEqual(Object.keys(grace).sort(), ['createdAt', 'email', 'id', 'name', 'status', 'verified']);
    assert.equal(grace.verified, true, 'an operator vouches for the address');
    assert.equal(grace.email, 'grace@example.com');
    assert.equal(grace.name, 'Grace Hopper');
    assert.equal(grace.status, 'active');
    assert.ok(typeof grace.createdAt === 'number' && Math.abs(grace.createdAt - Date.now()) < 60_000);
  });

  test('invite prints a one-time code; an unknown developer or a bad --valid is an error', async () => {
    const out = changed(await ws.cli('admin', 'developers', 'invite', 'ADA@example.com'), 'developer.invite').stdout;
    assert.match(out, /^invitation for ada@example\.com, valid until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ:\ncode: gwi_[A-Za-z0-9_-]{43}\nThe code is shown only now\./);
    const json = parse<{ email: string; code: string; expiresAt: number }>(changed(await ws.cli('admin', 'developers', 'invite', 'ada@example.com', '--valid', '2', '--json'), 'developer.invite'));
    assert.equal(json.email, 'ada@example.com');
    assert.ok(Math.abs(json.expiresAt - (Date.now() + 2 * 86_400_000)) < 60_000);
    fails(await ws.cli('admin', 'developers', 'invite', 'nobody@example.com'), 1, 'no developer nobody@example.com');
    fails(await ws.cli('admin', 'developers', 'invite', 'ada@example.com', '--valid', '0'), 1, '--valid: a number of days from 1 to 90');
  });

  test('list prints a table, and --json the same developers', async () => {
    const list = parse<{ email: string; name: string; status: string; createdAt: number }[]>(ok(await ws.cli('admin', 'developers', 'list', '--json')));
    assert.deepEqual(
      list.map((d) => [d.email, d.name, d.status]),
      [
        ['ada@example.com', 'Ada Lovelace', 'active'],
        ['grace@example.com', 'Grace Hopper', 'active'],
      ],
    );
    const [ada, grace] = list.map((d) => isoDate(d.createdAt));
    assert.equal(
      ok(await ws.cli('admin', 'developers', 'list')).stdout,
      [
        'EMAIL              NAME          STATUS  VERIFIED  CREATED',
        `ada@example.com    Ada Lovelace  active  yes       ${ada}`,
        `grace@example.com  Grace Hopper  active  yes       ${grace}`,
        '',
      ].join('\n'),
    );
  });

  test('disable E (any case) disables the developer; no new apps for them; enable restores', async () => {
    assert.equal(changed(await ws.cli('admin', 'developers', 'disable', 'ADA@example.com'), 'developer.disable').stdout, 'developer ada@example.com is disabled\n');
    const list = parse<{ email: string; status: string; createdAt: number }[]>(ok(await ws.cli('admin', 'developers', 'list', '--json')));
    assert.deepEqual(
      list.map((d) => [d.email, d.status]),
      [
        ['ada@example.com', 'disabled'],
        ['grace@example.com', 'active'],
      ],
    );
    const [ada, grace] = list.map((d) => isoDate(d.createdAt));
    assert.equal(
      ok(await ws.cli('admin', 'developers', 'list')).stdout,
      [
        'EMAIL              NAME          STATUS    VERIFIED  CREATED',
        `ada@example.com    Ada Lovelace  disabled  yes       ${ada}`,
        `grace@example.com  Grace Hopper  active    yes       ${grace}`,
        '',
      ].join('\n'),
    );
    fails(await ws.cli('admin', 'apps', 'create', '--developer', 'ada@example.com', '--name', 'x', '--product', 'hello'), 1, 'developer ada@example.com is disabled');
    fails(await ws.cli('admin', 'developers', 'disable', 'nobody@example.com'), 1, 'no developer nobody@example.com');

    const enabled = parse<{ email: string; status: string }>(changed(await ws.cli('admin', 'developers', 'enable', 'ada@example.com', '--json'), 'developer.enable'));
    assert.deepEqual([enabled.email, enabled.status], ['ada@example.com', 'active']);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Apps, and secrets never shown again nor stored in plain text

describe('gateway admin apps', () => {
  let ws: Workspace;
  let first: CreatedApp;
  before(async () => {
    ws = workspace();
    await addDeveloper(ws, 'dev@example.com');
  });
  after(() => ws.remove());

  test('create --json prints the app with its key and secret', async () => {
    first = await addApp(ws, 'DEV@example.com', 'first-app');
    assert.deepEqual(Object.keys(first).sort(), ['approval', 'createdAt', 'developerEmail', 'developerId', 'id', 'key', 'name', 'product', 'redirectUris', 'secret', 'status', 'type']);
    assert.equal(first.approval, 'approved', "an operator's app needs no approval");
    assert.equal(first.developerEmail, 'dev@example.com');
    assert.equal(first.name, 'first-app');
    assert.equal(first.product, 'hello');
    assert.equal(first.status, 'active');
    assert.match(first.key, /^[A-Za-z0-9]{32}$/);
    assert.match(first.secret, /^gws_[A-Za-z0-9_-]{43}$/);
  });

  test('create without --json prints key and secret once, with a warning', async () => {
    const r = changed(await ws.cli('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'second-app', '--product', 'orders'), 'app.register');
    const m =
      /^created confidential app "second-app" for dev@example\.com, API product orders\nkey: {4}([A-Za-z0-9]{32})\nsecret: (gws_[A-Za-z0-9_-]{43})\nThe secret is shown only now; store it safely\.\n$/.exec(
        r.stdout,
      );
    assert.ok(m, r.stdout);
  });

  test('list and show never print the secret', async () => {
    const listJson = ok(await ws.cli('admin', 'apps', 'list', '--json'));
    const apps = parse<(Omit<CreatedApp, 'key' | 'secret'> & Record<string, unknown>)[]>(listJson);
    assert.deepEqual(
      apps.map((a) => [a.developerEmail, a.name, a.product, a.status]),
      [
        ['dev@example.com', 'first-app', 'hello', 'active'],
        ['dev@example.com', 'second-app', 'orders', 'active'],
      ],
    );
    for (const a of apps) assert.ok(!('secret' in a) && !('key' in a));
    const [c1, c2] = apps.map((a) => isoDate(a.createdAt));
    // Each app's keys, which show, disable and revoke take.
    const [k1, k2] = (apps as unknown as { credentials: { key: string }[] }[]).map((a) => a.credentials.map((c) => c.key).join());
    assert.equal(k1, first.key);
    const list = ok(await ws.cli('admin', 'apps', 'list'));
    assert.equal(
      list.stdout,
      [
        'DEVELOPER        NAME        PRODUCT  TYPE          STATUS  CREATED               KEYS',
        `dev@example.com  first-app   hello    confidential  active  ${c1}  ${k1}`,
        `dev@example.com  second-app  orders   confidential  active  ${c2}  ${k2}`,
        '',
      ].join('\n'),
    );
    assert.equal(ok(await ws.cli('admin', 'apps', 'list', '--developer', 'dev@example.com')).stdout, list.stdout);

    const show = ok(await ws.cli('admin', 'apps', 'show', first.key));
    assert.equal(
      show.stdout,
      [
        'DEVELOPER        NAME       PRODUCT  TYPE          STATUS  CREATED',
        `dev@example.com  first-app  hello    confidential  active  ${c1}`,
        '',
        `${'KEY'.padEnd(first.key.length)}  STATUS    CREATED               EXPIRES`,
        `${first.key}  approved  ${c1}`,
        '',
      ].join('\n'),
    );
    const shown = parse<Record<string, unknown>>(ok(await ws.cli('admin', 'apps', 'show', first.key, '--json')));
    const { key: _key, secret: _secret, ...appOnly } = first;
    assert.deepEqual(shown, { ...appOnly, credentials: [{ key: first.key, appId: first.id, status: 'approved', expiresAt: null, createdAt: first.createdAt }] });
    const byName = ok(await ws.cli('admin', 'apps', 'show', '--developer', 'dev@example.com', '--name', 'first-app', '--json'));
    assert.deepEqual(JSON.parse(byName.stdout), shown);

    for (const out of [listJson.stdout, list.stdout, show.stdout, byName.stdout]) {
      assert.ok(!out.includes(first.secret) && !out.includes('gws_') && !out.includes('secret'), out);
    }
    fails(await ws.cli('admin', 'apps', 'show', 'no-such-key'), 1, 'no app with key no-such-key');
    fails(await ws.cli('admin', 'apps', 'show'), 1, 'name the app by its key, or by --developer and --name');
  });

  function assertNoPlainSecrets(bytes: Buffer, tokens: readonly string[]): void {
    assert.ok(bytes.includes(first.key), 'the key is stored as is (a sanity check of the scan)');
    for (const plain of [first.secret, first.secret.slice('gws_'.length), ...tokens, ...tokens.map((t) => t.slice('gwat_'.length))]) {
      assert.equal(bytes.includes(plain), false, `found ${plain.slice(0, 12)}… in the store`);
    }
  }

  test('the store holds neither the secret nor the tokens in plain text', sqliteOnly, async () => {
    const gw = await serve(ws.config);
    try {
      const tokens = [await issueToken(gw.url, first), await issueToken(gw.url, first)];
      for (const t of tokens) await assertServes(gw.url, t);
      // While serving (the WAL not yet checkpointed), then after a clean stop.
      assertNoPlainSecrets(storeBytes(ws.dir), tokens);
      assert.deepEqual(await gw.stop(), { code: 0, signal: null });
      assertNoPlainSecrets(storeBytes(ws.dir), tokens);
    } finally {
      await gw.stop('SIGKILL');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Errors: exit 1, one line on stderr, nothing written

describe('gateway admin errors', () => {
  let ws: Workspace;
  /** What `developers list --json` and `apps list --json` print. */
  const snapshot = async () => {
    const [developers, apps] = await Promise.all([ws.cli('admin', 'developers', 'list', '--json'), ws.cli('admin', 'apps', 'list', '--json')]);
    return { developers: ok(developers).stdout, apps: ok(apps).stdout };
  };
  let baseline: Awaited<ReturnType<typeof snapshot>>;
  /** Runs a failing command and checks the store did not change. */
  async function failsUnchanged(args: string[], message: string): Promise<void> {
    fails(await ws.cli(...args), 1, message);
    assert.deepEqual(await snapshot(), baseline);
  }

  before(async () => {
    ws = workspace();
    await addDeveloper(ws, 'dev@example.com', 'Original Name');
    await addApp(ws, 'dev@example.com', 'taken');
    baseline = await snapshot();
    assert.match(baseline.developers, /"Original Name"/);
    assert.match(baseline.apps, /"taken"/);
  });
  after(() => ws.remove());

  test('unknown product', () => failsUnchanged(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'n1', '--product', 'nope'], 'no API product "nope" (known: hello, orders)'));

  test('unknown developer', () => failsUnchanged(['admin', 'apps', 'create', '--developer', 'Nobody@Example.com', '--name', 'n2', '--product', 'hello'], 'no developer nobody@example.com'));

  test('duplicate app name', () =>
    failsUnchanged(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'taken', '--product', 'orders'], 'developer dev@example.com already has an app named "taken"'));

  test('duplicate developer, in another case', () =>
    failsUnchanged(['admin', 'developers', 'create', '--email', 'DEV@example.com', '--name', 'Other Name'], 'developer dev@example.com already exists'));

  test('invalid email', () => failsUnchanged(['admin', 'developers', 'create', '--email', 'not-an-email', '--name', 'X'], '"not-an-email" is not an email address'));

  test('unknown key, and a key revoked twice', async () => {
    await failsUnchanged(['admin', 'keys', 'revoke', 'no-such-key'], 'no key no-such-key');
    const app = await addApp(ws, 'dev@example.com', 'to-revoke');
    assert.equal(changed(await ws.cli('admin', 'keys', 'revoke', app.key), 'key.revoke').stdout, `key ${app.key} is revoked\n`);
    baseline = await snapshot();
    await failsUnchanged(['admin', 'keys', 'revoke', app.key], `key ${app.key} is already revoked`);
  });

  test('a missing required option', () => failsUnchanged(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'n3'], "required option '--product <product>' not specified"));
});

// ---------------------------------------------------------------------------------------------
// 3b. Control characters: refused in names, escaped in what the CLI prints

describe('gateway admin and control characters', () => {
  let ws: Workspace;
  before(async () => {
    ws = workspace();
    await addDeveloper(ws, 'dev@example.com');
  });
  after(() => ws.remove());

  const NAME_REFUSED = 'must not contain control characters or bidirectional text overrides';

  test('terminal-escape: a developer or app name with ESC, CSI, DEL, a bidi override or isolate is refused; nothing is written', async () => {
    const before = ok(await ws.cli('admin', 'developers', 'list', '--json')).stdout;
    for (const name of ['Eve\x1b[2J', 'evil\u202egpj.exe', 'x\u2066y', 'in\u200bvisible', 'b\ufeffom']) {
      fails(await ws.cli('admin', 'developers', 'create', '--email', 'eve@example.com', '--name', name), 1, `the developer name ${NAME_REFUSED}`);
    }
    for (const name of ['Eve\u009b31m', 'Eve\x7f', 'x\u200fy', 'tab\there']) {
      fails(await ws.cli('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', name, '--product', 'hello'), 1, `the app name ${NAME_REFUSED}`);
    }
    assert.equal(ok(await ws.cli('admin', 'developers', 'list', '--json')).stdout, before);
    assert.equal(ok(await ws.cli('admin', 'apps', 'list', '--json')).stdout, '[]\n');
  });

  test('terminal-escape: an email with a control character is refused, and the message echoes it escaped', async () => {
    const r = await ws.cli('admin', 'developers', 'create', '--email', 'eve\x1b[31m@example.com', '--name', 'Eve');
    fails(r, 1, '"eve\\u001b[31m@example.com" is not an email address');
    assert.equal(r.stderr.includes('\x1b'), false);
  });

  test('terminal-escape: names stored before this check are printed escaped in tables and messages, as is in --json', sqliteOnly, async () => {
    // As a store written by an earlier version holds them.
    const store = openSqliteStore({ path: path.join(ws.dir, 'gateway.db') });
    try {
      const dev = await store.accounts.createDeveloper({ email: 'old@example.com', name: 'Old\x1b[31mRed\u202e', now: Date.now() });
      await store.apps.createApp({ developerId: dev.id, name: 'app\x1b]0;owned\x07', product: 'hello', key: 'K'.repeat(32), secretHash: Buffer.alloc(32), now: Date.now() });
    } finally {
      await store.close();
    }
    const devs = ok(await ws.cli('admin', 'developers', 'list')).stdout;
    assert.match(devs, /^old@example\.com {2}Old\\u001b\[31mRed\\u202e {2}active/m);
    const apps = ok(await ws.cli('admin', 'apps', 'list')).stdout;
    assert.match(apps, /^old@example\.com {2}app\\u001b\]0;owned\\u0007 {2}hello/m);
    const disabled = changed(await ws.cli('admin', 'apps', 'disable', 'K'.repeat(32)), 'app.disable').stdout;
    assert.equal(disabled, 'app "app\\u001b]0;owned\\u0007" of old@example.com is disabled\n');
    for (const out of [devs, apps, disabled]) assert.doesNotMatch(out, /[\x1b\x07\u202e]/);
    const json = JSON.parse(ok(await ws.cli('admin', 'developers', 'list', '--json')).stdout) as { name: string }[];
    assert.ok(
      json.some((d) => d.name === 'Old\x1b[31mRed\u202e'),
      'JSON keeps the stored value (escaped by JSON itself)',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// 4. config check

describe('gateway config check', () => {
  const spaces: Workspace[] = [];
  after(() => {
    for (const s of spaces) s.remove();
  });

  /** A workspace with `yaml`; `check` runs `config check` on it. */
  function withConfig(yaml: string) {
    const ws = workspace(yaml);
    spaces.push(ws);
    return { ws, check: () => gateway(['config', 'check', '--config', ws.config]) };
  }

  /** `config check` exits 2 naming exactly `issues`; serving the file fails the same way. */
  async function rejected(yaml: string, issues: string[]): Promise<void> {
    const { ws, check } = withConfig(yaml);
    const expected = `error: invalid configuration:\n${issues.join('\n')}\n`;
    assert.deepEqual(await check(), { code: 2, signal: null, stdout: '', stderr: expected });
    const run = await gateway(['--config', ws.config, '--port', '0']);
    assert.deepEqual(run, { code: 2, signal: null, stdout: '', stderr: expected });
    assert.deepEqual(readdirSync(ws.dir), ['gateway.yaml'], 'nothing created by a gateway that did not start');
  }

  test('a good file: exit 0 and a summary', async () => {
    const { ws, check } = withConfig(configYaml());
    assert.deepEqual(await check(), { code: 0, signal: null, stdout: `${ws.config}: ok (2 products, 5 routes, 3 upstreams)\n`, stderr: '' });
  });

  test('a route with an unknown upstream', async () => {
    const yaml = configYaml().replace('    upstream: echo\n', '    upstream: nowhere\n');
    await rejected(yaml, [`routes.echo.upstream: unknown upstream "nowhere" (gateway.yaml:${lineOf(yaml, 'upstream: nowhere')})`]);
  });

  test('an unknown key', async () => {
    const yaml = configYaml().replace('  realm: test-realm\n', '  realm: test-realm\n  relam: typo\n');
    await rejected(yaml, [`oauth.relam: unknown key; did you mean "realm"? (gateway.yaml:${lineOf(yaml, 'relam: typo')})`]);
  });

  test('a product route that does not exist', async () => {
    const yaml = configYaml().replace('routes: [orders]', 'routes: [orders, nosuch]');
    await rejected(yaml, [`products.orders.routes[1]: unknown route "nosuch" (gateway.yaml:${lineOf(yaml, 'nosuch')})`]);
  });

  test('an environment variable without a default', async () => {
    const yaml = configYaml().replace('  realm: test-realm\n', '  realm: ${GW_E2E_SURELY_UNSET}\n');
    await rejected(yaml, [`oauth.realm: environment variable GW_E2E_SURELY_UNSET is not set and has no default (gateway.yaml:${lineOf(yaml, 'GW_E2E_SURELY_UNSET')})`]);
  });

  test('a mock upstream with a bad status', async () => {
    const yaml = configYaml().replace('      body: { message: hello }\n', '      status: 999\n');
    await rejected(yaml, [`upstreams.mock.mock.status: must be <= 599, found 999 (gateway.yaml:${lineOf(yaml, 'status: 999')})`]);
  });

  /** A bad duration: exactly one issue, on the duration's own path and line. */
  async function badDuration(yaml: string, yamlPath: string, needle: string): Promise<void> {
    const { check } = withConfig(yaml);
    const r = await check();
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines[0], 'error: invalid configuration:');
    assert.equal(lines.length, 2, `one issue expected, got:\n${r.stderr}`);
    assert.ok(lines[1]!.startsWith(`${yamlPath}: `), lines[1]);
    assert.ok(lines[1]!.endsWith(` (gateway.yaml:${lineOf(yaml, needle)})`), lines[1]);
  }

  test('a bad duration in a product', () => badDuration(configYaml().replace('accessTokenLifetime: 600', 'accessTokenLifetime: 10 minutes'), 'products.orders.accessTokenLifetime', '10 minutes'));

  test('a bad duration in an HTTP upstream', () => badDuration(configYaml().replace('connectTimeout: 1s', 'connectTimeout: 1 sec'), 'upstreams.backend.connectTimeout', '1 sec'));

  test('a file that cannot be read', async () => {
    const missing = path.join(withConfig('').ws.dir, 'missing.yaml');
    assert.deepEqual(await gateway(['config', 'check', '--config', missing]), {
      code: 2,
      signal: null,
      stdout: '',
      stderr: `error: invalid configuration:\ncannot read ${missing}: no such file\n`,
    });
  });

  test('config schema prints the JSON Schema', async () => {
    const schema = parse<{ $id: string; title: string; properties: Record<string, unknown> }>(ok(await gateway(['config', 'schema'])));
    assert.equal(schema.title, 'token gateway configuration');
    assert.deepEqual(Object.keys(schema.properties).sort(), [
      'admin',
      'authServers',
      'identityProviders',
      'listen',
      'log',
      'mail',
      'management',
      'oauth',
      'openapi',
      'portal',
      'products',
      'routes',
      'shutdownTimeout',
      'store',
      'telemetry',
      'upstreams',
      'workers',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Serving, with ${VAR:-default} from the child's environment

describe('gateway --config f', () => {
  const ENV_YAML = configYaml()
    .replace('  port: 0\n', '  port: ${GW_E2E_PORT:-0}\n')
    .replace('      body: { message: hello }\n', '      status: ${GW_E2E_STATUS:-200}\n      body: { message: "${GW_E2E_GREETING:-hello from the default}" }\n');
  const UNSET: Env = { GW_E2E_PORT: undefined, GW_E2E_STATUS: undefined, GW_E2E_GREETING: undefined };
  let ws: Workspace;
  let app: CreatedApp;
  before(async () => {
    assert.ok(ENV_YAML.includes('GW_E2E_PORT') && ENV_YAML.includes('GW_E2E_GREETING'));
    ws = workspace(ENV_YAML);
    await addDeveloper(ws, 'dev@example.com');
    app = await addApp(ws, 'dev@example.com', 'env-app');
  });
  after(() => ws.remove());

  test('--port 0 serves on a free port; defaults apply when the variables are unset; SIGTERM exits 0', async () => {
    const gw = await serve(ws.config, { env: UNSET });
    try {
      assert.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(new URL(gw.url).port, '0');
      const listening = gw.logs.find((l) => l.msg === 'gateway listening');
      assert.equal(listening?.store, TEST_REDIS_URL === undefined ? path.join(ws.dir, 'gateway.db') : 'redis server');
      const res = await hello(gw.url, await issueToken(gw.url, app));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { message: 'hello from the default' });
      const unauthenticated = await call(`${gw.url}/v1/hello`);
      assert.equal(unauthenticated.status, 401);
      assert.equal(unauthenticated.headers.get('www-authenticate'), 'Bearer realm="test-realm"');
    } finally {
      assert.deepEqual(await gw.stop('SIGTERM'), { code: 0, signal: null });
    }
  });

  test('the environment of the process sets the port, the status and the body', async () => {
    const port = await freePort('127.0.0.1');
    const gw = await serve(ws.config, { args: [], env: { GW_E2E_PORT: String(port), GW_E2E_STATUS: '203', GW_E2E_GREETING: 'hello from the environment' } });
    try {
      assert.equal(gw.url, `http://127.0.0.1:${port}`);
      const res = await hello(gw.url, await issueToken(gw.url, app));
      assert.equal(res.status, 203, res.text);
      assert.deepEqual(res.body, { message: 'hello from the environment' });
    } finally {
      await gw.stop();
    }
  });

  test('--port overrides the configured port', async () => {
    const port = await freePort('127.0.0.1');
    const gw = await serve(ws.config, { args: ['--port', String(port)], env: { ...UNSET, GW_E2E_PORT: '1' } });
    try {
      assert.equal(gw.url, `http://127.0.0.1:${port}`);
    } finally {
      await gw.stop();
    }
  });

  test('a bad --port is refused', async () => {
    fails(await gateway(['--config', ws.config, '--port', 'abc']), 1, '--port: "abc" is not a port number');
  });

  test('healthcheck: 200 from the metadata document of the gateway the config describes, or of --url, or without oauth.issuer 405 with Allow: POST from its token endpoint; else exit 1 with the reason', async () => {
    const port = await freePort('127.0.0.1');
    const env = { GW_E2E_PORT: String(port) };
    // Without oauth.issuer there is no metadata document: a GET of the token endpoint, 405 with Allow: POST, is the gateway's answer.
    const tokenEndpoint = `http://127.0.0.1:${port}/oauth2/token`;
    fails(await gateway(['healthcheck', '--config', ws.config], env), 1, `unhealthy: ${tokenEndpoint}: ECONNREFUSED`);
    const withoutIssuer = await serve(ws.config, { args: [], env });
    try {
      assert.equal(ok(await gateway(['healthcheck', '--config', ws.config], env)).stdout, `healthy: ${tokenEndpoint} answered 405\n`);
    } finally {
      await withoutIssuer.stop();
    }
    const impostor = createServer((_req, res) => res.writeHead(405).end());
    await new Promise<void>((resolve) => impostor.listen(port, '127.0.0.1', resolve));
    try {
      fails(await gateway(['healthcheck', '--config', ws.config], env), 1, `unhealthy: ${tokenEndpoint} answered 405`);
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
    writeFileSync(ws.config, ENV_YAML.replace('  realm: test-realm\n', '  realm: test-realm\n  issuer: http://localhost:${GW_E2E_PORT}\n'));
    const gw = await serve(ws.config, { args: [], env });
    const metadata = `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`;
    try {
      assert.equal(ok(await gateway(['healthcheck', '--config', ws.config], env)).stdout, `healthy: ${metadata} answered 200\n`);
      assert.equal(ok(await gateway(['healthcheck', '--url', gw.url])).stdout, `healthy: ${metadata} answered 200\n`);
    } finally {
      await gw.stop();
    }
    fails(await gateway(['healthcheck', '--config', ws.config], env), 1, `unhealthy: ${metadata}: ECONNREFUSED`);
    // Something else on the port: not the gateway, not healthy.
    const other = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
    try {
      fails(await gateway(['healthcheck', '--config', ws.config], env), 1, `unhealthy: ${metadata} answered 503`);
    } finally {
      other.close();
    }
    // Docker reserves exit 2: every failure is 1.
    fails(await gateway(['healthcheck', '--url', 'ftp://127.0.0.1/']), 1, '--url: "ftp://127.0.0.1/" is not an http:// address');
    fails(await gateway(['healthcheck', '--config', path.join(ws.dir, 'missing.yaml')]), 1, `invalid configuration:\ncannot read ${path.join(ws.dir, 'missing.yaml')}: no such file`);
    writeFileSync(ws.config, ENV_YAML);
  });
});

// ---------------------------------------------------------------------------------------------
// 5b. What a new user types first

describe('a mistyped command, and no config file', () => {
  test('gateway bogus: unknown command, and the list of commands', async () => {
    fails(await gateway(['bogus']), 1, "unknown command 'bogus' (commands: config, admin, healthcheck, reload; gateway --help describes them)");
    fails(await gateway(['admin', 'bogus']), 1, "unknown command 'bogus'");
    // Only the root takes excess arguments; a subcommand still refuses them.
    fails(await gateway(['config', 'check', 'extra']), 1, "too many arguments for 'check'. Expected 0 arguments but got 1.");
    fails(await gateway(['admin', 'keys', 'revoke', 'K1', 'K2']), 1, "too many arguments for 'revoke'. Expected 1 argument but got 2.");
  });

  test('--config before the subcommand names the file too', async () => {
    const ws = workspace();
    try {
      assert.match(ok(await gateway(['--config', ws.config, 'config', 'check'], {}, ws.dir)).stdout, /gateway\.yaml: ok \(/);
      assert.equal(ok(await gateway(['--config', ws.config, 'admin', 'apps', 'list', '--json'], {}, ws.dir)).stdout, '[]\n');
    } finally {
      ws.remove();
    }
  });

  test('without --config and without gateway.yaml, every command names the file it looked for and how to name one', async () => {
    const { dir, remove } = tempDir();
    try {
      for (const args of [[], ['admin', 'apps', 'list'], ['config', 'check']]) {
        fails(await gateway(args, {}, dir), 2, `no configuration file: ${path.join(dir, 'gateway.yaml')} does not exist; name one with --config <file> (gateway.example.yaml is an example)`);
      }
      fails(await gateway(['healthcheck'], {}, dir), 1, `no configuration file: ${path.join(dir, 'gateway.yaml')} does not exist; name one with --config <file> (gateway.example.yaml is an example)`);
    } finally {
      remove();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 6. Revocation by another process takes effect at once

describe('revocation from another process', () => {
  let ws: Workspace;
  let gw: Served;
  let bystander: CreatedApp;
  let bystanderToken: string;

  before(async () => {
    ws = workspace();
    await addDeveloper(ws, 'dev@example.com');
    await addDeveloper(ws, 'leaving@example.com');
    bystander = await addApp(ws, 'dev@example.com', 'bystander');
    gw = await serve(ws.config);
    bystanderToken = await issueToken(gw.url, bystander);
  });
  after(async () => {
    await gw?.stop();
    ws.remove();
  });

  /** A new app, a token for it that works (and is cached by the gateway). */
  async function workingApp(developer: string, name: string) {
    const app = await addApp(ws, developer, name);
    const token = await issueToken(gw.url, app);
    await assertServes(gw.url, token);
    await assertServes(gw.url, token);
    return { app, token };
  }

  test('admin keys revoke KEY', async () => {
    const { app, token } = await workingApp('dev@example.com', 'revoked-key');
    assert.equal(changed(await ws.cli('admin', 'keys', 'revoke', app.key), 'key.revoke').stdout, `key ${app.key} is revoked\n`);
    const listed = ok(await ws.cli('admin', 'apps', 'list')).stdout.split('\n');
    assert.match(listed.find((line) => line.includes(' revoked-key '))!, / active {2}\S+$/, 'a revoked key is not listed');
    await assertTokenRejected(gw.url, token);
    await assertClientRejected(gw.url, app);
    await assertServes(gw.url, bystanderToken);
  });

  test('admin apps disable KEY', async () => {
    const { app, token } = await workingApp('dev@example.com', 'disabled-app');
    assert.equal(changed(await ws.cli('admin', 'apps', 'disable', app.key), 'app.disable').stdout, `app "disabled-app" of dev@example.com is disabled\n`);
    await assertTokenRejected(gw.url, token);
    await assertClientRejected(gw.url, app);
    await assertServes(gw.url, bystanderToken);
  });

  test('admin apps delete KEY', async () => {
    const { app, token } = await workingApp('dev@example.com', 'deleted-app');
    assert.equal(changed(await ws.cli('admin', 'apps', 'delete', app.key), 'app.delete').stdout, `app "deleted-app" of dev@example.com is deleted\n`);
    await assertTokenRejected(gw.url, token);
    await assertClientRejected(gw.url, app);
    await assertServes(gw.url, bystanderToken);
    fails(await ws.cli('admin', 'apps', 'show', app.key), 1, `no app with key ${app.key}`);
  });

  test('admin keys rotate KEY: a new key and secret; the old ones work through the overlap (24h by default)', async () => {
    const { app, token } = await workingApp('dev@example.com', 'rotated');
    const before = Date.now();
    const rotated = parse<CreatedApp & { overlapUntil: number }>(changed(await ws.cli('admin', 'keys', 'rotate', app.key, '--json'), 'key.rotate'));
    assert.notEqual(rotated.key, app.key);
    assert.ok(rotated.secret.startsWith('gws_'));
    assert.ok(rotated.overlapUntil >= before + 86_400_000 && rotated.overlapUntil <= Date.now() + 86_400_000, String(rotated.overlapUntil));
    await assertServes(gw.url, await issueToken(gw.url, rotated));
    await assertServes(gw.url, token);
    await assertServes(gw.url, await issueToken(gw.url, app));
    const shown = parse<{ credentials: { key: string; expiresAt: number | null }[] }>(ok(await ws.cli('admin', 'apps', 'show', rotated.key, '--json')));
    assert.deepEqual(
      shown.credentials.map((c) => [c.key, c.expiresAt]),
      [
        [app.key, rotated.overlapUntil],
        [rotated.key, null],
      ],
    );
    const listed = ok(await ws.cli('admin', 'apps', 'list', '--developer', 'dev@example.com')).stdout.split('\n');
    assert.match(listed.find((line) => line.includes(' rotated '))!, new RegExp(` ${app.key} \\(until ${isoDate(rotated.overlapUntil)}\\), ${rotated.key}$`));
  });

  test('admin developers disable E stops every app of theirs', async () => {
    const one = await workingApp('leaving@example.com', 'leaving-1');
    const two = await workingApp('leaving@example.com', 'leaving-2');
    assert.equal(changed(await ws.cli('admin', 'developers', 'disable', 'leaving@example.com'), 'developer.disable').stdout, 'developer leaving@example.com is disabled\n');
    for (const { app, token } of [one, two]) {
      await assertTokenRejected(gw.url, token);
      await assertClientRejected(gw.url, app);
    }
    await assertServes(gw.url, bystanderToken);
    await issueToken(gw.url, bystander);
  });
});

// ---------------------------------------------------------------------------------------------
// 7. Restart and kill -9 keep every issued token

describe('restart and durability', () => {
  let ws: Workspace;
  let app: CreatedApp;
  before(async () => {
    ws = workspace();
    await addDeveloper(ws, 'dev@example.com');
    app = await addApp(ws, 'dev@example.com', 'durable');
  });
  after(() => ws.remove());

  test('a token survives a SIGTERM restart', async () => {
    const first = await serve(ws.config);
    let token: string;
    try {
      token = await issueToken(first.url, app);
      await assertServes(first.url, token);
    } finally {
      assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null });
    }
    const second = await serve(ws.config);
    try {
      await assertServes(second.url, token);
      await issueToken(second.url, app);
    } finally {
      await second.stop();
    }
  });

  test('tokens answered with 200 survive kill -9 right after', async () => {
    const tokens: string[] = [];
    const first = await serve(ws.config);
    try {
      tokens.push(await issueToken(first.url, app));
    } finally {
      // As soon as the 200 is in.
      assert.deepEqual(await first.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
    }

    const second = await serve(ws.config);
    try {
      await assertServes(second.url, tokens[0]!);
      tokens.push(...(await Promise.all(Array.from({ length: 20 }, () => issueToken(second.url, app)))));
    } finally {
      // As soon as the last 200 of the burst is in.
      assert.deepEqual(await second.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
    }
    assert.equal(new Set(tokens).size, 21);

    // The files a killed gateway leaves behind still hold no plain token.
    const bytes = storeBytes(ws.dir);
    for (const t of tokens) assert.equal(bytes.includes(t), false);

    const third = await serve(ws.config);
    try {
      for (const t of tokens) await assertServes(third.url, t);
    } finally {
      await third.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 8. Migrating to another store (SQLite to SQLite here, Redis to Redis when the suite runs on
// Redis; test/store/migrate.test.ts crosses drivers)

/** How the audit line names a workspace's store: its file, or its Redis key prefix (never the URL). */
function storeRef(ws: Workspace): Record<string, string> {
  if (TEST_REDIS_URL === undefined) return { driver: 'sqlite', path: path.join(ws.dir, 'gateway.db') };
  return { driver: 'redis', keyPrefix: /keyPrefix: "([^"]+)"/.exec(readFileSync(ws.config, 'utf8'))![1]! };
}

describe('gateway admin migrate', () => {
  let source: Workspace;
  let kept: CreatedApp;
  let gone: CreatedApp;
  /** The rotated app's first key, and the key it got in its place. */
  let rotated: { first: CreatedApp; next: CreatedApp };
  let tokens: { kept: string; rotated: string; gone: string };
  const migrate = (to: Workspace, ...args: string[]) => gateway(['admin', 'migrate', '--from', source.config, '--to', to.config, ...args]);
  const listed = async (ws: Workspace) => [ok(await ws.cli('admin', 'developers', 'list', '--json')).stdout, ok(await ws.cli('admin', 'apps', 'list', '--json')).stdout];

  before(async () => {
    source = workspace();
    await addDeveloper(source, 'dev@example.com');
    await addDeveloper(source, 'gone@example.com');
    kept = await addApp(source, 'dev@example.com', 'kept');
    const first = await addApp(source, 'dev@example.com', 'rotated');
    gone = await addApp(source, 'gone@example.com', 'gone');
    const gw = await serve(source.config);
    try {
      tokens = { kept: await issueToken(gw.url, kept), rotated: await issueToken(gw.url, first), gone: await issueToken(gw.url, gone) };
    } finally {
      await gw.stop();
    }
    rotated = { first, next: parse<CreatedApp>(changed(await source.cli('admin', 'keys', 'rotate', first.key, '--json'), 'key.rotate')) };
    // Revokes the developer's token: it stays behind.
    changed(await source.cli('admin', 'developers', 'disable', 'gone@example.com'), 'developer.disable');
  });
  after(() => source.remove());

  test('copies into an empty store with the key file; the target serves the same apps and tokens; a second run is refused', async () => {
    const target = workspace();
    try {
      const r = changed(await migrate(target), 'store.migrate');
      const keyFile = path.join(target.dir, 'gateway.db.key');
      assert.equal(
        r.stdout,
        [
          'migrated 2 developers, 3 apps, 4 credentials, 2 tokens, 0 signing keys',
          `copied the secret key file to ${keyFile}`,
          'not carried over: portal sessions, mailed links, invitations, login throttles, quota counts and usage',
          '',
        ].join('\n'),
      );
      const { level: _level, time: _time, actor: _actor, ...line } = JSON.parse(r.stderr) as Record<string, unknown>;
      assert.deepEqual(line, {
        audit: 'store.migrate',
        from: storeRef(source),
        to: storeRef(target),
        developers: 2,
        apps: 3,
        credentials: 4,
        tokens: 2,
        signingKeys: 0,
        msg: 'store migrated',
      });
      assert.deepEqual(readFileSync(keyFile), readFileSync(path.join(source.dir, 'gateway.db.key')));
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      const migrated = await listed(target);
      assert.deepEqual(migrated, await listed(source));

      const gw = await serve(target.config);
      try {
        await assertServes(gw.url, tokens.kept);
        // Issued through the rotated app's first key, which works until its overlap ends.
        await assertServes(gw.url, tokens.rotated);
        await assertTokenRejected(gw.url, tokens.gone);
        for (const app of [kept, rotated.first, rotated.next]) await assertServes(gw.url, await issueToken(gw.url, app));
        await assertClientRejected(gw.url, gone);
      } finally {
        await gw.stop();
      }

      fails(await migrate(target), 1, 'the target store is not empty: it holds 2 developers; migrate into an empty store');
      assert.deepEqual(await listed(target), migrated);
    } finally {
      target.remove();
    }
  });

  test('a target whose key file holds another key is refused, with nothing written; --json prints the counts', async () => {
    const target = workspace();
    try {
      const keyFile = path.join(target.dir, 'gateway.db.key');
      const otherKey = `${randomBytes(32).toString('base64')}\n`;
      writeFileSync(keyFile, otherKey, { mode: 0o600 });
      fails(
        await migrate(target),
        1,
        `${keyFile} holds another secret key than ${path.join(source.dir, 'gateway.db.key')}: the migrated app secrets would not verify with it; remove it (the source's is then copied there) or name the source's key file`,
      );
      assert.equal(existsSync(path.join(target.dir, 'gateway.db')), false);
      assert.equal(readFileSync(keyFile, 'utf8'), otherKey);

      rmSync(keyFile);
      const r = changed(await migrate(target, '--json'), 'store.migrate');
      assert.deepEqual(parse(r), { developers: 2, apps: 3, credentials: 4, tokens: 2, signingKeys: 0, secretKeyFile: keyFile, secretKeyCopied: true });
    } finally {
      target.remove();
    }
  });

  test('carries the signing keys: a JWT issued before the move verifies after it, and the key that signed it signs on', async () => {
    // Each call makes a store of its own (a Redis run: a key prefix of its own).
    const signed = () =>
      configYaml({
        oauth: '  issuer: http://localhost:8080',
        products: '  signed:\n    routes: [hello]\n    accessTokenFormat: jwt\n    accessTokenLifetime: 10m',
      });
    const from = workspace(signed());
    const to = workspace(signed());
    const issueJwt = async (url: string, app: CreatedApp) => {
      const res = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
      assert.equal(res.status, 200, res.text);
      return (res.body as { access_token: string }).access_token;
    };
    try {
      await addDeveloper(from, 'dev@example.com');
      const app = await addApp(from, 'dev@example.com', 'signed', 'signed');
      let jwt: string;
      const before = await serve(from.config);
      try {
        jwt = await issueJwt(before.url, app);
      } finally {
        await before.stop();
      }
      const { kid } = decodeProtectedHeader(jwt);
      const r = changed(await gateway(['admin', 'migrate', '--from', from.config, '--to', to.config]), 'store.migrate');
      assert.equal(r.stdout.split('\n')[0], 'migrated 1 developer, 1 app, 1 credential, 1 token, 1 signing key');

      const gw = await serve(to.config);
      try {
        await assertServes(gw.url, jwt);
        assert.equal(decodeProtectedHeader(await issueJwt(gw.url, app)).kid, kid);
        const jwks = (await (await fetch(`${gw.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
        assert.deepEqual(
          jwks.keys.map((k) => k.kid),
          [kid],
        );
      } finally {
        await gw.stop();
      }
    } finally {
      from.remove();
      to.remove();
    }
  });

  test('a target that is the source is refused', async () => {
    fails(await migrate(source), 1, 'the source and the target are the same store');
  });

  test('a source without a database is refused, and none is created', sqliteOnly, async () => {
    const empty = workspace();
    try {
      fails(await gateway(['admin', 'migrate', '--from', empty.config, '--to', source.config]), 1, `no database at ${path.join(empty.dir, 'gateway.db')}`);
      assert.equal(existsSync(path.join(empty.dir, 'gateway.db')), false);
    } finally {
      empty.remove();
    }
  });
});
