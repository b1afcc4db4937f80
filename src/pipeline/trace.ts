// What the request path knows of tracing: the call's span and the spans under it, as the steps
// see them. src/telemetry/traces.ts makes them with the OpenTelemetry SDK, loaded only when the
// config asks for traces; without it a call has no span, and no step is wrapped.
import type { IncomingMessage } from 'node:http';
import type { ActiveToken } from '../store/port/index.ts';

export type SpanAttributes = Record<string, string | number | boolean>;

/** A span of a call. */
export interface TraceSpan {
  /** A span under this one, started now, or at `startTime` (epoch ms). */
  child(name: string, kind: 'internal' | 'client', attributes?: SpanAttributes, startTime?: number): TraceSpan;
  /** Puts this span's W3C trace context (traceparent, and tracestate when there is one) in `headers`, for the server it calls. */
  propagate(headers: Record<string, unknown>): void;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed with what failed: an error code, never a message a client could have put a secret in. */
  fail(errorType: string): void;
  end(): void;
}

/** What a call came to, for its span. */
export interface CallOutcome {
  /** The route's name, or the OAuth endpoint's path. */
  route: string;
  /** The path a route matched; undefined for a path no route has, which is the client's text, whatever it put there. */
  path: string | undefined;
  clientIp: string;
  status: number;
  token: ActiveToken | undefined;
  /** The problem's code of a refused or failed call. */
  error: string | undefined;
}

/** The server span of a call, which the handler finishes with what the call came to. */
export interface CallSpan extends TraceSpan {
  /** The trace's id, for the access line: the caller's when it named a trace, else the gateway's. */
  readonly traceId: string;
  finish(outcome: CallOutcome): void;
}

export interface Tracing {
  /** The span of a call: it continues the caller's trace (traceparent, tracestate) when it names one. */
  serve(req: IncomingMessage, protocol: 'http' | 'https'): CallSpan;
  /** Exports what is left, then stops. */
  close(): Promise<void>;
}

/** Epoch milliseconds, to the microsecond: the start time of a span made after the fact. */
const now = () => performance.timeOrigin + performance.now();

/**
 * `step` with a span of its own under the call's span, named `name`. `whenWaiting`: only when the
 * step returns a promise (it waits on a server), with the span started when the step was; a step
 * that answers at once from memory gets none.
 */
export function traced<C extends { span: TraceSpan | undefined }>(step: (ctx: C) => void | Promise<unknown>, name: string, whenWaiting = false): (ctx: C) => void | Promise<unknown> {
  return function tracedStep(ctx: C) {
    const parent = ctx.span;
    if (parent === undefined) return step(ctx);
    const started = now();
    let span = whenWaiting ? undefined : parent.child(name, 'internal', undefined, started);
    let result: void | Promise<unknown>;
    try {
      result = step(ctx);
    } catch (err) {
      span?.fail(errorType(err));
      span?.end();
      throw err;
    }
    if (!(result instanceof Promise)) {
      span?.end();
      return result;
    }
    span ??= parent.child(name, 'internal', undefined, started);
    const waiting = span;
    return result.then(
      (value) => {
        waiting.end();
        return value;
      },
      (err: unknown) => {
        waiting.fail(errorType(err));
        waiting.end();
        throw err;
      },
    );
  };
}

/** The semantic conventions' server.address and server.port of the server at `url` (its scheme's port when it names none). */
export function serverAttributes(url: URL): SpanAttributes {
  return { 'server.address': url.hostname, 'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port) };
}

/** What a failure was, for a span: a GatewayError's code, else the error's name. */
export function errorType(err: unknown): string {
  const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error';
}
