// The SQLite driver's core, on the built-in node:sqlite: one file in WAL mode, the schema's
// migrations, the queue every write goes through (it never waits on the event loop, see write),
// reads (in WAL mode a reader is not blocked by a writer, even one inside BEGIN EXCLUSIVE), the
// mapping of the database's own failures onto StoreUnavailable, and the change feed.
//
// The change feed: every write that changes what a cached token or client is worth appends a row
// to `revocations` and tells the listeners at once. Another connection's commits (another
// process: `gateway admin`, another worker) change `PRAGMA data_version`; catchUp reads it, at
// most once a millisecond, and hands the listeners the rows added since.
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { StoreError, StoreUnavailable, type Change, type ChangeFeed } from '../port/index.ts';
import { checkpointWaiting, SAFETY_NET_PAGES, watchCheckpoints, type Checkpointer } from './checkpoints.ts';
import { MIGRATIONS } from './migrations.ts';

export interface SqliteDbOptions {
  path: string;
  /** How long a write waits for a lock another connection holds before it fails with StoreUnavailable (default 2000). */
  busyTimeoutMs?: number;
  /**
   * For a serving gateway: the write-ahead log is checkpointed by a thread (src/store/sqlite/checkpoints.ts),
   * which `run` starts, and which every connection sharing `signal` leaves the write lock to when it asks.
   */
  checkpoints?: { signal: SharedArrayBuffer; run: boolean };
  /** Hears of failures in the background (the checkpoint thread). */
  warn?: (message: string) => void;
}

export type Row = Record<string, unknown>;

interface Write {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** performance.now() after which the write gives up waiting for the lock. */
  deadline: number;
}

type Listener = (change: Change) => void;

/** The longest pause between two tries at a lock another connection holds. */
const MAX_BACKOFF_MS = 50;
const SQLITE_BUSY = 5;
const SQLITE_CONSTRAINT = 19;
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;

export class SqliteDb implements ChangeFeed {
  readonly #db: DatabaseSync;
  readonly #busyTimeoutMs: number;
  readonly #path: string;
  /** The database file's device and inode when opened: a write checks it is still the file at #path. */
  readonly #identity: string;
  /** Writes not yet committed, oldest first; the head is tried again after #backoffMs while the lock is taken. */
  #writes: Write[] = [];
  #backoffMs = 0;
  readonly #listeners: Listener[] = [];
  #dataVersion = -1;
  /** The last row of `revocations` the listeners have heard of. */
  #seenRevocation: number;
  /**
   * Rows of `revocations` this connection added, which its listeners heard of then: catchUp does
   * not tell them again. Told twice, a signing key is dropped by the key ring until it is read
   * again, and the call that catches up finds no key to sign or verify with.
   */
  readonly #toldRows = new Set<number>();
  /** Those added by the write under way: a rollback takes them back, and their seq may be used again. */
  #toldInWrite: number[] = [];
  #caughtUpAt = -Infinity;
  readonly #dataVersionStmt: StatementSync;
  readonly #revocationsSince: StatementSync;
  readonly #insertRevocation: StatementSync;
  readonly #purgeRevocations: StatementSync;
  readonly #checkpointer: Checkpointer | undefined;
  /** Set while the checkpoint thread waits for the write lock. */
  readonly #checkpointSignal: Int32Array | undefined;

