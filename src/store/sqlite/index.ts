// The SQLite driver of the store port: one file, one SqliteDb (its write queue, reads and change
// feed) shared by one class per aggregate.
import type { StoreDriver } from '../port/index.ts';
import { SqliteAccounts } from './accounts.ts';
import { SqliteApps } from './apps.ts';
import { SqliteQuotas, SqliteUsage } from './counters.ts';
import { SqliteDb, type SqliteDbOptions } from './db.ts';
import { SqliteThrottles } from './throttles.ts';
import { SqliteTokens } from './tokens.ts';

export type SqliteStoreOptions = SqliteDbOptions;

export function openSqliteStore(options: SqliteStoreOptions): StoreDriver {
  const db = new SqliteDb(options);
  const tokens = new SqliteTokens(db);
  const usage = new SqliteUsage(db);
  const quotas = new SqliteQuotas(db);
  const throttles = new SqliteThrottles(db);
  const apps = new SqliteApps(db, tokens, usage);
  const accounts = new SqliteAccounts(db, apps, tokens);
  return {
    accounts,
    apps,
    tokens,
    throttles,
    quotas,
    usage,
    changes: db,
    async purgeExpired(now) {
      await db.write(() => {
        quotas.purgeExpired(now);
        usage.purgeExpired(now);
        throttles.purgeExpired(now);
        accounts.purgeExpired(now);
        db.purgeChanges(now);
      });
      return tokens.purgeExpired(now);
    },
    async ping() {
      db.ping();
    },
    async close() {
      tokens.flush();
      await db.close();
    },
  };
}
