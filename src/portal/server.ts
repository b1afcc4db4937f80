// The developer portal: its own listener, server-rendered pages, forms that work without
// JavaScript. Every change goes through src/admin, as `gateway admin` does.
import { readFileSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { audit } from '../admin/audit.ts';
import * as ops from '../admin/operations.ts';
import type { Config, PortalSettings, ProductSettings } from '../config/load.ts';
import type { ApiDocument } from '../openapi/document.ts';
import type { Services } from '../services.ts';
import { asGatewayError, GatewayError } from '../errors.ts';
import { readBody } from '../http/body.ts';
import { createClientIp } from '../http/ip.ts';
import { freePort, listen, type Listener } from '../http/listener.ts';
import { splitTarget } from '../http/request.ts';
import { isFormContentType, parseForm } from '../oauth/form.ts';
import { quotaUsed } from '../policies/quota.ts';
import { HOUR_MS } from '../usage.ts';
import type { Message } from '../mail.ts';
import { isLive, type Developer } from '../store/port/index.ts';
import { CSS, JS } from './assets.ts';
import type { Html } from './html.ts';
import * as mails from './mails.ts';
import { portalOrigins, type PortalOrigins } from './origin.ts';
import * as pages from './pages.ts';
import type { ReferenceOperation } from './reference.ts';
import { createReveals, type Shown } from './reveal.ts';
import { createSessions, newVisitorId, type Visitor } from './session.ts';

const FORM_LIMIT = 16 * 1024;

/** How long a new secret waits for the GET that shows it: the redirect follows at once. */
const REVEAL_LIFETIME_MS = 2 * 60_000;

/** The status of each refusal of src/admin the portal shows; any other is a 400. */
const REFUSAL_STATUS: Readonly<Record<string, number>> = {
  login_failed: 401,
  login_throttled: 429,
  mail_throttled: 429,
  duplicate_developer: 409,
  unverified_email: 403,
  duplicate_app: 409,
  not_invited: 403,
  invalid_invitation: 403,
  app_disabled: 403,
  developer_disabled: 403,
  too_many_apps: 403,
  unknown_app: 404,
};

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

const ASSETS: Record<string, { type: string; body: Buffer }> = {
  '/assets/portal.css': { type: 'text/css; charset=utf-8', body: Buffer.from(CSS) },
  '/assets/portal.js': { type: 'text/javascript; charset=utf-8', body: Buffer.from(JS) },
};

/** What a handler answers: a page with its status, or a redirect (303: the browser then GETs it). Cookies replace a new visitor's. */
type Answer = ({ status: number; page: Html } | { redirect: string }) & { cookies?: string[]; headers?: Record<string, string> };

interface Request {
  req: IncomingMessage;
  /** The client's address, as the main listener judges it (X-Forwarded-For from listen.trustedProxies only). */
  clientIp: string;
  path: string;
  query: URLSearchParams;
  visitor: Visitor;
  frame: pages.Frame;
  /** The submitted form, CSRF-checked (POST only). */
  form: ReadonlyMap<string, string>;
}

type Handler = (r: Request) => Promise<Answer>;

/** The services the portal uses. */
export type PortalServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'usage' | 'passwords' | 'mailer'>;

/** The products, routes, OpenAPI documents and trusted proxies of the config serving now: a reload changes what the portal shows and whom it believes. */
export type Catalog = () => Pick<Config, 'products' | 'routes' | 'openapi' | 'listen'>;

export function createPortalHandler(
  settings: { portal: PortalSettings },
  services: PortalServices,
  catalog: Catalog,
  options: { secure: boolean; origins: PortalOrigins },
) {
  const { portal } = settings;
  const { store, clock, logger, mailer, usage } = services;
  const deps: ops.PortalDeps = {
    store,
    secretKey: services.secretKey,
    clock,
    logger,
    passwords: services.passwords,
    portal,
    get products() {
      return catalog().products;
    },
  };
  const { origins } = options;
  // The origin the try-it panels call, and the only one besides the portal's the pages may reach.
  const gatewayOrigin = new URL(portal.gatewayUrl).origin;
  const securityHeaders = options.secure ? { ...securityHeadersFor(gatewayOrigin), ...HSTS } : securityHeadersFor(gatewayOrigin);
  // Made again only when a reload brings other trusted proxies.
  let proxies: readonly string[] | undefined;
  let clientIpOf: (req: IncomingMessage) => string = () => '';
  const clientIp = (req: IncomingMessage) => {
    const { trustedProxies } = catalog().listen;
    if (trustedProxies !== proxies) {
      proxies = trustedProxies;
      clientIpOf = createClientIp(trustedProxies);
    }
    return clientIpOf(req);
  };
  const sessions = createSessions({ store, secretKey: deps.secretKey, clock, lifetimeMs: portal.sessionLifetimeMs, secure: options.secure });
  const reveals = createReveals({ store, secretKey: deps.secretKey, clock, lifetimeMs: REVEAL_LIFETIME_MS, secure: options.secure });
  const visible = (): ProductSettings[] => [...catalog().products.values()].filter((p) => p.visible);
  const visibleProduct = (name: string | undefined) => visible().find((p) => p.name === name);

  /** A mailed link: the portal's public address, a path, and the link's token. */
  const link = (path: string, token: string) => `${origins.publicUrl}${path}?${new URLSearchParams({ token })}`;
  /**
   * Mails in the background: the answer must not wait on the mail server, nor differ with what was
   * mailed (or whether it could be). A failure is logged; the message itself, which holds a link, is not.
   */
  function deliver(message: Message | undefined): void {
    if (message === undefined || mailer === undefined) return;
    mailer.send(message).catch((err: unknown) => logger.error({ err, subject: message.subject }, 'portal mail not sent'));
  }
  /** Pages that only make sense with mail: not there without it. */
  const withMail = (handler: Handler): Handler => (r) => (mailer === undefined ? Promise.resolve(notFound(r)) : handler(r));

  const page = (status: number, html: Html): Answer => ({ status, page: html });
  const notFound = (r: Request): Answer => page(404, pages.messagePage(r.frame, 'Not found', 'There is no such page here.'));
  /** A form the operation refused: the form again with its message, under the status its code has. */
  function refused(err: unknown, render: (message: string) => Html): Answer {
    if (!(err instanceof ops.AdminError)) throw err;
    const answer: Answer = { status: REFUSAL_STATUS[err.code] ?? 400, page: render(err.message) };
    if (err.retryAfter !== undefined) answer.headers = { 'retry-after': String(err.retryAfter) };
    return answer;
  }

  /** A session-changing answer: a new id in the cookie, so no CSRF token issued before still works. */
  async function loggedIn(login: ops.Login, to: string): Promise<Answer> {
    const id = await sessions.start(login);
    // The password changed (a reset, the account replaced) while this login was being checked.
    if (id === undefined) throw new ops.AdminError('login_failed', 'your password has just changed: log in again');
    return { redirect: to, cookies: [sessions.cookie(id)] };
  }

  async function appView(app: ops.AppDetails): Promise<pages.AppView> {
    const now = clock();
    const product = catalog().products.get(app.product);
    const current = now - (now % HOUR_MS);
    await usage.flush();
    return {
      app,
      product,
      credentials: app.credentials,
      usage: await store.usage.since(app.id, current - 23 * HOUR_MS),
      quota:
        product?.quota === undefined
          ? undefined
          : { settings: product.quota, used: await quotaUsed(product.quota, 'product', store.counters, product.name, { appId: app.id, developerEmail: app.developerEmail }, now) },
      now,
    };
  }

  const publicGet: Record<string, Handler> = {
    '/': async (r) => page(200, pages.productsPage(r.frame, visible())),
    '/login': async (r) => page(200, pages.loginPage(r.frame, r.query.get('done') === 'password' ? { notice: 'Your password was changed: log in again.' } : {})),
    // An invitation link carries the email and the code: /signup?email=…&invitation=gwi_…
    '/signup': async (r) => page(200, pages.signupPage(r.frame, { email: r.query.get('email') ?? '', invitation: r.query.get('invitation') ?? '' })),
    '/forgot': withMail(async (r) => page(200, pages.forgotPage(r.frame, {}))),
    // The links mailed carry their token; the pages only fill it into a form, which spends it when sent.
    '/verify': withMail(async (r) => page(200, pages.verifyPage(r.frame, { token: r.query.get('token') ?? '' }))),
    '/reset': withMail(async (r) => page(200, pages.resetPage(r.frame, { token: r.query.get('token') ?? '' }))),
  };

  const publicPost: Record<string, Handler> = {
    '/login': async (r) => {
      const email = r.form.get('email') ?? '';
      try {
        return await loggedIn(await ops.logIn(deps, { email, password: r.form.get('password') ?? '', clientIp: r.clientIp }), '/apps');
      } catch (err) {
        return refused(err, (error) => pages.loginPage(r.frame, { email, error }));
      }
    },
    '/signup': async (r) => {
      const input = { email: r.form.get('email') ?? '', name: r.form.get('name') ?? '', password: r.form.get('password') ?? '', invitation: r.form.get('invitation')?.trim() ?? '' };
      try {
        if (input.invitation !== '') return await loggedIn(await ops.acceptInvitation(deps, { ...input, clientIp: r.clientIp }), '/apps');
        const result = await ops.openSignUp(deps, { ...input, clientIp: r.clientIp });
        // The same page whether the address was free or taken; only the mail differs, and only its owner reads it.
        deliver(
          result.kind === 'created'
            ? mails.confirmationMail(portal.title, result.developer.email, link('/verify', result.token))
            : mails.accountExistsMail(portal.title, result.developer.email, `${origins.publicUrl}/forgot`),
        );
        return page(200, pages.checkEmailPage(r.frame, 'signup'));
      } catch (err) {
        return refused(err, (error) => pages.signupPage(r.frame, { email: input.email, name: input.name, invitation: input.invitation, error }));
      }
    },
    '/verify': withMail(async (r) => {
      const token = r.form.get('token') ?? '';
      const email = r.form.get('email') ?? '';
      try {
        return await loggedIn(await ops.confirmEmail(deps, { token, email, password: r.form.get('password') ?? '', clientIp: r.clientIp }), '/apps?done=verified');
      } catch (err) {
        return refused(err, (error) => pages.verifyPage(r.frame, { token, email, error }));
      }
    }),
    '/forgot': withMail(async (r) => {
      const email = r.form.get('email') ?? '';
      try {
        const { later } = await ops.requestPasswordReset(deps, { email, clientIp: r.clientIp });
        // Nothing is mailed for an address without an account; the answer is the same, and is
        // sent before the account is looked up, so that it takes as long either way.
        setImmediate(() => {
          later()
            .then((reset) => deliver(reset && mails.resetMail(portal.title, reset.developer.email, link('/reset', reset.token))))
            .catch((err: unknown) => logger.error({ err }, 'password reset link not made'));
        });
        return page(200, pages.checkEmailPage(r.frame, 'reset'));
      } catch (err) {
        return refused(err, (error) => pages.forgotPage(r.frame, { email, error }));
      }
    }),
    '/reset': withMail(async (r) => {
      const token = r.form.get('token') ?? '';
      try {
        await ops.resetPassword(deps, { token, password: r.form.get('password') ?? '', clientIp: r.clientIp });
      } catch (err) {
        return refused(err, (error) => pages.resetPage(r.frame, { token, error }));
      }
      return { redirect: '/login?done=password' };
    }),
    '/logout': async (r) => {
      await sessions.end(r.visitor.id);
      const dev = r.visitor.developer;
      // Sessions are the portal's, not src/admin's: the line is written here. A visitor without a session ended nothing.
      if (dev !== undefined) audit(logger, 'developer.logout', { actor: { kind: 'developer', id: dev.id, email: dev.email }, developer: { id: dev.id, email: dev.email } });
      return { redirect: '/', cookies: [sessions.cookie(newVisitorId())] };
    },
  };

  const NOTICES = new Map([
    ['verified', 'Your email address is confirmed: you can register apps.'],
    ['revoked', 'The key is revoked.'],
    ['deleted', 'The app is deleted; its tokens no longer work.'],
  ]);

  const privateGet: Record<string, Handler> = {
    '/apps': async (r) => {
      const dev = r.frame.developer!;
      const rows = (await ops.listApps(ops.actingAs(deps, dev))).map((app) => {
        const live = app.credentials.filter((c) => isLive(c, clock()));
        return { app, key: live.at(-1)?.key, product: catalog().products.get(app.product) };
      });
      return page(200, pages.appsPage(r.frame, rows, NOTICES.get(r.query.get('done') ?? '')));
    },
    '/apps/new': async (r) => page(200, pages.newAppPage(r.frame, visible(), r.query.has('product') ? { product: r.query.get('product')! } : {})),
    '/account': async (r) => page(200, pages.accountPage(r.frame, r.query.get('done') === 'password' ? { notice: 'Your password is changed.' } : {})),
  };

  const privatePost: Record<string, Handler> = {
    '/apps': async (r) => {
      const dev = r.frame.developer!;
      const form = { name: r.form.get('name') ?? '', product: r.form.get('product') ?? '' };
      const product = visibleProduct(form.product);
      if (product === undefined) return page(400, pages.newAppPage(r.frame, visible(), { ...form, error: 'choose one of the API products' }));
      try {
        const { app, key, secret } = await ops.createApp(ops.actingAs(deps, dev), { developer: dev.email, name: form.name, product: product.name });
        return toReveal(r, app.id, { key, secret });
      } catch (err) {
        return refused(err, (error) => pages.newAppPage(r.frame, visible(), { ...form, error }));
      }
    },
    '/account/password': async (r) => {
      const dev = r.frame.developer!;
      try {
        const login = await ops.changePassword(deps, dev, { current: r.form.get('current') ?? '', next: r.form.get('next') ?? '' });
        // Every session ended; this browser starts a new one.
        return { ...(await loggedIn(login, '/account')), redirect: '/account?done=password' };
      } catch (err) {
        return refused(err, (error) => pages.accountPage(r.frame, { error }));
      }
    },
  };

  /**
   * Post/Redirect/Get: the POST that made a secret sends the browser to the page that shows it, so
   * that reloading that page repeats nothing. The secret goes along sealed in a cookie, never in the URL.
   */
  const toReveal = (r: Request, appId: string, shown: Shown): Answer => ({ redirect: reveals.path(appId), cookies: [reveals.seal(r.visitor.id, appId, shown)] });

  /**
   * The new secret, once: this GET spends the sealed cookie in the store and clears it, so a
   * reload, another visit or the same cookie sent again finds it gone. A store that cannot spend
   * it throws (503), and the cookie stays for a try once the store answers.
   */
  async function reveal(r: Request, app: ops.AppDetails): Promise<Answer> {
    const shown = await reveals.open(r.req, r.visitor.id, app.id);
    const answer = shown === undefined ? page(410, pages.secretGonePage(r.frame, app)) : page(200, pages.secretPage(r.frame, { app, ...shown }));
    return { ...answer, cookies: [reveals.clear(app.id)] };
  }

  /** /products/{name}/reference: the product's operations from OpenAPI documents; undefined when it has none. */
  async function referenceRoute(r: Request, product: ProductSettings): Promise<Answer | undefined> {
    const { routes, openapi } = catalog();
    const docs = new Map<string, { doc: ApiDocument; operations: ReferenceOperation[] }>();
    for (const name of product.routes) {
      const route = routes.get(name);
      const doc = route?.operation && openapi.get(route.operation.api);
      if (route?.operation === undefined || doc === undefined) continue;
      const entry = docs.get(route.operation.api) ?? { doc, operations: [] };
      entry.operations.push({ route, operation: route.operation.operation });
      docs.set(route.operation.api, entry);
    }
    if (docs.size === 0) return undefined;
    const dev = r.frame.developer;
    // Only apps that can get a token now, each by its newest live key; never a secret (the store has only their hashes).
    const apps =
      dev === undefined
        ? undefined
        : (await ops.listApps(ops.actingAs(deps, dev))).flatMap((app) => {
            const key = app.credentials.filter((c) => isLive(c, clock())).at(-1)?.key;
            return app.product === product.name && app.status === 'active' && app.approval !== 'pending' && key !== undefined ? [{ name: app.name, key }] : [];
          });
    return page(200, pages.referencePage(r.frame, product, [...docs.values()], { gatewayUrl: gatewayOrigin, grants: product.grants, apps, productName: product.name }));
  }

  /** A developer's app by its id; another developer's is as absent as an unknown one. */
  const ownApp = (developer: Developer, id: string) =>
    ops.findApp(ops.actingAs(deps, developer), { id }).catch((err: unknown) => {
      if (err instanceof ops.AdminError && err.code === 'unknown_app') return undefined;
      throw err;
    });

  const APP_PATH = /^\/apps\/([A-Za-z0-9_-]{1,64})(\/delete|\/rotate|\/secret|\/keys\/([A-Za-z0-9]{1,64})\/revoke)?$/;

  /** /apps/{id}, its delete confirmation, and its actions. */
  async function appRoute(r: Request, method: 'GET' | 'POST'): Promise<Answer | undefined> {
    const m = APP_PATH.exec(r.path);
    if (m === null) return undefined;
    const [, id, action, key] = m;
    const app = await ownApp(r.frame.developer!, id!);
    if (app === undefined) return notFound(r);
    if (method === 'GET') {
      if (action === undefined) return page(200, pages.appPage(r.frame, await appView(app), { notice: NOTICES.get(r.query.get('done') === 'revoked' ? 'revoked' : '') }));
      if (action === '/delete') return page(200, pages.deletePage(r.frame, app));
      if (action === '/secret') return reveal(r, app);
      return undefined;
    }
    if (action === '/rotate') {
      try {
        const { key, secret, overlapUntil } = await ops.rotateKey(ops.actingAs(deps, r.frame.developer!), { id: app.id });
        return toReveal(r, app.id, { key, secret, overlapUntil });
      } catch (err) {
        const view = await appView(app);
        return refused(err, (error) => pages.appPage(r.frame, view, { error }));
      }
    }
    if (action === '/delete') {
      try {
        await ops.deleteApp(ops.actingAs(deps, r.frame.developer!), { id: app.id });
      } catch (err) {
        const view = await appView(app);
        return refused(err, (error) => pages.appPage(r.frame, view, { error }));
      }
      return { redirect: '/apps?done=deleted' };
    }
    if (key !== undefined) {
      if (!app.credentials.some((c) => c.key === key)) return notFound(r);
      await ops.revokeKey(ops.actingAs(deps, r.frame.developer!), key).catch((err: unknown) => {
        if (!(err instanceof ops.AdminError && err.code === 'already_revoked')) throw err;
      });
      return { redirect: `/apps/${app.id}?done=revoked` };
    }
    return undefined;
  }

  async function route(r: Request, method: string): Promise<Answer> {
    const dev = r.frame.developer;
    if (method === 'GET' || method === 'HEAD') {
      const open = publicGet[r.path];
      if (open !== undefined) return open(r);
      const product = /^\/products\/([A-Za-z0-9_.-]+)(\/reference)?$/.exec(r.path);
      if (product !== null) {
        const p = visibleProduct(product[1]);
        if (p === undefined) return notFound(r);
        if (product[2] !== undefined) return (await referenceRoute(r, p)) ?? notFound(r);
        return page(200, pages.productPage(r.frame, p, p.routes.map((name) => catalog().routes.get(name)!)));
      }
      if (dev === undefined) return privateGet[r.path] !== undefined || APP_PATH.test(r.path) ? { redirect: '/login' } : notFound(r);
      return (await privateGet[r.path]?.(r)) ?? (await appRoute(r, 'GET')) ?? notFound(r);
    }
    if (method !== 'POST') return { ...page(405, pages.messagePage(r.frame, 'Method not allowed', 'This page answers GET and POST only.')), headers: { allow: ALLOW } };
    const open = publicPost[r.path];
    if (open !== undefined) return open(r);
    if (dev === undefined) return privatePost[r.path] !== undefined || APP_PATH.test(r.path) ? { redirect: '/login' } : notFound(r);
    return (await privatePost[r.path]?.(r)) ?? (await appRoute(r, 'POST')) ?? notFound(r);
  }

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
      const asset = ASSETS[path];
      if (asset !== undefined && (method === 'GET' || method === 'HEAD')) {
        send(res, method, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=3600' }, asset.body);
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
      const answer = await route({ req, clientIp: clientIp(req), path, query: new URLSearchParams(target.query), visitor, frame, form }, method);
      const cookies = answer.cookies ?? (visitor.fresh ? [sessions.cookie(visitor.id)] : []);
      const headers: Record<string, string | string[]> = { 'cache-control': 'no-store', ...answer.headers, ...(cookies.length === 0 ? {} : { 'set-cookie': cookies }) };
      if ('redirect' in answer) send(res, method, 303, { ...headers, location: answer.redirect }, undefined);
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
  services.logger.info({ url: listener.url }, 'developer portal listening');
  return listener;
}
