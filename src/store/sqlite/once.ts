// Single-use ids spent on SQLite: one row per id in `spent_once`, kept until a purge reaches its
// expiry. Idempotency keys: one row per key in `idempotency_keys`, decided inside one write.
import type { IdempotencyClaim, IdempotencyStore, OnceStore } from '../port/index.ts';
import type { Row, SqliteDb } from './db.ts';

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

const CLAIMED: IdempotencyClaim = Object.freeze({ kind: 'claimed' });
const BUSY: IdempotencyClaim = Object.freeze({ kind: 'busy' });
const MISMATCH: IdempotencyClaim = Object.freeze({ kind: 'mismatch' });

/** What a key still remembered at `now` answers a claim; undefined when the claim takes it (its lock has lapsed). */
function verdict(row: Row, fingerprint: Buffer, now: number): IdempotencyClaim | undefined {
  if (!fingerprint.equals(row.fingerprint as Uint8Array)) return MISMATCH;
  if (row.state === 'done') return { kind: 'replay', status: row.status as number, body: Buffer.from(row.body as Uint8Array) };
  return (row.locked_until as number) > now ? BUSY : undefined;
}

export class SqliteIdempotency implements IdempotencyStore {
  readonly #db: SqliteDb;
  readonly #find;
  readonly #claim;
  readonly #complete;
  readonly #release;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#find = db.prepare('SELECT fingerprint, state, locked_until, expires_at, status, body FROM idempotency_keys WHERE key_hash = ?');
    this.#claim = db.prepare(
      `INSERT INTO idempotency_keys (key_hash, fingerprint, state, locked_until, expires_at) VALUES (?, ?, 'claimed', ?, ?)
       ON CONFLICT (key_hash) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'claimed', locked_until = excluded.locked_until,
         expires_at = excluded.expires_at, status = NULL, body = NULL`,
    );
    // Only a claim is completed or released: an answer stored (by whoever claimed the key after
    // this caller's lock lapsed) is what the retries get, and a late release must not forget it.
    this.#complete = db.prepare("UPDATE idempotency_keys SET state = 'done', status = ?, body = ? WHERE key_hash = ? AND state = 'claimed'");
    this.#release = db.prepare("DELETE FROM idempotency_keys WHERE key_hash = ? AND state = 'claimed'");
    this.#purge = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?');
  }

  /** Read and decided inside one write (BEGIN IMMEDIATE): of several claims at once, one finds the key free. */
  claim(keyHash: Buffer, fingerprint: Buffer, now: number, times: { lockedUntil: number; expiresAt: number }): Promise<IdempotencyClaim> {
    return this.#db.write(() => {
      const row = this.#find.get(keyHash) as Row | undefined;
      // A key past its expiry is forgotten, whether or not a purge has removed it yet.
      const found = row !== undefined && (row.expires_at as number) > now ? verdict(row, fingerprint, now) : undefined;
      if (found !== undefined) return found;
      this.#claim.run(keyHash, fingerprint, times.lockedUntil, times.expiresAt);
      return CLAIMED;
    });
  }

  async complete(keyHash: Buffer, answer: { status: number; body: Buffer }): Promise<void> {
    await this.#db.write(() => this.#complete.run(answer.status, answer.body, keyHash));
  }

  async release(keyHash: Buffer): Promise<void> {
    await this.#db.write(() => this.#release.run(keyHash));
  }

  /** Inside a write: forgets the keys past their expiry. */
  purgeExpired(now: number): void {
    this.#purge.run(now);
  }
}
