// Single-use ids spent on SQLite: one row per id in `spent_once`, kept until a purge reaches its expiry.
import type { OnceStore } from '../port/index.ts';
import type { SqliteDb } from './db.ts';

export class SqliteOnce implements OnceStore {
  readonly #db: SqliteDb;
  readonly #spend;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    // An id already there, expired or not, stays spent: the first insert wins.
    this.#spend = db.prepare('INSERT INTO spent_once (id_hash, expires_at) VALUES (?, ?) ON CONFLICT (id_hash) DO NOTHING');
    this.#purge = db.prepare('DELETE FROM spent_once WHERE expires_at <= ?');
  }

  async spendOnce(idHash: Buffer, _now: number, expiresAt: number): Promise<boolean> {
    return this.#db.write(() => Number(this.#spend.run(idHash, expiresAt).changes) === 1);
  }

  /** Inside a write: forgets the ids past their expiry. */
  purgeExpired(now: number): void {
    this.#purge.run(now);
  }
}
