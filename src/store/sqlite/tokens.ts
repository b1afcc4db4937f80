// Tokens on SQLite: saved by group commit, read joined with their credential, app and developer,
// rotated and revoked by family in one transaction each.
import { sameConfirmation, StoreUnavailable, successorRecords, type ActiveToken, type Confirmation, type RotateRequest, type RotateResult, type TokenRecord, type TokenStore } from '../port/index.ts';
import type { Row, SqliteDb } from './db.ts';

const TOKEN_COLUMNS = 't.hash, t.kind, t.app_id, t.key, t.product, t.scope, t.subject, t.family, t.issued_at, t.expires_at, t.cnf';
/**
 * A token that an operator's revocation takes away: unexpired, unrevoked, and, for a refresh
 * token, not yet rotated (a spent one was worth nothing). `?`: now.
 */
const LIVE = 'revoked_at IS NULL AND used_at IS NULL AND expires_at > ?';
/** Expired tokens are removed in transactions of this many rows, so no write waits long behind the purge. */
const PURGE_BATCH = 5000;

interface Pending {
  records: readonly TokenRecord[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class SqliteTokens implements TokenStore {
  readonly #db: SqliteDb;
  #pending: Pending[] = [];
  readonly #insertToken;
  readonly #accessToken;
  readonly #refreshToken;
  readonly #markUsed;
  readonly #revokeFamily;
  readonly #tokenFamily;
  readonly #revokeOfApp;
  readonly #revokeOfDeveloper;
  readonly #liveOfApp;
  readonly #revokeLiveFamiliesOfApp;
  readonly #liveFamiliesOfSubject;
  readonly #deleteOfApp;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#insertToken = db.prepare(
      `INSERT INTO tokens (hash, kind, app_id, key, product, scope, subject, family, issued_at, expires_at, cnf)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#accessToken = db.prepare(
      `SELECT ${TOKEN_COLUMNS}, a.name AS app_name, d.email AS developer_email, c.expires_at AS credential_expires_at
         FROM tokens t
         JOIN credentials c ON c.key = t.key
         JOIN apps a ON a.id = t.app_id
         JOIN developers d ON d.id = a.developer_id
        WHERE t.hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > ?
          AND c.status = 'approved' AND (c.expires_at IS NULL OR c.expires_at > ?) AND a.status = 'active' AND a.approval = 'approved'
          AND d.status = 'active'`,
    );
    this.#refreshToken = db.prepare(
      `SELECT ${TOKEN_COLUMNS}, t.used_at, t.revoked_at, c.status AS credential_status, c.expires_at AS credential_expires_at
         FROM tokens t LEFT JOIN credentials c ON c.key = t.key WHERE t.hash = ?`,
    );
    // A spent token is kept as long as its successors: presented again while they live, it still
    // revokes them (an authorization code outlives its own minute; Redis keeps the family as long).
    this.#markUsed = db.prepare('UPDATE tokens SET used_at = ?, expires_at = MAX(expires_at, ?) WHERE hash = ?');
    this.#revokeFamily = db.prepare('UPDATE tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL');
    this.#tokenFamily = db.prepare('SELECT family, app_id FROM tokens WHERE hash = ?');
    // Disabling is a revocation: re-enabling later does not bring the tokens back.
    this.#revokeOfApp = db.prepare('UPDATE tokens SET revoked_at = ? WHERE app_id = ? AND revoked_at IS NULL');
    this.#revokeOfDeveloper = db.prepare('UPDATE tokens SET revoked_at = ? WHERE app_id IN (SELECT id FROM apps WHERE developer_id = ?) AND revoked_at IS NULL');
    this.#liveOfApp = db.prepare(`SELECT count(*) AS n FROM tokens WHERE app_id = ? AND ${LIVE}`);
    this.#revokeLiveFamiliesOfApp = db.prepare(`UPDATE tokens SET revoked_at = ? WHERE revoked_at IS NULL AND family IN (SELECT family FROM tokens WHERE app_id = ? AND ${LIVE})`);
    // Every token of a family shares its grant's subject: a family's live tokens are the subject's.
    this.#liveFamiliesOfSubject = db.prepare(`SELECT family, count(*) AS n FROM tokens WHERE subject = ? AND ${LIVE} GROUP BY family`);
    this.#deleteOfApp = db.prepare('DELETE FROM tokens WHERE app_id = ?');
    this.#purge = db.prepare(`DELETE FROM tokens WHERE hash IN (SELECT hash FROM tokens WHERE expires_at <= ? LIMIT ${PURGE_BATCH})`);
  }

  // Group commit: the tokens of every request that arrives within one turn of the event loop are
  // written in one transaction, and each promise resolves once that transaction has committed.
  saveTokens(records: readonly TokenRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ records, resolve, reject });
      if (this.#pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * Queues the write of the tokens saved so far (close calls it before the last writes drain): all
   * of them in one transaction; should a record fail it, each caller's tokens in one of their own,
   * so that one caller's bad record fails that caller only. A store that fails (locked past its
   * busy timeout, removed) fails them all at once: trying each again would only wait again.
   */
  flush(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const save = (callers: readonly Pending[]) =>
      this.#db.write(() => {
        for (const { records } of callers) for (const r of records) this.#insert(r);
      });
    save(batch).then(
      () => {
        for (const { resolve } of batch) resolve();
      },
      (err: unknown) => {
        if (batch.length === 1 || err instanceof StoreUnavailable) for (const { reject } of batch) reject(err);
        else for (const caller of batch) save([caller]).then(caller.resolve, caller.reject);
      },
    );
  }

  #insert(r: TokenRecord): void {
    this.#insertToken.run(r.hash, r.kind, r.appId, r.key, r.product, r.scope, r.subject, r.family, r.issuedAt, r.expiresAt, cnfColumn(r));
  }

  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined {
    const row = this.#db.read(() => this.#accessToken.get(hash, now, now)) as Row | undefined;
    if (!row) return undefined;
    const token: ActiveToken = { ...toToken(row), appName: row.app_name as string, developerEmail: row.developer_email as string };
    // A rotated key's tokens end with the key's overlap, if that comes first.
    const keyExpires = row.credential_expires_at as number | null;
    if (keyExpires !== null && keyExpires < token.expiresAt) token.expiresAt = keyExpires;
    return token;
  }

  async revokeToken(hash: Buffer, appId: string, now: number): Promise<boolean> {
    return this.#db.write(() => {
      const row = this.#tokenFamily.get(hash) as Row | undefined;
      if (row === undefined || row.app_id !== appId) return false;
      this.#revokeFamily.run(now, row.family as string);
      this.#db.changed({ kind: 'family', ref: row.family as string }, now);
      return true;
    });
  }

  async rotateRefreshToken(req: RotateRequest): Promise<RotateResult> {
    return this.#db.write((): RotateResult => {
      const row = this.#refreshToken.get(req.hash) as Row | undefined;
      if (row?.kind !== 'refresh' || row.app_id !== req.appId || row.revoked_at !== null || row.credential_status !== 'approved') {
        return { ok: false, reason: 'invalid' };
      }
      // A rotated key's refresh tokens end with its overlap, as its access tokens do.
      const keyExpires = row.credential_expires_at as number | null;
      if (keyExpires !== null && keyExpires <= req.now) return { ok: false, reason: 'invalid' };
      const previous = toToken(row);
      // RFC 9449 §5: a bound refresh token is the key holder's alone; another key spends nothing.
      if (previous.cnf !== undefined && !sameConfirmation(previous.cnf, req.cnf)) return { ok: false, reason: 'invalid' };
      if (row.used_at !== null) {
        // A client's own concurrent or retried refresh, within the product's grace: refuse, keep the family.
        if (req.now - (row.used_at as number) < (req.reuseGraceMs ?? 0)) return { ok: false, reason: 'invalid' };
        // RFC 9700 §4.14.2: a rotated refresh token presented again means it leaked; revoke the family.
        this.#revokeFamily.run(req.now, previous.family);
        this.#db.changed({ kind: 'family', ref: previous.family }, req.now);
        return { ok: false, reason: 'reused' };
      }
      if (previous.expiresAt <= req.now) return { ok: false, reason: 'invalid' };
      const granted = previous.scope === '' ? [] : previous.scope.split(' ');
      if (req.scope !== undefined && !req.scope.every((s) => granted.includes(s))) return { ok: false, reason: 'scope' };
      const scope = req.scope === undefined ? previous.scope : req.scope.join(' ');
      this.#markUsed.run(req.now, Math.max(req.accessExpiresAt, req.refreshExpiresAt ?? 0), req.hash);
      for (const r of successorRecords(previous, req, scope)) this.#insert(r);
      return { ok: true, previous, scope };
    });
  }

  async revokeAppTokens(appId: string, now: number): Promise<number> {
    return this.#db.write(() => {
      const { n } = this.#liveOfApp.get(appId, now) as { n: number };
      if (n === 0) return 0;
      this.#revokeLiveFamiliesOfApp.run(now, appId, now);
      // One change for the app rather than one per family: a client_credentials app has a family per token.
      this.#db.changed({ kind: 'app', ref: appId }, now);
      return n;
    });
  }

  async revokeSubjectTokens(subject: string, now: number): Promise<number> {
    return this.#db.write(() => {
      let revoked = 0;
      // A change per family: one user's logins are few, and the app's other users keep their cached tokens.
      for (const { family, n } of this.#liveFamiliesOfSubject.all(subject, now) as { family: string; n: number }[]) {
        this.#revokeFamily.run(now, family);
        this.#db.changed({ kind: 'family', ref: family }, now);
        revoked += n;
      }
      return revoked;
    });
  }

  /** Inside a write: revokes every token of the app (it was disabled). */
  revokeOfApp(appId: string, now: number): void {
    this.#revokeOfApp.run(now, appId);
  }

  /** Inside a write: revokes every token of the developer's apps (the developer was disabled). */
  revokeOfDeveloper(developerId: string, now: number): void {
    this.#revokeOfDeveloper.run(now, developerId);
  }

  /** Inside a write: deletes the app's tokens (the app is being deleted). */
  deleteOfApp(appId: string): void {
    this.#deleteOfApp.run(appId);
  }

  /** Removes expired tokens in several short transactions; resolves to how many. */
  async purgeExpired(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const changes = await this.#db.write(() => Number(this.#purge.run(now).changes));
      total += changes;
      if (changes < PURGE_BATCH) return total;
    }
  }
}

/** The cnf column: the binding as JSON, NULL for a bearer token. */
export function cnfColumn(r: TokenRecord): string | null {
  return r.cnf === undefined ? null : JSON.stringify(r.cnf);
}

export function toToken(r: Row): TokenRecord {
  return {
    hash: Buffer.from(r.hash as Uint8Array),
    kind: r.kind as TokenRecord['kind'],
    appId: r.app_id as string,
    key: r.key as string,
    product: r.product as string,
    scope: r.scope as string,
    subject: (r.subject as string | null) ?? null,
    family: r.family as string,
    issuedAt: r.issued_at as number,
    expiresAt: r.expires_at as number,
    ...(r.cnf === null || r.cnf === undefined ? {} : { cnf: JSON.parse(r.cnf as string) as Confirmation }),
  };
}
