// The main listener: one request handler that resolves the request's facts once, hands the OAuth
// endpoints (token, revocation, introspection, metadata) their requests and every other path to
// the compiled route table.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { compilePolicies, type RouteTable } from '../config/compile.ts';
import type { Deps } from '../deps.ts';
import { createIntrospectionEndpoint } from '../oauth/introspect.ts';
import { OAUTH_PATHS } from '../oauth/endpoint.ts';
import { createMetadataEndpoint, introspectionServed } from '../oauth/metadata.ts';
import { createRevocationEndpoint } from '../oauth/revoke.ts';
import { createTokenEndpoint } from '../oauth/token.ts';
import { runSteps, withRateLimit, type RequestContext } from '../pipeline/context.ts';
import type { ActiveToken } from '../store/port/index.ts';
import { GatewayError } from '../errors.ts';
import { tooLarge } from './body.ts';
import { sendProblem } from './problem.ts';
import { createClientIp } from './ip.ts';
import { hasBody, splitTarget } from './request.ts';

export interface Listener {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

export function createHandler(deps: Deps, routes: RouteTable) {
  const tokenPolicies = compilePolicies(deps.config.oauth.policies, 'access', { deps, route: 'oauth2/token', configDir: dirname(deps.config.file), method: undefined, path: undefined });
  // The OAuth endpoints, each answering in RFC 6749 §5.2 terms; introspection only when someone may call it.
  const oauthEndpoints = new Map<string, ReturnType<typeof createTokenEndpoint>>([
    [OAUTH_PATHS.token, createTokenEndpoint(deps, tokenPolicies)],
    [OAUTH_PATHS.revocation, createRevocationEndpoint(deps, tokenPolicies)],
    ...(introspectionServed(deps.config) ? [[OAUTH_PATHS.introspection, createIntrospectionEndpoint(deps, tokenPolicies)] as const] : []),
  ]);
  const metadata = createMetadataEndpoint(deps.config);
  const { maxBodySize } = deps.config.listen;
  // A declared length is refused before anything reads the body; a chunked one is counted as it
  // streams (upstreamBody). The same answer either way, and the connection closes rather than drain.
  const bodyTooLarge = tooLarge(maxBodySize);
  const clientIp = createClientIp(deps.config.listen.trustedProxies);
  const { logger, usage, clock } = deps;
  // Decided once: with access logs off, or below the log level, a request builds no log record.
  const access = deps.config.log.access && logger.isLevelEnabled('info');

  // The path only, never the query: it can carry credentials a client should not have sent.
  function logAccess(req: IncomingMessage, res: ServerResponse, path: string, started: number, fields: Record<string, unknown> | undefined, token: ActiveToken | undefined): void {
    if (!access) return;
    const ms = Math.round((performance.now() - started) * 100) / 100;
    logger.info({ method: req.method, path, status: res.statusCode, ms, ...fields, ...(token ? { app: token.appName } : {}) }, 'request');
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    let path = '(rejected)';
    let ctx: RequestContext | undefined;
    // An answer given before the body was read (a 401, a 404, a refused form) must not leave Node
    // reading and throwing away whatever the client goes on sending, without bound, on a
    // connection kept alive: until the body has been read, the answer closes the connection.
    if (hasBody(req)) {
      res.setHeader('connection', 'close');
      req.once('end', () => {
        if (!res.headersSent) res.removeHeader('connection');
      });
    }
    try {
      const encoding = req.headers['transfer-encoding'];
      if (encoding !== undefined) checkCodings(encoding);
      const target = splitTarget(req.url ?? '/');
      path = target.path;
      ctx = { req, res, path, query: target.query, clientIp: clientIp(req), protocol: 'http', token: undefined, rateLimit: undefined, body: undefined };
      const endpoint = oauthEndpoints.get(path);
      if (endpoint !== undefined) {
        logAccess(req, res, path, started, await endpoint(ctx), undefined);
        return;
      }
      if (metadata !== undefined && path === OAUTH_PATHS.metadata) {
        metadata(req.method ?? 'GET', res);
        logAccess(req, res, path, started, undefined, undefined);
        return;
      }
      const length = req.headers['content-length'];
      if (length !== undefined && Number(length) > maxBodySize) throw bodyTooLarge;
      const pending = runSteps(routes.lookup(req.method ?? 'GET', path), ctx);
      if (pending !== undefined) await pending;
      logAccess(req, res, path, started, undefined, ctx.token);
    } catch (thrown) {
      const err = sendProblem(res, thrown, withRateLimit(ctx, {}));
      if (!err.expose || err.status >= 500) logger.error({ err: err.cause ?? err, detail: err.detail, path }, err.message);
      logAccess(req, res, path, started, { error: err.code }, ctx?.token);
    } finally {
      // Every call made with an app's valid token counts as its usage, refused or not.
      if (ctx?.token !== undefined) usage.count(ctx.token.appId, clock());
    }
  };
}

const unknownCoding = new GatewayError(501, 'not_implemented', 'only the chunked transfer coding is supported', { headers: { connection: 'close' } });
const unknownLength = new GatewayError(400, 'invalid_request', 'the body must be chunked as its last transfer coding', { headers: { connection: 'close' } });

/**
 * RFC 9112 §6.3: a request whose last transfer coding is not chunked has no length one can
 * trust (400); §6.1: any other coding is one the gateway does not decode, refused (501) rather
 * than passed on as if the bytes were the content.
 */
function checkCodings(encoding: string): void {
  const codings = encoding.toLowerCase().split(',').map((c) => c.trim());
  if (codings.at(-1) !== 'chunked') throw unknownLength;
  if (codings.length > 1) throw unknownCoding;
}

/** A port free on `host` now (the kernel's choice), for what must know its port before it listens. */
export async function freePort(host: string): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** How long a client may take to send its headers, and its whole request (Node answers 408). */
export interface SenderTimeouts {
  headersMs: number;
  requestMs: number;
}

export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  host: string,
  port: number,
  options: { reusePort?: boolean; tls?: { cert: Buffer; key: Buffer }; timeouts: SenderTimeouts },
): Promise<Listener> {
  const { reusePort = false, tls, timeouts } = options;
  const serve = (req: IncomingMessage, res: ServerResponse) => void handler(req, res);
  // A slow sender cannot hold a connection for minutes. Node looks for expired requests only every
  // connectionsCheckingInterval (30 s by default), which let a trickled header live 29 s against
  // a documented 10; checked twice a second, each limit holds within a second.
  const settings = {
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: Math.min(500, timeouts.headersMs),
    keepAliveTimeout: 5_000,
  };
  const server = tls === undefined ? createServer(settings, serve) : createTlsServer({ ...settings, cert: tls.cert, key: tls.key }, serve);
  // A client that stops reading its answer: once the socket's buffers are full nothing moves, and
  // after the request timeout without traffic either way the connection closes, handing the
  // upstream connection it held back to its pool. Else 128 such clients froze an upstream for good.
  server.timeout = timeouts.requestMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    port: address.port,
    url: `${tls === undefined ? 'http' : 'https'}://${shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Requests still running after the grace period are cut.
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      }),
  };
}
