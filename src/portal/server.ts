// The developer portal: its own listener, server-rendered pages, forms that work without
// JavaScript. Every change goes through src/admin, as `gateway admin` does. This file is the
// dispatcher: the host check, the form and its CSRF token, the session, the route table's row
// (src/portal/routes.ts), and the one place an answer or a failure becomes the response.
import { readFileSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Config, PortalSettings } from '../config/load.ts';
import { asGatewayError, GatewayError } from '../errors.ts';
import { readBody } from '../http/body.ts';
import { createClientIp } from '../http/ip.ts';
import { freePort, listen, type Listener } from '../http/listener.ts';
import { splitTarget } from '../http/request.ts';
import { isFormContentType, parseForm } from '../oauth/form.ts';
import { notFound, page, type Answer, type Catalog, type PortalContext, type PortalRoute, type PortalServices, type Request } from './context.ts';
import { portalOrigins, type PortalOrigins } from './origin.ts';
import * as pages from './pages.ts';
import { createReveals } from './reveal.ts';
import { portalRoutes } from './routes.ts';
import { createSessions, type Visitor } from './session.ts';

export type { Catalog, PortalServices } from './context.ts';

const FORM_LIMIT = 16 * 1024;

/** How long a new secret waits for the GET that shows it: the redirect follows at once. */
const REVEAL_LIFETIME_MS = 2 * 60_000;

const ALLOW = 'GET, HEAD, POST';

/**
 * frame-ancestors: no page of the portal can be framed (clickjacking); nothing loads from
 * elsewhere. The one other origin is the gateway's, which the try-it panels' script calls
 * (connect-src), and nothing else may be fetched from there.
 */
