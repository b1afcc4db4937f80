// `gateway admin` on the store the config names and, with --url, over the management API of a
// running gateway: the same output and exit codes either way; apps as code (diff, apply, --prune);
// keys brought from another gateway; tokens revoked. The CLI runs in process, as `gateway` runs it.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createManagementClient } from '../../src/admin/management-clients.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { main } from '../../src/cli/program.ts';
import { createLogger } from '../../src/log.ts';
import { adminDeps, bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';
import { SIGN_IN } from '../sign-in-products.ts';
import { ALL_SCOPES } from './client.ts';
import { makeCertificates, type Certificates } from '../oauth/mtls-certificates.ts';

interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `gateway …args` in process with `env`. */
async function gateway(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env, ...(stdin === undefined ? {} : { stdin: () => stdin }) });
  // The audit lines a command on the store writes (the API's are the gateway's) are not its output.
  const messages = err.filter((line) => !line.startsWith('{"level":'));
  return { code, out: out.join('\n'), err: messages.join('\n') };
}

/** A gateway with a management listener on `yaml`'s store, a management client, and the two ways of running a command. */
async function workspace(yaml: string, dir: string) {
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, yaml);
  const config = loadConfigFile(file, { env: {} });
  const gw = await startGateway({ config, logger: createLogger('silent') });
  const client = await createManagementClient(adminDeps(gw, config), { name: 'cli', scopes: ALL_SCOPES });
  const env = { GATEWAY_MANAGEMENT_KEY: client.key, GATEWAY_MANAGEMENT_SECRET: client.secret };
  return {
    gw,
    file,
    local: (...args: string[]) => gateway(['admin', ...args, '--config', file]),
    remote: (...args: string[]) => gateway(['admin', ...args, '--url', gw.managementUrl!], env),
    remoteWith: (stdin: string, ...args: string[]) => gateway(['admin', ...args, '--url', gw.managementUrl!], env, stdin),
  };
}

