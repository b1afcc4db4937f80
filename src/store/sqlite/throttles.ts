// Attempts counted against accounts on SQLite: one row per account.
import { nextAttemptAt, type AttemptAccount, type AttemptResult, type ThrottleStore } from '../port/index.ts';
import type { SqliteDb } from './db.ts';

/** An account's count starts over a day after its last attempt at the latest. */
const ATTEMPTS_KEPT_MS = 86_400_000;

export class SqliteThrottles implements ThrottleStore {
  readonly #db: SqliteDb;
  readonly #attempts;
  readonly #saveAttempts;
  readonly #clear;
  readonly #takeBack;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#attempts = db.prepare('SELECT count, first_at, coalesce(last_at, first_at) AS last_at FROM login_failures WHERE account = ?');
    this.#saveAttempts = db.prepare(
      `INSERT INTO login_failures (account, count, first_at, last_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (account) DO UPDATE SET count = excluded.count, first_at = excluded.first_at, last_at = excluded.last_at`,
    );
    this.#clear = db.prepare('DELETE FROM login_failures WHERE account = ?');
    this.#takeBack = db.prepare('UPDATE login_failures SET count = max(count - 1, 0) WHERE account = ?');
    this.#purge = db.prepare('DELETE FROM login_failures WHERE coalesce(last_at, first_at) < ?');
  }

  async countAttempts(accounts: readonly AttemptAccount[], now: number): Promise<AttemptResult> {
    for (const { gatesOnlyIfFailing: other } of accounts) {
      if (other !== undefined && !accounts.some((a) => a.account === other)) throw new TypeError(`gatesOnlyIfFailing: '${other}' is not an account of this call`);
    }
    // One transaction reads every count and writes them, so parallel attempts cannot both see a
    // record as clean, or a wait as over, before either is counted.
    return this.#db.write((): AttemptResult => {
      const counted = accounts.map(({ account, rule, gatesOnlyIfFailing }) => {
        const row = this.#attempts.get(account) as { count: number; first_at: number; last_at: number } | undefined;
        const fresh = row === undefined || now - row.last_at >= rule.resetAfterMs;
        const retryAt = fresh ? -Infinity : nextAttemptAt(rule, row.count, row.last_at);
        return { account, gatesOnlyIfFailing, count: fresh ? 0 : row.count, firstAt: fresh ? now : row.first_at, retryAt };
      });
      const failing = (account: string) => counted.some((c) => c.account === account && c.count > 0);
      const gating = counted.filter((c) => c.gatesOnlyIfFailing === undefined || failing(c.gatesOnlyIfFailing));
      const retryAt = Math.max(...gating.map((c) => c.retryAt));
      if (retryAt > now) return { allowed: false, retryAt };
      for (const c of counted) this.#saveAttempts.run(c.account, c.count + 1, c.firstAt, now);
      return { allowed: true };
    });
  }

  async clearLoginFailures(account: string): Promise<void> {
    await this.#db.write(() => this.#clear.run(account));
  }

  async takeBackLoginFailure(account: string): Promise<void> {
    await this.#db.write(() => this.#takeBack.run(account));
  }

  /** Inside a write: forgets accounts without an attempt for a day. */
  purgeExpired(now: number): void {
    this.#purge.run(now - ATTEMPTS_KEPT_MS);
  }
}
