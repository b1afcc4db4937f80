// Counters kept for the gateway's own policies and reports: quota windows and hourly usage per app.

/** One quota counter: the calls counted in [start, end), and in the window just before (rolling quotas). */
export interface QuotaWindow {
  key: string;
  start: number;
  end: number;
  count: number;
  previous: number;
}

export interface QuotaStore {
  /** Quota windows still open at `now`, as last saved. */
  load(now: number): Promise<QuotaWindow[]>;
  save(windows: readonly QuotaWindow[]): Promise<void>;
}

/** Calls of one app in one hour (`hour`: epoch ms of the hour's start). */
export interface UsageCount {
  appId: string;
  hour: number;
  count: number;
}

export interface UsageStore {
  /** Adds calls to the apps' hourly counts. */
  add(counts: readonly UsageCount[]): Promise<void>;
  /** The app's hourly counts from `fromHour` on, oldest first; hours without calls are absent. */
  since(appId: string, fromHour: number): Promise<UsageCount[]>;
}
