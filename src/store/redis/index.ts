// The Redis driver of the store port: one RedisDb (connection, scripts, change feed) shared by one
// class per aggregate. Every instance of the gateway on the same Redis and key prefix shares
// developers, apps, credentials, tokens, sessions, throttles, spent single-use ids, idempotency
// keys, counters and usage.
import type { StoreDriver } from '../port/index.ts';
import { RedisAccounts } from './accounts.ts';
import { RedisApps } from './apps.ts';
import { RedisConsents } from './consents.ts';
import { RedisCounters, RedisUsage } from './counters.ts';
import { RedisDb, type RedisDbOptions } from './db.ts';
import { RedisIdempotency, RedisOnce } from './once.ts';
import { RedisSigningKeys } from './signing-keys.ts';
import { RedisThrottles } from './throttles.ts';
import { RedisTokens } from './tokens.ts';
import { RedisTransfer } from './transfer.ts';

export type RedisStoreOptions = RedisDbOptions;

export function openRedisStore(options: RedisStoreOptions): StoreDriver {
  const db = new RedisDb(options);
  const usage = new RedisUsage(db);
  const apps = new RedisApps(db, usage);
  const tokens = new RedisTokens(db, apps);
  const accounts = new RedisAccounts(db, apps);
  const signingKeys = new RedisSigningKeys(db);
  const transfer = new RedisTransfer(db, apps, tokens, signingKeys);
  return {
    accounts,
    apps,
    tokens,
    throttles: new RedisThrottles(db),
    once: new RedisOnce(db),
    idempotency: new RedisIdempotency(db),
    consents: new RedisConsents(db),
    counters: new RedisCounters(db),
    usage,
    signingKeys,
    changes: db,
    purgeExpired: (now) => tokens.purgeExpired(now),
    ping: () => db.ping(),
    warnings: () => db.advice(),
    async claimSecretKey(fingerprint) {
      const recorded = await db.run(db.client.set('secret-key', fingerprint, 'NX', 'GET'));
      return recorded === null || recorded === fingerprint;
    },
    exportData: (now) => transfer.exportData(now),
    importData: (data, now) => transfer.importData(data, now),
    close: () => db.close(),
  };
}
