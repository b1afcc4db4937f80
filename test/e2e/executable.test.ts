// The single executable of scripts/build.ts, run as an operator would: copied alone into an empty
// folder with gateway.example.yaml (and the OpenAPI document it names, in examples/ beside it), with
// a PATH that holds no node and no node_modules. It serves
// the example's routes with two workers, issues tokens, runs the portal, and every admin, config
// and healthcheck subcommand works from it.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildExecutable } from '../../scripts/build.ts';
import { freePort } from '../../src/http/listener.ts';
import { bearer, call, tempDir, tokenRequest } from '../helpers.ts';
import { keepAliveLoad } from './load.ts';

const build = tempDir();
const home = tempDir();
const exe = path.join(home.dir, 'gateway');
const file = path.join(home.dir, 'gateway.yaml');
// A PATH of one empty folder: no node anywhere on it, and no node_modules above the executable's folder.
const env = { PATH: path.join(home.dir, 'bin'), HOME: home.dir, GATEWAY_PORT: '', PORTAL_PORT: '' };
const run = (...argv: string[]) => spawnSync(exe, argv, { cwd: home.dir, env, encoding: 'utf8' });
let child: ChildProcess;
let url: string;
let built: string;

before(async () => {
  built = await buildExecutable(build.dir);
  copyFileSync(built, exe);
  const example = readFileSync(path.join(import.meta.dirname, '../../gateway.example.yaml'), 'utf8');
  writeFileSync(file, `${example}\nworkers: 2\n`);
  mkdirSync(path.join(home.dir, 'examples'));
  copyFileSync(path.join(import.meta.dirname, '../../examples/orders.openapi.yaml'), path.join(home.dir, 'examples', 'orders.openapi.yaml'));
  env.GATEWAY_PORT = String(await freePort('127.0.0.1'));
  env.PORTAL_PORT = String(await freePort('127.0.0.1'));
  mkdirSync(env.PATH);
  assert.notEqual(spawnSync('/bin/sh', ['-c', 'command -v node'], { env }).status, 0, 'no node on the PATH');
  child = spawn(exe, ['--config', file], { cwd: home.dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const listening = text
        .split('\n')
        .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { url?: string; workers?: number }) : undefined))
        .find((l) => l?.workers === 2);
      if (listening?.url !== undefined) resolve(listening.url);
    });
    child.once('exit', (code) => reject(new Error(`the executable exited with ${code}`)));
  });
});
after(() => {
  child?.kill('SIGTERM');
  home.remove();
  build.remove();
});

