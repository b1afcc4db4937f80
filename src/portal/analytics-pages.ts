// An app's analytics (/apps/<id>/analytics), for its developer: the calls made with its tokens over
// the last 24 hours and 30 days (src/admin/usage.ts's SUMMARY_WINDOWS, summarized as `gateway admin
// usage` summarizes a product's): the calls, the error rate, p50 and p95, a chart of the calls per
// hour or per day by status class, and the same numbers as tables, which screen readers read.
import { SUMMARY_WINDOWS, summarize, type UsageRow, type UsageSummary } from '../admin/usage.ts';
import { LATENCY_BOUNDS_MS, type App, type StatusClass } from '../store/port/index.ts';
import { HOUR_MS } from '../usage.ts';
import { html, type Html } from '../html.ts';
import { dateTime, layout, plural, type Frame } from './pages.ts';

const DAY_MS = 24 * HOUR_MS;

type WindowName = (typeof SUMMARY_WINDOWS)[number]['name'];

/**
 * How a window is charted: a bar per hour over a day, per day (UTC) over a month; an axis label
 * every `step` bars from the first, and under the last.
 */
const CHARTS: Readonly<Record<WindowName, { title: string; bar: number; per: 'hour' | 'day'; step: number; label: (start: number) => string; row: (start: number) => string }>> = {
  '24h': { title: 'Last 24 hours', bar: HOUR_MS, per: 'hour', step: 6, label: (t) => new Date(t).toISOString().slice(11, 16), row: (t) => new Date(t).toISOString().slice(0, 16).replace('T', ' ') },
  '30d': {
    title: 'Last 30 days',
    bar: DAY_MS,
    per: 'day',
    step: 7,
    label: (t) => new Date(t).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' }),
    row: (t) => new Date(t).toISOString().slice(0, 10),
  },
};

const CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];
/** What each status class means to a developer; 1xx and 3xx are shown only when some call was answered so. */
const CLASS_NAMES: Readonly<Record<StatusClass, string>> = { '1xx': 'informational', '2xx': 'success', '3xx': 'redirect', '4xx': 'refused', '5xx': 'failed' };
const ALWAYS_SHOWN: ReadonlySet<StatusClass> = new Set(['2xx', '4xx', '5xx']);

/** The calls that began in one bar's hour or day (`start`: epoch ms), by status class. */
export interface Bar {
  start: number;
  calls: number;
  byStatus: Record<StatusClass, number>;
}

export interface AnalyticsWindow {
  name: WindowName;
  /** The start of the first hour counted: the hour that holds the window's start. */
  from: number;
  summary: UsageSummary;
  /** From the hour or day of `from` to the current one: a day's window has 25 hours, a month's 31 days, the first and last partly. */
  bars: Bar[];
}

/** Each window of SUMMARY_WINDOWS, ending `now`, from one report of the longest (`usageReport` of the app). */
export function analyticsWindows(rows: readonly UsageRow[], now: number): AnalyticsWindow[] {
  return SUMMARY_WINDOWS.map(({ name, ms }) => {
    // A row's hour counts in a window when any of it is inside, as `gateway admin usage` counts it.
    const inside = rows.filter((r) => r.hour + HOUR_MS > now - ms && r.hour <= now);
    const from = now - ms - ((now - ms) % HOUR_MS);
    const size = CHARTS[name].bar;
    const first = from - (from % size);
    const bars = Array.from(
      { length: (now - (now % size) - first) / size + 1 },
      (_, i): Bar => ({ start: first + i * size, calls: 0, byStatus: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } }),
    );
    for (const r of inside) {
      const bar = bars[Math.floor((r.hour - first) / size)]!;
      bar.calls += r.count;
      bar.byStatus[r.statusClass] += r.count;
    }
    return { name, from, summary: summarize(inside), bars };
  });
}

const NBSP = '\u00a0';
const count = (n: number) => n.toLocaleString('en');

/** A share as people read it, 42.9 %; one that one decimal would round to none or all reads "< 0.1 %" or "> 99.9 %". */
export function percent(share: number): string {
  if (share > 0 && share < 0.0005) return `<${NBSP}0.1${NBSP}%`;
  if (share < 1 && share > 0.9995) return `>${NBSP}99.9${NBSP}%`;
  return `${(share * 100).toFixed(1)}${NBSP}%`;
}

/**
 * A duration read from the buckets: 0.8 ms, 42 ms, 1.3 s. The slowest bucket has no upper bound,
 * and a percentile in it reads as the last bound (src/admin/usage.ts's percentile): "10 s or more".
 */
export function duration(ms: number): string {
  const last = LATENCY_BOUNDS_MS.at(-1)!;
  if (ms >= last) return `${last / 1000}${NBSP}s or more`;
  if (ms < 9.95) return `${ms.toFixed(1)}${NBSP}ms`;
  if (ms < 999.5) return `${Math.round(ms)}${NBSP}ms`;
  return `${(ms / 1000).toFixed(1)}${NBSP}s`;
}

