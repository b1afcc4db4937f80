// `gateway admin usage export`: the calls a running gateway counted (real calls over HTTP, two
// apps, 2xx, 4xx and 5xx answers), written as CSV and JSON from the store the config names and,
// with --url, over the management API; the same bytes either way. test/e2e/on-redis.test.ts runs
// it again with the store on Redis.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createManagementClient } from '../../src/admin/management-clients.ts';
import { main } from '../../src/cli/program.ts';
import { bearer, call, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';
import { ALL_SCOPES } from '../management/client.ts';

const HOUR = 3_600_000;
// Every call of the test falls in one hour, two hours ago: within the export's default 24 hours.
const HOUR0 = Math.floor((Date.now() - 2 * HOUR) / HOUR) * HOUR;
const T0 = HOUR0 + 20 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

async function gateway(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, out: out.join('\n'), err: err.filter((line) => !line.startsWith('{"level":')).join('\n') };
}

describe('gateway admin usage export', () => {
  let gw: TestGateway;
  let env: Record<string, string>;
  /** The CSV rows the calls below make, in the export's order (hour, app id, route, status class). */
  let rows: string[][];
  let alphaKey: string;

  before(async () => {
    gw = await startTestGateway({ extra: 'management:\n  port: 0\n' }, { clock: () => T0 });
    const client = await createManagementClient(gw.admin, { name: 'exporter', scopes: ALL_SCOPES });
    env = { GATEWAY_MANAGEMENT_KEY: client.key, GATEWAY_MANAGEMENT_SECRET: client.secret };
    const alpha = await gw.client('hello', 'alpha');
    // A name a spreadsheet would run as a formula, with a comma that CSV must quote.
    const formula = await gw.client('hello', '=SUM(1,2)');
    alphaKey = alpha.key;
    const tokenOf = async (app: { key: string; secret: string }, scope?: string) =>
      (await tokenRequest(gw.url, { grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) }, app)).body.access_token as string;
    const [a, f] = [await tokenOf(alpha), await tokenOf(formula, 'hello:read')];
    const statuses: number[] = [];
    for (const [path, token] of [
      ['/v1/hello', a],
      ['/v1/hello', a],
      ['/v1/hello', a],
      ['/v1/backend/1', a],
      ['/v1/admin', f],
      ['/v1/admin', f],
      ['/v1/hello', f],
    ] as const) {
      statuses.push((await call(`${gw.url}${path}`, { headers: bearer(token) })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 502, 403, 403, 200]);
    await gw.gateway.services.usage.flush();
    const apps = await gw.admin.store.apps.listApps();
    const idOf = (name: string) => apps.find((app) => app.name === name)!.id;
    const hour = iso(HOUR0);
    rows = [
      [hour, idOf('alpha'), 'alpha', 'dev@example.com', 'hello', 'backend', '5xx', '1'],
      [hour, idOf('alpha'), 'alpha', 'dev@example.com', 'hello', 'hello', '2xx', '3'],
      [hour, idOf('=SUM(1,2)'), `"'=SUM(1,2)"`, 'dev@example.com', 'hello', 'admin-only', '4xx', '2'],
      [hour, idOf('=SUM(1,2)'), `"'=SUM(1,2)"`, 'dev@example.com', 'hello', 'hello', '2xx', '1'],
    ].sort((x, y) => (x[1]! < y[1]! ? -1 : x[1]! > y[1]! ? 1 : 0));
  });
  after(() => gw.close());

  const csv = (lines: string[][]) => ['hour,app,app_name,developer,product,route,status_class,calls', ...lines.map((l) => l.join(','))].join('\n');
  const local = (...args: string[]) => gateway(['admin', 'usage', 'export', ...args, '--config', gw.configFile]);
  const remote = (...args: string[]) => gateway(['admin', 'usage', 'export', ...args, '--url', gw.gateway.managementUrl!], env);

  test('CSV by default, of the last 24 hours: calls per app, product, route and status class in each hour, the same over --url', async () => {
    assert.deepEqual(await local(), { code: 0, out: csv(rows), err: '' });
    assert.deepEqual(await remote(), { code: 0, out: csv(rows), err: '' });
  });

  test('--format json, --since and --until (ISO 8601), and the filters --app (a key), --product and --route', async () => {
    const range = ['--since', iso(HOUR0 + 59 * 60_000), '--until', iso(HOUR0 + HOUR)];
    const json = await local('--format', 'json', ...range);
    assert.equal(json.code, 0, json.err);
    assert.deepEqual(
      JSON.parse(json.out),
      rows.map(([hour, app, appName, developer, product, route, statusClass, calls]) => ({
        hour,
        app,
        appName: appName!.replace(/^"'(.*)"$/, '$1'),
        developer,
        product,
        route,
        statusClass,
        calls: Number(calls),
      })),
    );
    assert.equal((await remote('--json', ...range)).out, json.out);
    const alpha = rows.filter((r) => r[2] === 'alpha');
    assert.deepEqual(await local('--app', alphaKey), { code: 0, out: csv(alpha), err: '' });
    assert.deepEqual(await remote('--app', alphaKey), { code: 0, out: csv(alpha), err: '' });
    assert.deepEqual(await local('--route', 'hello'), { code: 0, out: csv(rows.filter((r) => r[5] === 'hello')), err: '' });
    assert.deepEqual(await local('--product', 'orders'), { code: 0, out: csv([]), err: '' });
    // The hour after: nothing; an hour is in when any of it is.
    assert.deepEqual(await local('--since', iso(HOUR0 + HOUR), '--until', iso(HOUR0 + 2 * HOUR)), { code: 0, out: csv([]), err: '' });
    assert.deepEqual(await local('--format', 'json', '--since', '2026-01-01', '--until', '2026-01-02'), { code: 0, out: '[]', err: '' });
  });

  test('gateway admin usage: each product over the last 24 hours and 30 days, by status class and route, error rate, p50 and p95; the same over --url', async () => {
    const summary = await gateway(['admin', 'usage', '--config', gw.configFile, '--json']);
    assert.equal(summary.code, 0, summary.err);
    const products = JSON.parse(summary.out) as {
      product: string;
      windows: Record<string, { calls: number; byStatus: Record<string, number>; byRoute: unknown; errorRate: number; p50Ms: number; p95Ms: number }>;
    }[];
    assert.deepEqual(
      products.map((p) => p.product),
      ['hello', 'orders'],
    );
    const hello = products[0]!.windows;
    for (const window of ['24h', '30d']) {
      const s = hello[window]!;
      assert.deepEqual(
        [s.calls, s.byStatus, s.byRoute, s.errorRate],
        [
          7,
          { '1xx': 0, '2xx': 4, '3xx': 0, '4xx': 2, '5xx': 1 },
          [
            { route: 'hello', calls: 4, errors: 0 },
            { route: 'admin-only', calls: 2, errors: 2 },
            { route: 'backend', calls: 1, errors: 1 },
          ],
          3 / 7,
        ],
      );
      assert.ok(s.p50Ms > 0 && s.p95Ms >= s.p50Ms, `${s.p50Ms} ${s.p95Ms}`);
    }
    assert.deepEqual(products[1]!.windows['30d']!.calls, 0);
    const human = await gateway(['admin', 'usage', '--config', gw.configFile]);
    assert.match(
      human.out,
      /^PRODUCT +WINDOW +CALLS +2XX +3XX +4XX +5XX +ERRORS +P50 MS +P95 MS\nhello +24h +7 +4 +0 +2 +1 +42\.9% +[\d.]+ +[\d.]+\nhello +30d +7 +4 +0 +2 +1 +42\.9% +[\d.]+ +[\d.]+\norders +24h +0 +0 +0 +0 +0 +0\.0% +- +-\norders +30d +0 +0 +0 +0 +0 +0\.0% +- +-\n\nPRODUCT +ROUTE +CALLS 24H +ERRORS 24H +CALLS 30D +ERRORS 30D\nhello +hello +4 +0 +4 +0\nhello +admin-only +2 +2 +2 +2\nhello +backend +1 +1 +1 +1$/,
    );
    assert.deepEqual(await gateway(['admin', 'usage', '--url', gw.gateway.managementUrl!, '--json'], env), summary);
    assert.deepEqual(
      JSON.parse((await gateway(['admin', 'usage', '--config', gw.configFile, '--product', 'orders', '--json'])).out).map((p: { product: string }) => p.product),
      ['orders'],
    );
  });

  test('a bad time, range or format: a clear error and exit code 1, on the store and over --url', async () => {
    for (const run of [local, remote]) {
      assert.deepEqual(await run('--since', 'yesterday'), {
        code: 1,
        out: '',
        err: 'error: --since: an ISO 8601 date (2026-12-01) or a date-time with its zone (2026-12-01T09:00:00Z, 2026-12-01T10:00+01:00), not "yesterday"',
      });
      assert.deepEqual(await run('--until', '2026-12-01T10:00:00'), {
        code: 1,
        out: '',
        err: 'error: --until: an ISO 8601 date (2026-12-01) or a date-time with its zone (2026-12-01T09:00:00Z, 2026-12-01T10:00+01:00), not "2026-12-01T10:00:00"',
      });
      assert.deepEqual(await run('--since', '2026-12-02', '--until', '2026-12-01'), { code: 1, out: '', err: 'error: --since must be before --until' });
      assert.deepEqual(await run('--since', '2026-10-01', '--until', '2026-11-02'), { code: 1, out: '', err: 'error: an export covers at most 31 days: export each month on its own' });
      assert.deepEqual(await run('--format', 'xml'), { code: 1, out: '', err: 'error: --format: csv or json, not "xml"' });
      assert.deepEqual(await run('--app', 'no-such-key'), { code: 1, out: '', err: 'error: no app with key no-such-key' });
    }
  });
});
