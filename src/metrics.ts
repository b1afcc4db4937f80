// Prometheus metrics (prom-client), one set per thread, kept across reloads. Every label takes
// its values from the config or from fixed lists (route, product, status class, policy, error
// code, upstream, grant): never an app, a key, a token or a raw path, so no series grows with traffic.
import { AggregatorRegistry, collectDefaultMetrics, Counter, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { GatewayError } from './errors.ts';
import { StoreUnavailable } from './store/port/index.ts';

/** Seconds: from a cached call through the proxy (well under a millisecond) to a slow upstream. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered, by route (or OAuth endpoint), API product of the token and status class.',
    labelNames: ['route', 'product', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from the request to the end of the answer, by route.',
    labelNames: ['route'] as const,
    buckets: BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
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
  readonly reloads = new Counter({
    name: 'gateway_config_reloads_total',
    help: 'Config reloads, by result: reloaded or refused.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** `process`: also the process's own metrics (CPU, memory, event loop lag), once per process. */
  constructor(options: { process: boolean }) {
    if (options.process) collectDefaultMetrics({ register: this.registry });
    for (const result of ['reloaded', 'refused']) this.reloads.labels(result).inc(0);
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
