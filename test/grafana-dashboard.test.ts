// The Grafana dashboard of docs/grafana imports into any Grafana and queries only what a real
// gateway exports: every metric an expression reads (a panel's, a template variable's, an
// annotation's) is in /metrics on the admin listener, and every label it selects or groups by is
// a label of that metric's series.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bearer, call, startTestGateway, tokenRequest } from './helpers.ts';

const DASHBOARD_FILE = path.join(import.meta.dirname, '..', 'docs', 'grafana', 'gateway-dashboard.json');

interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: GridPos;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string }[];
  panels?: unknown[];
}

interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  __inputs: { name: string; type: string; pluginId: string }[];
  templating: { list: { name: string; type: string; query: string; definition?: string; current?: { value?: string } }[] };
  annotations: { list: { name: string; expr?: string }[] };
  panels: Panel[];
}

const readDashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** A metric an expression reads, and the labels it names for it. */
interface Use {
  metric: string;
  labels: string[];
}

/** PromQL's own words where no `(` follows them: binary operators, modifiers, grouping, constants. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'atan2', 'bool', 'offset', 'inf', 'nan']);
/** The words followed by a list of label names. group_left and group_right may stand without one. */
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

const SPACE = /\s+/y;
const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/y;
/** Grafana's variables: $name, ${name} or ${name:format}, [[name]]. */
const VARIABLE = /\$(?:\{[^}]*\}|\w+)|\[\[[^\]]*\]\]/y;
/** Numbers and durations (0.95, 1e3, 5m, 1h30m). */
const NUMBER = /[0-9.]+(?:[eE][+-]?[0-9]+)?[a-zA-Z0-9]*/y;
/** A range or a subquery: [5m], [$__rate_interval], [1h:1m]. */
const RANGE = /\[[^\]]*\]/y;
const IDENTIFIER = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
/** What follows a function's name, or an aggregation's (`sum (`, `sum by (`). */
const CALL = /\s*(?:(?:by|without)\s*)?\(/y;
const LABEL_LIST = /\s*\(([^)]*)\)/y;
const SELECTOR = /\s*\{((?:[^}"'`]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)*)\}/y;
const MATCHER = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(?:,|$)/y;

/** The label names of a selector's matchers (`route=~"a|b", status="5xx"`); throws on one it cannot read. */
function matcherLabels(body: string): string[] {
  const labels: string[] = [];
  MATCHER.lastIndex = 0;
  while (MATCHER.lastIndex < body.trimEnd().length) {
    const from = MATCHER.lastIndex;
    const m = MATCHER.exec(body);
    if (m === null) throw new Error(`unreadable label matcher at "${body.slice(from)}"`);
    labels.push(m[1]!);
  }
  return labels;
}

/**
 * The metrics a PromQL expression reads: the identifiers that are not PromQL's own words nor a
 * function or an aggregation (followed by `(`, `by (` or `without (`), each with the labels of its
 * selector. Strings, Grafana variables, numbers, durations and
 * ranges are skipped. The labels of a by/without/on/ignoring/group_* clause are given to every
 * metric of the expression: each of the dashboard's expressions reads one family (a histogram's
 * _bucket, or its _sum and _count), so each such label must be a label of every metric read.
 */
function metricsOf(expr: string): Use[] {
  const uses: Use[] = [];
  const grouping: string[] = [];
  let i = 0;
  const take = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = i;
    const m = re.exec(expr);
    if (m !== null) i = re.lastIndex;
    return m;
  };
  const before = (re: RegExp): boolean => {
    re.lastIndex = i;
    return re.test(expr);
  };
  while (i < expr.length) {
    if (take(SPACE) ?? take(STRING) ?? take(VARIABLE) ?? take(NUMBER) ?? take(RANGE)) continue;
    if (before(SELECTOR)) throw new Error(`a selector without a metric name at "${expr.slice(i)}"`);
    const word = take(IDENTIFIER)?.[0];
    if (word === undefined) {
      i++; // an operator, a comma or a parenthesis
    } else if (GROUPING.has(word)) {
      const list = take(LABEL_LIST)?.[1] ?? '';
      grouping.push(...list.split(',').flatMap((l) => (l.trim() === '' ? [] : [l.trim()])));
    } else if (!KEYWORDS.has(word) && !before(CALL)) {
      const selector = take(SELECTOR);
      uses.push({ metric: word, labels: selector === null ? [] : matcherLabels(selector[1]!) });
    }
  }
  return uses.map((use) => ({ metric: use.metric, labels: [...new Set([...use.labels, ...grouping])] }));
}

/** The metrics of a template variable's query: `label_values(selector, label)` reads `label` of the selector's metric. */
function variableMetrics(query: string): Use[] {
  const m = /^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query.trim());
  if (m === null) return metricsOf(query);
  return metricsOf(m[1]!).map((use) => ({ metric: use.metric, labels: [...new Set([...use.labels, m[2]!])] }));
}

/** Every metric the dashboard reads, and where: its panels' targets, its query variables, its annotations. */
function dashboardUses(dashboard: Dashboard): (Use & { where: string })[] {
  return [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricsOf(t.expr).map((use) => ({ ...use, where: `panel "${p.title}" ${t.refId}` })))),
    ...dashboard.templating.list.filter((v) => v.type === 'query').flatMap((v) => variableMetrics(v.definition ?? v.query).map((use) => ({ ...use, where: `variable ${v.name}` }))),
    ...dashboard.annotations.list.flatMap((a) => (a.expr === undefined ? [] : metricsOf(a.expr).map((use) => ({ ...use, where: `annotation "${a.name}"` })))),
  ];
}

