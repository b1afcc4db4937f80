// The Redis driver's settings and the URL of a server, read without loading ioredis: the config
// checks them for every gateway, and most gateways run on SQLite.
import type { RedisOptions as AllRedisOptions } from 'ioredis';

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