  constructor(options: SqliteDbOptions) {
    if (typeof options.path !== 'string' || options.path === '') throw new TypeError('SqliteStore: path must be a non-empty string');
    const busyTimeoutMs = options.busyTimeoutMs ?? 2000;
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new TypeError('SqliteStore: busyTimeoutMs must be a non-negative integer');
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#path = options.path;

    if (options.path !== ':memory:') mkdirSync(path.dirname(options.path), { recursive: true });
    // Opening waits for a lock as long as a write would: nothing is served yet.
    this.#db = new DatabaseSync(options.path, { enableForeignKeyConstraints: true, timeout: busyTimeoutMs });
    // WAL with synchronous=NORMAL: a commit is in the OS before it returns, so it survives the
    // process being killed (kill -9); only a power loss can drop the last commits.
    try {
      this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
      this.#migrate();
      // From now on SQLite never sleeps on the event loop waiting for a lock: write tries again later.
      this.#db.exec('PRAGMA busy_timeout = 0');
      this.#identity = this.#fileIdentity();
    } catch (err) {
      this.#db.close();
      throw err;
    }
    this.#dataVersionStmt = this.#db.prepare('PRAGMA data_version');
    this.#dataVersionStmt.setReturnArrays(true);
    this.#revocationsSince = this.#db.prepare('SELECT seq, kind, ref FROM revocations WHERE seq > ? ORDER BY seq');
    this.#insertRevocation = this.#db.prepare('INSERT INTO revocations (kind, ref, at) VALUES (?, ?, ?)');
    this.#purgeRevocations = this.#db.prepare('DELETE FROM revocations WHERE at <= ?');
    this.#seenRevocation = (this.#db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM revocations').get() as { seq: number }).seq;
    if (options.checkpoints !== undefined && options.path !== ':memory:') {
      this.#db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
      this.#checkpointSignal = new Int32Array(options.checkpoints.signal);
      const warn = options.warn ?? (() => {});
      if (options.checkpoints.run) {
        this.#checkpointer = watchCheckpoints(options.path, options.checkpoints.signal, (err) => warn(`the WAL checkpoint thread stopped: ${err.message}`));
      }
    }
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

  prepare(sql: string): StatementSync {
    return this.#db.prepare(sql);
  }

  /** Runs SQL without results inside a write (a savepoint). */
  exec(sql: string): void {
    this.#db.exec(sql);
  }

  /**
   * Runs `run` in a write transaction and resolves once it has committed. Writes run in the order
   * they came, one at a time. While another connection holds the write lock (a backup, a
   * migration, a shell left open), BEGIN IMMEDIATE fails at once (busy_timeout is 0) and the
   * queue tries again after 1, 2, 4… up to 50 ms, so the event loop keeps serving; a write still
   * waiting after the busy timeout fails with StoreUnavailable. An empty queue runs a write at once,
   * within the call.
   */
  write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#writes.push({ run, resolve: resolve as (value: unknown) => void, reject, deadline: performance.now() + this.#busyTimeoutMs });
      if (this.#writes.length === 1) this.#drain();
    });
  }

  #drain(): void {
    while (this.#writes.length > 0) {
      const head = this.#writes[0]!;
      try {
        if (this.#checkpointSignal !== undefined && checkpointWaiting(this.#checkpointSignal)) throw CHECKPOINTING;
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
      this.#toldInWrite = [];
      try {
        // In WAL mode SQLite goes on committing to a file removed or replaced under it: commits
        // nobody will read again. A stat per transaction (a group of token requests shares one) keeps a 200 honest.
        if (this.#fileIdentity() !== this.#identity) throw new StoreUnavailable(`the database file ${this.#path} was removed or replaced`);
        const result = head.run();
        this.#db.exec('COMMIT');
        this.#checkpointer?.committed();
        head.resolve(result);
      } catch (err) {
        try {
          if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        } catch {
          // The database is failing; SQLite rolls the transaction back itself.
        }
        for (const seq of this.#toldInWrite) this.#toldRows.delete(seq);
        head.reject(failure(err));
      }
    }
  }

  #fileIdentity(): string {
    if (this.#path === ':memory:') return '';
    const stat = statSync(this.#path, { throwIfNoEntry: false });
    return stat === undefined ? 'gone' : `${stat.dev}:${stat.ino}`;
  }

  /** Reads the schema version, and checks the file is the one opened: what readiness needs of the store. */
  ping(): void {
    this.read(() => this.#db.prepare('PRAGMA user_version').get());
    if (this.#fileIdentity() !== this.#identity) throw new StoreUnavailable(`the database file ${this.#path} was removed or replaced`);
  }

  /** A read; a failure of the database itself becomes StoreUnavailable. */
  read<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      throw failure(err);
    }
  }

  /**
   * Several reads that see the database as of one moment: one read transaction, which in WAL mode
   * holds up no writer. Never inside a write (writes run synchronously, so none is under way).
   */
  snapshot<T>(run: () => T): T {
    return this.read(() => {
      this.#db.exec('BEGIN');
      try {
        return run();
      } finally {
        this.#db.exec('COMMIT');
      }
    });
  }

  /**
   * Called inside the transaction of every write that changes what a cached token or client is
   * worth: revocations, created and rotated keys, and any change of an app or a developer. The
   * listeners hear of it at once; a rollback only makes them forget more than they had to.
   */
  changed(change: Extract<Change, { ref: string }>, now: number): void {
    const seq = Number(this.#insertRevocation.run(change.kind, change.ref, now).lastInsertRowid);
    this.#toldRows.add(seq);
    this.#toldInWrite.push(seq);
    for (const listener of this.#listeners) listener(change);
  }

  listen(listener: Listener): void {
    this.#listeners.push(listener);
  }

  catchUp(): void {
    const now = performance.now();
    if (now - this.#caughtUpAt < 1) return;
    this.#caughtUpAt = now;
    // At most once a millisecond: the read, and its failure mapped, stay off the cached path.
    const version = (this.read(() => this.#dataVersionStmt.get()) as unknown as [number])[0];
    if (version === this.#dataVersion) return;
    this.#dataVersion = version;
    const rows = this.read(() => this.#revocationsSince.all(this.#seenRevocation)) as unknown as (Extract<Change, { ref: string }> & { seq: number })[];
    if (rows.length === 0) return;
    // Rows purged before this process read them leave a gap; then nothing remembered is trusted.
    const changes: readonly Change[] = rows[0]!.seq === this.#seenRevocation + 1 ? rows.filter((row) => !this.#toldRows.has(row.seq)) : [{ kind: 'everything' }];
    this.#seenRevocation = rows[rows.length - 1]!.seq;
    for (const seq of this.#toldRows) if (seq <= this.#seenRevocation) this.#toldRows.delete(seq);
    for (const change of changes) for (const listener of this.#listeners) listener(change);
  }

  /** Inside a write: forgets changes every process has had ample time to read. */
  purgeChanges(now: number): void {
    // Processes catch up within a millisecond of serving; a day is ample.
    this.#purgeRevocations.run(now - 86_400_000);
  }

  /** Resolves once every write queued has committed or failed, then closes the database. */
  async close(): Promise<void> {
    // Writes waiting for a lock end within the busy timeout, committed or failed.
    while (this.#writes.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.#checkpointer?.stop();
    if (this.#db.isOpen) this.#db.close();
  }
}

/** What a writer meets while the checkpoint thread wants the lock: busy, as if it held it already. */
const CHECKPOINTING = Object.assign(new Error('the checkpoint thread wants the write lock'), { errcode: SQLITE_BUSY });

function isBusy(err: unknown): boolean {
  return ((err as { errcode?: number }).errcode ?? 0) % 256 === SQLITE_BUSY;
}

/**
 * A failure of the database itself (locked, read-only, full, moved, corrupt, closed under a call
 * at shutdown) as StoreUnavailable; a broken constraint, or anything else, as it is.
 */
export function failure(err: unknown): unknown {
  const { errcode: code, code: nodeCode } = err as { errcode?: unknown; code?: unknown };
  if (nodeCode === 'ERR_INVALID_STATE') return new StoreUnavailable('the database is closed', { cause: err });
  if (typeof code !== 'number' || code % 256 === SQLITE_CONSTRAINT) return err;
  return new StoreUnavailable(`the database failed: ${(err as Error).message}`, { cause: err });
}

/** A broken uniqueness as StoreError 'conflict' with `message`; anything else as it is. */
export function conflictOr(err: unknown, message: string): unknown {
  const code = (err as { errcode?: number }).errcode;
  if (code === SQLITE_CONSTRAINT_UNIQUE || code === SQLITE_CONSTRAINT_PRIMARYKEY) return new StoreError('conflict', message);
  return err;
}
