// A gateway on a Redis that persists nothing (no RDB snapshots, no AOF) would lose every app when
// that Redis restarts: it says so in a warning at start and in /readyz's body. A Redis that
// persists, or that refuses CONFIG (as managed ones do), gets no such warning.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { loadConfigFile } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/host/index.ts';
import { call, configYaml, tempDir } from '../helpers.ts';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';
const WARNING = 'Redis persists nothing (save "" and appendonly no): when it restarts, every developer, app, key and token is lost; turn on appendonly yes (or RDB snapshots with save)';

/** A gateway on the Redis at `url`, and the messages it logged at warn. */
async function gatewayOn(url: string): Promise<{ gateway: Gateway; warnings: string[]; remove(): void }> {
  const dir = tempDir();
  const file = path.join(dir.dir, 'gateway.yaml');
  const keyPrefix = `p${Math.random().toString(36).slice(2, 8)}:`;
  writeFileSync(file, configYaml().replace(/store:\n {2}path: \.\/gateway\.db/, `store:\n  driver: redis\n  url: ${url}\n  keyPrefix: "${keyPrefix}"`));
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString('utf8')) as { level: number; msg: string };
      if (line.level === 40) warnings.push(line.msg);
      done();
    },
  });
  const gateway = await startGateway({ config: loadConfigFile(file, { env: {} }), logger: createLogger('info', sink) });
  return { gateway, warnings, remove: dir.remove };
}

/** /readyz once it has warnings: the store is asked about itself when its connection is ready, and subscribed a little after the start. */
async function readyz(gateway: Gateway): Promise<unknown> {
  for (let i = 0; ; i++) {
    const res = await call(`${gateway.adminUrl}/readyz`);
    if ((res.status === 200 && res.body.warnings !== undefined) || i === 100) return res.body;
    await sleep(20);
  }
}

describe('a Redis that persists nothing', { skip }, () => {
  let volatile: RedisServer;
  let durable: RedisServer;
  before(async () => {
    [volatile, durable] = await Promise.all([startRedis(), startRedis({ durable: true })]);
  });
  after(async () => {
    await volatile?.close();
    await durable?.close();
  });

  test("save '' and appendonly no: a warning at start, and in /readyz's body (still 200)", async () => {
    const { gateway, warnings, remove } = await gatewayOn(volatile.url);
    try {
      assert.deepEqual(await readyz(gateway), { status: 'ready', warnings: [WARNING] });
      assert.deepEqual(warnings, [WARNING]);
    } finally {
      await gateway.close();
      remove();
    }
  });

  // Under maxmemory-policy allkeys-lru every gateway warns of eviction: the sign that the store was asked about itself.
  const EVICTION = 'Redis evicts keys when full (maxmemory-policy allkeys-lru): it may drop login throttles, quota counts, tokens, apps and developers; set maxmemory-policy noeviction';
  async function evicting<T>(server: RedisServer, run: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis(server.url);
    await client.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      return await run(client);
    } finally {
      await client.config('SET', 'maxmemory-policy', 'noeviction');
      client.disconnect();
    }
  }

  test('appendonly yes, or RDB snapshots: no warning of persistence', async () => {
    for (const server of [durable, volatile]) {
      await evicting(server, async (client) => {
        if (server === volatile) await client.config('SET', 'save', '3600 1');
        const { gateway, warnings, remove } = await gatewayOn(server.url);
        try {
          assert.deepEqual(await readyz(gateway), { status: 'ready', warnings: [EVICTION] });
          assert.deepEqual(warnings, [EVICTION]);
        } finally {
          await gateway.close();
          remove();
          await client.config('SET', 'save', '');
        }
      });
    }
  });

  test('a Redis that refuses CONFIG (a managed one): no warning of persistence', async () => {
    await evicting(volatile, async (client) => {
      await client.acl('SETUSER', 'managed', 'on', '>managed-password', '~*', '&*', '+@all', '-config');
      const { gateway, warnings, remove } = await gatewayOn(`redis://managed:managed-password@127.0.0.1:${volatile.port}`);
      try {
        assert.deepEqual(await readyz(gateway), { status: 'ready', warnings: [EVICTION] });
        assert.deepEqual(warnings, [EVICTION]);
      } finally {
        await gateway.close();
        remove();
        await client.acl('DELUSER', 'managed');
      }
    });
  });
});
