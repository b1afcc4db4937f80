// Apps as code on a SQLite file, in process as `gateway` runs it: a file that the operations would
// refuse part-way is refused whole, before anything changes, with each entry's YAML path and line;
// and the secrets file never stands in the way of a corrected run.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/program.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { createAdminServices } from '../../src/services.ts';
import { configYaml, tempDir } from '../helpers.ts';

interface Run {
  code: number;
  out: string;
  err: string;
}

describe('gateway admin apply on the store: refused before any change', () => {
  const dir = tempDir();
  const config = path.join(dir.dir, 'gateway.yaml');
  const apps = path.join(dir.dir, 'apps.yaml');
  before(() => writeFileSync(config, configYaml()));
  after(() => dir.remove());

  async function admin(...args: string[]): Promise<Run> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['admin', ...args, '--config', config], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
    // The audit lines on standard error are not the command's messages.
    return { code, out: out.join('\n'), err: err.filter((line) => !line.startsWith('{"level":')).join('\n') };
  }
  const developers = async () => (await admin('developers', 'list')).out;

  test('a reserved, malformed or repeated developer, a bad name: every problem with its path and line, and nothing made', async () => {
    const before = await developers();
    writeFileSync(
      apps,
      [
        'developers:', //                                         1
        '  - email: ok@example.com', //                           2
        '    name: Ok', //                                        3
        '  - email: management@gateway.invalid', //               4
        '    name: Mallory', //                                   5
        '  - email: not-an-email', //                             6
        '    name: X', //                                         7
        '  - email: OK@example.com', //                           8
        '    name: "  "', //                                      9
        '    apps:', //                                          10
        '      - name: "a\\u202eb"', //                          11
        '        product: hello', //                             12
        '',
      ].join('\n'),
    );
    assert.deepEqual(await admin('apply', '-f', apps), {
      code: 2,
      out: '',
      err: [
        'error: invalid apps file:',
        "developers[1].email: management@gateway.invalid is reserved for the management API's clients (apps.yaml:4)",
        'developers[2].email: "not-an-email" is not an email address (apps.yaml:6)',
        'developers[3].email: ok@example.com is declared twice (first at developers[0]) (apps.yaml:8)',
        'developers[3].name: the developer name must be 1 to 100 characters (apps.yaml:9)',
        'developers[3].apps[0].name: the app name must not contain control characters or bidirectional text overrides (apps.yaml:11)',
      ].join('\n'),
    });
    assert.equal(await developers(), before);
  });

  test('an unknown product is refused with its line, before the developer declared above it is made', async () => {
    const before = await developers();
    writeFileSync(apps, ['developers:', '  - email: ada@example.com', '    name: Ada', '    apps:', '      - name: billing', '        product: payments', ''].join('\n'));
    assert.deepEqual(await admin('diff', '-f', apps), {
      code: 2,
      out: '',
      err: 'error: invalid apps file:\ndevelopers[0].apps[0].product: no API product "payments" (known: hello, orders) (apps.yaml:6)',
    });
    assert.equal((await admin('apply', '-f', apps)).code, 2);
    assert.equal(await developers(), before);
  });

  test('a new app for a developer who is and stays disabled is refused whole; declared active, it is made, its secret in a 0600 file', async () => {
    const secrets = path.join(dir.dir, 'secrets.json');
    assert.equal((await admin('developers', 'create', '--email', 'bob@example.com', '--name', 'Bob')).code, 0);
    assert.equal((await admin('developers', 'disable', 'bob@example.com')).code, 0);
    const bob = (status: string) =>
      [
        'developers:',
        '  - email: ada@example.com',
        '    name: Ada',
        '  - email: bob@example.com',
        '    name: Bob',
        `    status: ${status}`,
        '    apps:',
        '      - name: one',
        '        product: hello',
        '',
      ].join('\n');
    writeFileSync(apps, bob('disabled'));
    const before = await developers();
    assert.deepEqual(await admin('apply', '-f', apps, '--secrets-file', secrets), {
      code: 1,
      out: '',
      err: 'error: nothing was changed:\nbob@example.com is disabled: no app can be registered for them (one); declare them active, or leave the app out',
    });
    assert.equal(await developers(), before);
    assert.equal(existsSync(secrets), false);

    writeFileSync(apps, bob('active'));
    assert.deepEqual(await admin('apply', '-f', apps, '--secrets-file', secrets), {
      code: 0,
      out: [
        'creating developer ada@example.com',
        'enabling developer bob@example.com',
        'creating app bob@example.com/one (product hello)',
        `3 changes made; the new keys and secrets are in ${secrets}`,
      ].join('\n'),
      err: '',
    });
    assert.equal(statSync(secrets).mode & 0o777, 0o600);
    const written = JSON.parse(readFileSync(secrets, 'utf8')) as { developer: string; app: string; product: string; key: string; secret: string }[];
    assert.deepEqual(
      written.map((s) => [s.developer, s.app, s.product]),
      [['bob@example.com', 'one', 'hello']],
    );
    assert.match(written[0]!.secret, /^gws_/);
    // Replaced through a sibling renamed over it: none is left behind.
    assert.deepEqual(
      readdirSync(dir.dir).filter((f) => f.endsWith('.tmp')),
      [],
    );
    assert.deepEqual(await admin('apply', '-f', apps, '--secrets-file', secrets), { code: 0, out: 'no changes', err: '' });
  });

  test('a developer who signed up without confirming the address is replaced, as `developers create` does, and gets the app', async () => {
    const loaded = loadConfigFile(config, { env: {} });
    const services = await createAdminServices(loaded, createLogger('silent'));
    try {
      await services.store.accounts.createDeveloper({ email: 'carol@example.com', name: 'Someone', now: Date.now(), passwordHash: 'x', verified: false });
    } finally {
      await services.store.close();
    }
    writeFileSync(apps, ['developers:', '  - email: carol@example.com', '    name: Carol', '    apps:', '      - name: one', '        product: hello', ''].join('\n'));
    const applied = await admin('apply', '-f', apps);
    assert.equal(applied.code, 0, applied.err);
    assert.deepEqual(
      applied.out.split('\n').filter((l) => !l.startsWith('  ')),
      ['creating developer carol@example.com', 'creating app carol@example.com/one (product hello)', '2 changes made; the secrets are shown only now'],
    );
    const carol = JSON.parse((await admin('developers', 'show', 'carol@example.com', '--json')).out) as { name: string; verified: boolean };
    assert.deepEqual([carol.name, carol.verified], ['Carol', true]);
    assert.deepEqual(await admin('apply', '-f', apps), { code: 0, out: 'no changes', err: '' });
  });
});
