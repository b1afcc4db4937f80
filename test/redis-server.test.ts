// The real Redis the Redis driver's tests run against (test/redis-server.ts): a server of the
// test's own that ioredis reaches, that can go down and come back on its port, and a local
// three-node Cluster on which a script runs over keys that share a hash tag.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { hasRedis, startRedis, startRedisCluster, type RedisCluster, type RedisServer } from './redis-server.ts';

const skip = hasRedis() ? false : 'no redis-server here (.ci/run installs it)';

describe('a redis-server of the test', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.close());

  test('ioredis reaches it; stopped, a command fails at once; started again, the client reconnects by itself', async () => {
    const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    // While the server is down every reconnection fails: expected here.
    client.on('error', () => {});
    try {
      await client.set('k', 'v');
      assert.equal(await client.get('k'), 'v');
      await server.stop();
      await assert.rejects(client.get('k'));
      await server.start();
      for (let i = 0; client.status !== 'ready'; i++) {
        assert.ok(i < 200, `still ${client.status}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Nothing is saved to disk: it came back empty.
      assert.equal(await client.get('k'), null);
    } finally {
      client.disconnect();
    }
  });
});

describe('a local Redis Cluster of three nodes', { skip }, () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(() => cluster.close());

  test('keys spread over the nodes; a script over keys with one hash tag runs on the node that holds them', async () => {
    const client = new Cluster(cluster.seeds);
    try {
      for (let i = 0; i < 30; i++) await client.set(`spread:${i}`, String(i));
      const holding = await Promise.all(
        cluster.nodes.map(async (n) => {
          const node = new Redis(n.url);
          try {
            return await node.dbsize();
          } finally {
            node.disconnect();
          }
        }),
      );
      assert.equal(holding.filter((size) => size > 0).length, 3, `keys per node: ${holding.join(', ')}`);
      const sum = await client.eval("return redis.call('INCRBY', KEYS[1], 2) + redis.call('INCRBY', KEYS[2], 3)", 2, '{app:1}:a', '{app:1}:b');
      assert.equal(sum, 5);
      await assert.rejects(client.eval("return redis.call('GET', KEYS[1])", 2, 'no-tag:a', 'no-tag:b'), /CROSSSLOT|same slot/);
    } finally {
      client.disconnect();
    }
  });
});
