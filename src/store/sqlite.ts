// SQLite driver of the store port, on the built-in node:sqlite. One file in WAL mode; every
// statement prepared once; every write runs in a BEGIN IMMEDIATE transaction, in order, through
// one queue that never waits on the event loop (see #write). Reads never wait either: in WAL mode
// a reader is not blocked by a writer, even one inside BEGIN EXCLUSIVE.
//
// Hot path: access tokens and clients are served from bounded in-memory caches. Every revocation (token
// family, credential, app, developer) appends a row to `revocations`; before trusting the cache
// the driver reads `PRAGMA data_version` (at most once a millisecond), which changes when another
// connection (another process, e.g. `gateway admin`) commits, and then evicts what the new rows
// name. A revocation made anywhere therefore takes effect at once, and evicts only its tokens.
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { newId } from '../crypto.ts';
import {
  nextAttemptAt,
  StoreError,
  type ActiveToken,
  type Approval,
  type App,
  type AttemptAccount,
  type AttemptResult,
  type Client,
  type Credential,
  type Developer,
  type EmailTokenPurpose,
  type NewApp,
  type RotateRequest,
  type RotateResult,
  type Status,
  type QuotaWindow,
  type Store,
  type TokenRecord,
  type UsageCount,
  StoreUnavailable,
} from './port.ts';

export interface SqliteStoreOptions {
  path: string;
  /** Access tokens kept in memory; 0 disables the cache. */
  tokenCacheSize?: number;
  /** How long a write waits for a lock another connection holds before it fails with StoreUnavailable (default 2000). */
  busyTimeoutMs?: number;
}

interface Write {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** performance.now() after which the write gives up waiting for the lock. */
  deadline: number;
}

/** The longest pause between two tries at a lock another connection holds. */
const MAX_BACKOFF_MS = 50;

