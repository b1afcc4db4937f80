// `gateway admin --url` as a management client with less than every scope, and with tokens that
// expire during a command: what it says, and what it leaves behind. A real gateway with a
// management listener on SQLite; the CLI runs in process, as `gateway` runs it.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createManagementClient, type ManagementScope } from '../../src/admin/management-clients.ts';
import { remoteApi } from '../../src/cli/admin-api.ts';
import { main } from '../../src/cli/program.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { createLogger } from '../../src/log.ts';
import { adminDeps, configYaml, tempDir, tokenRequest } from '../helpers.ts';
import { ALL_SCOPES } from './client.ts';

const EVERY_SCOPE = ALL_SCOPES as ManagementScope[];

describe('gateway admin --url with a narrow management client, and short-lived tokens', () => {
  const dir = tempDir();
  const file = path.join(dir.dir, 'gateway.yaml');
  let gw: Gateway;
  let credentials: (name: string, scopes: ManagementScope[]) => Promise<{ key: string; secret: string }>;
  before(async () => {
    writeFileSync(file, `${configYaml()}\nmanagement:\n  port: 0\n  accessTokenLifetime: 1s\n`);
    const config = loadConfigFile(file, { env: {} });
    gw = await startGateway({ config, logger: createLogger('silent') });
    credentials = (name, scopes) => createManagementClient(adminDeps(gw, config), { name, scopes });
  });
  after(async () => {
    await gw.close();
    dir.remove();
  });

  async function remote(client: { key: string; secret: string }, ...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const env = { GATEWAY_MANAGEMENT_URL: gw.managementUrl!, GATEWAY_MANAGEMENT_KEY: client.key, GATEWAY_MANAGEMENT_SECRET: client.secret };
    const code = await main(['admin', ...args], { out: (t) => out.push(t), err: (t) => err.push(t), env });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  test('a missing scope: the message names it; apply stops at the first refused change and leaves no secrets file', async () => {
    const narrow = await credentials('narrow', ['developers:read', 'apps:read', 'apps:write']);
    const needs = 'error: the token lacks a scope this route requires: the management client in GATEWAY_MANAGEMENT_KEY needs developers:write';
    assert.deepEqual(await remote(narrow, 'developers', 'create', '--email', 'ada@example.com', '--name', 'Ada'), { code: 1, out: '', err: needs });

    const apps = path.join(dir.dir, 'apps.yaml');
    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    name: Ada', '    apps:', '      - name: billing', '        product: payments', ''].join('\n'));
    // Without products:read the file's products cannot be checked here: the API refuses an unknown one itself.
    assert.deepEqual(await remote(narrow, 'diff', '-f', apps), {
      code: 0,
      out: ['creating developer ada@example.com', 'creating app ada@example.com/billing (product payments)', '2 changes to make'].join('\n'),
      err: '',
    });
    const full = await credentials('full', EVERY_SCOPE);
    assert.deepEqual(await remote(full, 'diff', '-f', apps), {
      code: 2,
      out: '',
      err: 'error: invalid apps file:\ndevelopers[0].apps[0].product: no API product "payments" (known: hello, orders) (apps.yaml:6)',
    });

    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    name: Ada', '    apps:', '      - name: billing', '        product: hello', ''].join('\n'));
    const secrets = path.join(dir.dir, 'secrets.json');
    assert.deepEqual(await remote(narrow, 'apply', '-f', apps, '--secrets-file', secrets), { code: 1, out: 'creating developer ada@example.com', err: needs });
    assert.equal(existsSync(secrets), false);
    const applied = await remote(full, 'apply', '-f', apps, '--secrets-file', secrets);
    assert.equal(applied.code, 0, applied.err);
    assert.equal(existsSync(secrets), true);
  });

  test('--json: a failure after an app was made still prints its secret, in the partial answer', async () => {
    const full = await credentials('setup', EVERY_SCOPE);
    assert.equal((await remote(full, 'developers', 'create', '--email', 'bob@example.com', '--name', 'Bob')).code, 0);
    // The app can be made; disabling Bob, the last change, needs developers:write.
    const narrow = await credentials('apps-only', ['developers:read', 'apps:read', 'apps:write']);
    const apps = path.join(dir.dir, 'bob.yaml');
    writeFileSync(apps, ['developers:', '  - email: bob@example.com', '    name: Bob', '    status: disabled', '    apps:', '      - name: one', '        product: hello', ''].join('\n'));
    const failed = await remote(narrow, 'apply', '-f', apps, '--json');
    assert.equal(failed.code, 1);
    assert.match(failed.err, /needs developers:write$/);
    const partial = JSON.parse(failed.out) as { changes: unknown[]; secrets: { developer: string; app: string; key: string; secret: string }[] };
    assert.deepEqual(partial.changes, [{ action: 'create', kind: 'app', developer: 'bob@example.com', app: 'one', product: 'hello' }]);
    assert.deepEqual(
      partial.secrets.map((s) => [s.developer, s.app]),
      [['bob@example.com', 'one']],
    );
    assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, partial.secrets[0]!)).status, 200);
  });

  test('a token that expires between two calls of one command is renewed, once', async () => {
    const client = await credentials('slow', ['developers:read']);
    const api = remoteApi(gw.managementUrl!, client);
    const first = await api.listDevelopers();
    // Past the token's lifetime (1s): the next call's token is refused, and a new one fetched.
    await sleep(1500);
    assert.deepEqual(await api.listDevelopers(), first);
  });
});
