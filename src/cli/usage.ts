// `gateway admin usage`: what each API product's calls came to over the last 24 hours and 30 days
// (by status class and route, error rate, p50 and p95), as the portal shows it per app; and
// `gateway admin usage export`: the calls the store counted per app, product, route and status
// class per hour, as CSV or JSON for billing. From the store the config names or, with --url, the
// management API.
import type { Command } from 'commander';
import { AdminError } from '../admin/errors.ts';
import { MAX_USAGE_RANGE_MS, SUMMARY_WINDOWS, summarize, type UsageQuery, type UsageRow, type UsageSummary } from '../admin/usage.ts';
import type { App } from '../store/port/index.ts';
import { HOUR_MS } from '../usage.ts';
import type { Common, Leaves } from './admin.ts';
import { isoDate, table, terminalText, type CliIo } from './io.ts';
import type { AdminApi } from './admin-api.ts';

interface ExportOptions extends Common {
  since?: string;
  until?: string;
  format?: string;
  app?: string;
  product?: string;
  route?: string;
}

/** A row as the export writes it: its hour in ISO 8601, and the app's name and developer beside its id. */
interface ExportRow {
  hour: string;
  app: string;
  appName: string;
  developer: string;
  product: string;
  route: string;
  statusClass: string;
  calls: number;
}

const CSV_COLUMNS = ['hour', 'app', 'app_name', 'developer', 'product', 'route', 'status_class', 'calls'] as const;

/** An ISO 8601 date (its midnight, UTC), or a date-time with its zone: without one, the machine's own zone would decide the hour. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function timeOption(value: string | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  const ms = ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new AdminError('usage', `${option}: an ISO 8601 date (2026-12-01) or a date-time with its zone (2026-12-01T09:00:00Z, 2026-12-01T10:00+01:00), not "${value}"`);
  return ms;
}

/**
 * A CSV field (RFC 4180). A text a spreadsheet would run as a formula (an app name a developer
 * chose) is kept as text by an apostrophe before each start of a cell it could be read as: its
 * own start, and after each ; or | (where a spreadsheet of another locale splits cells); a
 * formula's first character in its fullwidth form too.
 */
