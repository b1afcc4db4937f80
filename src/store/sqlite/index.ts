// The SQLite driver of the store port: one file, one SqliteDb (its write queue, reads and change
// feed) shared by one class per aggregate.
import { CounterTable, DEFAULT_SLOTS } from '../counter-table.ts';
import type { StoreDriver } from '../port/index.ts';
import { SqliteAccounts } from './accounts.ts';
import { SqliteApps } from './apps.ts';
import { saveQuotaWindows, SqliteQuotas, SqliteUsage } from './counters.ts';
import { SqliteDb, type SqliteDbOptions } from './db.ts';
import { SqliteIdempotency, SqliteOnce } from './once.ts';
import { SqliteConsents } from './consents.ts';
import { SqliteSigningKeys } from './signing-keys.ts';
import { SqliteThrottles } from './throttles.ts';
import { SqliteTokens } from './tokens.ts';
import { SqliteTransfer } from './transfer.ts';

export interface SqliteStoreOptions extends SqliteDbOptions {
  /**
   * For a serving gateway: the counters' table, which its threads share (`buffer`, from
   * CounterTable.buffer), and whether this store saves the table's quota windows (the thread
   * that maintains the store). Absent: a small table of its own, never saved (a short-lived command).
   */
  counters?: { buffer: SharedArrayBuffer; save: boolean };
}

/** Memory for the counters' table that the threads of one gateway share. */
export function counterTableBuffer(): SharedArrayBuffer {
  return new CounterTable({ slots: DEFAULT_SLOTS }).buffer;
}

export function openSqliteStore(options: SqliteStoreOptions): StoreDriver {
  const db = new SqliteDb(options);
  const tokens = new SqliteTokens(db);
  const usage = new SqliteUsage(db);
  const quotas = new SqliteQuotas(db);
  const throttles = new SqliteThrottles(db);
  const once = new SqliteOnce(db);
  const idempotency = new SqliteIdempotency(db);
  const consents = new SqliteConsents(db);
  const apps = new SqliteApps(db, tokens, usage);
  const accounts = new SqliteAccounts(db, apps, tokens);
  const counters = new CounterTable(options.counters === undefined ? { slots: 64 } : { buffer: options.counters.buffer });
  const transfer = new SqliteTransfer(db);
  const saving = options.counters?.save === true ? saveQuotaWindows(counters, quotas, options.warn ?? (() => {})) : undefined;
  return {
    accounts,
    apps,
    tokens,
    throttles,
    once,
    idempotency,
    consents,
    counters,
    usage,
    signingKeys: new SqliteSigningKeys(db),
    changes: db,
    async purgeExpired(now) {
      await db.write(() => {
        quotas.purgeExpired(now);
        usage.purgeExpired(now);
        throttles.purgeExpired(now);
        accounts.purgeExpired(now);
        once.purgeExpired(now);
        idempotency.purgeExpired(now);
        consents.purgeExpired(now);
        db.purgeChanges(now);
      });
      return tokens.purgeExpired(now);
    },
    async ping() {
      db.ping();
    },
    // The key file lives beside the database, and a backup copies both.
    claimSecretKey: async () => true,
    exportData: (now) => transfer.exportData(now),
    importData: (data, now) => transfer.importData(data, now),
    async close() {
      // Counts that cannot be saved now (the store failing) are reported, and the rest still closes.
      await saving?.close().catch((err: unknown) => options.warn?.(`saving quota counters failed at close: ${(err as Error).message}`));
      tokens.flush();
      await db.close();
    },
  };
}
