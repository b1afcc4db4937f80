// The single executable of scripts/build.ts, run as an operator would: copied alone into an empty
// folder, with a PATH that holds no node and no node_modules. It serves with two workers, issues
// tokens, and its admin and config subcommands work.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildExecutable } from '../../scripts/build.ts';
import { bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';

const build = tempDir();
const home = tempDir();
const exe = path.join(home.dir, 'gateway');
const file = path.join(home.dir, 'gateway.yaml');
// A PATH of one empty folder: no node anywhere on it, and no node_modules above the executable's folder.
const env = { PATH: path.join(home.dir, 'bin'), HOME: home.dir };
const run = (...argv: string[]) => spawnSync(exe, argv, { cwd: home.dir, env, encoding: 'utf8' });
let child: ChildProcess;
let url: string;
let built: string;

before(async () => {
  built = await buildExecutable(build.dir);
  copyFileSync(built, exe);
  writeFileSync(file, `${configYaml().replace('log:\n  level: info', 'log:\n  level: info\n  access: false')}\nworkers: 2\n`);
  mkdirSync(env.PATH);
  assert.notEqual(spawnSync('/bin/sh', ['-c', 'command -v node'], { env }).status, 0, 'no node on the PATH');
  child = spawn(exe, ['--config', file], { cwd: home.dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const listening = text.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { url?: string; workers?: number }) : undefined)).find((l) => l?.workers === 2);
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

test('the executable, alone with its config: two workers issue a token and serve a route; admin and config subcommands work', async () => {
  const check = run('config', 'check', '--config', file);
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stdout, /gateway\.yaml: ok \(/);
  assert.equal(run('admin', 'developers', 'create', '--config', file, '--email', 'dev@example.com', '--name', 'Dev').status, 0);
  const created = run('admin', 'apps', 'create', '--config', file, '--developer', 'dev@example.com', '--name', 'shipped', '--product', 'hello', '--json');
  assert.equal(created.status, 0, created.stderr);
  const app = JSON.parse(created.stdout) as { key: string; secret: string };
  const issued = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(issued.status, 200);
  const answer = await call(`${url}/v1/hello`, { headers: bearer(issued.body.access_token) });
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, { message: 'hello' });
});

test('the executable: --version, --help, and a config error naming the YAML path and line', () => {
  const pkg = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
  assert.equal(run('--version').stdout, `${pkg.version}\n`);
  assert.match(run('--help').stdout, /^Usage: gateway \[options\] \[command\]/);
  const broken = path.join(home.dir, 'broken.yaml');
  writeFileSync(broken, 'listen:\n  port: eighty\n');
  const refused = run('config', 'check', '--config', broken);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /listen\.port: must be integer \(broken\.yaml:2\)/);
});

test('the build writes the executable\'s SHA-256 beside it', () => {
  const digest = createHash('sha256').update(readFileSync(built)).digest('hex');
  assert.equal(readFileSync(path.join(build.dir, 'gateway.sha256'), 'utf8'), `${digest}  gateway\n`);
  assert.equal(execFileSync('sha256sum', ['-c', 'gateway.sha256'], { cwd: build.dir, encoding: 'utf8' }), 'gateway: OK\n');
});