/** The status classes a window shows: 2xx, 4xx and 5xx always, 1xx and 3xx when some call was answered so. */
const shownClasses = (w: AnalyticsWindow) => CLASSES.filter((c) => ALWAYS_SHOWN.has(c) || w.summary.byStatus[c] > 0);

export function analyticsPage(frame: Frame, app: App, windows: readonly AnalyticsWindow[]): Html {
  return layout(
    frame,
    `Analytics of ${app.name}`,
    html`<h1>Analytics of <q>${app.name}</q></h1>
<p><a href="/apps/${app.id}">Back to the app</a></p>
<p>The calls made with the app's tokens, refused ones included, over the last 24 hours and the last 30 days, counted by the hour (UTC): an hour counts whole when any of it is in the window. Calls arrive here within 5 seconds.</p>
<p class="hint">2xx: success. 4xx: refused, because of the call or its token (401, 403, 404, 429…). 5xx: failed, at the gateway or the API behind it (502, 503, 504…). The error rate is the share of calls answered 4xx or 5xx; p50 and p95 are the durations half and 95 in 100 of the calls took at most.</p>
<ul class="jump">${windows.map((w) => html`<li><a href="#window-${w.name}">${CHARTS[w.name].title}</a></li>`)}</ul>
${PATTERNS}
${windows.map(windowSection)}`,
  );
}

function windowSection(w: AnalyticsWindow): Html {
  const { title } = CHARTS[w.name];
  const s = w.summary;
  const heading = html`<h2 id="window-${w.name}">${title}</h2>`;
  if (s.calls === 0) return html`<section aria-labelledby="window-${w.name}">${heading}<p id="no-calls-${w.name}">No calls with the app's tokens since ${dateTime(w.from)}.</p></section>`;
  const figure = (id: string, name: string, hint: string, value: string) => html`<div><dt>${name} <span class="hint">${hint}</span></dt><dd id="${id}-${w.name}">${value}</dd></div>`;
  const measured = (ms: number | undefined) => (ms === undefined ? 'not measured' : duration(ms));
  return html`<section aria-labelledby="window-${w.name}">
${heading}
<dl class="figures">
${figure('calls', 'Calls', `since ${dateTime(w.from)}`, count(s.calls))}
${figure('error-rate', 'Error rate', 'answered 4xx or 5xx', percent(s.errorRate))}
${figure('p50', 'p50', 'half the calls took at most', measured(s.p50Ms))}
${figure('p95', 'p95', '95 in 100 took at most', measured(s.p95Ms))}
</dl>
${chart(w)}
${statusTable(w)}
${routeTable(w)}
</section>`;
}

/** Each class's hatching in a 6 × 6 tile: 2xx plain, 4xx one diagonal, 5xx two crossed, 1xx lines across, 3xx lines down. */
const HATCHES: Readonly<Record<StatusClass, string>> = {
  '1xx': 'M0 3h6',
  '2xx': '',
  '3xx': 'M3 0v6',
  '4xx': 'M-1 1l2-2M0 6l6-6M5 7l2-2',
  '5xx': 'M-1 1l2-2M0 6l6-6M5 7l2-2M-1 5l2 2M0 0l6 6M5-1l2 2',
};

/**
 * The fills of the status classes: a colour each and, so that a reader need not tell colours
 * apart, a hatching each but 2xx's, the same in the legend's swatches. Defined once for the page.
 */
const PATTERNS = html`<svg class="chart-fills" aria-hidden="true" focusable="false"><defs>${CLASSES.map(
  (c) =>
    html`<pattern id="fill-${c}" patternUnits="userSpaceOnUse" width="6" height="6"><rect width="6" height="6" class="fill-${c}"/>${HATCHES[c] === '' ? '' : html`<path d="${HATCHES[c]}" class="hatch"/>`}</pattern>`,
)}</defs></svg>`;

/** The name of the table of a chart's numbers, which the chart's title points to. */
const tableName = (w: AnalyticsWindow) => `Calls per ${CHARTS[w.name].per}, ${CHARTS[w.name].title.toLowerCase()}`;

/**
 * The window's calls per hour or day, stacked by status class from the bottom. The bars are an
 * SVG stretched to the figure's width; its labels are HTML around it, so that they keep the
 * stylesheet's size at any width (text inside a scaled SVG shrinks with it). The SVG is an image
 * whose name points to the table of its numbers, which follows it.
 */
