// The last step of a route: a real upstream over undici (one or several targets, round-robin,
// passive health checks, retries), or a built-in mock or echo target; and the responder that
// streams the answer through, or holds it whole when a response policy must read the body.
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { forward } from './forward.ts';
import { Pool } from './undici.ts';
import type { UpstreamSettings } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import { readBody, upstreamBody } from '../http/body.ts';
import { hasBody, queryObject } from '../http/request.ts';
import { answerHeaders, type RequestContext, type Step } from '../pipeline/context.ts';
import type { HeldResponse, ResponseHandler } from '../policies/policy.ts';
import { serverAttributes, type SpanAttributes, type TraceSpan } from '../pipeline/trace.ts';
import { clientResponseHeaders, type RequestHeaders } from './headers.ts';

export interface Target {
  /** The whole answer, for response policies that read the body. */
  fetch(ctx: RequestContext): Promise<HeldResponse>;
  /** Streams the answer to the client; `onHeaders` may change its status line's headers first. Settles when it is sent. */
  stream(ctx: RequestContext, onHeaders: (response: { status: number; headers: Record<string, string | string[]> }) => void): Promise<unknown>;
  /** Closes its connections once their calls are done; `force`: at once, failing the calls. */
  close(force?: boolean): Promise<void>;
}

/** `maxBodySize` is the listener's bound on every request body (listen.maxBodySize). */
export function createTarget(settings: UpstreamSettings, requestHeaders: RequestHeaders, maxBodySize: number, clock: () => number = Date.now): Target {
  switch (settings.kind) {
    case 'http':
      return createProxy(settings, requestHeaders, maxBodySize, clock);
    case 'mock':
      return held(createMock(settings));
    case 'echo':
      return held(createEcho(requestHeaders, Math.min(ECHO_BODY_LIMIT, maxBodySize)));
  }
}

const noHooks = () => {};

/** The route's final step: the target, then the response policies in YAML order. */
export function createResponder(target: Target, handlers: readonly ResponseHandler[]): Step {
  const headerHooks = handlers.flatMap((h) => (h.headers === undefined ? [] : [h.headers]));
  if (!handlers.some((h) => h.body !== undefined)) {
    if (headerHooks.length === 0) return (ctx) => target.stream(ctx, noHooks);
    return (ctx) =>
      target.stream(ctx, (response) => {
        for (const hook of headerHooks) hook(ctx, response);
      });
  }
  return async function respondHeld(ctx: RequestContext): Promise<void> {
    let response = await target.fetch(ctx);
    for (const handler of handlers) {
      handler.headers?.(ctx, response);
      if (handler.body !== undefined) response = handler.body(ctx, response);
    }
    writeHeld(ctx, response);
  };
}

function writeHeld(ctx: RequestContext, response: HeldResponse): void {
  const { status, body } = response;
  const headers: Record<string, string | string[]> = answerHeaders(ctx, { ...response.headers });
  delete headers['transfer-encoding'];
  // A 304 or an answer to HEAD held without a body keeps the upstream's length: that of what a GET would send (RFC 9110 §8.6).
  if (body.length > 0 || (status !== 304 && ctx.req.method !== 'HEAD')) headers['content-length'] = String(body.length);
  dropContentLengthOf204(status, headers);
  ctx.res.writeHead(status, headers).end(ctx.req.method === 'HEAD' ? undefined : body);
}

/** RFC 9110 §8.6: a server must not send Content-Length in a 204 (Transfer-Encoding, hop-by-hop, never crosses the gateway). */
function dropContentLengthOf204(status: number, headers: Record<string, unknown>): void {
  if (status === 204) delete headers['content-length'];
}

/** A target that has its whole answer at once (mock, echo) streams by writing it. */
function held(fetch: (ctx: RequestContext) => Promise<HeldResponse> | HeldResponse): Target {
  return {
    fetch: async (ctx) => fetch(ctx),
    async stream(ctx, onHeaders) {
      const response = await fetch(ctx);
      onHeaders(response);
      writeHeld(ctx, response);
    },
    close: async () => {},
  };
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The one place an upstream failure becomes the gateway's own error. */
export function upstreamError(name: string, err: unknown): GatewayError {
  const code = (err as { code?: string }).code ?? (err as Error).name;
  // undici refusing what the gateway built is the gateway's fault, not the upstream's.
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED' || (err as Error).name === 'NotSupportedError') {
    return new GatewayError(500, 'server_error', 'internal error', { detail: `${name}: ${code}`, cause: err });
  }
  if (TIMEOUT_CODES.has(code)) {
    return new GatewayError(504, 'upstream_timeout', 'the upstream did not answer in time', { detail: `${name}: ${code}`, cause: err });
  }
  return new GatewayError(502, 'upstream_unavailable', 'the upstream could not be reached', { detail: `${name}: ${code}`, cause: err });
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
// Failures that happen before the request left: retrying cannot make a call run twice.
const NOT_SENT = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const HELD_LIMIT = 10 * 1024 * 1024;
/** Drops an answer that will not be forwarded, freeing its connection (undici reports that as an abort). */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}
const tooLarge = () => new GatewayError(502, 'upstream_response_too_large', 'the upstream answer is too large to process');