const withManagement = (yaml: string) => `${yaml}\nmanagement:\n  port: 0\n`;
/** What differs between two runs of one command by nature: ids, times, keys and secrets. */
const stable = (text: string) => text.replace(/"(id|developerId|appId|createdAt|expiresAt|overlapUntil|key|secret)": ("[^"]*"|\d+|null)/g, '"$1": _');

describe('gateway admin, on the store and through --url', () => {
  const dir = tempDir();
  let ws: Awaited<ReturnType<typeof workspace>>;
  before(async () => {
    ws = await workspace(withManagement(configYaml()), dir.dir);
  });
  after(async () => {
    await ws.gw.close();
    dir.remove();
  });

  test('each command prints the same and exits alike, on the store and over the API', async () => {
    for (const [run, who] of [
      [ws.local, 'local'],
      [ws.remote, 'remote'],
    ] as const) {
      const email = `${who}@example.com`;
      assert.deepEqual(await run('developers', 'create', '--email', email, '--name', who), { code: 0, out: `created developer ${email}`, err: '' });
      const created = JSON.parse((await run('apps', 'create', '--developer', email, '--name', 'billing', '--product', 'hello', '--json')).out);
      assert.match(created.secret, /^gws_/);
      assert.equal((await tokenRequest(ws.gw.url, { grant_type: 'client_credentials' }, created)).status, 200);
      const shown = await run('apps', 'show', created.key, '--json');
      assert.equal(shown.code, 0);
      assert.deepEqual(JSON.parse(shown.out).credentials.length, 1);
      assert.equal((await run('apps', 'disable', '--developer', email, '--name', 'billing')).out, `app "billing" of ${email} is disabled`);
      assert.equal((await run('apps', 'enable', created.key)).out, `app "billing" of ${email} is active`);
      const secretFile = path.join(dir.dir, `${who}.secret`);
      writeFileSync(secretFile, 'a-kong-client-secret-000000000001\n');
      const importedKey = `kong-${who}-client-0001`;
      assert.deepEqual(await run('keys', 'import', created.key, '--key', importedKey, '--secret-file', secretFile), {
        code: 0,
        out: `imported key ${importedKey}; its secret is stored hashed and is not shown again`,
        err: '',
      });
      const issued = await tokenRequest(ws.gw.url, { grant_type: 'client_credentials' }, { key: importedKey, secret: 'a-kong-client-secret-000000000001' });
      assert.equal(issued.status, 200);
      assert.deepEqual(await run('keys', 'import', created.key, '--key', importedKey, '--secret-file', secretFile), { code: 1, out: '', err: `error: the key ${importedKey} is already registered` });
      // The token of the app's first key went with the disabling; the imported key's is the one left.
      assert.deepEqual(await run('tokens', 'revoke', '--app', created.key), { code: 0, out: 'revoked 1 token', err: '' });
      assert.equal((await call(`${ws.gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 401);
      assert.deepEqual(await run('developers', 'show', 'nobody@example.com'), { code: 1, out: '', err: 'error: no developer nobody@example.com' });
      assert.deepEqual(await run('developers', 'delete', email), { code: 0, out: `developer ${email} is deleted, with their apps and keys`, err: '' });
      assert.equal((await tokenRequest(ws.gw.url, { grant_type: 'client_credentials' }, created)).status, 401);
    }
    const local = await ws.local('developers', 'list', '--json');
    const remote = await ws.remote('developers', 'list', '--json');
    assert.equal(stable(remote.out), stable(local.out));
  });

  test('--url without a management client in the environment, or with a wrong one, or unreachable: a clear error', async () => {
    assert.deepEqual(await gateway(['admin', 'developers', 'list', '--url', ws.gw.managementUrl!]), {
      code: 1,
      out: '',
      err: 'error: --url needs a management client: set GATEWAY_MANAGEMENT_KEY and GATEWAY_MANAGEMENT_SECRET (made with `gateway admin management-clients create`)',
    });
    const wrong = await gateway(['admin', 'developers', 'list', '--url', ws.gw.managementUrl!], { GATEWAY_MANAGEMENT_KEY: 'nobody00', GATEWAY_MANAGEMENT_SECRET: 'wrong' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, /^error: the management API refused the client in GATEWAY_MANAGEMENT_KEY: /);
    const down = await gateway(['admin', 'developers', 'list', '--url', 'http://127.0.0.1:9'], { GATEWAY_MANAGEMENT_KEY: 'k', GATEWAY_MANAGEMENT_SECRET: 's' });
    assert.equal(down.code, 1);
    assert.match(down.err, /^error: cannot reach the management API at http:\/\/127\.0\.0\.1:9: /);
  });

  test('apps as code: diff, apply, apply again (no changes), --prune, a secrets file of mode 0600, a product that cannot change', async () => {
    const apps = path.join(dir.dir, 'apps.yaml');
    writeFileSync(
      apps,
      [
        'developers:',
        '  - email: ada@example.com',
        '    name: Ada',
        '    apps:',
        '      - name: billing',
        '        product: hello',
        '      - name: reports',
        '        product: orders',
        '        status: disabled',
        '',
      ].join('\n'),
    );
    const expected = [
      'creating developer ada@example.com',
      'creating app ada@example.com/billing (product hello)',
      'creating app ada@example.com/reports (product orders)',
      'disabling app ada@example.com/reports',
    ];
    assert.deepEqual(await ws.remote('diff', '-f', apps), { code: 0, out: [...expected, '4 changes to make'].join('\n'), err: '' });
    const secrets = path.join(dir.dir, 'secrets.json');
    const applied = await ws.remote('apply', '-f', apps, '--secrets-file', secrets);
    assert.deepEqual(applied, { code: 0, out: [...expected, `4 changes made; the new keys and secrets are in ${secrets}`].join('\n'), err: '' });
    assert.equal(statSync(secrets).mode & 0o777, 0o600);
    const written = JSON.parse(readFileSync(secrets, 'utf8')) as { developer: string; app: string; key: string; secret: string }[];
    assert.deepEqual(
      written.map((s) => [s.developer, s.app]),
      [
        ['ada@example.com', 'billing'],
        ['ada@example.com', 'reports'],
      ],
    );
    assert.equal((await tokenRequest(ws.gw.url, { grant_type: 'client_credentials' }, written[0]!)).status, 200);
    assert.equal((await tokenRequest(ws.gw.url, { grant_type: 'client_credentials' }, written[1]!)).status, 401);
    // The same file again, locally this time: nothing to change.
    assert.deepEqual(await ws.local('apply', '-f', apps), { code: 0, out: 'no changes', err: '' });
    assert.deepEqual(await ws.remote('apply', '-f', apps), { code: 0, out: 'no changes', err: '' });

    await ws.local('developers', 'create', '--email', 'stray@example.com', '--name', 'Stray');
    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    name: Ada', '    apps:', '      - name: billing', '        product: hello', ''].join('\n'));
    assert.deepEqual(await ws.remote('apply', '-f', apps), { code: 0, out: 'no changes', err: '' });
    assert.deepEqual(await ws.remote('apply', '-f', apps, '--prune'), {
      code: 0,
      out: ['deleting app ada@example.com/reports', 'deleting developer stray@example.com', '2 changes made'].join('\n'),
      err: '',
    });

    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    name: Ada', '    apps:', '      - name: billing', '        product: orders', ''].join('\n'));
    assert.deepEqual(await ws.remote('apply', '-f', apps), {
      code: 1,
      out: '',
      err: 'error: nothing was changed:\nada@example.com/billing is an app of product hello, not orders: an app keeps its product; declare a new app (and delete this one)',
    });
    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    nam: Ada', ''].join('\n'));
    const bad = await ws.local('diff', '-f', apps);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^error: invalid apps file:\ndevelopers\[0\]/);
    assert.match(bad.err, /\(apps\.yaml:3\)/);
  });
});

describe('gateway admin: public apps and redirect URIs, on the store and through --url', () => {
  const dir = tempDir();
  let ws: Awaited<ReturnType<typeof workspace>>;
  before(async () => {
    ws = await workspace(withManagement(configYaml(SIGN_IN)), dir.dir);
  });
  after(async () => {
    await ws.gw.close();
    dir.remove();
  });

  test('public apps and redirect URIs: create, show, list, replace, and the refusals, alike on the store and over the API', async () => {
    for (const [run, who] of [
      [ws.local, 'local'],
      [ws.remote, 'remote'],
    ] as const) {
      const email = `spa-${who}@example.com`;
      await run('developers', 'create', '--email', email, '--name', who);
      const create = [
        'apps',
        'create',
        '--developer',
        email,
        '--name',
        'spa',
        '--product',
        'signin',
        '--type',
        'public',
        '--redirect-uri',
        'https://spa.example.com/cb',
        '--redirect-uri',
        'http://127.0.0.1/cb',
      ];
      const created = await run(...create);
      assert.equal(created.code, 0, created.err);
      const key = /^key: {4}([A-Za-z0-9]{32})$/m.exec(created.out)?.[1];
      assert.equal(
        created.out,
        [`created public app "spa" for ${email}, API product signin`, `key:    ${key}`, 'public app: no secret', 'redirect URI: https://spa.example.com/cb', 'redirect URI: http://127.0.0.1/cb'].join(
          '\n',
        ),
      );
      const json = JSON.parse((await run('apps', 'show', key!, '--json')).out);
      assert.deepEqual({ type: json.type, redirectUris: json.redirectUris }, { type: 'public', redirectUris: ['https://spa.example.com/cb', 'http://127.0.0.1/cb'] });
      const made = JSON.parse((await run('apps', 'create', '--developer', email, '--name', 'web', '--product', 'signin', '--redirect-uri', 'https://web.example.com/cb', '--json')).out);
      assert.deepEqual([made.type, made.redirectUris, typeof made.secret], ['confidential', ['https://web.example.com/cb'], 'string']);

      const shown = (await run('apps', 'show', '--developer', email, '--name', 'spa')).out.split('\n');
      assert.match(shown[0]!, /^DEVELOPER +NAME +PRODUCT +TYPE +STATUS +CREATED$/);
      assert.match(shown[1]!, new RegExp(`^${email} +spa +signin +public +active `));
      assert.deepEqual(shown.slice(2, 6), ['', 'redirect URI: https://spa.example.com/cb', 'redirect URI: http://127.0.0.1/cb', '']);
      const listed = (await run('apps', 'list', '--developer', email)).out.split('\n');
      assert.match(listed[0]!, /^DEVELOPER +NAME +PRODUCT +TYPE +STATUS +CREATED +KEYS$/);
      assert.match(listed[1]!, new RegExp(`^${email} +spa +signin +public +active `));
      assert.match(listed[2]!, new RegExp(`^${email} +web +signin +confidential +active `));

      assert.deepEqual(await run('apps', 'redirect-uris', key!, '--set', 'com.example.spa:/cb', '--set', 'https://spa.example.com/cb'), {
        code: 0,
        out: [`redirect URIs of app "spa" of ${email}:`, 'com.example.spa:/cb', 'https://spa.example.com/cb'].join('\n'),
        err: '',
      });
      assert.deepEqual(await run('apps', 'redirect-uris', key!, '--set', 'https://spa.example.com/cb#top'), {
        code: 1,
        out: '',
        err: 'error: the redirect URI "https://spa.example.com/cb#top" must not have a fragment',
      });
      assert.deepEqual(await run('apps', 'redirect-uris', key!, '--none'), {
        code: 1,
        out: '',
        err: 'error: a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in',
      });
      assert.deepEqual(await run('apps', 'redirect-uris', key!), { code: 1, out: '', err: 'error: give the redirect URIs with --set <uri> (repeat it for each), or --none' });
      assert.deepEqual(await run('apps', 'create', '--developer', email, '--name', 'x', '--product', 'hello', '--type', 'public'), {
        code: 1,
        out: '',
        err: 'error: a public app holds no secret, so it needs the authorization_code grant, and product "hello" offers client_credentials only: register a confidential app',
      });
      assert.deepEqual(await run('apps', 'create', '--developer', email, '--name', 'x', '--product', 'signin', '--type', 'native'), {
        code: 1,
        out: '',
        err: 'error: an app\'s type is confidential or public, not "native"',
      });
      const rotated = await run('keys', 'rotate', key!);
      assert.match(rotated.out, /^new key for app "spa" of .+\nkey: {4}[A-Za-z0-9]{32}\npublic app: no secret\nThe earlier keys work until .+\.$/);
    }
  });

  test('apps as code: a public app with redirect URIs, the list replaced, a changed type refused, bad entries named with their line', async () => {
    const apps = path.join(dir.dir, 'spa-apps.yaml');
    const file = (type: string, uris: string[]) =>
      writeFileSync(
        apps,
        [
          'developers:',
          '  - email: cy@example.com',
          '    name: Cy',
          '    apps:',
          '      - name: spa',
          '        product: signin',
          `        type: ${type}`,
          '        redirectUris:',
          ...uris.map((u) => `          - ${u}`),
          '',
        ].join('\n'),
      );
    file('public', ['https://spa.example.com/cb']);
    const expected = ['creating developer cy@example.com', 'creating app cy@example.com/spa (product signin, public)'];
    assert.deepEqual(await ws.local('diff', '-f', apps), { code: 0, out: [...expected, '2 changes to make'].join('\n'), err: '' });
    const applied = await ws.remote('apply', '-f', apps);
    assert.equal(applied.code, 0, applied.err);
    assert.match(
      applied.out,
      /^creating developer cy@example\.com\ncreating app cy@example\.com\/spa \(product signin, public\)\n {2}key: {4}[A-Za-z0-9]{32}\n {2}public app: no secret\n2 changes made$/,
    );
    assert.deepEqual(await ws.remote('apply', '-f', apps), { code: 0, out: 'no changes', err: '' });

    file('public', ['https://spa.example.com/cb', 'http://127.0.0.1/cb']);
    assert.deepEqual(JSON.parse((await ws.remote('diff', '-f', apps, '--json')).out), [
      { action: 'redirect-uris', kind: 'app', developer: 'cy@example.com', app: 'spa', redirectUris: ['https://spa.example.com/cb', 'http://127.0.0.1/cb'] },
    ]);
    assert.deepEqual(await ws.local('apply', '-f', apps), { code: 0, out: ['replacing the redirect URIs of app cy@example.com/spa', '1 change made'].join('\n'), err: '' });
    assert.deepEqual(JSON.parse((await ws.local('apps', 'show', '--developer', 'cy@example.com', '--name', 'spa', '--json')).out).redirectUris, ['https://spa.example.com/cb', 'http://127.0.0.1/cb']);

    file('confidential', ['https://spa.example.com/cb', 'http://127.0.0.1/cb']);
    assert.deepEqual(await ws.remote('apply', '-f', apps), {
      code: 1,
      out: '',
      err: 'error: nothing was changed:\ncy@example.com/spa is a public app, not confidential: an app keeps its type; declare a new app (and delete this one)',
    });
    file('public', ['http://spa.example.com/cb']);
    assert.deepEqual(await ws.local('diff', '-f', apps), {
      code: 2,
      out: '',
      err: 'error: invalid apps file:\ndevelopers[0].apps[0].redirectUris: the redirect URI "http://spa.example.com/cb" must be https, or http on a loopback address (127.0.0.1, [::1], localhost) (spa-apps.yaml:8)',
    });
    writeFileSync(apps, ['developers:', '  - email: cy@example.com', '    name: Cy', '    apps:', '      - name: other', '        product: hello', '        type: public', ''].join('\n'));
    assert.deepEqual(await ws.remote('diff', '-f', apps), {
      code: 2,
      out: '',
      err: 'error: invalid apps file:\ndevelopers[0].apps[0].type: a public app holds no secret, so it needs the authorization_code grant, and product "hello" offers client_credentials only: register a confidential app (spa-apps.yaml:7)',
    });
  });
});

describe('gateway admin apps certificate, on the store and through --url', () => {
  const dir = tempDir();
  let ws: Awaited<ReturnType<typeof workspace>>;
  let certs: Certificates;
  before(async () => {
    ws = await workspace(withManagement(configYaml()), dir.dir);
    certs = makeCertificates(dir.dir);
  });
  after(async () => {
    await ws.gw.close();
    dir.remove();
  });

  test('self-signed certificates by PEM file or thumbprint, a subject DN, a subjectAltName, none; the refusals; alike on the store and over the API', async () => {
    const one = certs.selfSigned('one', '/CN=first app certificate');
    const two = certs.selfSigned('two', '/CN=second');
    const hex = Buffer.from(two.thumbprint, 'base64url').toString('hex').toUpperCase().match(/../g)!.join(':');
    for (const [run, who] of [
      [ws.local, 'local'],
      [ws.remote, 'remote'],
    ] as const) {
      const email = `certs-${who}@example.com`;
      await run('developers', 'create', '--email', email, '--name', who);
      const key = JSON.parse((await run('apps', 'create', '--developer', email, '--name', 'svc', '--product', 'hello', '--json')).out).key as string;
      const selfSigned = await run('apps', 'certificate', key, '--pem', one.cert, '--thumbprint', hex);
      assert.equal(selfSigned.code, 0, selfSigned.err);
      const lines = selfSigned.out.split('\n');
      assert.equal(lines[0], `app "svc" of ${email} authenticates with one of these self-signed certificates (self_signed_tls_client_auth); its secret no longer does:`);
      assert.match(lines[1]!, /^THUMBPRINT +EXPIRES +SUBJECT$/);
      assert.match(lines[2]!, new RegExp(`^${one.thumbprint} +\\d{4}-\\d\\d-\\d\\dT[^ ]+ +CN=first app certificate$`));
      assert.match(lines[3]!, new RegExp(`^${two.thumbprint} +- +-$`));
      const json = JSON.parse((await run('apps', 'show', key, '--json')).out);
      assert.deepEqual(
        json.certificateAuth.certificates.map((c: { thumbprint: string }) => c.thumbprint),
        [one.thumbprint, two.thumbprint],
      );
      assert.deepEqual(await run('apps', 'certificate', key, '--subject-dn', 'CN=svc,O=Example'), {
        code: 0,
        out: `app "svc" of ${email} authenticates with a client certificate of the CA, subject DN CN=svc,O=Example (tls_client_auth); its secret no longer does`,
        err: '',
      });
      assert.deepEqual(await run('apps', 'certificate', key, '--san-dns', 'svc.example.com'), {
        code: 0,
        out: `app "svc" of ${email} authenticates with a client certificate of the CA, subjectAltName DNS:svc.example.com (tls_client_auth); its secret no longer does`,
        err: '',
      });
      assert.deepEqual(await run('apps', 'certificate', key, '--san-ip', 'not-an-ip'), { code: 1, out: '', err: 'error: "not-an-ip" is not an IP address' });
      assert.deepEqual(await run('apps', 'certificate', key, '--thumbprint', 'abc'), {
        code: 1,
        out: '',
        err: 'error: not a PEM certificate (-----BEGIN CERTIFICATE-----) nor a SHA-256 thumbprint',
      });
      assert.deepEqual(await run('apps', 'certificate', key, '--subject-dn', 'CN=a', '--none'), {
        code: 1,
        out: '',
        err: 'error: give one of: --pem/--thumbprint (repeatable), --subject-dn, one --san-*, or --none',
      });
      assert.deepEqual(await run('apps', 'certificate', key, '--none'), { code: 0, out: `app "svc" of ${email} authenticates with its secret (no client certificate)`, err: '' });
      assert.equal(JSON.parse((await run('apps', 'show', key, '--json')).out).certificateAuth, undefined);
    }
  });
});

describe('gateway admin --url on two gateways sharing a Redis', { skip: hasRedis() ? false : 'no redis-server here (.ci/run installs it)' }, () => {
  const dir = tempDir();
  let redis: RedisServer;
  let first: Awaited<ReturnType<typeof workspace>>;
  let second: Gateway;
  before(async () => {
    redis = await startRedis();
    const yaml = withManagement(configYaml()).replace('store:\n  path: ./gateway.db', `store:\n  driver: redis\n  url: ${redis.url}\n  keyPrefix: "cli:"\n  secretKeyFile: ./gateway.key`);
    first = await workspace(yaml, dir.dir);
    second = await startGateway({ config: loadConfigFile(first.file, { env: {} }), logger: createLogger('silent') });
  });
  after(async () => {
    await second?.close();
    await first?.gw.close();
    await redis?.close();
    dir.remove();
  });

  test('an app created through one gateway works at the other, and a key imported through the other works at the first', async () => {
    assert.equal((await first.remote('developers', 'create', '--email', 'ada@example.com', '--name', 'Ada')).code, 0);
    const created = JSON.parse((await first.remote('apps', 'create', '--developer', 'ada@example.com', '--name', 'billing', '--product', 'hello', '--json')).out);
    const issued = await tokenRequest(second.url, { grant_type: 'client_credentials' }, created);
    assert.equal(issued.status, 200);
    assert.equal((await call(`${first.gw.url}/v1/hello`, { headers: bearer(issued.body.access_token) })).status, 200);
    const imported = await first.remoteWith('an-apigee-secret-00000000000001\n', 'keys', 'import', created.key, '--key', 'apigee-key-0000001', '--secret-stdin');
    assert.equal(imported.code, 0, imported.err);
    assert.equal((await tokenRequest(second.url, { grant_type: 'client_credentials' }, { key: 'apigee-key-0000001', secret: 'an-apigee-secret-00000000000001' })).status, 200);
  });
});
