// Consents on SQLite: one row per app and subject in `consents`, until a purge reaches its expiry.
import type { ConsentStore } from '../port/index.ts';
import type { SqliteDb } from './db.ts';

export class SqliteConsents implements ConsentStore {
  readonly #db: SqliteDb;
  readonly #find;
  readonly #save;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#find = db.prepare('SELECT scope FROM consents WHERE app_id = ? AND subject = ? AND expires_at > ?');
    this.#save = db.prepare(
      'INSERT INTO consents (app_id, subject, scope, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (app_id, subject) DO UPDATE SET scope = excluded.scope, expires_at = excluded.expires_at',
    );
    this.#purge = db.prepare('DELETE FROM consents WHERE expires_at <= ?');
  }

  async findConsent(appId: string, subject: string, now: number): Promise<readonly string[]> {
    const row = this.#db.read(() => this.#find.get(appId, subject, now)) as { scope: string } | undefined;
    return row === undefined || row.scope === '' ? [] : row.scope.split(' ');
  }

  async saveConsent(appId: string, subject: string, scopes: readonly string[], _now: number, expiresAt: number): Promise<void> {
    await this.#db.write(() => this.#save.run(appId, subject, scopes.join(' '), expiresAt));
  }

  /** Inside a write: forgets the consents past their expiry. */
  purgeExpired(now: number): void {
    this.#purge.run(now);
  }
}