interface Member {
  pool: Pool;
  /** scheme://host:port, for the span of a call to it. */
  origin: URL;
  basePath: string;
  failures: number;
  /** Skipped until this time (epoch ms) after too many failures in a row. */
  downUntil: number;
}

type ProxySettings = Extract<UpstreamSettings, { kind: 'http' }>;

function createProxy(settings: ProxySettings, upstreamRequestHeaders: RequestHeaders, maxBodySize: number, clock: () => number): Target {
  const members = createMembers(settings);
  const { name } = settings;
  const health = createHealth(members, settings, clock);
  const send = createSender(health, settings, upstreamRequestHeaders, maxBodySize, clock);
  return {
    async fetch(ctx) {
      const response = await send(ctx, true, async (m, options) => {
        const r = await m.pool.request(options);
        ctx.upstreamStatus = r.statusCode;
        health.answered(m, r.statusCode);
        return r;
      });
      return readHeld(name, ctx, response);
    },
    // The answer's body goes straight into the client's response (forward.ts: backpressure,
    // and an upstream abort when the client leaves, included), and the call settles when it is
    // sent: no intermediate body stream and pipe() per call. An upstream failing mid-body
    // destroys the response, so the client sees the connection end early.
    stream(ctx, onHeaders) {
      const { res } = ctx;
      return send(ctx, false, (m, options, signal) =>
        forward(m.pool, options, signal, res, (statusCode, headers) => {
          ctx.upstreamStatus = statusCode;
          health.answered(m, statusCode);
          const head = { status: statusCode, headers: clientResponseHeaders(headers) };
          onHeaders(head);
          dropContentLengthOf204(head.status, head.headers);
          res.writeHead(head.status, answerHeaders(ctx, head.headers));
        }),
      );
    },
    close: async (force = false) => {
      await Promise.all(members.map((m) => (force ? m.pool.destroy() : m.pool.close())));
    },
  };
}

/** A pool per target, each with its base path and its health. */
function createMembers(settings: ProxySettings): Member[] {
  const connect = {
    timeout: settings.connectTimeoutMs,
    ...(settings.ca === undefined ? {} : { ca: readFileSync(settings.ca) }),
    ...(settings.servername === undefined ? {} : { servername: settings.servername }),
  };
  return settings.targets.map((t) => ({
    pool: new Pool(t.origin, {
      connections: settings.connections,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      connect,
    }),
    origin: new URL(t.origin),
    basePath: t.basePath,
    failures: 0,
    downUntil: 0,
  }));
}

/** Passive health checks: which target a call goes to, and what its failures and answers say of it. */
interface Health {
  pick(now: number): Member;
  failed(m: Member): void;
  answered(m: Member, status: number): void;
}

function createHealth(members: readonly Member[], settings: Pick<ProxySettings, 'failureThreshold' | 'cooldownMs'>, clock: () => number): Health {
  const { failureThreshold, cooldownMs } = settings;
  let next = 0;
  function failed(m: Member): void {
    if (++m.failures >= failureThreshold) m.downUntil = clock() + cooldownMs;
  }
  return {
    /** Round-robin over the healthy targets; when none is healthy, over all of them. */
    pick(now) {
      for (let i = 0; i < members.length; i++) {
        const m = members[(next + i) % members.length]!;
        if (m.downUntil <= now) {
          next = (next + i + 1) % members.length;
          return m;
        }
      }
      const m = members[next % members.length]!;
      next = (next + 1) % members.length;
      return m;
    },
    failed,
    /** An answer's status counts for the target's health: 502, 503 and 504 are failures. */
    answered(m, status) {
      if (status >= 502 && status <= 504) failed(m);
      else m.failures = 0;
    },
  };
}

/**
 * Sends the request to a target with `call`, and when it could not be sent, to the next (if
 * allowed). A GatewayError is the gateway refusing the answer, not the target failing.
 */
type Send = <T>(ctx: RequestContext, identity: boolean, call: (m: Member, options: Dispatcher.RequestOptions, signal: AbortSignal | null) => Promise<T>) => Promise<T>;

