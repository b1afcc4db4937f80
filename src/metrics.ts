// Prometheus metrics (prom-client), one set per thread, kept across reloads. Every label takes
// its values from the config or from fixed lists (route, product, status class, policy, error
// code, upstream, grant): never an app, a key, a token or a raw path, so no series grows with traffic.
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Histogram,
  Registry,
  type CounterConfiguration,
  type HistogramConfiguration,
  type LabelValues,
  type MetricObjectWithValues,
  type MetricValue,
  type MetricValueWithName,
} from 'prom-client';
import type { GatewayError } from './errors.ts';
import { StoreUnavailable } from './store/port/index.ts';

/** Seconds: from a cached call through the proxy (well under a millisecond) to a slow upstream. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** The series of these label values (in `names` order), made by `make` the first time and kept. */
function seriesOf<S>(known: Map<string, S>, names: readonly string[], values: readonly string[], make: (labels: Readonly<Record<string, string>>) => S): S {
  const key = values.join('\u0000');
  let series = known.get(key);
  if (series === undefined) {
    series = make(Object.fromEntries(names.map((n, i) => [n, values[i] ?? ''])));
    known.set(key, series);
  }
  return series;
}

/**
 * One series of a PlainCounter: the request path finds it once, keeps it, and adds to a number.
 * prom-client's own inc() hashes and validates the labels on every call, a microsecond a request.
 */
export class CounterSeries {
  value = 0;
  readonly labels: Readonly<Record<string, string>>;
  readonly #counted: CounterSeries[];
  constructor(labels: Readonly<Record<string, string>>, counted: CounterSeries[]) {
    this.labels = labels;
    this.#counted = counted;
  }
  inc(): void {
    // Shown from its first count on, as prom-client shows a series from its first inc().
    if (this.value++ === 0) this.#counted.push(this);
  }
}

/** A counter whose series are CounterSeries; prom-client formats them when scraped, in the order they were first counted. */
export class PlainCounter<L extends string> extends Counter<L> {
  readonly #series = new Map<string, CounterSeries>();
  readonly #counted: CounterSeries[] = [];
  readonly #names: readonly L[];

  constructor(config: CounterConfiguration<L> & { labelNames: readonly L[] }) {
    super(config);
    this.#names = config.labelNames;
  }

  /** The series of these label values (in labelNames order), the same one for every caller. */
  series(...values: string[]): CounterSeries {
    return seriesOf(this.#series, this.#names, values, (labels) => new CounterSeries(labels, this.#counted));
  }

  override async get(): Promise<MetricObjectWithValues<MetricValue<L>>> {
    super.reset();
    for (const s of this.#counted) this.inc(s.labels as LabelValues<L>, s.value);
    return super.get();
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    if (#counted in this) {
      for (const s of this.#counted) s.value = 0;
      this.#counted.length = 0;
    }
    super.reset();
  }
}

/** One series of a PlainHistogram: counts per bucket (not cumulative; the last is above every bound), sum and count. */
export class HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  readonly #bounds: readonly number[];
  readonly #observed: HistogramSeries[];
  constructor(labels: Readonly<Record<string, string>>, bounds: readonly number[], observed: HistogramSeries[]) {
    this.labels = labels;
    this.counts = new Float64Array(bounds.length + 1);
    this.#bounds = bounds;
    this.#observed = observed;
  }
  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    if (this.count++ === 0) this.#observed.push(this);
  }
}

/**
 * A histogram whose series are HistogramSeries, exposed exactly as prom-client exposes its own:
 * per series the cumulative buckets (le first among the labels), +Inf, _sum and _count.
 */
export class PlainHistogram<L extends string> extends Histogram<L> {
  readonly #series = new Map<string, HistogramSeries>();
  readonly #observed: HistogramSeries[] = [];
  readonly #names: readonly L[];
  readonly #bounds: readonly number[];
  readonly #config: HistogramConfiguration<L>;

  constructor(config: HistogramConfiguration<L> & { labelNames: readonly L[]; buckets: number[] }) {
    super(config);
    this.#names = config.labelNames;
    this.#bounds = [...config.buckets];
    this.#config = config;
  }

