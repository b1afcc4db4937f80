// OpenTelemetry traces (telemetry.traces), with the official SDK and its OTLP/HTTP exporter (JSON),
// imported only when the config asks for them. A call's span (SERVER) continues the caller's
// trace; the spans under it are started from it explicitly, not through a context manager: the
// request context carries the call's span, so nothing watches every promise of the process.
// Attribute names are those of the OpenTelemetry semantic conventions for HTTP; a span never holds
// a token, a secret, a query string or a header.
import type { IncomingMessage } from 'node:http';
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, TracerProvider, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import pkg from '../../package.json' with { type: 'json' };
import type { TraceSettings } from '../config/types.ts';
import type { CallOutcome, CallSpan, SpanAttributes, TraceSpan, Tracing } from '../pipeline/trace.ts';

/** Spans waiting for export at most; past it, new spans are dropped (the SDK counts them), never the calls. */
const MAX_QUEUED_SPANS = 8192;
const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const;

export function createTracing(settings: TraceSettings, logger: Logger): Tracing {
  const exporter = new OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers } });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'token-gateway', 'service.version': pkg.version }),
    // A caller decides nothing: its "sampled" flag could be sent on every call, and its trace id
    // chosen to pass a ratio read from the id (00…01 passes any), to have each call traced and
    // fill the export queue. A caller's trace is continued and sampled at the ratio by the
    // gateway's own draw; a trace the gateway starts, by its id (random, the gateway's). A
    // caller's "not sampled" is followed.
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(settings.sampleRatio),
      remoteParentSampled: new DrawnSampler(settings.sampleRatio),
      remoteParentNotSampled: new AlwaysOffSampler(),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: MAX_QUEUED_SPANS, maxExportBatchSize: 2048, scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('token-gateway', pkg.version);
  const propagator = new W3CTraceContextPropagator();
  // Never the endpoint's query, which may hold a key.
  const where = new URL(settings.endpoint);
  logger.info({ endpoint: `${where.origin}${where.pathname}`, sampleRatio: settings.sampleRatio }, 'exporting traces over OTLP/HTTP');
  return {
    serve(req, protocol) {
      const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
      const method = req.method ?? 'GET';
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.scheme': protocol, ...peer(req) } }, parent);
      return new GatewaySpan(tracer, propagator, span, method);
    },
    async close() {
      await provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'exporting the last spans failed'));
    },
  };
}

/** Samples a share of the spans by a draw of its own, whatever their trace ids. */
class DrawnSampler implements Sampler {
  readonly #ratio: number;
  constructor(ratio: number) {
    this.#ratio = ratio;
  }
  shouldSample(): SamplingResult {
    return { decision: Math.random() < this.#ratio ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }
  toString(): string {
    return `DrawnSampler{${this.#ratio}}`;
  }
}

/** The network peer of a call: the socket's, not what a header claims (the call's span gets the client's address as the gateway judged it). */
function peer(req: IncomingMessage): SpanAttributes {
  const { remoteAddress, remotePort } = req.socket;
  return remoteAddress === undefined ? {} : { 'network.peer.address': remoteAddress, ...(remotePort === undefined ? {} : { 'network.peer.port': remotePort }) };
}

class GatewaySpan implements CallSpan {
  readonly #tracer: Tracer;
  readonly #propagator: W3CTraceContextPropagator;
  readonly #span: Span;
  readonly #method: string;

  constructor(tracer: Tracer, propagator: W3CTraceContextPropagator, span: Span, method: string) {
    this.#tracer = tracer;
    this.#propagator = propagator;
    this.#span = span;
    this.#method = method;
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  child(name: string, kind: 'internal' | 'client', attributes?: SpanAttributes, startTime?: number): TraceSpan {
    // Under a span not recorded, none is: the call's span stands for them, its trace context goes on.
    if (!this.#span.isRecording()) return this;
    const span = this.#tracer.startSpan(name, { kind: KINDS[kind], ...(attributes && { attributes }), ...(startTime !== undefined && { startTime }) }, trace.setSpan(ROOT_CONTEXT, this.#span));
    return new GatewaySpan(this.#tracer, this.#propagator, span, this.#method);
  }

  propagate(headers: Record<string, unknown>): void {
    // The caller's tracestate goes on only as the span's context holds it: parsed from a valid
    // traceparent's call, never as the caller wrote it (W3C Trace Context §3.3.1.1).
    delete headers.tracestate;
    this.#propagator.inject(trace.setSpan(ROOT_CONTEXT, this.#span), headers, defaultTextMapSetter);
  }

  set(attributes: SpanAttributes): void {
    this.#span.setAttributes(attributes);
  }

  fail(errorType: string): void {
    this.#span.setAttribute('error.type', errorType);
    this.#span.setStatus({ code: SpanStatusCode.ERROR });
  }

  end(): void {
    this.#span.end();
  }

  /** The semantic conventions' server span: named by its method and route; a 5xx is an error, a 4xx the client's. */
  finish(outcome: CallOutcome): void {
    const span = this.#span;
    span.updateName(`${this.#method} ${outcome.route}`);
    span.setAttributes({ 'http.route': outcome.route, 'http.response.status_code': outcome.status });
    if (outcome.path !== undefined) span.setAttribute('url.path', outcome.path);
    if (outcome.clientIp !== '') span.setAttribute('client.address', outcome.clientIp);
    if (outcome.token !== undefined) span.setAttributes({ 'gateway.product': outcome.token.product, 'gateway.app': outcome.token.appId });
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (outcome.error !== undefined) span.setAttribute('error.type', outcome.error);
    span.end();
  }
}
