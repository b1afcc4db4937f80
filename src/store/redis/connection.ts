// The connection the YAML names, on ioredis: one server by URL, a Sentinel set, or a Cluster by
// seed URLs whose first one gives the login and TLS of every node.
import { Cluster, Redis, type ClusterNode, type RedisOptions as AllRedisOptions } from 'ioredis';

/** The config's `store` section for the Redis driver. */
export interface RedisSettings {
  connection:
    | { kind: 'server'; url: string }
    | { kind: 'cluster'; urls: readonly string[] }
    | { kind: 'sentinel'; name: string; nodes: readonly string[]; login: { username?: string; password?: string; db?: number } };
  /** Starts every key and the changes channel, so that several gateways (or other programs) can share one Redis. */
  keyPrefix: string;
  /** How long one command may take before the call is answered 503. */
  timeoutMs: number;
}

/** ioredis's options without `replyMapping`, whose declared type does not allow undefined under exactOptionalPropertyTypes. */
export type RedisOptions = Omit<AllRedisOptions, 'replyMapping'>;

/** Where a `redis://` or `rediss://` URL points, and who logs in. Throws a message naming what is wrong. */
export function serverOptions(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Never the value: it may be a password set where the URL belongs.
    throw new Error('not a URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error('the URL must start with redis:// or rediss://');
  if (parsed.search !== '' || parsed.hash !== '') throw new Error('the URL may not carry a query or a fragment');
  const db = parsed.pathname === '' || parsed.pathname === '/' ? 0 : Number(parsed.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0) throw new Error('the URL path must be a database number, such as /0');
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(parsed.username !== '' && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password !== '' && { password: decodeURIComponent(parsed.password) }),
    ...(db !== 0 && { db }),
    ...(parsed.protocol === 'rediss:' && { tls: { servername: parsed.hostname } }),
  };
}

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
