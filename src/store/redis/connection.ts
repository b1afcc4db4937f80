// The connection the YAML names, on ioredis: one server by URL, a Sentinel set, or a Cluster by
// seed URLs whose first one gives the login and TLS of every node.
import { Cluster, Redis, type ClusterNode } from 'ioredis';
import { serverOptions, type RedisOptions, type RedisSettings } from './settings.ts';

/** `host:port` of a Sentinel. */
function sentinelAddress(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(node.slice(at + 1)) };
}

export function connect(connection: RedisSettings['connection'], options: RedisOptions): Redis | Cluster {
  switch (connection.kind) {
    case 'server':
      return new Redis({ ...options, ...serverOptions(connection.url) });
    case 'sentinel':
      return new Redis({ ...options, ...connection.login, name: connection.name, sentinels: connection.nodes.map(sentinelAddress) });
    case 'cluster': {
      const nodes: ClusterNode[] = connection.urls.map((url) => {
        const { host, port } = serverOptions(url);
        return { host: host!, port: port! };
      });
      const { host: _host, port: _port, ...login } = serverOptions(connection.urls[0]!);
      const { keyPrefix, enableAutoPipelining, maxRetriesPerRequest: _m, retryStrategy, ...redisOptions } = options;
      const cluster = new Cluster(nodes, {
        keyPrefix,
        enableAutoPipelining,
        clusterRetryStrategy: retryStrategy ?? undefined,
        redisOptions: { ...redisOptions, ...login, maxRetriesPerRequest: 0 },
        ...(login.tls !== undefined && { dnsLookup: (address, callback) => callback(null, address) }),
      });
      // The Cluster's own queue, where commands wait while it reaches no node, has no timeout
      // (ioredis #1604): once it has been ready, a lost cluster fails each command at once (and
      // never replays it later), as a lost server does within a second.
      cluster.once('ready', () => (cluster.options.enableOfflineQueue = false));
      return cluster;
    }
  }
}