function createSender(health: Health, settings: Pick<ProxySettings, 'name' | 'retries'>, upstreamRequestHeaders: RequestHeaders, maxBodySize: number, clock: () => number): Send {
  const { name, retries } = settings;
  return async function send(ctx, identity, call) {
    const { req, res } = ctx;
    const withBody = hasBody(req);
    // A streamed body cannot be sent twice; a held one (validation read it) or none can.
    const replayable = IDEMPOTENT.has(req.method ?? '') && (!withBody || ctx.body !== undefined);
    const headers = upstreamRequestHeaders(ctx);
    // A held answer is read by policies: it must come uncompressed.
    if (identity) headers['accept-encoding'] = 'identity';
    const target = ctx.path + (ctx.query === '' ? '' : `?${ctx.query}`);
    // With traces on, the call's span under the request's; its trace context goes upstream instead of the caller's.
    const span = ctx.span?.child(req.method ?? 'GET', 'client', { 'http.request.method': req.method ?? 'GET', 'gateway.upstream': name });
    span?.propagate(headers);
    // A streamed body growing past the bound aborts the upstream request; the call fails with a 413.
    let body: Buffer | Readable | null = ctx.body ?? null;
    let signal: AbortSignal | null = null;
    if (body === null && withBody) ({ body, signal } = upstreamBody(req, maxBodySize));
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      const m = health.pick(clock());
      span?.set(upstreamAttributes(m, ctx.path, attempt));
      try {
        const answered = await call(m, { method: req.method as Dispatcher.HttpMethod, path: m.basePath + target, headers, body, signal }, signal);
        if (span !== undefined) endUpstream(span, ctx.upstreamStatus);
        return answered;
      } catch (err) {
        if (err instanceof GatewayError) throw failed(span, ctx, err);
        const code = (err as { code?: string }).code ?? '';
        // The client left mid-answer: the target was not at fault, and no one is left to answer.
        if (code === 'ERR_STREAM_PREMATURE_CLOSE' && res.destroyed) throw failed(span, ctx, new GatewayError(499, 'client_closed_request', 'the client closed the connection', { cause: err }));
        health.failed(m);
        const sent = !NOT_SENT.has(code);
        if (attempt >= retries || !replayable || sent) throw failed(span, ctx, upstreamError(name, err));
      } finally {
        ctx.upstreamMs = performance.now() - started;
      }
    }
  };
}

/** The semantic conventions' attributes of a call to target `m`; the query is left out (it can hold what a client should not have sent). */
function upstreamAttributes(m: Member, path: string, attempt: number): SpanAttributes {
  return { ...serverAttributes(m.origin), 'url.full': `${m.origin.origin}${m.basePath}${path}`, ...(attempt > 0 && { 'http.request.resend_count': attempt }) };
}

/** Ends the span of an upstream call that answered `status` (a client span: a 4xx or 5xx is an error), or failed with `error`. */
function endUpstream(span: TraceSpan, status: number | undefined, error?: GatewayError): void {
  if (status !== undefined) span.set({ 'http.response.status_code': status });
  if (error !== undefined) span.fail(error.code);
  else if (status !== undefined && status >= 400) span.fail(String(status));
  span.end();
}

/** `err`, once it ended the upstream call's span. */
function failed(span: TraceSpan | undefined, ctx: RequestContext, err: GatewayError): GatewayError {
  if (span !== undefined) endUpstream(span, ctx.upstreamStatus, err);
  return err;
}

/** The whole of an upstream's answer, for response policies: uncompressed, and at most HELD_LIMIT bytes. */
async function readHeld(name: string, ctx: RequestContext, response: Dispatcher.ResponseData): Promise<HeldResponse> {
  const headers = clientResponseHeaders(response.headers);
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    discard(response.body);
    throw new GatewayError(502, 'upstream_response_encoded', 'the upstream answered compressed although asked not to', { detail: `${name}: ${String(encoding)}` });
  }
  if (Number(headers['content-length'] ?? 0) > HELD_LIMIT) {
    discard(response.body);
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // send() timed the upstream up to its headers; a held answer's time runs to the end of its body.
  const headersAt = performance.now();
  try {
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > HELD_LIMIT) {
        discard(response.body);
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw err instanceof GatewayError ? err : upstreamError(name, err);
  } finally {
    ctx.upstreamMs = (ctx.upstreamMs ?? 0) + performance.now() - headersAt;
  }
  return { status: response.statusCode, headers, body: Buffer.concat(chunks, size) };
}

function createMock(settings: Extract<UpstreamSettings, { kind: 'mock' }>): () => HeldResponse {
  const text = typeof settings.body === 'string';
  const body = Buffer.from(text ? (settings.body as string) : JSON.stringify(settings.body));
  const headers: Record<string, string> = {
    'content-type': text ? 'text/plain; charset=utf-8' : 'application/json',
    ...Object.fromEntries(Object.entries(settings.headers).map(([k, v]) => [k.toLowerCase(), v])),
  };
  const { status } = settings;
  // A fresh headers object per call: response policies may change it.
  return function mock(): HeldResponse {
    return { status, headers: { ...headers }, body };
  };
}

const ECHO_BODY_LIMIT = 1024 * 1024;

/** Answers with what an upstream would have received: method, path, query, headers and body. */
function createEcho(upstreamRequestHeaders: RequestHeaders, limit: number) {
  return async function echo(ctx: RequestContext): Promise<HeldResponse> {
    const body = ctx.body ?? (await readBody(ctx.req, limit));
    const payload = JSON.stringify({
      method: ctx.req.method,
      path: ctx.path,
      query: queryObject(ctx.query),
      headers: upstreamRequestHeaders(ctx),
      body: body.toString('utf8'),
    });
    return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(payload) };
  };
}