  series(...values: string[]): HistogramSeries {
    return seriesOf(this.#series, this.#names, values, (labels) => new HistogramSeries(labels, this.#bounds, this.#observed));
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const { name, help, aggregator = 'sum' } = this.#config;
    const values: MetricValueWithName<L>[] = [];
    for (const s of this.#observed) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ value: cumulative, labels: { le, ...s.labels } as LabelValues<L>, metricName: `${name}_bucket` });
      });
      values.push({ value: s.count, labels: { le: '+Inf', ...s.labels } as LabelValues<L>, metricName: `${name}_bucket` });
      values.push({ value: s.sum, labels: { ...s.labels } as LabelValues<L>, metricName: `${name}_sum` });
      values.push({ value: s.count, labels: { ...s.labels } as LabelValues<L>, metricName: `${name}_count` });
    }
    // The type as prom-client writes it ('histogram'), which its declarations call an enum.
    return { name, help, type: 'histogram', aggregator, values } as unknown as MetricObjectWithValues<MetricValueWithName<L>>;
  }

  /** What the registry's text exposition reads (prom-client asks this rather than get() when a metric has it). */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    return this.get();
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    if (#observed in this) {
      for (const s of this.#observed) {
        s.counts.fill(0);
        s.sum = 0;
        s.count = 0;
      }
      this.#observed.length = 0;
    }
    super.reset();
  }
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new PlainCounter({
    name: 'gateway_requests_total',
    help: 'Requests answered, by route (or OAuth endpoint), API product of the token and status class.',
    labelNames: ['route', 'product', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new PlainHistogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from the request to the end of the answer, by route.',
    labelNames: ['route'] as const,
    buckets: BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamDuration = new PlainHistogram({
    name: 'gateway_upstream_duration_seconds',
    help: 'Time the upstream took, from sending the request to the end of its answer, by upstream.',
    labelNames: ['upstream'] as const,
    buckets: BUCKETS,
    registers: [this.registry],
  });
  readonly tokensIssued = new Counter({
    name: 'gateway_tokens_issued_total',
    help: 'Access tokens issued by the token endpoint, by grant type.',
    labelNames: ['grant'] as const,
    registers: [this.registry],
  });
  readonly refusals = new Counter({
    name: 'gateway_refusals_total',
    help: 'Requests refused, by the policy that refused ("gateway": its own checks: token, route, request shape) and the error code.',
    labelNames: ['policy', 'code'] as const,
    registers: [this.registry],
  });
  readonly upstreamErrors = new Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Upstream calls that failed, by upstream and kind (the error code answered).',
    labelNames: ['upstream', 'kind'] as const,
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: 'gateway_store_errors_total',
    help: 'Store operations that failed (the store unavailable), by where: request, token endpoint or background.',
    labelNames: ['surface'] as const,
    registers: [this.registry],
  });
  readonly usageEvents = new Counter({
    name: 'gateway_usage_events_total',
    help: 'Usage events of telemetry.usage, by result: delivered (written to the file or accepted by the endpoint) or dropped (the buffer full, or still waiting when a stop gave up).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly reloads = new Counter({
    name: 'gateway_config_reloads_total',
    help: 'Config reloads, by result: reloaded or refused.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** `process`: also the process's own metrics (CPU, memory, event loop lag), once per process. */
  constructor(options: { process: boolean }) {
    // The event loop's lag sampled every 100 ms, not every 10 (prom-client's default): an idle
    // gateway (a sidecar between calls) wakes 12 times a second instead of 104 (strace).
    if (options.process) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
    for (const result of ['reloaded', 'refused']) this.reloads.labels(result).inc(0);
    for (const result of ['delivered', 'dropped']) this.usageEvents.labels(result).inc(0);
  }

  /** Counts a failed answer where it belongs: a refusal, an upstream failure, a store failure. */
  failed(err: GatewayError, surface: 'request' | 'token', upstream: string | undefined): void {
    // The client left before its answer ended (499): nobody refused it and nothing failed.
    if (err.status === 499) return;
    if (err.cause instanceof StoreUnavailable) this.storeErrors.labels(surface).inc();
    if (err.policy !== undefined || (err.status >= 400 && err.status < 500)) this.refusals.labels(err.policy ?? 'gateway', err.code).inc();
    else if (err.code.startsWith('upstream_') && upstream !== undefined) this.upstreamErrors.labels(upstream, err.code).inc();
  }
}

/** The status class label of a status: 2xx, 4xx… */
export const STATUS_CLASSES = ['1xx', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The text exposition of this thread's metrics and, with workers, theirs added up. */
export async function exposition(own: Registry, others: readonly MetricsJson[]): Promise<{ contentType: string; body: string }> {
  if (others.length === 0) return { contentType: own.contentType, body: await own.metrics() };
  const merged = AggregatorRegistry.aggregate([await own.getMetricsAsJSON(), ...others]);
  return { contentType: merged.contentType, body: await merged.metrics() };
}
