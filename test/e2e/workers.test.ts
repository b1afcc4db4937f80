// workers: 2 — two worker threads on one port: quotas and spike arrests exact across them,
// revocations reaching both at once.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { get as httpGet } from 'node:http';
import { createApp, createDeveloper, revokeKey, type OperatorDeps } from '../../src/admin/operations.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/port/index.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { configYaml, tempDir, tokenRequest, storeAdminDeps } from '../helpers.ts';

describe('workers: 2', () => {
  const dir = tempDir();
  let workers: Gateway;
  let store: Store;
  let admin: OperatorDeps;
  // A new connection per call (agent: false), so the kernel spreads the calls over both workers.
  const get = (url: string, token: string) =>
    new Promise<number>((resolve, reject) => {
      httpGet(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', reject);
    });

  before(async () => {
    const file = path.join(dir.dir, 'gateway.yaml');
    writeFileSync(
      file,
      `${configYaml({
        routes: `  q:\n    method: GET\n    path: /v1/q\n    upstream: mock\n    policies:\n      - quota: { limit: 10, interval: hour }\n  s:\n    method: GET\n    path: /v1/s\n    upstream: mock\n    policies:\n      - spikeArrest: { rate: 1pm }\n`,
        products: `  shared:\n    routes: [q, s, hello]\n`,
      }).replace('log:\n  level: info', 'log:\n  level: silent')}\nworkers: 2\n`,
    );
    const config = loadConfigFile(file, { env: {} });
    assert.equal(config.workers, 2);
    workers = await startGateway({ config, env: {}, adminPort: 0, logger: createLogger('silent') });
    store = await openStore(config.store);
    admin = storeAdminDeps(config, store);
    await createDeveloper(admin, { email: 'dev@example.com', name: 'Dev' });
  });
  after(async () => {
    await workers.close();
    await store.close();
    dir.remove();
  });

  async function token(): Promise<{ key: string; token: string }> {
    const app = await createApp(admin, { developer: 'dev@example.com', name: `app-${Math.random()}`, product: 'shared' });
    const res = await tokenRequest(workers.url, { grant_type: 'client_credentials' }, app);
    assert.equal(res.status, 200);
    return { key: app.key, token: res.body.access_token };
  }

  test('a quota of 10 holds exactly across both workers under 40 parallel calls', async () => {
    const { token: t } = await token();
    const statuses = await Promise.all(Array.from({ length: 40 }, () => get(`${workers.url}/v1/q`, t)));
    assert.equal(statuses.filter((s) => s === 200).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 30);
  });

  test('a spike arrest of 1pm lets exactly one of 20 parallel calls through', async () => {
    const { token: t } = await token();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(`${workers.url}/v1/s`, t)));
    assert.equal(statuses.filter((s) => s === 200).length, 1);
  });

  test('a revocation reaches every worker at once', async () => {
    const { key, token: t } = await token();
    // Used over many connections: both workers have it cached.
    const before = await Promise.all(Array.from({ length: 20 }, () => get(`${workers.url}/v1/hello`, t)));
    assert.deepEqual(new Set(before), new Set([200]));
    await revokeKey(admin, key);
    await new Promise((r) => setTimeout(r, 5));
    const afterwards = await Promise.all(Array.from({ length: 20 }, () => get(`${workers.url}/v1/hello`, t)));
    assert.deepEqual(new Set(afterwards), new Set([401]));
  });
});
