// The bundle of scripts/build.ts, run as it ships: no TypeScript loader, the CLI and the worker
// threads of `workers: 2` from dist/, and the gateway's runtime flags.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildBundles, RUNTIME_FLAGS } from '../../scripts/build.ts';
import { ConfigError, loadConfigFile } from '../../src/config/load.ts';
import { bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';

const dir = tempDir();
const out = path.join(dir.dir, 'dist');
const file = path.join(dir.dir, 'gateway.yaml');
const cli = (...argv: string[]) => execFileSync(process.execPath, [...RUNTIME_FLAGS, path.join(out, 'gateway.mjs'), ...argv, '--config', file], { encoding: 'utf8' });
let child: ChildProcess;
let url: string;

before(async () => {
  await buildBundles(out);
  writeFileSync(file, `${configYaml().replace('log:\n  level: info', 'log:\n  level: info\n  access: false')}\nworkers: 2\n`);
  child = spawn(process.execPath, [...RUNTIME_FLAGS, path.join(out, 'gateway.mjs'), '--config', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const listening = text
        .split('\n')
        .map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; url?: string; workers?: number }) : undefined))
        .find((l) => l?.workers === 2);
      if (listening?.url !== undefined) resolve(listening.url);
    });
    child.once('exit', (code) => reject(new Error(`the bundled gateway exited with ${code}`)));
  });
});
after(() => {
  child.kill('SIGTERM');
  dir.remove();
});

test('the bundled CLI registers an app; its two workers issue a token and serve a route with it', async () => {
  assert.match(cli('config', 'check'), /: ok \(/);
  cli('admin', 'developers', 'create', '--email', 'dev@example.com', '--name', 'Dev');
  const app = JSON.parse(cli('admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'bundled', '--product', 'hello', '--json')) as { key: string; secret: string };
  const issued = await tokenRequest(url, { grant_type: 'client_credentials' }, app);
  assert.equal(issued.status, 200);
  const answer = await call(`${url}/v1/hello`, { headers: bearer(issued.body.access_token) });
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, { message: 'hello' });
});

test("the bundle's config validator, generated at build time, reports exactly what the one compiled at run time reports", () => {
  const good = configYaml();
  const broken = {
    'unknown key': good.replace('  realm: test-realm\n', '  realm: test-realm\n  bogus: 1\n'),
    'bad route name': good.replace('routes:\n', 'routes:\n  "bad name!": { method: GET, path: /x, upstream: backend }\n'),
    'missing key and wrong type': good.replace(/listen:\n( {2}.*\n)+/, 'listen:\n  host: 127.0.0.1\n  trustedProxies: nope\n'),
    'enum and pattern': good.replace('method: GET', 'method: FETCH').replace(/path: \/v1\/hello/, 'path: v1/hello'),
    'unknown policy': good.replace(
      'routes:\n',
      'routes:\n  p: { method: GET, path: /p, upstream: backend, policies: [{ quota: { limit: 1, interval: minute }, spikeArrest: { rate: 1ps } }, { nope: {} }] }\n',
    ),
    'bad upstream': good.replace('upstreams:\n', 'upstreams:\n  weird: { mock: { status: 99 }, url: http://x }\n'),
  };
  for (const [name, yaml] of Object.entries(broken)) {
    const bad = path.join(dir.dir, 'broken.yaml');
    writeFileSync(bad, yaml);
    let expected: string | undefined;
    try {
      loadConfigFile(bad, { env: {} });
    } catch (err) {
      assert.ok(err instanceof ConfigError, name);
      expected = err.message;
    }
    assert.ok(expected !== undefined, `${name}: the source refuses it`);
    const bundled = spawnSync(process.execPath, [path.join(out, 'gateway.mjs'), 'config', 'check', '--config', bad], { encoding: 'utf8' });
    assert.deepEqual([bundled.status, bundled.stderr], [2, `error: invalid configuration:\n${expected}\n`], name);
  }
});
