// The bundle of scripts/build.ts, run as it ships: no TypeScript loader, the CLI and the worker
// threads of `workers: 2` from dist/, and the gateway's runtime flags.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { buildBundles, RUNTIME_FLAGS } from '../../scripts/build.ts';
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
      const listening = text.split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; url?: string; workers?: number }) : undefined)).find((l) => l?.workers === 2);
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
