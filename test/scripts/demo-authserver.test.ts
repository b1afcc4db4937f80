// scripts/demo-authserver.ts as `npm run demo:authserver` runs it: a child process, over real HTTP.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { basic, call, type Answer } from '../helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GATEWAY = basic('gateway', 'demo-gateway-secret');

describe('demo authorization server', () => {
  let child: ChildProcess;
  let url: string;

  before(async () => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    delete env.AUTHSERVER_SECRET;
    child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-authserver.ts', '--port', '0'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /on (http:\/\/\S+)$/.exec(line);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the demo server exited (${code})`)));
    });
  });
  after(() => {
    child.kill('SIGKILL');
  });

  const authenticate = (body: string, authorization = GATEWAY): Promise<Answer> => call(url, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body });

  test('prototype-lookup: constructor, __proto__ and toString are unknown users (401), and alice still gets in after them', async () => {
    for (const username of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await authenticate(JSON.stringify({ username, password: 'x' }));
      assert.equal(res.status, 401, username);
      assert.deepEqual(res.body, { error: 'invalid credentials' });
    }
    const res = await authenticate(JSON.stringify({ username: 'alice', password: 'wonderland' }));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { sub: 'user-1001' });
  });

  test('malformed bodies get 400, and the server keeps serving', async () => {
    for (const body of ['', 'not json', 'null', '42', '"alice"', '[]', '{"username":"alice"}', '{"username":{"x":1},"password":"wonderland"}', '{"username":"alice","password":null}']) {
      const res = await authenticate(body);
      assert.equal(res.status, 400, body);
      assert.deepEqual(res.body, { error: 'the body must be JSON with a string username and password' });
    }
    assert.equal((await authenticate(JSON.stringify({ username: 'bob', password: 'wrong' }))).status, 401);
    assert.equal((await authenticate(JSON.stringify({ username: 'bob', password: 'builder' }))).status, 200);
  });

  test("a caller without the gateway's credentials gets 500 (not 401, which would read as a wrong password)", async () => {
    const res = await authenticate(JSON.stringify({ username: 'alice', password: 'wonderland' }), basic('gateway', 'wrong'));
    assert.equal(res.status, 500);
    assert.equal((await call(`${url}x`, { method: 'POST' })).status, 404);
  });
});