test('the executable, alone with the example config: two workers serve its routes and issue tokens; the portal answers; every admin, config and healthcheck subcommand works', async () => {
  const ok = (...argv: string[]) => {
    const r = run(...argv, '--config', file);
    assert.equal(r.status, 0, `${argv.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.equal(ok('config', 'check'), `${file}: ok (2 products, 9 routes, 3 upstreams)\n`);
  assert.equal((JSON.parse(run('config', 'schema').stdout) as { title: string }).title, 'token gateway configuration');
  assert.equal(ok('healthcheck'), `healthy: ${url}/.well-known/oauth-authorization-server answered 200\n`);

  ok('admin', 'developers', 'create', '--email', 'dev@example.com', '--name', 'Dev');
  assert.match(ok('admin', 'developers', 'invite', 'dev@example.com'), /gwi_/);
  assert.match(ok('admin', 'developers', 'list'), /^dev@example\.com +Dev +active/m);
  ok('admin', 'developers', 'disable', 'dev@example.com');
  ok('admin', 'developers', 'enable', 'dev@example.com');
  const app = JSON.parse(ok('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'shipped', '--product', 'hello', '--json')) as { key: string; secret: string };
  assert.match(ok('admin', 'apps', 'list'), new RegExp(`^dev@example\\.com +shipped +hello +confidential +active +\\S+ +${app.key}$`, 'm'));
  assert.match(ok('admin', 'apps', 'show', app.key), new RegExp(`^${app.key} +approved`, 'm'));
  ok('admin', 'apps', 'disable', app.key);
  ok('admin', 'apps', 'enable', app.key);
  // The orders product waits for approval (approval: manual) only for portal apps; approving is a no-op here.
  const orders = JSON.parse(ok('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'orders', '--product', 'orders', '--json')) as { key: string };
  ok('admin', 'apps', 'approve', orders.key);
  ok('admin', 'apps', 'delete', orders.key);
  const rotated = JSON.parse(ok('admin', 'keys', 'rotate', app.key, '--json')) as { key: string; secret: string };
  ok('admin', 'keys', 'revoke', app.key);
  const copy = path.join(home.dir, 'backup', 'gateway.db');
  assert.match(ok('admin', 'backup', '--to', copy), new RegExp(`^backed up .+ to ${copy} \\(\\d+ pages, key file ${copy}\\.key\\)\n$`));

  const refused = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(refused.status, 401);
  const issued = await tokenRequest(url, { grant_type: 'client_credentials' }, rotated);
  assert.equal(issued.status, 200, issued.text);
  for (let i = 0; i < 4; i++) {
    // Several calls, so that both workers answer some.
    const answer = await call(`${url}/v1/hello`, { headers: bearer(issued.body.access_token) });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { message: 'Hello from the token gateway' });
  }
  const search = await call(`${url}/v1/search?limit=500`, { headers: bearer(issued.body.access_token) });
  assert.equal(search.status, 400);

  const portal = await call(`http://127.0.0.1:${env.PORTAL_PORT}/`);
  assert.equal(portal.status, 200);
  assert.match(portal.text, /<title>[^<]*Token gateway developers<\/title>/);
});

test('the executable: --version, --help, and a config error naming the YAML path and line', () => {
  const pkg = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
  assert.equal(run('--version').stdout, `${pkg.version}\n`);
  assert.match(run('--help').stdout, /^Usage: gateway \[options\] \[command\]/);
  const broken = path.join(home.dir, 'broken.yaml');
  writeFileSync(broken, 'listen:\n  port: eighty\n');
  const refused = run('config', 'check', '--config', broken);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /listen\.port: must be an integer, found "eighty" \(broken\.yaml:2\)/);
});

test('the executable reloads its config through `gateway reload`, and refuses a broken one with its line', async () => {
  const good = readFileSync(file, 'utf8');
  writeFileSync(file, good.replace('workers: 2', 'workers: 2\nshutdownTimeout: 20s'));
  const reloaded = run('reload', '--config', file);
  assert.equal(reloaded.status, 0, reloaded.stderr);
  assert.equal(reloaded.stdout, `reloaded ${file}\n`);
  writeFileSync(file, good.replace('workers: 2', 'workers: 2\nshutdownTimeout: soon'));
  // Checked before the gateway is asked: the running one never sees it.
  const refused = run('reload', '--config', file);
  writeFileSync(file, good);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /^error: invalid configuration:\nshutdownTimeout: .+ \(gateway\.yaml:\d+\)\n/);
  assert.equal((await call(`${url}/v1/hello`)).status, 401);
  assert.equal(run('reload', '--config', file).status, 0);
});

// Last: it stops the executable.
test('the executable stops gracefully on SIGTERM under 8 keep-alive clients: every call is answered 200 or refused at connect', async () => {
  const created = run('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'draining', '--product', 'hello', '--json', '--config', file);
  assert.equal(created.status, 0, created.stderr);
  const issued = await tokenRequest(url, { grant_type: 'client_credentials' }, JSON.parse(created.stdout) as { key: string; secret: string });
  assert.equal(issued.status, 200, issued.text);
  const load = keepAliveLoad(url, '/v1/hello', bearer(issued.body.access_token));
  await load.reached(500);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const tally = await load.refusedAll();
  assert.deepEqual({ failures: tally.failures, statuses: tally.statuses, refused: tally.refused }, { failures: [], statuses: [], refused: 8 });
  assert.equal(await exited, 0);
});

test("the build writes the executable's SHA-256 beside it, naming it by its path from the repository root, where sha256sum -c checks it", () => {
  const digest = createHash('sha256').update(readFileSync(built)).digest('hex');
  const root = path.join(import.meta.dirname, '..', '..');
  const named = path.relative(root, built);
  assert.equal(readFileSync(path.join(build.dir, 'gateway.sha256'), 'utf8'), `${digest}  ${named}\n`);
  assert.equal(execFileSync('sha256sum', ['-c', path.join(build.dir, 'gateway.sha256')], { cwd: root, encoding: 'utf8' }), `${named}: OK\n`);
});