// Append only: a migration, once released, never changes. PRAGMA user_version holds the count applied.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE developers (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE apps (
     id TEXT PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id),
     name TEXT NOT NULL,
     product TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
     created_at INTEGER NOT NULL,
     UNIQUE (developer_id, name)
   ) STRICT;
   CREATE TABLE credentials (
     key TEXT PRIMARY KEY,
     app_id TEXT NOT NULL REFERENCES apps(id),
     secret_hash BLOB NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('approved', 'revoked')),
     expires_at INTEGER,
     created_at INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX credentials_app ON credentials(app_id);
   CREATE TABLE tokens (
     hash BLOB PRIMARY KEY,
     kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
     app_id TEXT NOT NULL,
     key TEXT NOT NULL,
     product TEXT NOT NULL,
     scope TEXT NOT NULL,
     subject TEXT,
     family TEXT NOT NULL,
     issued_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     used_at INTEGER,
     revoked_at INTEGER
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX tokens_family ON tokens(family);
   CREATE INDEX tokens_app ON tokens(app_id);
   CREATE INDEX tokens_expires ON tokens(expires_at);
   CREATE TABLE revocations (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL CHECK (kind IN ('family', 'app', 'developer', 'key')),
     ref TEXT NOT NULL,
     at INTEGER NOT NULL
   ) STRICT;`,
  `CREATE TABLE quota_counters (
     key TEXT PRIMARY KEY,
     window_start INTEGER NOT NULL,
     window_end INTEGER NOT NULL,
     count INTEGER NOT NULL,
     previous_count INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;`,
  // The developer portal: passwords (scrypt, as "scrypt$N$r$p$salt$hash"), invitations and
  // sessions (by the SHA-256 of their code and id), failed logins per account, and calls per app and hour.
  `ALTER TABLE developers ADD COLUMN password_hash TEXT;
   ALTER TABLE developers ADD COLUMN invite_hash BLOB;
   ALTER TABLE developers ADD COLUMN invite_expires_at INTEGER;
   CREATE TABLE portal_sessions (
     id_hash BLOB PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX portal_sessions_developer ON portal_sessions(developer_id);
   CREATE TABLE login_failures (
     account TEXT PRIMARY KEY,
     count INTEGER NOT NULL,
     first_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE TABLE app_usage (
     app_id TEXT NOT NULL,
     hour INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (app_id, hour)
   ) STRICT, WITHOUT ROWID;`,
  // Operator approval of apps registered in the portal; login attempts slowed by backoff from the last one.
  `ALTER TABLE apps ADD COLUMN approval TEXT NOT NULL DEFAULT 'approved' CHECK (approval IN ('approved', 'pending'));
   ALTER TABLE login_failures ADD COLUMN last_at INTEGER;`,
  // Proven email addresses, and the mailed links that prove them or reset a password (by the
  // SHA-256 of their token). Developers from before count as verified: operators' and invited
  // ones cannot be told apart from open sign-ups, and treating them as unverified would let an
  // invitation delete their apps.
  `ALTER TABLE developers ADD COLUMN verified_at INTEGER;
   UPDATE developers SET verified_at = created_at;
   CREATE TABLE email_tokens (
     hash BLOB PRIMARY KEY,
     developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
     purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX email_tokens_developer ON email_tokens(developer_id, purpose);`,
];

const SQLITE_BUSY = 5;
const SQLITE_CONSTRAINT = 19;
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const CLIENT_CACHE_SIZE = 10_000;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
/** Hourly usage is kept a week; the portal shows the last 24 hours. */
const USAGE_KEPT_MS = 7 * 86_400_000;

type Row = Record<string, unknown>;

interface Revocation {
  kind: 'family' | 'app' | 'developer' | 'key';
  ref: string;
}

const TOKEN_COLUMNS = 't.hash, t.kind, t.app_id, t.key, t.product, t.scope, t.subject, t.family, t.issued_at, t.expires_at';
const APP_COLUMNS = 'a.id, a.developer_id, d.email AS developer_email, a.name, a.product, a.status, a.approval, a.created_at';

export class SqliteStore implements Store {
  readonly #db: DatabaseSync;
  readonly #cache = new Map<string, ActiveToken>();
  /** Client authentication's reads, kept like tokens and evicted by the same change feed. */
  readonly #clients = new Map<string, Client>();
  /**
   * Keys presented that do not exist. Without it an unknown key costs a database read that a
   * known (cached) one does not, and the time of a 401 would tell which keys exist. Keys are
   * random, so no key is created after being presented; this instance's own creations clear it.
   */
  readonly #unknownClients = new Set<string>();
  readonly #cacheSize: number;
  #dataVersion = -1;
  /** The last row of `revocations` this instance has applied to its cache. */
  #seenRevocation = 0;
  #syncedAt = -Infinity;
  #pending: { records: readonly TokenRecord[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  readonly #busyTimeoutMs: number;
  readonly #path: string;
  /** The database file's device and inode when opened: a write checks it is still the file at #path. */
  #identity = '';
  /** Writes not yet committed, oldest first; the head is tried again after #backoffMs while the lock is taken. */
  #writes: Write[] = [];
  #backoffMs = 0;

  readonly #dataVersionStmt: StatementSync;
  readonly #lastRevocation: StatementSync;
  readonly #revocationsSince: StatementSync;
  readonly #insertRevocation: StatementSync;
  readonly #purgeRevocations: StatementSync;
  readonly #revokeApp: StatementSync;
  readonly #revokeDeveloper: StatementSync;
  readonly #insertDeveloper: StatementSync;
  readonly #developerByEmail: StatementSync;
  readonly #developers: StatementSync;
  readonly #setDeveloperStatus: StatementSync;
  readonly #insertApp: StatementSync;
  readonly #insertCredential: StatementSync;
  readonly #appByName: StatementSync;
  readonly #appById: StatementSync;
  readonly #appByKey: StatementSync;
  readonly #apps: StatementSync;
  readonly #appsOfDeveloper: StatementSync;
  readonly #setAppStatus: StatementSync;
  readonly #setAppApproval: StatementSync;
  readonly #appCountOfDeveloper: StatementSync;
  readonly #appActive: StatementSync;
  readonly #credentialsOfApp: StatementSync;
  readonly #revokeCredential: StatementSync;
  readonly #client: StatementSync;
  readonly #insertToken: StatementSync;
  readonly #accessToken: StatementSync;
  readonly #refreshToken: StatementSync;
  readonly #markUsed: StatementSync;
  readonly #revokeFamily: StatementSync;
  readonly #tokenFamily: StatementSync;
  readonly #purge: StatementSync;
  readonly #counters: StatementSync;
  readonly #saveCounter: StatementSync;
  readonly #purgeCounters: StatementSync;
  readonly #passwordHash: StatementSync;
  readonly #setPassword: StatementSync;
  readonly #setInvitation: StatementSync;
  readonly #acceptInvitation: StatementSync;
  readonly #insertSession: StatementSync;
  readonly #session: StatementSync;
  readonly #deleteSession: StatementSync;
  readonly #deleteSessions: StatementSync;
  readonly #purgeSessions: StatementSync;
  readonly #loginAttempts: StatementSync;
  readonly #saveLoginAttempts: StatementSync;
  readonly #clearLoginFailures: StatementSync;
  readonly #takeBackLoginFailure: StatementSync;
  readonly #expireOtherCredentials: StatementSync;
  readonly #approvedKeysOfApp: StatementSync;
  readonly #deleteAppRows: readonly StatementSync[];
  readonly #addUsage: StatementSync;
  readonly #usage: StatementSync;
  readonly #purgeUsage: StatementSync;
  readonly #purgeLoginFailures: StatementSync;
  readonly #unverifiedDeveloper: StatementSync;
  readonly #appsOfDeveloperId: StatementSync;
  readonly #deleteDeveloper: StatementSync;
  readonly #deleteEmailTokens: StatementSync;
  readonly #insertEmailToken: StatementSync;
  readonly #spendEmailToken: StatementSync;
  readonly #emailToken: StatementSync;
  readonly #developerById: StatementSync;
  readonly #markVerified: StatementSync;
  readonly #purgeEmailTokens: StatementSync;

  constructor(options: SqliteStoreOptions) {
    if (typeof options.path !== 'string' || options.path === '') throw new TypeError('SqliteStore: path must be a non-empty string');
    const cacheSize = options.tokenCacheSize ?? 100_000;
    if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new TypeError('SqliteStore: tokenCacheSize must be a non-negative integer');
    this.#cacheSize = cacheSize;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 2000;
    this.#path = options.path;

    if (options.path !== ':memory:') mkdirSync(path.dirname(options.path), { recursive: true });
    // Opening waits for a lock as long as a write would: nothing is served yet.
    this.#db = new DatabaseSync(options.path, { enableForeignKeyConstraints: true, timeout: this.#busyTimeoutMs });
    // WAL with synchronous=NORMAL: a commit is in the OS before it returns, so it survives the
    // process being killed (kill -9); only a power loss can drop the last commits.
    try {
      this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
      this.#migrate();
      // From now on SQLite never sleeps on the event loop waiting for a lock: #write tries again later.
      this.#db.exec('PRAGMA busy_timeout = 0');
      this.#identity = this.#fileIdentity();
    } catch (err) {
      this.#db.close();
      throw err;
    }

    const db = this.#db;
    this.#dataVersionStmt = db.prepare('PRAGMA data_version');
    this.#dataVersionStmt.setReturnArrays(true);
    this.#lastRevocation = db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM revocations');
    this.#revocationsSince = db.prepare('SELECT seq, kind, ref FROM revocations WHERE seq > ? ORDER BY seq');
    this.#insertRevocation = db.prepare('INSERT INTO revocations (kind, ref, at) VALUES (?, ?, ?)');
    this.#purgeRevocations = db.prepare('DELETE FROM revocations WHERE at <= ?');
    // Disabling is a revocation: re-enabling later does not bring the tokens back.
    this.#revokeApp = db.prepare('UPDATE tokens SET revoked_at = ? WHERE app_id = ? AND revoked_at IS NULL');
    this.#revokeDeveloper = db.prepare(
      'UPDATE tokens SET revoked_at = ? WHERE app_id IN (SELECT id FROM apps WHERE developer_id = ?) AND revoked_at IS NULL',
    );
    this.#insertDeveloper = db.prepare('INSERT INTO developers (id, email, name, status, created_at, password_hash, verified_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#unverifiedDeveloper = db.prepare('SELECT id FROM developers WHERE email = ? AND verified_at IS NULL');
    this.#appsOfDeveloperId = db.prepare('SELECT id FROM apps WHERE developer_id = ?');
    // Sessions and mailed links go with it (ON DELETE CASCADE).
    this.#deleteDeveloper = db.prepare('DELETE FROM developers WHERE id = ?');
    this.#deleteEmailTokens = db.prepare('DELETE FROM email_tokens WHERE developer_id = ? AND purpose = ?');
    this.#insertEmailToken = db.prepare('INSERT INTO email_tokens (hash, developer_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.#spendEmailToken = db.prepare('DELETE FROM email_tokens WHERE hash = ? AND purpose = ? AND expires_at > ? RETURNING developer_id');
    this.#emailToken = db.prepare('SELECT developer_id FROM email_tokens WHERE hash = ? AND purpose = ? AND expires_at > ?');
    this.#developerById = db.prepare('SELECT * FROM developers WHERE id = ?');
    this.#markVerified = db.prepare('UPDATE developers SET verified_at = coalesce(verified_at, ?) WHERE id = ?');
    this.#purgeEmailTokens = db.prepare('DELETE FROM email_tokens WHERE expires_at <= ?');
    this.#developerByEmail = db.prepare('SELECT * FROM developers WHERE email = ?');
    this.#developers = db.prepare('SELECT * FROM developers ORDER BY email');
    this.#setDeveloperStatus = db.prepare('UPDATE developers SET status = ? WHERE email = ?');
    this.#insertApp = db.prepare('INSERT INTO apps (id, developer_id, name, product, status, approval, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#appCountOfDeveloper = db.prepare('SELECT count(*) AS n FROM apps WHERE developer_id = ?');
    this.#appActive = db.prepare(
      `SELECT a.status = 'active' AND d.status = 'active' AS active FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.id = ?`,
    );
    this.#insertCredential = db.prepare(
      'INSERT INTO credentials (key, app_id, secret_hash, status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const appFrom = `SELECT ${APP_COLUMNS} FROM apps a JOIN developers d ON d.id = a.developer_id`;
    this.#appByName = db.prepare(`${appFrom} WHERE d.email = ? AND a.name = ?`);
    this.#appById = db.prepare(`${appFrom} WHERE a.id = ?`);
    this.#appByKey = db.prepare(`${appFrom} JOIN credentials c ON c.app_id = a.id WHERE c.key = ?`);
    this.#apps = db.prepare(`${appFrom} ORDER BY d.email, a.name`);
    this.#appsOfDeveloper = db.prepare(`${appFrom} WHERE d.email = ? ORDER BY a.name`);
    this.#setAppStatus = db.prepare('UPDATE apps SET status = ? WHERE id = ?');
    this.#setAppApproval = db.prepare('UPDATE apps SET approval = ? WHERE id = ?');
    this.#credentialsOfApp = db.prepare('SELECT * FROM credentials WHERE app_id = ? ORDER BY created_at, key');
    this.#revokeCredential = db.prepare(`UPDATE credentials SET status = 'revoked' WHERE key = ? AND status <> 'revoked'`);
    this.#client = db.prepare(
      `SELECT c.key, c.secret_hash, c.status AS credential_status, c.expires_at AS credential_expires_at,
              c.created_at AS credential_created_at, ${APP_COLUMNS}, d.status AS developer_status
         FROM credentials c JOIN apps a ON a.id = c.app_id JOIN developers d ON d.id = a.developer_id
        WHERE c.key = ?`,
    );
    this.#insertToken = db.prepare(
      `INSERT INTO tokens (hash, kind, app_id, key, product, scope, subject, family, issued_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    this.#markUsed = db.prepare('UPDATE tokens SET used_at = ? WHERE hash = ?');
    this.#revokeFamily = db.prepare('UPDATE tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL');
    this.#tokenFamily = db.prepare('SELECT family, app_id FROM tokens WHERE hash = ?');
    this.#seenRevocation = (this.#lastRevocation.get() as { seq: number }).seq;
    this.#purge = db.prepare('DELETE FROM tokens WHERE hash IN (SELECT hash FROM tokens WHERE expires_at <= ? LIMIT 5000)');
    this.#counters = db.prepare('SELECT key, window_start, window_end, count, previous_count FROM quota_counters WHERE 2 * window_end - window_start > ?');
    this.#saveCounter = db.prepare(
      `INSERT INTO quota_counters (key, window_start, window_end, count, previous_count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end,
         count = excluded.count, previous_count = excluded.previous_count`,
    );
    // Kept one interval past their end: a rolling quota reads the previous window.
    this.#purgeCounters = db.prepare('DELETE FROM quota_counters WHERE 2 * window_end - window_start <= ?');
    this.#passwordHash = db.prepare('SELECT password_hash FROM developers WHERE email = ?');
    this.#setPassword = db.prepare('UPDATE developers SET password_hash = ? WHERE email = ?');
    this.#setInvitation = db.prepare('UPDATE developers SET invite_hash = ?, invite_expires_at = ? WHERE email = ?');
    this.#acceptInvitation = db.prepare(
      `UPDATE developers SET password_hash = ?, invite_hash = NULL, invite_expires_at = NULL, verified_at = coalesce(verified_at, ?)
        WHERE email = ? AND invite_hash = ? AND invite_expires_at > ? RETURNING id`,
    );
    this.#insertSession = db.prepare(
      `INSERT INTO portal_sessions (id_hash, developer_id, created_at, expires_at)
        SELECT ?, id, ?, ? FROM developers WHERE id = ? AND status = 'active' AND password_hash = ?`,
    );
    this.#session = db.prepare(
      `SELECT d.* FROM portal_sessions s JOIN developers d ON d.id = s.developer_id
        WHERE s.id_hash = ? AND s.expires_at > ? AND d.status = 'active' AND d.verified_at IS NOT NULL`,
    );
    this.#deleteSession = db.prepare('DELETE FROM portal_sessions WHERE id_hash = ?');
    this.#deleteSessions = db.prepare('DELETE FROM portal_sessions WHERE developer_id = ?');
    this.#purgeSessions = db.prepare('DELETE FROM portal_sessions WHERE expires_at <= ?');
    this.#loginAttempts = db.prepare('SELECT count, first_at, coalesce(last_at, first_at) AS last_at FROM login_failures WHERE account = ?');
    this.#saveLoginAttempts = db.prepare(
      `INSERT INTO login_failures (account, count, first_at, last_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (account) DO UPDATE SET count = excluded.count, first_at = excluded.first_at, last_at = excluded.last_at`,
    );
    this.#clearLoginFailures = db.prepare('DELETE FROM login_failures WHERE account = ?');
    this.#takeBackLoginFailure = db.prepare('UPDATE login_failures SET count = max(count - 1, 0) WHERE account = ?');
    this.#approvedKeysOfApp = db.prepare(`SELECT key FROM credentials WHERE app_id = ? AND status = 'approved' AND key <> ?`);
    this.#expireOtherCredentials = db.prepare(
      `UPDATE credentials SET expires_at = min(coalesce(expires_at, ?), ?) WHERE app_id = ? AND status = 'approved' AND key <> ?`,
    );
    this.#deleteAppRows = [
      db.prepare('DELETE FROM tokens WHERE app_id = ?'),
      db.prepare('DELETE FROM app_usage WHERE app_id = ?'),
      db.prepare('DELETE FROM credentials WHERE app_id = ?'),
      db.prepare('DELETE FROM apps WHERE id = ?'),
    ];
    this.#addUsage = db.prepare(
      'INSERT INTO app_usage (app_id, hour, count) VALUES (?, ?, ?) ON CONFLICT (app_id, hour) DO UPDATE SET count = count + excluded.count',
    );
    this.#purgeUsage = db.prepare('DELETE FROM app_usage WHERE hour < ?');
    this.#purgeLoginFailures = db.prepare('DELETE FROM login_failures WHERE coalesce(last_at, first_at) < ?');
    this.#usage = db.prepare('SELECT app_id, hour, count FROM app_usage WHERE app_id = ? AND hour >= ? ORDER BY hour');
  }

  #migrate(): void {
    const db = this.#db;
    // A database already up to date is not written to, so that a read-only one still serves reads.
    if ((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version === MIGRATIONS.length) return;
    db.exec('BEGIN IMMEDIATE');
    try {
      const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
      if (row.user_version > MIGRATIONS.length) {
        throw new Error(`database schema version ${row.user_version} is newer than this gateway (${MIGRATIONS.length})`);
      }
      for (let v = row.user_version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }

  /**
   * Runs `run` in a write transaction and resolves once it has committed. Writes run in the order
   * they came, one at a time. While another connection holds the write lock (a backup, a
   * migration, a shell left open), BEGIN IMMEDIATE fails at once (busy_timeout is 0) and the
   * queue tries again after 1, 2, 4… up to 50 ms, so the event loop keeps serving; a write still
   * waiting after the busy timeout fails with StoreUnavailable. An empty queue runs a write at once,
   * within the call.
   */
  #write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#writes.push({ run, resolve: resolve as (value: unknown) => void, reject, deadline: performance.now() + this.#busyTimeoutMs });
      if (this.#writes.length === 1) this.#drain();
    });
  }

  #drain(): void {
    while (this.#writes.length > 0) {
      const head = this.#writes[0]!;
      try {
        this.#db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        if (!isBusy(err)) {
          this.#writes.shift();
          head.reject(failure(err));
          continue;
        }
        const now = performance.now();
        const waiting: Write[] = [];
        for (const w of this.#writes) {
          if (w.deadline > now) waiting.push(w);
          else w.reject(new StoreUnavailable('the database is locked by another connection', { cause: err }));
        }
        this.#writes = waiting;
        if (waiting.length === 0) return;
        this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(1, this.#backoffMs * 2));
        setTimeout(() => this.#drain(), this.#backoffMs);
        return;
      }
      this.#backoffMs = 0;
      this.#writes.shift();
      try {
        // In WAL mode SQLite goes on committing to a file removed or replaced under it: commits
        // nobody will read again. A stat per transaction (a group of token requests shares one) keeps a 200 honest.
        if (this.#fileIdentity() !== this.#identity) throw new StoreUnavailable(`the database file ${this.#path} was removed or replaced`);
        const result = head.run();
        this.#db.exec('COMMIT');
        head.resolve(result);
      } catch (err) {
        try {
          if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        } catch {
          // The database is failing; SQLite rolls the transaction back itself.
        }
        head.reject(failure(err));
      }
    }
  }

  #fileIdentity(): string {
    if (this.#path === ':memory:') return '';
    const stat = statSync(this.#path, { throwIfNoEntry: false });
    return stat === undefined ? 'gone' : `${stat.dev}:${stat.ino}`;
  }

  /** A read; a failure of the database itself becomes StoreUnavailable. */
  #read<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      throw failure(err);
    }
  }

  /**
   * Called inside the transaction of every write that changes what a cached token or client is
   * worth: revocations, and the status changes of apps and developers in either direction.
   */
  #revoked(kind: Revocation['kind'], ref: string, now: number): void {
    this.#insertRevocation.run(kind, ref, now);
    this.#evict({ kind, ref });
  }

  #evict({ kind, ref }: Revocation): void {
    for (const [id, t] of this.#cache) {
      const hit =
        kind === 'family' ? t.family === ref : kind === 'app' ? t.appId === ref : kind === 'key' ? t.key === ref : t.developerEmail === ref;
      if (hit) this.#cache.delete(id);
    }
    if (kind === 'family') return;
    for (const [key, c] of this.#clients) {
      const hit = kind === 'app' ? c.app.id === ref : kind === 'key' ? key === ref : c.app.developerEmail === ref;
      if (hit) this.#clients.delete(key);
    }
  }

  #syncCache(): void {
    const now = performance.now();
    if (now - this.#syncedAt < 1) return;
    this.#syncedAt = now;
    // At most once a millisecond: the read, and its failure mapped, stay off the cached path.
    const version = (this.#read(() => this.#dataVersionStmt.get()) as unknown as [number])[0];
    if (version === this.#dataVersion) return;
    this.#dataVersion = version;
    const rows = this.#read(() => this.#revocationsSince.all(this.#seenRevocation)) as unknown as (Revocation & { seq: number })[];
    if (rows.length === 0) return;
    // Rows purged before this instance read them leave a gap; then nothing cached is trusted.
    if (rows[0]!.seq !== this.#seenRevocation + 1) {
      this.#cache.clear();
      this.#clients.clear();
    } else {
      for (const row of rows) this.#evict(row);
    }
    this.#seenRevocation = rows[rows.length - 1]!.seq;
  }

  async createDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): Promise<Developer> {
    const verified = input.verified ?? true;
    const dev: Developer = { id: newId(), email: input.email, name: input.name, status: 'active', verified, createdAt: input.now };
    try {
      await this.#write(() => this.#insertDeveloper.run(dev.id, dev.email, dev.name, dev.status, dev.createdAt, input.passwordHash ?? null, verified ? input.now : null));
    } catch (err) {
      throw conflictOr(err, `developer ${input.email} already exists`);
    }
    return dev;
  }

  async replaceUnverifiedDeveloper(input: { email: string; name: string; now: number }): Promise<Developer | undefined> {
    return this.#write(() => {
      const row = this.#unverifiedDeveloper.get(input.email) as Row | undefined;
      if (row === undefined) return undefined;
      const old = row.id as string;
      for (const app of this.#appsOfDeveloperId.all(old) as Row[]) {
        for (const statement of this.#deleteAppRows) statement.run(app.id as string);
        this.#revoked('app', app.id as string, input.now);
      }
      this.#deleteDeveloper.run(old);
      this.#revoked('developer', input.email, input.now);
      const dev: Developer = { id: newId(), email: input.email, name: input.name, status: 'active', verified: true, createdAt: input.now };
      this.#insertDeveloper.run(dev.id, dev.email, dev.name, dev.status, dev.createdAt, null, input.now);
      return dev;
    });
  }

  async findDeveloper(email: string): Promise<Developer | undefined> {
    const row = this.#read(() => this.#developerByEmail.get(email)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async findDeveloperById(id: string): Promise<Developer | undefined> {
    const row = this.#read(() => this.#developerById.get(id)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async listDevelopers(): Promise<Developer[]> {
    return (this.#read(() => this.#developers.all()) as Row[]).map(toDeveloper);
  }

  async setDeveloperStatus(email: string, status: Status): Promise<Developer | undefined> {
    return this.#write(() => {
      if (this.#setDeveloperStatus.run(status, email).changes === 0) return undefined;
      const dev = toDeveloper(this.#developerByEmail.get(email) as Row);
      // Revocation times are wall-clock facts for the record; validity never reads them.
      if (status === 'disabled') {
        this.#revokeDeveloper.run(Date.now(), dev.id);
        // Ended, not suspended: enabling the developer again must not bring the sessions back.
        this.#deleteSessions.run(dev.id);
      }
      this.#revoked('developer', dev.email, Date.now());
      return dev;
    });
  }

  async createApp(input: NewApp): Promise<App> {
    const id = newId();
    try {
      await this.#write(() => {
        // Counted inside the write transaction, so parallel registrations cannot pass the bound together.
        if (input.maxAppsOfDeveloper !== undefined && (this.#appCountOfDeveloper.get(input.developerId) as { n: number }).n >= input.maxAppsOfDeveloper) {
          throw new StoreError('limit', `the developer already holds ${input.maxAppsOfDeveloper} apps`);
        }
        this.#insertApp.run(id, input.developerId, input.name, input.product, 'active', input.approval ?? 'approved', input.now);
        this.#insertCredential.run(input.key, id, input.secretHash, 'approved', null, input.now);
      });
      this.#unknownClients.delete(input.key);
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw conflictOr(err, `app "${input.name}" already exists for this developer`);
    }
    return toApp(this.#read(() => this.#appById.get(id)) as Row);
  }

  async findApp(developerEmail: string, name: string): Promise<App | undefined> {
    const row = this.#read(() => this.#appByName.get(developerEmail, name)) as Row | undefined;
    return row && toApp(row);
  }

  async findAppById(id: string): Promise<App | undefined> {
    const row = this.#read(() => this.#appById.get(id)) as Row | undefined;
    return row && toApp(row);
  }

  async findAppByKey(key: string): Promise<App | undefined> {
    const row = this.#read(() => this.#appByKey.get(key)) as Row | undefined;
    return row && toApp(row);
  }

  async listApps(filter: { developerEmail?: string } = {}): Promise<App[]> {
    const rows = this.#read(() => (filter.developerEmail === undefined ? this.#apps.all() : this.#appsOfDeveloper.all(filter.developerEmail)));
    return (rows as Row[]).map(toApp);
  }

  async setAppStatus(appId: string, status: Status): Promise<App | undefined> {
    return this.#write(() => {
      if (this.#setAppStatus.run(status, appId).changes === 0) return undefined;
      if (status === 'disabled') this.#revokeApp.run(Date.now(), appId);
      this.#revoked('app', appId, Date.now());
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async setAppApproval(appId: string, approval: Approval): Promise<App | undefined> {
    return this.#write(() => {
      if (this.#setAppApproval.run(approval, appId).changes === 0) return undefined;
      // Cached clients of the app are read again, with their approval.
      this.#revoked('app', appId, Date.now());
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async listCredentials(appId: string): Promise<Credential[]> {
    return (this.#read(() => this.#credentialsOfApp.all(appId)) as Row[]).map(toCredential);
  }

  async revokeCredential(key: string): Promise<boolean> {
    return this.#write(() => {
      if (this.#revokeCredential.run(key).changes === 0) return false;
      // The tokens stay in place: a revoked credential never comes back, and verification joins its status.
      this.#revoked('key', key, Date.now());
      return true;
    });
  }

  async rotateCredential(input: { appId: string; key: string; secretHash: Buffer; now: number; overlapUntil: number }): Promise<void> {
    await this.#write(() => {
      const old = (this.#approvedKeysOfApp.all(input.appId, input.key) as Row[]).map((r) => r.key as string);
      this.#insertCredential.run(input.key, input.appId, input.secretHash, 'approved', null, input.now);
      this.#unknownClients.delete(input.key);
      this.#expireOtherCredentials.run(input.overlapUntil, input.overlapUntil, input.appId, input.key);
      // Cached clients and tokens of the old keys are read again, with their new expiry.
      for (const key of old) this.#revoked('key', key, input.now);
    });
  }

  async deleteApp(appId: string, options: { onlyIfActive?: boolean } = {}): Promise<boolean> {
    return this.#write(() => {
      const row = this.#appActive.get(appId) as { active: number } | undefined;
      if (row === undefined || (options.onlyIfActive === true && row.active !== 1)) return false;
      for (const statement of this.#deleteAppRows) statement.run(appId);
      this.#revoked('app', appId, Date.now());
      return true;
    });
  }

  async findPasswordHash(email: string): Promise<string | null | undefined> {
    const row = this.#read(() => this.#passwordHash.get(email)) as Row | undefined;
    return row === undefined ? undefined : ((row.password_hash as string | null) ?? null);
  }

  async setPasswordHash(email: string, hash: string): Promise<boolean> {
    return this.#write(() => Number(this.#setPassword.run(hash, email).changes) > 0);
  }

  async setInvitation(email: string, codeHash: Buffer, expiresAt: number): Promise<boolean> {
    return this.#write(() => Number(this.#setInvitation.run(codeHash, expiresAt, email).changes) > 0);
  }

  async acceptInvitation(input: { email: string; codeHash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    return this.#write(() => {
      const row = this.#acceptInvitation.get(input.passwordHash, input.now, input.email, input.codeHash, input.now) as Row | undefined;
      if (row === undefined) return undefined;
      // A password set through an invitation ends whatever sessions the account had.
      this.#deleteSessions.run(row.id as string);
      return toDeveloper(this.#developerByEmail.get(input.email) as Row);
    });
  }

  async saveEmailToken(input: { hash: Buffer; developerId: string; purpose: EmailTokenPurpose; now: number; expiresAt: number }): Promise<void> {
    await this.#write(() => {
      this.#deleteEmailTokens.run(input.developerId, input.purpose);
      this.#insertEmailToken.run(input.hash, input.developerId, input.purpose, input.now, input.expiresAt);
    });
  }

  async confirmEmail(input: { hash: Buffer; developerId: string; now: number }): Promise<Developer | undefined> {
    return this.#write(() => {
      // Another developer's token is left as it is: only its own developer may spend it.
      const owner = (this.#emailToken.get(input.hash, 'verify', input.now) as Row | undefined)?.developer_id;
      if (owner !== input.developerId) return undefined;
      this.#spendEmailToken.run(input.hash, 'verify', input.now);
      this.#markVerified.run(input.now, input.developerId);
      return toDeveloper(this.#developerById.get(input.developerId) as Row);
    });
  }

  async resetPassword(input: { hash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    return this.#write(() => {
      const row = this.#spendEmailToken.get(input.hash, 'reset', input.now) as Row | undefined;
      if (row === undefined) return undefined;
      const id = row.developer_id as string;
      const dev = this.#developerById.get(id) as Row;
      this.#setPassword.run(input.passwordHash, dev.email as string);
      this.#markVerified.run(input.now, id);
      this.#deleteSessions.run(id);
      return toDeveloper(this.#developerById.get(id) as Row);
    });
  }

  async createSession(input: { idHash: Buffer; developerId: string; passwordHash: string; now: number; expiresAt: number }): Promise<boolean> {
    return this.#write(() => Number(this.#insertSession.run(input.idHash, input.now, input.expiresAt, input.developerId, input.passwordHash).changes) === 1);
  }

  async findSession(idHash: Buffer, now: number): Promise<Developer | undefined> {
    const row = this.#read(() => this.#session.get(idHash, now)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async deleteSession(idHash: Buffer): Promise<void> {
    await this.#write(() => this.#deleteSession.run(idHash));
  }

  async deleteSessions(developerId: string): Promise<void> {
    await this.#write(() => this.#deleteSessions.run(developerId));
  }

  async countAttempts(accounts: readonly AttemptAccount[], now: number): Promise<AttemptResult> {
    for (const { gatesOnlyIfFailing: other } of accounts) {
      if (other !== undefined && !accounts.some((a) => a.account === other)) throw new TypeError(`gatesOnlyIfFailing: '${other}' is not an account of this call`);
    }
    // One transaction reads every count and writes them, so parallel attempts cannot both see a
    // record as clean, or a wait as over, before either is counted.
    return this.#write((): AttemptResult => {
      const counted = accounts.map(({ account, rule, gatesOnlyIfFailing }) => {
        const row = this.#loginAttempts.get(account) as { count: number; first_at: number; last_at: number } | undefined;
        const fresh = row === undefined || now - row.last_at >= rule.resetAfterMs;
        const retryAt = fresh ? -Infinity : nextAttemptAt(rule, row.count, row.last_at);
        return { account, gatesOnlyIfFailing, count: fresh ? 0 : row.count, firstAt: fresh ? now : row.first_at, retryAt };
      });
      const failing = (account: string) => counted.some((c) => c.account === account && c.count > 0);
      const gating = counted.filter((c) => c.gatesOnlyIfFailing === undefined || failing(c.gatesOnlyIfFailing));
      const retryAt = Math.max(...gating.map((c) => c.retryAt));
      if (retryAt > now) return { allowed: false, retryAt };
      for (const c of counted) this.#saveLoginAttempts.run(c.account, c.count + 1, c.firstAt, now);
      return { allowed: true };
    });
  }

  async clearLoginFailures(account: string): Promise<void> {
    await this.#write(() => this.#clearLoginFailures.run(account));
  }

  async takeBackLoginFailure(account: string): Promise<void> {
    await this.#write(() => this.#takeBackLoginFailure.run(account));
  }

  async addUsage(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.#write(() => {
      for (const c of counts) this.#addUsage.run(c.appId, c.hour, c.count);
    });
  }

  async usage(appId: string, fromHour: number): Promise<UsageCount[]> {
    return (this.#read(() => this.#usage.all(appId, fromHour)) as Row[]).map((r) => ({ appId: r.app_id as string, hour: r.hour as number, count: r.count as number }));
  }

  async findClient(key: string): Promise<Client | undefined> {
    this.#syncCache();
    const cached = this.#clients.get(key);
    if (cached !== undefined) return cached;
    if (this.#unknownClients.has(key)) return undefined;
    const row = this.#read(() => this.#client.get(key)) as Row | undefined;
    if (!row) {
      if (key.length > 64) return undefined; // not a key this gateway makes; not worth remembering
      if (this.#unknownClients.size >= CLIENT_CACHE_SIZE) this.#unknownClients.delete(this.#unknownClients.values().next().value!);
      this.#unknownClients.add(key);
      return undefined;
    }
    const client: Client = {
      credential: {
        key: row.key as string,
        appId: row.id as string,
        status: row.credential_status as Credential['status'],
        expiresAt: (row.credential_expires_at as number | null) ?? null,
        createdAt: row.credential_created_at as number,
      },
      secretHash: Buffer.from(row.secret_hash as Uint8Array),
      app: toApp(row),
      developerStatus: row.developer_status as Status,
    };
    if (this.#clients.size >= CLIENT_CACHE_SIZE) this.#clients.delete(this.#clients.keys().next().value!);
    this.#clients.set(key, client);
    return client;
  }

  // Group commit: the tokens of every request that arrives within one turn of the event loop are
  // written in one transaction, and each promise resolves once that transaction has committed.
  saveTokens(records: readonly TokenRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ records, resolve, reject });
      if (this.#pending.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    const failed = new Map<number, unknown>();
    this.#write(() => {
      // A savepoint per caller: one caller's bad record fails that caller only.
      batch.forEach(({ records }, i) => {
        this.#db.exec('SAVEPOINT save_tokens');
        try {
          for (const r of records) this.#insert(r);
          this.#db.exec('RELEASE save_tokens');
        } catch (err) {
          this.#db.exec('ROLLBACK TO save_tokens; RELEASE save_tokens');
          failed.set(i, err);
        }
      });
    }).then(
      () => batch.forEach(({ resolve, reject }, i) => (failed.has(i) ? reject(failure(failed.get(i))) : resolve())),
      (err: unknown) => batch.forEach(({ reject }) => reject(err)),
    );
  }

  #insert(r: TokenRecord): void {
    this.#insertToken.run(r.hash, r.kind, r.appId, r.key, r.product, r.scope, r.subject, r.family, r.issuedAt, r.expiresAt);
  }

  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined {
    // A token that cannot be checked is never taken as valid: StoreUnavailable, not undefined.
    this.#syncCache();
    const id = hash.toString('latin1');
    const cached = this.#cache.get(id);
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached;
      this.#cache.delete(id);
      return undefined;
    }
    const row = this.#read(() => this.#accessToken.get(hash, now, now)) as Row | undefined;
    if (!row) return undefined;
    const token: ActiveToken = { ...toToken(row), appName: row.app_name as string, developerEmail: row.developer_email as string };
    // A rotated key's tokens end with the key's overlap, if that comes first.
    const keyExpires = row.credential_expires_at as number | null;
    if (keyExpires !== null && keyExpires < token.expiresAt) token.expiresAt = keyExpires;
    this.#remember(id, token);
    return token;
  }

  #remember(id: string, token: ActiveToken): void {
    if (this.#cacheSize === 0) return;
    if (this.#cache.size >= this.#cacheSize) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(id, token);
  }

  async revokeToken(hash: Buffer, appId: string, now: number): Promise<boolean> {
    return this.#write(() => {
      const row = this.#tokenFamily.get(hash) as Row | undefined;
      if (row === undefined || row.app_id !== appId) return false;
      this.#revokeFamily.run(now, row.family as string);
      this.#revoked('family', row.family as string, now);
      return true;
    });
  }

  async rotateRefreshToken(req: RotateRequest): Promise<RotateResult> {
    return this.#write((): RotateResult => {
      const row = this.#refreshToken.get(req.hash) as Row | undefined;
      if (!row || row.kind !== 'refresh' || row.app_id !== req.appId || row.revoked_at !== null || row.credential_status !== 'approved') {
        return { ok: false, reason: 'invalid' };
      }
      // A rotated key's refresh tokens end with its overlap, as its access tokens do.
      const keyExpires = row.credential_expires_at as number | null;
      if (keyExpires !== null && keyExpires <= req.now) return { ok: false, reason: 'invalid' };
      const previous = toToken(row);
      if (row.used_at !== null) {
        // A client's own concurrent or retried refresh, within the product's grace: refuse, keep the family.
        if (req.now - (row.used_at as number) < (req.reuseGraceMs ?? 0)) return { ok: false, reason: 'invalid' };
        // RFC 9700 §4.14.2: a rotated refresh token presented again means it leaked; revoke the family.
        this.#revokeFamily.run(req.now, previous.family);
        this.#revoked('family', previous.family, req.now);
        return { ok: false, reason: 'reused' };
      }
      if (previous.expiresAt <= req.now) return { ok: false, reason: 'invalid' };
      const granted = previous.scope === '' ? [] : previous.scope.split(' ');
      if (req.scope !== undefined && !req.scope.every((s) => granted.includes(s))) return { ok: false, reason: 'scope' };
      const scope = req.scope === undefined ? previous.scope : req.scope.join(' ');
      this.#markUsed.run(req.now, req.hash);
      const base = { appId: previous.appId, key: previous.key, product: previous.product, scope, subject: previous.subject, family: previous.family, issuedAt: req.now };
      this.#insert({ ...base, hash: req.accessHash, kind: 'access', expiresAt: req.accessExpiresAt });
      this.#insert({ ...base, hash: req.refreshHash, kind: 'refresh', expiresAt: req.refreshExpiresAt });
      return { ok: true, previous, scope };
    });
  }

  async loadQuotaWindows(now: number): Promise<QuotaWindow[]> {
    return (this.#read(() => this.#counters.all(now)) as Row[]).map((r) => ({
      key: r.key as string,
      start: r.window_start as number,
      end: r.window_end as number,
      count: r.count as number,
      previous: r.previous_count as number,
    }));
  }

  async saveQuotaWindows(windows: readonly QuotaWindow[]): Promise<void> {
    if (windows.length === 0) return;
    await this.#write(() => {
      for (const w of windows) this.#saveCounter.run(w.key, w.start, w.end, w.count, w.previous);
    });
  }

  async purgeExpired(now: number): Promise<number> {
    await this.#write(() => {
      this.#purgeCounters.run(now);
      this.#purgeSessions.run(now);
      this.#purgeUsage.run(now - USAGE_KEPT_MS);
      this.#purgeLoginFailures.run(now - 86_400_000);
      this.#purgeEmailTokens.run(now);
      // Instances read revocations within a millisecond of serving; a day is ample.
      this.#purgeRevocations.run(now - 86_400_000);
    });
    // Tokens in transactions of 5,000 rows, so that no write waits long behind the purge.
    let total = 0;
    for (;;) {
      const changes = await this.#write(() => Number(this.#purge.run(now).changes));
      total += changes;
      if (changes < 5000) return total;
    }
  }

  async close(): Promise<void> {
    if (this.#pending.length > 0) this.#flush();
    // Writes waiting for a lock end within the busy timeout, committed or failed.
    while (this.#writes.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.#db.isOpen) this.#db.close();
  }
}

function isBusy(err: unknown): boolean {
  return ((err as { errcode?: number }).errcode ?? 0) % 256 === SQLITE_BUSY;
}

/**
 * A failure of the database itself (locked, read-only, full, moved, corrupt, closed under a call
 * at shutdown) as StoreUnavailable; a broken constraint, or anything else, as it is.
 */
function failure(err: unknown): unknown {
  const { errcode: code, code: nodeCode } = err as { errcode?: unknown; code?: unknown };
  if (nodeCode === 'ERR_INVALID_STATE') return new StoreUnavailable('the database is closed', { cause: err });
  if (typeof code !== 'number' || code % 256 === SQLITE_CONSTRAINT) return err;
  return new StoreUnavailable(`the database failed: ${(err as Error).message}`, { cause: err });
}

function conflictOr(err: unknown, message: string): unknown {
  const code = (err as { errcode?: number }).errcode;
  if (code === SQLITE_CONSTRAINT_UNIQUE || code === SQLITE_CONSTRAINT_PRIMARYKEY) return new StoreError('conflict', message);
  return err;
}

function toDeveloper(r: Row): Developer {
  return {
    id: r.id as string,
    email: r.email as string,
    name: r.name as string,
    status: r.status as Status,
    verified: r.verified_at !== null,
    createdAt: r.created_at as number,
  };
}

function toApp(r: Row): App {
  return {
    id: r.id as string,
    developerId: r.developer_id as string,
    developerEmail: r.developer_email as string,
    name: r.name as string,
    product: r.product as string,
    status: r.status as Status,
    approval: r.approval as Approval,
    createdAt: r.created_at as number,
  };
}

function toCredential(r: Row): Credential {
  return {
    key: r.key as string,
    appId: r.app_id as string,
    status: r.status as Credential['status'],
    expiresAt: (r.expires_at as number | null) ?? null,
    createdAt: r.created_at as number,
  };
}

function toToken(r: Row): TokenRecord {
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
  };
}