/** What one scrape of /metrics holds: the families (`# TYPE name kind`) and the label names of each sample name's series. */
interface Exposition {
  families: Map<string, string>;
  labels: Map<string, Set<string>>;
}

function parseExposition(text: string): Exposition {
  const families = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) families.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line) ?? assert.fail(`not a sample line: ${line}`);
    const names = labels.get(sample[1]!) ?? new Set<string>();
    for (const label of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) names.add(label[1]!);
    labels.set(sample[1]!, names);
  }
  return { families, labels };
}

/**
 * The names a family is queried by. prom-client writes the text format 0.0.4, whose TYPE line
 * names a counter with its _total (so `gateway_requests_total` is queried as is, and
 * `gateway_requests` is nothing); a histogram is queried only as _bucket, _sum and _count.
 */
function sampleNames(family: string, kind: string): string[] {
  if (kind === 'histogram') return [`${family}_bucket`, `${family}_sum`, `${family}_count`];
  if (kind === 'summary') return [family, `${family}_sum`, `${family}_count`];
  return [family];
}

/** Labels Prometheus gives every series of a scrape target. */
const TARGET_LABELS = new Set(['job', 'instance']);

/** The uses this exposition does not answer: a metric it has no family for, a label no series of the metric has. */
function missing(uses: readonly (Use & { where: string })[], exposition: Exposition): string[] {
  const queryable = new Set([...exposition.families].flatMap(([family, kind]) => sampleNames(family, kind)));
  return uses.flatMap(({ metric, labels, where }) => {
    if (!queryable.has(metric)) return [`${where}: ${metric} is not in /metrics`];
    const has = exposition.labels.get(metric) ?? new Set<string>();
    return labels.filter((l) => !TARGET_LABELS.has(l) && !has.has(l)).map((l) => `${where}: ${metric} has no label ${l}`);
  });
}

