// Quota windows and usage (per app, route, status class and hour) on SQLite. Quota and
// spike-arrest counts live in the shared in-memory table (src/store/counter-table.ts); the thread
// that maintains the store saves the table's quota windows here every second and at close, and
// loads them at start.
import type { CounterTable, QuotaWindow } from '../counter-table.ts';
import { LATENCY_BUCKETS, USAGE_KEPT_MS, type HourCount, type StatusClass, type UsageCount, type UsageFilter, type UsageStore } from '../port/index.ts';
import type { Row, SqliteDb } from './db.ts';

export class SqliteQuotas {
  readonly #db: SqliteDb;
  readonly #windows;
  readonly #save;
  readonly #purge;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#windows = db.prepare('SELECT key, window_start, window_end, count, previous_count FROM quota_counters');
    this.#save = db.prepare(
      `INSERT INTO quota_counters (key, window_start, window_end, count, previous_count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end,
         count = excluded.count, previous_count = excluded.previous_count`,
    );
    // Kept one interval past their end: a rolling quota reads the previous window.
    this.#purge = db.prepare('DELETE FROM quota_counters WHERE 2 * window_end - window_start <= ?');
  }

  /** Every window saved and not yet purged. */
  load(): QuotaWindow[] {
    return (this.#db.read(() => this.#windows.all()) as Row[]).map((r) => ({
      key: r.key as string,
      start: r.window_start as number,
      end: r.window_end as number,
      count: r.count as number,
      previous: r.previous_count as number,
    }));
  }

  async save(windows: readonly QuotaWindow[]): Promise<void> {
    if (windows.length === 0) return;
    await this.#db.write(() => {
      for (const w of windows) this.#save.run(w.key, w.start, w.end, w.count, w.previous);
    });
  }

  /** Inside a write: removes windows a rolling quota no longer reads. */
  purgeExpired(now: number): void {
    this.#purge.run(now);
  }
}

const SAVE_EVERY_MS = 1_000;

/**
 * Loads the saved windows into `table`, then saves the windows counted in every second; `close`
 * saves the last ones. A failed save keeps its windows for the next.
 */
export function saveQuotaWindows(table: CounterTable, quotas: SqliteQuotas, warn: (message: string) => void): { close(): Promise<void> } {
  table.load(quotas.load());
  // Windows a failed save left unsaved, by key; a newer value of the same window replaces one.
  let unsaved = new Map<string, QuotaWindow>();
  const save = async () => {
    for (const w of table.takeDirty()) unsaved.set(w.key, w);
    const batch = unsaved;
    unsaved = new Map();
    try {
      await quotas.save([...batch.values()]);
    } catch (err) {
      for (const [key, w] of batch) if (!unsaved.has(key)) unsaved.set(key, w);
      throw err;
    }
    if (table.takeFull()) warn('the quota and spike arrest table is full: calls passed uncounted');
  };
  const timer = setInterval(() => save().catch((err: unknown) => warn(`saving quota counters failed: ${(err as Error).message}`)), SAVE_EVERY_MS);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await save();
    },
  };
}

