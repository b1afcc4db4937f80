// An app's analytics (/apps/<id>/analytics, issue 34 item 4): how the windows group the hours, how
// the numbers are written, and, over real HTTP, a gateway serving the app's calls (answered, refused
// for a missing scope, failed at a down upstream) three days ago and now, and the page showing them
// for the last 24 hours and 30 days, to the app's developer only. test/browser/new-user.test.ts
// checks the page's layout in Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { UsageRow } from '../../src/admin/usage.ts';
import type { StatusClass } from '../../src/store/port/index.ts';
import { analyticsWindows, duration, percent } from '../../src/portal/analytics-pages.ts';
import { bearer, call, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';
import { signUpAndConfirm, startMailbox, type Mailbox } from './mailbox.ts';
import { Visitor, type Page } from './visitor.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const row = (hour: number, statusClass: StatusClass, count: number): UsageRow => ({ hour, app: 'a1', product: 'p', route: 'r', statusClass, count, latency: [] });

describe('analytics: windows and numbers', () => {
  test('an hour counts in a window when any of it is inside: a day has 25 bars of an hour, a month 31 of a day (UTC), the first and last partly', () => {
    const now = Date.UTC(2026, 4, 15, 10, 30);
    const rows = [
      row(Date.UTC(2026, 3, 15, 9), '2xx', 8), // ends 30 days and 30 minutes before now: in neither
      row(Date.UTC(2026, 3, 15, 10), '5xx', 4), // holds now - 30 days
      row(Date.UTC(2026, 4, 14, 9), '4xx', 2), // ends 30 minutes before now - 24 hours
      row(Date.UTC(2026, 4, 14, 10), '2xx', 1), // holds now - 24 hours
      row(Date.UTC(2026, 4, 15, 10), '2xx', 16), // the current hour
    ];
    const [day, month] = analyticsWindows(rows, now);
    assert.equal(day!.name, '24h');
    assert.equal(day!.from, Date.UTC(2026, 4, 14, 10));
    assert.equal(day!.summary.calls, 17);
    assert.equal(day!.bars.length, 25);
    assert.deepEqual(day!.bars[0], { start: Date.UTC(2026, 4, 14, 10), calls: 1, byStatus: { '1xx': 0, '2xx': 1, '3xx': 0, '4xx': 0, '5xx': 0 } });
    assert.equal(day!.bars[24]!.start, Date.UTC(2026, 4, 15, 10));
    assert.equal(day!.bars[24]!.calls, 16);
    assert.equal(
      day!.bars.reduce((sum, b) => sum + b.calls, 0),
      17,
      'the bars add up to the window',
    );

    assert.equal(month!.name, '30d');
    assert.equal(month!.from, Date.UTC(2026, 3, 15, 10));
    assert.deepEqual(month!.summary.byStatus, { '1xx': 0, '2xx': 17, '3xx': 0, '4xx': 2, '5xx': 4 });
    assert.equal(month!.bars.length, 31);
    assert.deepEqual(month!.bars[0], { start: Date.UTC(2026, 3, 15), calls: 4, byStatus: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 4 } });
    assert.deepEqual(
      month!.bars.filter((b) => b.calls > 0).map((b) => [new Date(b.start).toISOString().slice(0, 10), b.calls]),
      [
        ['2026-04-15', 4],
        ['2026-05-14', 3],
        ['2026-05-15', 16],
      ],
    );
  });

  test('numbers as people read them: shares to one decimal, never rounded to none or all; durations in ms or s', () => {
    const plain = (text: string) => text.replaceAll('\u00a0', ' ');
    assert.deepEqual([0, 0.4, 3 / 8, 1, 0.0001, 0.99999].map(percent).map(plain), ['0.0 %', '40.0 %', '37.5 %', '100.0 %', '< 0.1 %', '> 99.9 %']);
    assert.deepEqual([0.42, 3.2, 9.96, 42.4, 999.4, 1300, 9999, 10_000].map(duration).map(plain), ['0.4 ms', '3.2 ms', '10 ms', '42 ms', '999 ms', '1.3 s', '10.0 s', '10 s or more']);
  });
});

const PRODUCTS = `
  metered:
    displayName: Metered API
    description: Hello, a route for admins, and a backend that is down.
    routes: [hello, admin-only, backend]
    scopes: [hello:read, hello:admin]
    portal: true
`;
const PASSWORD = 'correct horse battery';

/** The text a reader sees of some HTML: tags out, entities decoded, whitespace (no-break spaces too) as one space. */
const textOf = (fragment: string) =>
  fragment
    .replace(/<[^>]+>/g, '')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The rows of the page's table with this id, each the text of its cells (header row first). */
