// Crash under load loses nothing promised: clients issue tokens as fast as they can, the gateway is
// killed with SIGKILL in the middle, and every token whose 200 reached a client verifies after a
// restart on the same store.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, configYaml, tempDir, tokenRequest } from '../helpers.ts';
import { gateway, serve } from './children.ts';

const CLIENTS = 8;
const LOAD_MS = 2000;

const { dir, remove } = tempDir();
after(remove);

test('every token answered with 200 before a kill -9 verifies after the restart', async (t) => {
  const config = path.join(dir, 'gateway.yaml');
  writeFileSync(config, configYaml());
  assert.equal((await gateway(['admin', 'developers', 'create', '--email', 'dev@example.com', '--name', 'Dev', '--config', config])).code, 0);
  const created = await gateway(['admin', 'apps', 'create', '--developer', 'dev@example.com', '--name', 'busy', '--product', 'hello', '--json', '--config', config]);
  assert.equal(created.code, 0, created.stderr);
  const app = JSON.parse(created.stdout) as { key: string; secret: string };

  const first = await serve(config);
  const promised: string[] = [];
  let cut = 0;
  let loading = true;
  const client = async () => {
    while (loading) {
      try {
        // `call` resolves only once the whole body is in.
        const res = await tokenRequest(first.url, { grant_type: 'client_credentials' }, app);
        assert.equal(res.status, 200, res.text);
        promised.push((res.body as { access_token: string }).access_token);
      } catch (err) {
        if (loading) throw err;
        cut++; // in flight when the gateway died: nothing was promised
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  await sleep(LOAD_MS);
  // Killed with every client's request in flight; the clients stop once they hear of it.
  const killed = first.stop('SIGKILL');
  loading = false;
  assert.deepEqual(await killed, { code: null, signal: 'SIGKILL' });
  await Promise.all(clients);

  const second = await serve(config);
  try {
    const rejected: string[] = [];
    let next = 0;
    const verify = async () => {
      while (next < promised.length) {
        const token = promised[next++]!;
        const res = await call(`${second.url}/v1/hello`, { headers: bearer(token) });
        if (res.status !== 200) rejected.push(`${token.slice(0, 16)}…: ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, verify));
    const message = `checked ${promised.length} tokens answered with 200 before the kill (${cut} more were in flight and cut off): ${promised.length - rejected.length} verify`;
    t.diagnostic(message);
    console.log(message);
    assert.deepEqual(rejected, []);
    assert.equal(new Set(promised).size, promised.length);
    assert.ok(promised.length >= 300, `only ${promised.length} tokens issued: the test proves little`);
  } finally {
    await second.stop();
  }
});