function chart(w: AnalyticsWindow): Html {
  const { per, step, label, row } = CHARTS[w.name];
  const shown = shownClasses(w);
  const max = Math.max(...w.bars.map((b) => b.calls));
  const [bar, height, width] = [20, 100, w.bars.length * 20];
  const last = w.bars.length - 1;
  // Heights of the running totals, so that a bar's parts add up to its height whatever the rounding.
  const up = (n: number) => Math.round((n / max) * height * 100) / 100;
  const barOf = (b: Bar, i: number) => {
    let below = 0;
    const parts = shown
      .filter((c) => b.byStatus[c] > 0)
      .map((c) => {
        const bottom = up(below);
        below += b.byStatus[c];
        const top = up(below);
        return html`<rect x="${i * bar + 2}" y="${height - top}" width="${bar - 4}" height="${Math.round((top - bottom) * 100) / 100}" fill="url(#fill-${c})" data-class="${c}" data-count="${b.byStatus[c]}"/>`;
      });
    const detail = shown.filter((c) => b.byStatus[c] > 0).map((c) => `${count(b.byStatus[c])} ${c}`);
    return html`<g class="bar" data-start="${new Date(b.start).toISOString()}" data-count="${b.calls}"><title>${row(b.start)} UTC: ${plural(b.calls, 'call')}${detail.length === 0 ? '' : ` (${detail.join(', ')})`}</title>${parts}</g>`;
  };
  return html`<figure class="chart">
<p class="label chart-max" aria-hidden="true">${plural(max, 'call')}</p>
<svg viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" role="img" aria-labelledby="chart-${w.name}-title">
<title id="chart-${w.name}-title">Calls per ${per} by status class, as bars: the table “${tableName(w)}” after the chart has their numbers.</title>
<line x1="0" y1="${height}" x2="${width}" y2="${height}" class="axis" vector-effect="non-scaling-stroke"/>
${w.bars.map(barOf)}
</svg>
<ol class="chart-axis" aria-hidden="true">${w.bars.map((b, i) => html`<li>${i === last || (i % step === 0 && last - i >= step / 2) ? html`<span class="label">${label(b.start)}</span>` : ''}</li>`)}</ol>
<ul class="legend" aria-hidden="true">${shown.map((c) => html`<li><svg class="swatch" viewBox="0 0 12 12"><rect width="12" height="12" fill="url(#fill-${c})"/></svg> ${c} ${CLASS_NAMES[c]}</li>`)}</ul>
<figcaption>Calls per ${per} (UTC) since ${dateTime(w.from)}, by status class from the bottom up: at most ${plural(max, 'call')} in ${per === 'hour' ? 'an hour' : 'a day'}.</figcaption>
</figure>
${numbersTable(w, shown)}`;
}

/** The chart's numbers, a row per bar: in a disclosure, open to anyone, which screen readers announce. */
function numbersTable(w: AnalyticsWindow, shown: readonly StatusClass[]): Html {
  const { per, row } = CHARTS[w.name];
  return html`<details class="numbers">
<summary>The chart's numbers</summary>
<table class="numbers" id="per-${per}-${w.name}">
<caption>${tableName(w)}</caption>
<thead><tr><th scope="col">${per === 'hour' ? 'Hour' : 'Day'} (UTC)</th>${shown.map((c) => html`<th scope="col">${c}</th>`)}<th scope="col">Calls</th></tr></thead>
<tbody>
${w.bars.map((b) => html`<tr><th scope="row">${row(b.start)}</th>${shown.map((c) => html`<td>${count(b.byStatus[c])}</td>`)}<td>${count(b.calls)}</td></tr>`)}
</tbody>
</table>
</details>`;
}

function statusTable(w: AnalyticsWindow): Html {
  const s = w.summary;
  return html`<h3 id="status-${w.name}">By status class</h3>
<table class="numbers" id="by-status-${w.name}" aria-labelledby="window-${w.name} status-${w.name}">
<thead><tr><th scope="col">Status class</th><th scope="col">Calls</th><th scope="col">Share</th></tr></thead>
<tbody>
${shownClasses(w).map((c) => html`<tr><th scope="row">${c} ${CLASS_NAMES[c]}</th><td>${count(s.byStatus[c])}</td><td>${percent(s.byStatus[c] / s.calls)}</td></tr>`)}
</tbody>
</table>`;
}

/** The routes the app called, the busiest first. */
function routeTable(w: AnalyticsWindow): Html {
  return html`<h3 id="routes-${w.name}">By route</h3>
<table class="numbers" id="by-route-${w.name}" aria-labelledby="window-${w.name} routes-${w.name}">
<thead><tr><th scope="col">Route</th><th scope="col">Calls</th><th scope="col">Errors</th><th scope="col">Error rate</th></tr></thead>
<tbody>
${w.summary.byRoute.map((r) => html`<tr><th scope="row"><code>${r.route}</code></th><td>${count(r.calls)}</td><td>${count(r.errors)}</td><td>${percent(r.errors / r.calls)}</td></tr>`)}
</tbody>
</table>`;
}
