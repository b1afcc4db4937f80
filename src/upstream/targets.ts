// The last step of a route: a real upstream over undici, or a built-in mock or echo target.
import { readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import type { UpstreamSettings } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import { readBody } from '../http/body.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';
import { queryObject } from '../http/request.ts';
import { clientResponseHeaders, upstreamRequestHeaders } from './headers.ts';

export interface Target {
  step: Step;
  close(): Promise<void>;
}

export function createTarget(settings: UpstreamSettings): Target {
  switch (settings.kind) {
    case 'http':
      return createProxy(settings);
    case 'mock':
      return { step: createMock(settings), close: async () => {} };
    case 'echo':
      return { step: echo, close: async () => {} };
  }
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

function createProxy(settings: Extract<UpstreamSettings, { kind: 'http' }>): Target {
  const pool = new Pool(settings.origin, {
    connections: settings.connections,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
    connect: {
      timeout: settings.connectTimeoutMs,
      ...(settings.ca === undefined ? {} : { ca: readFileSync(settings.ca) }),
      ...(settings.servername === undefined ? {} : { servername: settings.servername }),
    },
  });
  const { basePath, name } = settings;

  async function forward(ctx: RequestContext): Promise<void> {
    const { req, res } = ctx;
    const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
    let upstream;
    try {
      upstream = await pool.request({
        method: req.method as 'GET',
        path: basePath + ctx.path + (ctx.query === '' ? '' : `?${ctx.query}`),
        headers: upstreamRequestHeaders(ctx),
        body: ctx.body ?? (hasBody ? req : null),
      });
    } catch (err) {
      throw upstreamError(name, err);
    }
    res.writeHead(upstream.statusCode, clientResponseHeaders(upstream.headers));
    try {
      await pipeline(upstream.body, res);
    } catch {
      // Headers are gone already; the client sees the connection end early, as with any proxy.
      res.destroy();
    }
  }

  return { step: forward, close: () => pool.close() };
}

function createMock(settings: Extract<UpstreamSettings, { kind: 'mock' }>): Step {
  const text = typeof settings.body === 'string';
  const payload = Buffer.from(text ? (settings.body as string) : JSON.stringify(settings.body));
  const headers: Record<string, string | number> = {
    'content-type': text ? 'text/plain; charset=utf-8' : 'application/json',
    ...Object.fromEntries(Object.entries(settings.headers).map(([k, v]) => [k.toLowerCase(), v])),
    'content-length': payload.length,
  };
  const { status } = settings;
  return function mock(ctx: RequestContext): void {
    ctx.res.writeHead(status, headers).end(ctx.req.method === 'HEAD' ? undefined : payload);
  };
}

const ECHO_BODY_LIMIT = 1024 * 1024;

/** Answers with what an upstream would have received: method, path, query, headers and body. */
async function echo(ctx: RequestContext): Promise<void> {
  const body = ctx.body ?? (await readBody(ctx.req, ECHO_BODY_LIMIT));
  const payload = JSON.stringify({
    method: ctx.req.method,
    path: ctx.path,
    query: queryObject(ctx.query),
    headers: upstreamRequestHeaders(ctx),
    body: body.toString('utf8'),
  });
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }).end(payload);
}
