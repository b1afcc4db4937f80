// Signing keys on SQLite: one row per key in `signing_keys`; the compare-and-add inside one write.
import type { SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from '../port/index.ts';
import type { Row, SqliteDb } from './db.ts';

export function toSigningKey(row: Row): SigningKeyRecord {
  return {
    kid: row.kid as string,
    algorithm: row.algorithm as SigningAlgorithm,
    publicJwk: row.public_jwk as string,
    privateKey: Buffer.from(row.private_key as Uint8Array),
    createdAt: row.created_at as number,
    activatesAt: row.activates_at as number,
    revokedAt: (row.revoked_at as number | null) ?? null,
  };
}

export class SqliteSigningKeys implements SigningKeyStore {
  readonly #db: SqliteDb;
  readonly #list;
  readonly #latest;
  readonly #insert;
  readonly #revoke;
  readonly #delete;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#list = db.prepare('SELECT * FROM signing_keys ORDER BY activates_at, kid');
    this.#latest = db.prepare('SELECT kid FROM signing_keys WHERE revoked_at IS NULL ORDER BY activates_at DESC, kid DESC LIMIT 1');
    this.#insert = db.prepare('INSERT INTO signing_keys (kid, algorithm, public_jwk, private_key, created_at, activates_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#revoke = db.prepare('UPDATE signing_keys SET revoked_at = ? WHERE kid = ? AND revoked_at IS NULL');
    this.#delete = db.prepare('DELETE FROM signing_keys WHERE kid = ?');
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.#db.read(() => this.#list.all().map(toSigningKey));
  }

  async addSigningKey(key: SigningKeyRecord, after: string | null): Promise<boolean> {
    return this.#db.write(() => {
      const latest = (this.#latest.get() as Row | undefined)?.kid ?? null;
      if (latest !== after) return false;
      this.#insert.run(key.kid, key.algorithm, key.publicJwk, key.privateKey, key.createdAt, key.activatesAt, key.revokedAt);
      this.#db.changed({ kind: 'signing-key', ref: key.kid }, key.createdAt);
      return true;
    });
  }

  async revokeSigningKey(kid: string, now: number): Promise<boolean> {
    return this.#db.write(() => {
      if (Number(this.#revoke.run(now, kid).changes) !== 1) return false;
      this.#db.changed({ kind: 'signing-key', ref: kid }, now);
      return true;
    });
  }

  async deleteSigningKeys(kids: readonly string[]): Promise<void> {
    const now = Date.now();
    await this.#db.write(() => {
      for (const kid of kids) if (Number(this.#delete.run(kid).changes) === 1) this.#db.changed({ kind: 'signing-key', ref: kid }, now);
    });
  }
}