function securityHeadersFor(gatewayOrigin: string) {
  return {
    'content-security-policy': `default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src ${gatewayOrigin}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
  } as const;
}

// RFC 6797: once a browser has seen the portal over TLS, it never tries plain HTTP for a year.
const HSTS = { 'strict-transport-security': 'max-age=31536000' } as const;

/** A row of the table and the named groups its pattern matched. */
type Found = { route: PortalRoute; params: Record<string, string> };

/** The table as it is looked up: exact paths by method and path, then each method's patterns in order. Rows that need mail are left out without it. */
function compileRoutes(routes: readonly PortalRoute[], options: { mail: boolean }): (method: string, path: string) => Found | undefined {
  const exact = new Map<string, PortalRoute>();
  const patterns: Record<PortalRoute['method'], { route: PortalRoute; pattern: RegExp }[]> = { GET: [], POST: [] };
  for (const route of routes) {
    if (route.access !== 'static' && route.mail === true && !options.mail) continue;
    if (typeof route.path === 'string') exact.set(`${route.method} ${route.path}`, route);
    else patterns[route.method].push({ route, pattern: route.path });
  }
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    if (m !== 'GET' && m !== 'POST') return undefined;
    const route = exact.get(`${m} ${path}`);
    if (route !== undefined) return { route, params: {} };
    for (const { route, pattern } of patterns[m]) {
      const match = pattern.exec(path);
      if (match !== null) return { route, params: { ...match.groups } };
    }
    return undefined;
  };
}

/** The answer of the row found: a visitor is sent to log in for a developer's page; a method other than GET, HEAD and POST is not allowed anywhere. */
async function dispatch(ctx: PortalContext, found: Found | undefined, r: Omit<Request, 'params'>, method: string): Promise<Answer> {
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    return { ...page(405, pages.messagePage(r.frame, 'Method not allowed', 'This page answers GET and POST only.')), headers: { allow: ALLOW } };
  }
  if (found === undefined || found.route.access === 'static') return notFound({ ...r, params: {} });
  if (found.route.access === 'developer' && r.frame.developer === undefined) return { redirect: '/login' };
  return found.route.handler(ctx, { ...r, params: found.params });
}

/** What the handlers share, made once: src/admin's deps (the products of the config serving now), the sessions and the reveals. */
function portalContext(portal: PortalSettings, services: PortalServices, catalog: Catalog, options: { secure: boolean; origins: PortalOrigins }): PortalContext {
  const { store, secretKey, clock } = services;
  const deps = {
    store,
    secretKey,
    clock,
    logger: services.logger,
    passwords: services.passwords,
    portal,
    keyOverlapMs: portal.keyOverlapMs,
    get products() {
      return catalog().products;
    },
  };
  return {
    portal,
    services,
    deps,
    catalog,
    sessions: createSessions({ store, secretKey, clock, lifetimeMs: portal.sessionLifetimeMs, secure: options.secure }),
    reveals: createReveals({ store, secretKey, clock, lifetimeMs: REVEAL_LIFETIME_MS, secure: options.secure }),
    origins: options.origins,
    gatewayOrigin: new URL(portal.gatewayUrl).origin,
  };
}

export function createPortalHandler(settings: { portal: PortalSettings }, services: PortalServices, catalog: Catalog, options: { secure: boolean; origins: PortalOrigins }) {
  const { portal } = settings;
  const { logger, mailer } = services;
  const ctx = portalContext(portal, services, catalog, options);
  const { sessions, origins } = ctx;
  const lookup = compileRoutes(portalRoutes(), { mail: mailer !== undefined });
  const securityHeaders = options.secure ? { ...securityHeadersFor(ctx.gatewayOrigin), ...HSTS } : securityHeadersFor(ctx.gatewayOrigin);
  const clientIp = clientIpOfCatalog(catalog);

  function send(res: ServerResponse, method: string, status: number, headers: Record<string, string | string[]>, body: Buffer | string | undefined): void {
    const bytes = body === undefined ? undefined : Buffer.from(body);
    res.writeHead(status, { ...securityHeaders, ...headers, ...(bytes === undefined ? {} : { 'content-length': String(bytes.length) }) });
    res.end(method === 'HEAD' ? undefined : bytes);
  }

  return async function handlePortal(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    let frame: pages.Frame = { portal, mail: mailer !== undefined, developer: undefined, csrf: '' };
    let visitor: Visitor | undefined;
    let path = '(rejected)';
    try {
      // Before anything else: a request under a name that is not the portal's (DNS rebinding) gets no page.
      if (!origins.knowsHost(req.headers.host)) {
        send(res, method, 421, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }, 'This portal does not answer for the host named in the request.\n');
        return;
      }
      // The gateway's own path rules: nothing is normalised silently.
      const target = splitTarget(req.url ?? '/');
      path = target.path;
      const found = lookup(method, path);
      if (found?.route.access === 'static') {
        send(res, method, 200, { 'content-type': found.route.asset.type, 'cache-control': 'public, max-age=3600' }, found.route.asset.body);
        return;
      }
      let form = new Map<string, string>();
      if (method === 'POST') {
        if (!origins.sameOrigin(req)) throw new GatewayError(403, 'cross_origin', 'This form was sent from another site. Open the portal itself and send it from there.');
        if (!isFormContentType(req.headers['content-type'])) throw new GatewayError(415, 'unsupported_media_type', 'Forms are sent as application/x-www-form-urlencoded.');
        form = parseForm((await readBody(req, FORM_LIMIT)).toString('utf8'));
      }
      // The session is looked up once the whole request is in: a form held open while its session
      // ends (a reset, a disable) acts as no one.
      visitor = await sessions.visitor(req);
      frame = { portal, mail: mailer !== undefined, developer: visitor.developer, csrf: sessions.csrfToken(visitor.id) };
      if (method === 'POST') {
        if (!sessions.checkCsrf(visitor.id, form.get('csrf'))) {
          throw new GatewayError(403, 'csrf', 'This form was not sent from this portal page in this browser session. Go back, reload the page and try again.');
        }
      }
      const answer = await dispatch(ctx, found, { req, clientIp: clientIp(req), path, query: new URLSearchParams(target.query), visitor, frame, form }, method);
      const cookies = answer.cookies ?? (visitor.fresh ? [sessions.cookie(visitor.id)] : []);
      const headers: Record<string, string | string[]> = { 'cache-control': 'no-store', ...answer.headers, ...(cookies.length === 0 ? {} : { 'set-cookie': cookies }) };
      if ('redirect' in answer) send(res, method, 303, { ...headers, location: answer.redirect }, undefined);
      else if ('file' in answer) send(res, method, answer.status, { ...headers, 'content-type': answer.file.type }, answer.file.body);
      else send(res, method, answer.status, { ...headers, 'content-type': 'text/html; charset=utf-8' }, answer.page.text);
    } catch (thrown) {
      // The one place a portal failure becomes a page; an internal error's message stays in the log.
      const err = asGatewayError(thrown);
      if (!err.expose) logger.error({ err: err.cause ?? err, path }, 'portal request failed');
      const status = err.expose ? err.status : 500;
      const message = err.expose ? err.message : 'Something went wrong on our side; nothing was changed. Try again in a moment.';
      // A first-time visitor gets its cookie even now, so that reloading the form works.
      const cookie = visitor?.fresh === true ? { 'set-cookie': sessions.cookie(visitor.id) } : {};
      const headers = { ...(err.expose ? err.headers : undefined), ...cookie, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' };
      if (!res.headersSent) send(res, method, status, headers, pages.messagePage(frame, STATUS_CODES[status] ?? 'Error', message).text);
      else res.destroy();
    }
  };
}

/** The client's address as listen.trustedProxies says, made again only when a reload brings other trusted proxies. */
function clientIpOfCatalog(catalog: Catalog): (req: IncomingMessage) => string {
  let proxies: readonly string[] | undefined;
  let clientIpOf: (req: IncomingMessage) => string = () => '';
  return (req) => {
    const { trustedProxies } = catalog().listen;
    if (trustedProxies !== proxies) {
      proxies = trustedProxies;
      clientIpOf = createClientIp(trustedProxies);
    }
    return clientIpOf(req);
  };
}

/** Starts the portal's listener when the config declares one. */
export async function startPortal(config: Config, services: PortalServices, catalog: Catalog, port?: number): Promise<Listener | undefined> {
  const { portal } = config;
  if (portal === undefined) return undefined;
  const tls = portal.tls && { cert: readFileSync(portal.tls.cert), key: readFileSync(portal.tls.key) };
  // The port is part of the portal's names (its Host and links), so it is chosen before listening.
  const wanted = port ?? portal.port;
  const bound = wanted === 0 ? await freePort(portal.host) : wanted;
  const origins = portalOrigins({ host: portal.host, port: bound, secure: tls !== undefined, publicUrl: portal.publicUrl });
  // The same limits on slow senders as the gateway's listener.
  const handler = createPortalHandler({ portal }, services, catalog, { secure: tls !== undefined, origins });
  const listener = await listen(handler, portal.host, bound, { tls, timeouts: config.listen.timeouts, onError: (err) => services.logger.error({ err }, 'portal request failed') });
  services.logger.info({ url: origins.publicUrl, address: listener.url }, 'developer portal listening');
  return listener;
}
