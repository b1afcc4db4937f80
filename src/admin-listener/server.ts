// The operators' listener, on loopback unless the config says otherwise: whether the gateway is
// alive (/healthz) and ready (/readyz), its metrics (/metrics) and a reload (POST /reload). It is
// not authenticated: whoever reaches it is an operator, which is why it binds loopback by default.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { listenerUrl } from '../http/listener.ts';
import { NOSNIFF } from '../http/problem.ts';
import type { ReloadResult } from '../runtime/reload.ts';

export interface AdminListener {
  url: string;
  close(): Promise<void>;
}

export interface AdminHandlers {
  logger: Logger;
  /** Why the gateway is not ready (a string); else ready, with what an operator should change if anything. Rejects when the store does not answer. */
  ready(): Promise<string | Ready | undefined>;
  /** Reloads for the client at this address. */
  reload(ip: string): Promise<ReloadResult>;
  /** The Prometheus text exposition. */
  metrics(): Promise<{ contentType: string; body: string }>;
}

/** Paths served, and the method each answers. */
export const ADMIN_PATHS = { healthz: '/healthz', readyz: '/readyz', metrics: '/metrics', reload: '/reload' } as const;

/** Ready, and what an operator should change in the setup all the same (a Redis that persists nothing). */
export interface Ready {
  warnings: readonly string[];
}

/** Ready when not stopping and the store answers a read; with the store's warnings, if it has any. */
export function readiness(store: { ping(): Promise<void>; warnings?(): readonly string[] }, stopping: () => boolean): AdminHandlers['ready'] {
  return async () => {
    if (stopping()) return 'stopping';
    await store.ping();
    const warnings = store.warnings?.() ?? [];
    return warnings.length === 0 ? undefined : { warnings };
  };
}

/** A Host that names no domain: an IPv4 or bracketed IPv6 address, or localhost, with a port or not. */
const LOCAL_HOST = /^(?:localhost|[0-9.]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/i;
/** Operators and probes, not crowds. */
const MAX_CONNECTIONS = 64;

export async function startAdminListener(host: string, port: number, handlers: AdminHandlers): Promise<AdminListener> {
  const { logger } = handlers;
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(text)), ...headers, ...NOSNIFF }).end(text);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A page in a browser must not reach it: not by a cross-site request (it carries an Origin),
    // nor by a name it made resolve to loopback (DNS rebinding: the Host is that name).
    if (req.headers.origin !== undefined) return json(res, 403, { error: 'forbidden', reason: 'requests from a web page are not served' });
    if (!LOCAL_HOST.test(req.headers.host ?? '')) return json(res, 421, { error: 'misdirected_request', reason: 'address the admin listener by IP address or localhost' });
    const path = (req.url ?? '/').split('?')[0];
    const method = req.method ?? 'GET';
    const route = Object.values(ADMIN_PATHS).find((p) => p === path);
    if (route === undefined) return json(res, 404, { error: 'not_found', paths: Object.values(ADMIN_PATHS) });
    const wanted = route === ADMIN_PATHS.reload ? 'POST' : 'GET';
    if (method !== wanted && !(wanted === 'GET' && method === 'HEAD')) return json(res, 405, { error: 'method_not_allowed' }, { allow: wanted === 'GET' ? 'GET, HEAD' : 'POST' });
    switch (route) {
      case ADMIN_PATHS.healthz:
        return json(res, 200, { status: 'alive' });
      case ADMIN_PATHS.readyz: {
        let state: string | Ready | undefined;
        try {
          state = await handlers.ready();
        } catch (err) {
          state = `the store does not answer: ${(err as Error).message}`;
        }
        if (typeof state === 'string') return json(res, 503, { status: 'not_ready', reason: state });
        return json(res, 200, state === undefined ? { status: 'ready' } : { status: 'ready', warnings: state.warnings });
      }
      case ADMIN_PATHS.metrics: {
        const { contentType, body } = await handlers.metrics();
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store', ...NOSNIFF, 'content-length': String(Buffer.byteLength(body)) }).end(body);
        return;
      }
      case ADMIN_PATHS.reload: {
        req.resume();
        const result = await handlers.reload(req.socket.remoteAddress ?? '');
        return result.ok ? json(res, 200, { status: 'reloaded' }) : json(res, 422, { status: 'refused', errors: result.errors });
      }
    }
  }

  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err, path: req.url }, 'admin listener request failed');
      if (!res.headersSent) json(res, 500, { error: 'server_error' });
      else res.destroy();
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: listenerUrl(address.address, address.port, false),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