export function csvField(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = value.replace(/(^|[;|])(\s*[=+\-@\t\r＝＋－＠])/gu, "$1'$2");
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csv(rows: readonly ExportRow[]): string {
  const line = (r: ExportRow) => [r.hour, r.app, r.appName, r.developer, r.product, r.route, r.statusClass, r.calls].map(csvField).join(',');
  return [CSV_COLUMNS.join(','), ...rows.map(line)].join('\n');
}

/** A JSON array with a row on each line, so that a large export can be read line by line too. */
function json(rows: readonly ExportRow[]): string {
  return rows.length === 0 ? '[]' : `[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]`;
}

/** Each product's summary over each window, from one report of the longest window. */
async function productSummaries(api: AdminApi, product: string | undefined, now: number): Promise<{ product: string; windows: Record<string, UsageSummary> }[]> {
  const longest = Math.max(...SUMMARY_WINDOWS.map((w) => w.ms));
  const rows = await api.usage({ from: now - longest, to: now, ...(product === undefined ? {} : { product }) });
  const declared = product === undefined ? ((await api.products()) ?? []).map((p) => p.name) : [product];
  const names = [...new Set([...declared, ...rows.map((r) => r.product)])].sort();
  return names.map((name) => {
    const mine = rows.filter((r) => r.product === name);
    // A row's hour counts in a window when any of it is inside, as in an export.
    const windows = Object.fromEntries(SUMMARY_WINDOWS.map((w) => [w.name, summarize(mine.filter((r) => r.hour + HOUR_MS > now - w.ms))]));
    return { product: name, windows };
  });
}

const ms = (value: number | undefined) => (value === undefined ? '-' : value < 10 ? value.toFixed(1) : String(Math.round(value)));
const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** The human form: a line per product and window, then a line per product and route. */
function summaryText(summaries: Awaited<ReturnType<typeof productSummaries>>): string {
  const windowRows = summaries.flatMap(({ product, windows }) =>
    Object.entries(windows).map(([window, s]) => ({
      product,
      window,
      calls: String(s.calls),
      '2xx': String(s.byStatus['2xx']),
      '3xx': String(s.byStatus['3xx']),
      '4xx': String(s.byStatus['4xx']),
      '5xx': String(s.byStatus['5xx']),
      errors: percent(s.errorRate),
      'p50 ms': ms(s.p50Ms),
      'p95 ms': ms(s.p95Ms),
    })),
  );
  const routeRows = summaries.flatMap(({ product, windows }) => {
    const [day, month] = [windows['24h']!, windows['30d']!];
    return month.byRoute.map((r) => {
      const today = day.byRoute.find((d) => d.route === r.route);
      return { product, route: r.route, 'calls 24h': String(today?.calls ?? 0), 'errors 24h': String(today?.errors ?? 0), 'calls 30d': String(r.calls), 'errors 30d': String(r.errors) };
    });
  });
  return [
    table(windowRows, ['product', 'window', 'calls', '2xx', '3xx', '4xx', '5xx', 'errors', 'p50 ms', 'p95 ms']),
    '',
    routeRows.length === 0 ? 'no calls in the last 30 days' : table(routeRows, ['product', 'route', 'calls 24h', 'errors 24h', 'calls 30d', 'errors 30d']),
  ].join('\n');
}

export function registerUsage(admin: Command, { leaf, show }: Leaves, io: CliIo): void {
  const usage = leaf<Common & { product?: string }>(
    admin,
    'usage',
    "what each API product's calls came to over the last 24 hours and 30 days: by status class and route, error rate (4xx and 5xx), p50 and p95; `usage export` writes the counts",
    async (api, opts) => {
      const summaries = await productSummaries(api, opts.product, Date.now());
      show(opts, summaries, () => summaryText(summaries));
    },
  ).option('--product <name>', 'only this product');
  leaf<ExportOptions>(usage, 'export', 'write the counts of a range of hours as CSV or JSON (by default the last 24 hours)', async (api, opts) => {
    const format = opts.format ?? (opts.json === true ? 'json' : 'csv');
    if (format !== 'csv' && format !== 'json') throw new AdminError('usage', `--format: csv or json, not "${format}"`);
    const until = timeOption(opts.until, Date.now(), '--until');
    const since = timeOption(opts.since, until - 24 * HOUR_MS, '--since');
    if (since >= until) throw new AdminError('usage', '--since must be before --until');
    if (until - since > MAX_USAGE_RANGE_MS) throw new AdminError('usage', 'an export covers at most 31 days: export each month on its own');
    const query: UsageQuery = {
      from: since,
      to: until,
      ...(opts.app === undefined ? {} : { app: (await api.findApp({ key: opts.app })).id }),
      ...(opts.product === undefined ? {} : { product: opts.product }),
      ...(opts.route === undefined ? {} : { route: opts.route }),
    };
    const counts = await api.usage(query);
    const apps = new Map<string, App>(counts.length === 0 ? [] : (await api.listApps()).map((a) => [a.id, a]));
    const rows = counts.map((c: UsageRow) => {
      const app = apps.get(c.app);
      return { hour: isoDate(c.hour), app: c.app, appName: app?.name ?? '', developer: app?.developerEmail ?? '', product: c.product, route: c.route, statusClass: c.statusClass, calls: c.count };
    });
    // JSON escapes control characters itself; a name stored before names were checked may hold one.
    io.out(format === 'json' ? json(rows) : terminalText(csv(rows)));
  })
    .option('--since <time>', 'from this time on (ISO 8601; default: 24 hours before --until); an hour that began before it counts whole')
    .option('--until <time>', 'up to this time, not included (ISO 8601; default: now); the hour holding it counts whole')
    .option('--format <format>', 'csv (the default; with --json: json) or json')
    .option('--app <key>', "only this app's calls (by one of its keys)")
    .option('--product <name>', "only calls with this product's tokens")
    .option('--route <name>', 'only calls of this route');
}
