// What an operator should change in the Redis the gateway uses, asked once it is connected. Each
// check is advice, not a condition: a Redis that refuses the command (a managed Redis renames or
// forbids INFO and CONFIG) gets none.
import type { Cluster, Redis } from 'ioredis';

/** Every warning that applies to this Redis, each a sentence an operator can act on. */
export async function redisAdvice(client: Redis | Cluster): Promise<string[]> {
  const found = await Promise.all([eviction(client), persistence(client)]);
  return found.filter((w): w is string => w !== undefined);
}

/**
 * Redis, once full, drops keys to make room: the login throttles, quota counts and token records
 * all expire, so any policy but noeviction drops them first (an attacker who fills Redis, with
 * failed logins for instance, would reset someone's backoff), and an allkeys policy drops apps,
 * developers and the secret key's record too.
 */
async function eviction(client: Redis | Cluster): Promise<string | undefined> {
  let info: string;
  try {
    info = await client.info('memory');
  } catch {
    return undefined;
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return undefined;
  return `Redis evicts keys when full (maxmemory-policy ${policy}): it may drop login throttles, quota counts, tokens${policy.startsWith('allkeys') ? ', apps and developers' : ''}; set maxmemory-policy noeviction`;
}

/**
 * The store holds developers, apps and their secrets' hashes nowhere else: a Redis that neither
 * snapshots (RDB `save`) nor logs writes (AOF `appendonly`) loses every one of them when it restarts.
 */
async function persistence(client: Redis | Cluster): Promise<string | undefined> {
  let save: unknown;
  let appendonly: unknown;
  try {
    [save, appendonly] = await Promise.all([client.config('GET', 'save'), client.config('GET', 'appendonly')]);
  } catch {
    return undefined;
  }
  const value = (reply: unknown) => (Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined);
  const snapshots = value(save);
  const aof = value(appendonly);
  // A reply of another shape (a proxy answering for several servers) says nothing certain.
  if (snapshots === undefined || aof === undefined) return undefined;
  if (snapshots.trim() !== '' || aof !== 'no') return undefined;
  return 'Redis persists nothing (save "" and appendonly no): when it restarts, every developer, app, key and token is lost; turn on appendonly yes (or RDB snapshots with save)';
}