function tableRows(page: Page, id: string): string[][] {
  const table = new RegExp(`<table [^>]*id="${id}"[^>]*>([\\s\\S]*?)</table>`).exec(page.text)?.[1];
  assert.ok(table !== undefined, `no table #${id}`);
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map(([, tr]) => [...tr!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map(([, cell]) => textOf(cell!)));
}

/** The text of the page's element with this id (one without elements inside). */
function textById(page: Page, id: string): string {
  const found = new RegExp(`id="${id}">([^<]*)<`).exec(page.text)?.[1];
  assert.ok(found !== undefined, `no #${id}`);
  return textOf(found);
}

/** A duration as the page writes it (3.2 ms, 42 ms, 1.3 s), in ms. */
function milliseconds(text: string): number {
  const m = /^(\d+(?:\.\d)?) (ms|s)$/.exec(text);
  assert.ok(m !== null, `"${text}" is a duration in ms or s`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

describe('portal: an app’s analytics', () => {
  let gw: TestGateway;
  let base: string;
  let mailbox: Mailbox;
  let now = Date.now();
  let developers = 0;

  before(async () => {
    mailbox = await startMailbox();
    gw = await startTestGateway({ products: PRODUCTS, listen: '  trustedProxies: [127.0.0.1]\n', extra: `portal:\n  listen: { port: 0 }\n  signup: open\n${mailbox.yaml}` }, { clock: () => now });
    base = gw.gateway.portalUrl!;
  });
  after(async () => {
    await gw?.close();
    await mailbox?.close();
  });

  function signUp(): Promise<{ visitor: Visitor; email: string }> {
    const n = ++developers;
    return signUpAndConfirm(base, mailbox, { email: `analyst${n}@example.com`, name: `Analyst ${n}`, password: PASSWORD, clientIp: `198.51.100.${n}` });
  }

  async function register(visitor: Visitor, name: string): Promise<{ id: string; key: string; secret: string }> {
    const page = await visitor.follow(await visitor.submit('/apps/new', '/apps', { name, product: 'metered' }));
    const key = /id="app-key">([^<]+)</.exec(page.text)?.[1];
    const secret = /id="app-secret">([^<]+)</.exec(page.text)?.[1];
    const id = /href="\/apps\/([^"]+)">Go to the app/.exec(page.text)?.[1];
    assert.ok(key && secret && id, page.text);
    return { id, key, secret };
  }

  /** Calls made with a token of the app's that lacks hello:admin, each path expecting its status. */
  async function callsWith(app: { key: string; secret: string }, calls: readonly [path: string, status: number][]): Promise<void> {
    const issued = await tokenRequest(gw.url, { grant_type: 'client_credentials', scope: 'hello:read' }, app);
    assert.equal(issued.status, 200, issued.text);
    for (const [path, status] of calls) assert.equal((await call(`${gw.url}${path}`, { headers: bearer(issued.body.access_token) })).status, status, path);
  }

  test('the last 24 hours and 30 days: calls by status class and route, the error rate, p50 ≤ p95, the chart’s numbers per hour and day; the app page links to it', async () => {
    const { visitor } = await signUp();
    const app = await register(visitor, 'Metered app');
    const today = Date.now();
    // Three days ago: in the last 30 days, not in the last 24 hours.
    now = today - 3 * DAY;
    await callsWith(app, [
      ['/v1/hello', 200],
      ['/v1/hello', 200],
      ['/v1/admin', 403],
    ]);
    now = today;
    await callsWith(app, [
      ['/v1/hello', 200],
      ['/v1/hello', 200],
      ['/v1/hello', 200],
      ['/v1/admin', 403], // insufficient_scope: the token has hello:read only
      ['/v1/backend/1', 502], // the backend upstream is down (127.0.0.1:9)
    ]);
    await gw.gateway.services.usage.flush();

    const page = await visitor.get(`/apps/${app.id}/analytics`);
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /<h1>Analytics of <q>Metered app<\/q><\/h1>/);

    assert.equal(textById(page, 'calls-24h'), '5');
    assert.equal(textById(page, 'error-rate-24h'), '40.0 %');
    assert.deepEqual(tableRows(page, 'by-status-24h'), [
      ['Status class', 'Calls', 'Share'],
      ['2xx success', '3', '60.0 %'],
      ['4xx refused', '1', '20.0 %'],
      ['5xx failed', '1', '20.0 %'],
    ]);
    assert.deepEqual(tableRows(page, 'by-route-24h'), [
      ['Route', 'Calls', 'Errors', 'Error rate'],
      ['hello', '3', '0', '0.0 %'],
      ['admin-only', '1', '1', '100.0 %'],
      ['backend', '1', '1', '100.0 %'],
    ]);

    assert.equal(textById(page, 'calls-30d'), '8');
    assert.equal(textById(page, 'error-rate-30d'), '37.5 %');
    assert.deepEqual(tableRows(page, 'by-status-30d'), [
      ['Status class', 'Calls', 'Share'],
      ['2xx success', '5', '62.5 %'],
      ['4xx refused', '2', '25.0 %'],
      ['5xx failed', '1', '12.5 %'],
    ]);
    assert.deepEqual(tableRows(page, 'by-route-30d'), [
      ['Route', 'Calls', 'Errors', 'Error rate'],
      ['hello', '5', '0', '0.0 %'],
      ['admin-only', '2', '2', '100.0 %'],
      ['backend', '1', '1', '100.0 %'],
    ]);

    // The durations are real: their form and order, not their values.
    for (const window of ['24h', '30d']) {
      const [p50, p95] = [milliseconds(textById(page, `p50-${window}`)), milliseconds(textById(page, `p95-${window}`))];
      assert.ok(p50 > 0 && p50 <= p95, `${window}: p50 ${p50} ms ≤ p95 ${p95} ms`);
    }

    // The charts' numbers: a row per hour (25: the hour holding now - 24 hours to this one), per day (31).
    const hour = new Date(today - (today % HOUR)).toISOString().slice(0, 16).replace('T', ' ');
    const hours = tableRows(page, 'per-hour-24h');
    assert.deepEqual(hours[0], ['Hour (UTC)', '2xx', '4xx', '5xx', 'Calls']);
    assert.equal(hours.length, 1 + 25);
    assert.deepEqual(
      hours.filter((r) => r.at(-1) !== '0'),
      [hours[0], [hour, '3', '1', '1', '5']],
    );
    const days = tableRows(page, 'per-day-30d');
    assert.equal(days.length, 1 + 31);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    assert.deepEqual(
      days.filter((r) => r.at(-1) !== '0'),
      [days[0], [day(today - 3 * DAY), '2', '1', '0', '3'], [day(today), '3', '1', '1', '5']],
    );
    assert.match(page.text, new RegExp(`<g class="bar" data-start="${new Date(today - (today % HOUR)).toISOString()}" data-count="5">`), 'the chart has the hour');
    // The chart is an image named after the table of its numbers.
    assert.match(
      page.text,
      /<svg viewBox="0 0 500 100" preserveAspectRatio="none" role="img" aria-labelledby="chart-24h-title">\n<title id="chart-24h-title">Calls per hour by status class, as bars: the table “Calls per hour, last 24 hours” after the chart has their numbers\.<\/title>/,
    );
    assert.match(page.text, /<caption>Calls per hour, last 24 hours<\/caption>/);

    const appPage = await visitor.get(`/apps/${app.id}`);
    assert.match(textOf(appPage.text), /In the last 24 hours: 5 calls, 40\.0 % of them answered 4xx or 5xx\./);
    assert.match(appPage.text, new RegExp(`<a href="/apps/${app.id}/analytics" id="analytics-link">Analytics</a>`));
  });

  test('an app without calls says so for each window; another developer gets 404, a visitor is sent to log in', async () => {
    const { visitor } = await signUp();
    const app = await register(visitor, 'Quiet app');
    const page = await visitor.get(`/apps/${app.id}/analytics`);
    assert.equal(page.status, 200);
    assert.match(textById(page, 'no-calls-24h'), /^No calls with the app's tokens since \d{4}-\d{2}-\d{2} \d{2}:00 UTC\.$/);
    assert.match(textById(page, 'no-calls-30d'), /^No calls with the app's tokens since/);
    assert.doesNotMatch(page.text, /<figure/);
    assert.match(textOf((await visitor.get(`/apps/${app.id}`)).text), /No calls with its tokens in the last 24 hours\./);

    const other = await signUp();
    const refused = await other.visitor.get(`/apps/${app.id}/analytics`);
    assert.equal(refused.status, 404);
    assert.match(refused.text, /<h1>Not found<\/h1>/);
    assert.doesNotMatch(refused.text, /Quiet app/);

    const anonymous = await new Visitor(base).get(`/apps/${app.id}/analytics`);
    assert.equal(anonymous.status, 303);
    assert.equal(anonymous.headers.get('location'), '/login');
  });
});
