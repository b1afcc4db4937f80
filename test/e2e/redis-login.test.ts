// The Redis store behind a password and behind TLS, as the gateway process connects to it: a URL
// with the login serves, a wrong password stops the start with a message that never shows it, and
// rediss:// verifies the server's certificate (here one the test trusts through NODE_EXTRA_CA_CERTS).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { bearer, call, configYaml, tempDir } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { gateway, serve } from './children.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const PASSWORD = 'pa/ss w@rd';

/** A workspace whose store is the Redis at `url`; resolves to its config file. */
function workspace(dir: string, url: string): string {
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, configYaml().replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: "${url}"\n  keyPrefix: "login:"`));
  return file;
}

/** Registers an app through the CLI, takes a token from the gateway and calls a route with it. */
async function serves(file: string, env: Record<string, string> = {}): Promise<void> {
  assert.equal((await gateway(['admin', 'developers', 'create', '--email', `dev-${Math.random()}@example.com`, '--name', 'Dev', '--config', file], env)).code, 0);
  const gw = await serve(file, { env });
  try {
    const list = await gateway(['admin', 'developers', 'list', '--json', '--config', file], env);
    const email = (JSON.parse(list.stdout) as { email: string }[])[0]!.email;
    const created = await gateway(['admin', 'apps', 'create', '--developer', email, '--name', `app-${Math.random()}`, '--product', 'hello', '--json', '--config', file], env);
    const app = JSON.parse(created.stdout) as { key: string; secret: string };
    const token = await call(`${gw.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(token.status, 200, token.text);
    assert.equal((await call(`${gw.url}/v1/hello`, { headers: bearer(token.body.access_token) })).status, 200);
  } finally {
    await gw.stop();
  }
}

describe('a Redis with a password', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis({ password: PASSWORD });
  });
  after(async () => {
    await redis?.close();
    dir.remove();
  });

  test('the login in the URL (percent-encoded) serves', async () => {
    await serves(workspace(dir.dir, `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${redis.port}`));
  });

  test('a wrong password stops the start, and no message shows it', async () => {
    const file = workspace(dir.dir, `redis://:wrong-secret@127.0.0.1:${redis.port}`);
    const run = await gateway(['--config', file, '--port', '0']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /the Redis store failed: unreachable \(WRONGPASS invalid username-password pair/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes('wrong-secret'));
    const admin = await gateway(['admin', 'developers', 'list', '--config', file]);
    assert.equal(admin.code, 1);
    assert.ok(!`${admin.stdout}${admin.stderr}`.includes('wrong-secret'));
  });
});

describe('a Redis over TLS (rediss://)', { skip }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis({ tls: { cert: path.join(FIXTURES, 'localhost.crt'), key: path.join(FIXTURES, 'localhost.key') } });
  });
  after(async () => {
    await redis?.close();
    dir.remove();
  });

  test('serves when the certificate is trusted', async () => {
    await serves(workspace(dir.dir, redis.url), { NODE_EXTRA_CA_CERTS: path.join(FIXTURES, 'localhost.crt') });
  });

  test('refuses a certificate it cannot verify', async () => {
    const run = await gateway(['admin', 'developers', 'list', '--config', workspace(dir.dir, redis.url)]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /self.signed certificate|unable to verify/);
  });
});
