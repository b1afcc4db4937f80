// The main listener's request handler: it resolves the request's facts once and hands the request
// to its route in the compiled table (the OAuth endpoints' included), whose steps answer it and
// whose failure writer answers what they threw.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.ts';
import { sendProblem } from '../http/problem.ts';
import { hasBody, splitTarget } from '../http/request.ts';
import { answerHeaders, runSteps, type Failure, type RequestContext } from '../pipeline/context.ts';
import { preflightMethod } from '../policies/cors.ts';
import { STATUS_CLASSES, type CounterSeries, type HistogramSeries, type Metrics } from '../metrics.ts';
import type { Usage } from '../usage.ts';
import type { UsageStream } from '../telemetry/usage-stream.ts';
import type { Tracing } from '../pipeline/trace.ts';
import { UNMATCHED, type CompiledRoute, type RouteTable } from './routes.ts';

/** The calls a handler has taken and not finished, and who waits for the last to finish. */
export interface InFlight {
  running: number;
  idle: (() => void) | undefined;
}

/** What the handler is compiled from. */
export interface HandlerParts {
  calls: InFlight;
  /** Every route, the OAuth endpoints' included. */
  routes: RouteTable;
  clientIp: (req: IncomingMessage) => string;
  /** Whether to write an access line per request (log.access, at a log level that shows info). */
  accessLog: boolean;
  logger: Logger;
  usage: Usage;
  clock: () => number;
  metrics: Metrics;
  /** 'https' when the listener serves TLS, else 'http' (X-Forwarded-Proto). */
  protocol: 'http' | 'https';
  /** Called once a call with a valid token is answered, whatever the answer (the management API's audit line). */
  audit?: (ctx: RequestContext, route: string) => void;
  /** Where the calls' spans go; undefined: no traces. */
  tracing: Tracing | undefined;
  /** Where an event per call made with an app's token goes (telemetry.usage); undefined: nowhere. */
  usageStream: UsageStream | undefined;
}

/** Whether a handler writes access lines: log.access, at a level (the config's, not the logger's now: a reload compiles before it swaps) that shows info. */
export function writesAccessLines(log: { level: string; access: boolean }, logger: Logger): boolean {
  return log.access && logger.levels.values[log.level]! <= logger.levels.values.info!;
}

export function createHandler(parts: HandlerParts) {
  const { calls, routes, clientIp, usage, clock, protocol, tracing, usageStream } = parts;
  const observe = createObserver(parts.metrics);
  // Decided once: with access logs off, or below the log level, a request builds no log record.
  const logAccess = parts.accessLog ? createAccessLog(parts.logger) : undefined;
  const problem = createProblemWriter(parts.logger);

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    calls.running++;
    const ctx = requestContext(req, res, protocol);
    if (tracing !== undefined) ctx.span = tracing.serve(req, protocol);
    let route: CompiledRoute | undefined;
    let failure: GatewayError | undefined;
    closeUntilRead(req, res);
    try {
      const encoding = req.headers['transfer-encoding'];
      if (encoding !== undefined) checkCodings(encoding);
      const target = splitTarget(req.url ?? '/');
      ctx.path = target.path;
      ctx.query = target.query;
      ctx.clientIp = clientIp(req);
      route = routes.lookup(req.method ?? 'GET', ctx.path, preflightMethod(req));
      const pending = runSteps(route.steps, ctx);
      if (pending !== undefined) await pending;
      route.answered?.(ctx);
    } catch (thrown) {
      // Refused before a route took it (its path, its transfer coding): a page of an origin the
      // routes at the path allow may still read why.
      if (route === undefined) routes.corsAt(sentPath(req.url))?.(ctx);
      failure = (route?.fail ?? problem)(ctx, thrown);
    } finally {
      if (--calls.running === 0) calls.idle?.();
      const ms = performance.now() - started;
      const name = route?.name ?? UNMATCHED;
      ctx.span?.finish({ route: name, path: name === UNMATCHED ? undefined : ctx.path, clientIp: ctx.clientIp, status: ctx.res.statusCode, token: ctx.token, error: failure?.code });
      observe(name, route, ctx, ms, failure);
      logAccess?.(ctx, name, ms);
      if (ctx.token !== undefined) parts.audit?.(ctx, name);
      // Every call made with an app's valid token counts as its usage, refused or not.
      if (ctx.token !== undefined) {
        const { token } = ctx;
        const status = ctx.res.statusCode;
        const now = clock();
        usage.count(token.appId, token.product, name, STATUS_CLASSES[Math.min(5, Math.floor(status / 100))]!, now, ms);
        usageStream?.record({
          time: now,
          requestId: ctx.requestId,
          app: token.appId,
          developer: token.developerEmail,
          product: token.product,
          route: name,
          method: req.method ?? 'GET',
          status,
          durationMs: ms,
        });
      }
    }
  };
}

function requestContext(req: IncomingMessage, res: ServerResponse, protocol: 'http' | 'https'): RequestContext {
  return {
    req,
    res,
    path: '(rejected)',
    query: '',
    clientIp: '',
    protocol,
    token: undefined,
    accessJwt: undefined,
    identity: undefined,
    rateLimits: undefined,
    body: undefined,
    requestId: requestId(req.headers['x-request-id']),
    upstreamMs: undefined,
    upstreamStatus: undefined,
    cors: undefined,
    log: undefined,
    span: undefined,
  };
}