export class SqliteUsage implements UsageStore {
  readonly #db: SqliteDb;
  readonly #add;
  readonly #since;
  readonly #report;
  readonly #reportOfApp;
  readonly #addLatency;
  readonly #latency;
  readonly #latencyOfApp;
  readonly #deleteOfApp;
  readonly #deleteLatencyOfApp;
  readonly #purgeLatency;
  readonly #deleteLegacyOfApp;
  readonly #purge;
  readonly #purgeLegacy;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#add = db.prepare(
      `INSERT INTO usage_counts (hour, app_id, route, status_class, product, count) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (hour, app_id, route, status_class) DO UPDATE SET count = count + excluded.count, product = excluded.product`,
    );
    // app_usage: the hourly totals counted before routes and status classes were (see the migration).
    this.#since = db.prepare(
      `SELECT hour, sum(count) AS count FROM (
         SELECT hour, count FROM usage_counts WHERE app_id = ? AND hour >= ?
         UNION ALL SELECT hour, count FROM app_usage WHERE app_id = ? AND hour >= ?
       ) GROUP BY hour ORDER BY hour`,
    );
    // Two statements, so that each reads its rows in the order asked: the whole range by the primary
    // key, one app's by usage_counts_app (which holds the primary key's other columns after its own).
    const columns = 'SELECT hour, app_id, product, route, status_class, count FROM usage_counts';
    const narrowed = '(?1 IS NULL OR product = ?1) AND (?2 IS NULL OR route = ?2)';
    this.#report = db.prepare(`${columns} WHERE hour >= ?3 AND hour < ?4 AND ${narrowed} ORDER BY hour, app_id, route, status_class`);
    this.#reportOfApp = db.prepare(`${columns} WHERE app_id = ?5 AND hour >= ?3 AND hour < ?4 AND ${narrowed} ORDER BY hour, route, status_class`);
    this.#addLatency = db.prepare(
      `INSERT INTO usage_latency (hour, app_id, route, status_class, bucket, count) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (hour, app_id, route, status_class, bucket) DO UPDATE SET count = count + excluded.count`,
    );
    // The buckets of the rows the report reads, narrowed as they are (the product is usage_counts').
    const buckets = 'SELECT l.hour, l.app_id, l.route, l.status_class, l.bucket, l.count FROM usage_latency l JOIN usage_counts c USING (hour, app_id, route, status_class)';
    const bucketsNarrowed = '(?1 IS NULL OR c.product = ?1) AND (?2 IS NULL OR l.route = ?2)';
    this.#latency = db.prepare(`${buckets} WHERE l.hour >= ?3 AND l.hour < ?4 AND ${bucketsNarrowed}`);
    this.#latencyOfApp = db.prepare(`${buckets} WHERE l.app_id = ?5 AND l.hour >= ?3 AND l.hour < ?4 AND ${bucketsNarrowed}`);
    this.#deleteLatencyOfApp = db.prepare('DELETE FROM usage_latency WHERE app_id = ?');
    this.#purgeLatency = db.prepare('DELETE FROM usage_latency WHERE hour < ?');
    this.#deleteOfApp = db.prepare('DELETE FROM usage_counts WHERE app_id = ?');
    this.#deleteLegacyOfApp = db.prepare('DELETE FROM app_usage WHERE app_id = ?');
    this.#purge = db.prepare('DELETE FROM usage_counts WHERE hour < ?');
    this.#purgeLegacy = db.prepare('DELETE FROM app_usage WHERE hour < ?');
  }

  async add(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.#db.write(() => {
      for (const c of counts) {
        this.#add.run(c.hour, c.appId, c.route, c.statusClass, c.product, c.count);
        for (let b = 0; b < c.latency.length; b++) if (c.latency[b]! > 0) this.#addLatency.run(c.hour, c.appId, c.route, c.statusClass, b, c.latency[b]!);
      }
    });
  }

  async since(appId: string, fromHour: number): Promise<HourCount[]> {
    return (this.#db.read(() => this.#since.all(appId, fromHour, appId, fromHour)) as Row[]).map((r) => ({ hour: r.hour as number, count: r.count as number }));
  }

  async report(filter: UsageFilter): Promise<UsageCount[]> {
    const narrowed = [filter.product ?? null, filter.route ?? null, filter.fromHour, filter.toHour] as const;
    const [rows, buckets] = this.#db.read(() =>
      filter.appId === undefined
        ? [this.#report.all(...narrowed), this.#latency.all(...narrowed)]
        : [this.#reportOfApp.all(...narrowed, filter.appId), this.#latencyOfApp.all(...narrowed, filter.appId)],
    ) as [Row[], Row[]];
    const key = (r: Row) => `${r.hour as number}\u0000${r.app_id as string}\u0000${r.route as string}\u0000${r.status_class as string}`;
    const latency = new Map<string, number[]>();
    for (const b of buckets) {
      let counts = latency.get(key(b));
      if (counts === undefined) {
        counts = new Array<number>(LATENCY_BUCKETS).fill(0);
        latency.set(key(b), counts);
      }
      counts[b.bucket as number] = b.count as number;
    }
    return rows.map((r) => ({
      appId: r.app_id as string,
      product: r.product as string,
      route: r.route as string,
      statusClass: r.status_class as StatusClass,
      hour: r.hour as number,
      count: r.count as number,
      latency: latency.get(key(r)) ?? new Array<number>(LATENCY_BUCKETS).fill(0),
    }));
  }

  /** Inside a write: deletes the app's counts (the app is being deleted). */
  deleteOfApp(appId: string): void {
    this.#deleteOfApp.run(appId);
    this.#deleteLatencyOfApp.run(appId);
    this.#deleteLegacyOfApp.run(appId);
  }

  /** Inside a write: removes counts older than USAGE_KEPT_MS. */
  purgeExpired(now: number): void {
    this.#purge.run(now - USAGE_KEPT_MS);
    this.#purgeLatency.run(now - USAGE_KEPT_MS);
    this.#purgeLegacy.run(now - USAGE_KEPT_MS);
  }
}