describe('the Grafana dashboard', () => {
  test('has what a Grafana import needs: a title, a uid, a Prometheus input and datasource variable, panels with unique ids, a place on the grid no other takes, and targets with expr and refId', () => {
    const dashboard = readDashboard();
    assert.equal(dashboard.title, 'Token gateway');
    assert.match(dashboard.uid, /^[a-zA-Z0-9_-]{1,40}$/);
    assert.ok(dashboard.schemaVersion >= 39, `schemaVersion ${dashboard.schemaVersion}`);
    assert.deepEqual(
      dashboard.__inputs.map((input) => [input.name, input.type, input.pluginId]),
      [['DS_PROMETHEUS', 'datasource', 'prometheus']],
    );
    const variables = dashboard.templating.list;
    assert.deepEqual(
      variables.map((v) => [v.name, v.type]),
      [
        ['datasource', 'datasource'],
        ['job', 'query'],
        ['instance', 'query'],
        ['route', 'query'],
        ['upstream', 'query'],
      ],
    );
    assert.deepEqual([variables[0]!.query, variables[0]!.current?.value], ['prometheus', '${DS_PROMETHEUS}']);

    const ids = dashboard.panels.map((p) => p.id);
    assert.ok(
      ids.every((id) => Number.isInteger(id) && id > 0),
      String(ids),
    );
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    const taken = new Map<string, string>();
    const overlaps: string[] = [];
    for (const p of dashboard.panels) {
      assert.ok(typeof p.title === 'string' && p.title !== '', `panel ${p.id} has a title`);
      const { x, y, w, h } = p.gridPos;
      assert.ok([x, y, w, h].every(Number.isInteger) && x >= 0 && y >= 0 && w >= 1 && h >= 1 && x + w <= 24, `panel "${p.title}": gridPos ${JSON.stringify(p.gridPos)}`);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const other = taken.get(`${column},${row}`);
          if (other !== undefined) overlaps.push(`"${p.title}" over "${other}" at ${column},${row}`);
          taken.set(`${column},${row}`, p.title);
        }
      }
      if (p.type === 'row') {
        assert.deepEqual([p.targets, p.panels, w, h], [undefined, [], 24, 1], `row "${p.title}"`);
        continue;
      }
      assert.ok(['timeseries', 'stat', 'heatmap'].includes(p.type), `panel "${p.title}": type ${p.type}`);
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, `panel "${p.title}"`);
      const targets = p.targets ?? [];
      assert.ok(targets.length > 0, `panel "${p.title}" has targets`);
      assert.ok(
        targets.every((t) => typeof t.expr === 'string' && t.expr !== '' && /^[A-Z]$/.test(t.refId)),
        `panel "${p.title}": ${JSON.stringify(targets)}`,
      );
      assert.equal(new Set(targets.map((t) => t.refId)).size, targets.length, `panel "${p.title}": refIds are unique`);
    }
    assert.deepEqual(overlaps, []);

    // Every variable an expression names is the dashboard's or one Grafana sets itself.
    const defined = new Set([...variables.map((v) => v.name), '__rate_interval', '__interval', '__range']);
    const expressions = [...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...variables.map((v) => v.definition ?? ''), ...dashboard.annotations.list.map((a) => a.expr ?? '')];
    const named = expressions.flatMap((expr) => [...expr.matchAll(/\$\{?(\w+)/g)].map((m) => m[1]!));
    assert.deepEqual(
      [...new Set(named)].filter((name) => !defined.has(name)),
      [],
    );
  });

  test('the PromQL reader finds the metrics and the labels named for each; not functions, keywords, strings, variables, numbers or durations', () => {
    assert.deepEqual(metricsOf('histogram_quantile(0.95, sum by (route, le) (rate(gateway_request_duration_seconds_bucket{job=~"$job",route=~"rate|sum(x)"}[$__rate_interval])))'), [
      { metric: 'gateway_request_duration_seconds_bucket', labels: ['job', 'route', 'le'] },
    ]);
    assert.deepEqual(metricsOf('sum(rate(a_total{status="5xx"}[5m] offset 1h)) / sum without (product) (rate(a_total[1h:1m])) > bool 1e3'), [
      { metric: 'a_total', labels: ['status', 'product'] },
      { metric: 'a_total', labels: ['product'] },
    ]);
    assert.deepEqual(metricsOf('min(time() - process_start_time_seconds{instance=~"${instance}"}) * on (job) group_left up'), [
      { metric: 'process_start_time_seconds', labels: ['instance', 'job'] },
      { metric: 'up', labels: ['job'] },
    ]);
    assert.deepEqual(metricsOf('sum by (upstream) (rate(x_count{upstream!~\'a}b\', kind!="c"}[$__range]))'), [{ metric: 'x_count', labels: ['upstream', 'kind'] }]);
    assert.deepEqual(metricsOf('sum(rate(x_total[5m])) by (route) / count(y)'), [
      { metric: 'x_total', labels: ['route'] },
      { metric: 'y', labels: ['route'] },
    ]);
    assert.deepEqual(variableMetrics('label_values(gateway_requests_total{job=~"$job"}, route)'), [{ metric: 'gateway_requests_total', labels: ['job', 'route'] }]);
    assert.throws(() => metricsOf('{__name__=~"gateway_.*"}'), /a selector without a metric name/);
    assert.throws(() => metricsOf('x{route~"a"}'), /unreadable label matcher/);
  });

  test('queries these metrics, and only these', () => {
    const queried = [...new Set(dashboardUses(readDashboard()).map((use) => use.metric))].sort();
    assert.deepEqual(queried, [
      'gateway_config_reloads_total',
      'gateway_refusals_total',
      'gateway_request_duration_seconds_bucket',
      'gateway_request_duration_seconds_count',
      'gateway_request_duration_seconds_sum',
      'gateway_requests_total',
      'gateway_store_errors_total',
      'gateway_tokens_issued_total',
      'gateway_upstream_duration_seconds_bucket',
      'gateway_upstream_duration_seconds_count',
      'gateway_upstream_errors_total',
      'gateway_usage_events_total',
      'nodejs_active_handles',
      'nodejs_eventloop_lag_max_seconds',
      'nodejs_eventloop_lag_p50_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_external_memory_bytes',
      'nodejs_gc_duration_seconds_sum',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_heap_space_size_used_bytes',
      'process_cpu_system_seconds_total',
      'process_cpu_user_seconds_total',
      'process_open_fds',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
    ]);
  });

  test("every metric it reads is in a real gateway's /metrics, with every label it names, and every gateway_* family is on it; a metric or label that is not there is reported", async () => {
    const gw = await startTestGateway();
    try {
      // Calls that leave a series in every family the dashboard reads.
      const app = await gw.client('hello');
      const access = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      const unverified = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
      const status = async (url: string, headers: Record<string, string> = {}) => (await call(`${gw.url}${url}`, { headers })).status;
      assert.equal(await status('/v1/hello', bearer(access)), 200);
      assert.equal(await status('/v1/hello'), 401);
      assert.equal(await status('/v1/nowhere', bearer(access)), 404);
      assert.equal(await status('/v1/backend/1', bearer(access)), 502, 'the backend upstream is down');
      assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, { key: app.key, secret: 'not-the-secret' })).status, 401);
      await gw.gateway.services.store.close();
      assert.equal(await status('/v1/hello', bearer(unverified)), 503, 'a store error on a route');
      assert.equal((await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).status, 503, 'a store error at the token endpoint');

      const res = await call(`${gw.gateway.adminUrl}/metrics`);
      assert.equal(res.status, 200);
      const exposition = parseExposition(res.text);
      // Every sample is named as its family's kind says, so the names derived from the TYPE lines are the ones Prometheus stores.
      const queryable = new Set([...exposition.families].flatMap(([family, kind]) => sampleNames(family, kind)));
      assert.deepEqual(
        [...exposition.labels.keys()].filter((name) => !queryable.has(name)),
        [],
      );
      assert.deepEqual([...exposition.labels.get('gateway_request_duration_seconds_bucket')!].sort(), ['le', 'route']);

      const dashboard = readDashboard();
      const uses = dashboardUses(dashboard);
      assert.deepEqual(missing(uses, exposition), []);
      const read = new Set(uses.map((use) => use.metric));
      assert.deepEqual(
        [...exposition.families].filter(([family, kind]) => family.startsWith('gateway_') && !sampleNames(family, kind).some((name) => read.has(name))).map(([family]) => family),
        [],
        'every gateway_* family has a panel',
      );

      // The same check rejects a panel that reads a metric the gateway does not have, or a label its metric does not have.
      const broken = structuredClone(dashboard);
      broken.panels
        .at(-1)!
        .targets!.push(
          { expr: 'sum by (route) (rate(gateway_no_such_metric{job=~"$job"}[$__rate_interval]))', refId: 'Y' },
          { expr: 'sum by (method) (rate(gateway_requests_total{route=~"$route"}[5m])) + gateway_requests + gateway_request_duration_seconds', refId: 'Z' },
        );
      const last = broken.panels.at(-1)!.title;
      assert.deepEqual(missing(dashboardUses(broken), exposition), [
        `panel "${last}" Y: gateway_no_such_metric is not in /metrics`,
        `panel "${last}" Z: gateway_requests_total has no label method`,
        `panel "${last}" Z: gateway_requests is not in /metrics`,
        `panel "${last}" Z: gateway_request_duration_seconds is not in /metrics`,
      ]);
    } finally {
      await gw.close();
    }
  });
});