/**
 * An answer given before the body was read (a 401, a 404, a refused form) must not leave Node
 * reading and throwing away whatever the client goes on sending, without bound, on a connection
 * kept alive: until the body has been read, the answer closes the connection.
 */
function closeUntilRead(req: IncomingMessage, res: ServerResponse): void {
  if (!hasBody(req)) return;
  res.setHeader('connection', 'close');
  req.once('end', () => {
    // Unless the connection is ending anyway (a drain): then the answer must say so.
    if (!res.headersSent && res.shouldKeepAlive) res.removeHeader('connection');
  });
}

/** The failure writer of routes without their own: problem+json; what the client must not see goes to the log. */
function createProblemWriter(logger: Logger): Failure {
  return function problem(ctx, thrown) {
    const failure = sendProblem(ctx.res, thrown, answerHeaders(ctx, {}));
    if (!failure.expose || failure.status >= 500) logger.error({ err: failure.cause ?? failure, detail: failure.detail, id: ctx.requestId, path: ctx.path }, failure.message);
    ctx.log = { error: failure.code };
    return failure;
  };
}

/** The access line: the path only, never the query (it can carry credentials a client should not have sent). */
function createAccessLog(logger: Logger) {
  return function logAccess(ctx: RequestContext, route: string, ms: number): void {
    const { req, res, token } = ctx;
    const trace = ctx.span?.traceId ?? traceId(req.headers.traceparent);
    logger.info(
      {
        id: ctx.requestId,
        method: req.method,
        path: ctx.path,
        route,
        status: res.statusCode,
        ms: Math.round(ms * 100) / 100,
        ...(ctx.upstreamMs === undefined ? {} : { upstreamMs: Math.round(ctx.upstreamMs * 100) / 100 }),
        ...(token === undefined ? {} : { app: token.appName, product: token.product }),
        ...(trace === undefined ? {} : { trace }),
        ...ctx.log,
      },
      'request',
    );
  };
}

/** Records a request in the metrics, through series per route, product and upstream found once and kept. */
function createObserver(metrics: Metrics) {
  const byRoute = new Map<string, { duration: HistogramSeries; requests: Map<string, CounterSeries[]> }>();
  const upstreams = new Map<string, HistogramSeries>();
  return function observe(name: string, compiled: CompiledRoute | undefined, ctx: RequestContext, ms: number, failure: GatewayError | undefined): void {
    const upstream = compiled?.upstream;
    let route = byRoute.get(name);
    if (route === undefined) {
      route = { duration: metrics.duration.series(name), requests: new Map() };
      byRoute.set(name, route);
    }
    route.duration.observe(ms / 1000);
    const product = ctx.token?.product ?? '';
    let classes = route.requests.get(product);
    if (classes === undefined) {
      classes = STATUS_CLASSES.map((c) => metrics.requests.series(name, product, c));
      route.requests.set(product, classes);
    }
    classes[Math.min(5, Math.floor(ctx.res.statusCode / 100))]!.inc();
    if (upstream !== undefined && ctx.upstreamMs !== undefined) {
      let timer = upstreams.get(upstream);
      if (timer === undefined) {
        timer = metrics.upstreamDuration.series(upstream);
        upstreams.set(upstream, timer);
      }
      timer.observe(ctx.upstreamMs / 1000);
    }
    if (failure !== undefined) metrics.failed(failure, compiled?.surface ?? 'request', upstream);
  };
}

/** The path of a request target as sent, refused or not: up to the query. */
function sentPath(url = '/'): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** A client's X-Request-Id of up to 128 visible ASCII characters is kept; otherwise the gateway makes one. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

function requestId(given: string | string[] | undefined): string {
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

/** W3C Trace Context §3.2: version, trace id, parent id and flags, lower-case hex; a later version may append `-…`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-|$)/;
const NO_TRACE = '0'.repeat(32);
const NO_PARENT = '0'.repeat(16);

/**
 * The trace id of a valid traceparent, for the log; the header itself passes upstream untouched.
 * §3.2.2: version ff, an all-zero trace or parent id, and anything after a version 00 header are invalid.
 */
function traceId(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header);
  if (match === null) return undefined;
  const [, version, trace, parent, more] = match;
  if (version === 'ff' || (version === '00' && more !== '') || trace === NO_TRACE || parent === NO_PARENT) return undefined;
  return trace;
}

const unknownCoding = new GatewayError(501, 'not_implemented', 'only the chunked transfer coding is supported', { headers: { connection: 'close' } });
const unknownLength = new GatewayError(400, 'invalid_request', 'the body must be chunked as its last transfer coding', { headers: { connection: 'close' } });

/**
 * RFC 9112 §6.3: a request whose last transfer coding is not chunked has no length one can
 * trust (400); §6.1: any other coding is one the gateway does not decode, refused (501) rather
 * than passed on as if the bytes were the content.
 */
function checkCodings(encoding: string): void {
  const codings = encoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim());
  if (codings.at(-1) !== 'chunked') throw unknownLength;
  if (codings.length > 1) throw unknownCoding;
}
