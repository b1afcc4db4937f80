// What the portal's handlers share: the types of a request, an answer and a route, the services
// and settings of one portal, and the few answers every area gives (a page, not found, a refusal).
import type { IncomingMessage } from 'node:http';
import type { Login } from '../admin/accounts.ts';
import { actingAs, type DeveloperDeps, type PortalDeps } from '../admin/deps.ts';
import { AdminError } from '../admin/errors.ts';
import type { Config, PortalSettings, ProductSettings } from '../config/load.ts';
import type { Message } from '../mail.ts';
import type { Services } from '../services.ts';
import type { Developer } from '../store/port/index.ts';
import type { Html } from '../html.ts';
import type { PortalOrigins } from './origin.ts';
import * as pages from './pages.ts';
import type { Reveals } from './reveal.ts';
import type { Sessions, Visitor } from './session.ts';

/** The services the portal uses. */
export type PortalServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'usage' | 'passwords' | 'mailer'>;

/** The products, routes, OpenAPI documents and trusted proxies of the config serving now: a reload changes what the portal shows and whom it believes. */
export type Catalog = () => Pick<Config, 'products' | 'routes' | 'openapi' | 'listen'>;

/**
 * What a handler answers: a page with its status, a file that is not a page (an OpenAPI document),
 * or a redirect (303: the browser then GETs it). Cookies replace a new visitor's.
 */
export type Answer = ({ status: number; page: Html } | { status: number; file: { type: string; body: string } } | { redirect: string }) & { cookies?: string[]; headers?: Record<string, string> };

export interface Request {
  req: IncomingMessage;
  /** The client's address, as the main listener judges it (X-Forwarded-For from listen.trustedProxies only). */
  clientIp: string;
  path: string;
  /** The named groups of the route's pattern. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  visitor: Visitor;
  frame: pages.Frame;
  /** The submitted form, CSRF-checked (POST only). */
  form: ReadonlyMap<string, string>;
}

export type Handler = (ctx: PortalContext, r: Request) => Promise<Answer>;

/** A file of the portal's own, served as it is. */
export interface Asset {
  type: string;
  body: Buffer;
}

/**
 * One row of the portal's route table. GET also answers HEAD. Who may open it: `static`, anyone,
 * before any session or form is looked at; `anyone`; `developer`, a logged-in developer (a visitor
 * is sent to the login). `mail`: the page makes sense only with mail, and is not there without it.
 */
export type PortalRoute = { method: 'GET' | 'POST'; path: string | RegExp } & ({ access: 'static'; asset: Asset } | { access: 'anyone' | 'developer'; mail?: true; handler: Handler });

/** One portal's settings and services, made once when it starts. */
export interface PortalContext {
  portal: PortalSettings;
  services: PortalServices;
  deps: PortalDeps;
  catalog: Catalog;
  sessions: Sessions;
  reveals: Reveals;
  origins: PortalOrigins;
  /** The origin the try-it panels call, and the only one besides the portal's the pages may reach. */
  gatewayOrigin: string;
}

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
  certificate_by_operator: 403,
  developer_disabled: 403,
  too_many_apps: 403,
  unknown_app: 404,
};

export const page = (status: number, html: Html): Answer => ({ status, page: html });
export const notFound = (r: Request): Answer => page(404, pages.messagePage(r.frame, 'Not found', 'There is no such page here.'));

/** A form the operation refused: the form again with its message, under the status its code has. */
export function refused(err: unknown, render: (message: string) => Html): Answer {
  if (!(err instanceof AdminError)) throw err;
  const answer: Answer = { status: REFUSAL_STATUS[err.code] ?? 400, page: render(err.message) };
  if (err.retryAfter !== undefined) answer.headers = { 'retry-after': String(err.retryAfter) };
  return answer;
}

/** The logged-in developer of a `developer` route (the dispatcher lets no one else in). */
export const developerOf = (r: Request): Developer => r.frame.developer!;

/** src/admin's operations as the request's developer: their own apps and keys only. */
export const asDeveloper = (ctx: PortalContext, r: Request): DeveloperDeps => actingAs(ctx.deps, developerOf(r));

/** A session-changing answer: a new id in the cookie, so no CSRF token issued before still works. */
export async function loggedIn(ctx: PortalContext, login: Login, to: string): Promise<Answer> {
  const id = await ctx.sessions.start(login);
  // The password changed (a reset, the account replaced) while this login was being checked.
  if (id === undefined) throw new AdminError('login_failed', 'your password has just changed: log in again');
  return { redirect: to, cookies: [ctx.sessions.cookie(id)] };
}

/** The products the portal shows. */
export const visible = (ctx: PortalContext): ProductSettings[] => [...ctx.catalog().products.values()].filter((p) => p.visible);
export const visibleProduct = (ctx: PortalContext, name: string | undefined) => visible(ctx).find((p) => p.name === name);

/** A mailed link: the portal's public address, a path, and the link's token. */
export const mailLink = (ctx: PortalContext, path: string, token: string) => `${ctx.origins.publicUrl}${path}?${new URLSearchParams({ token })}`;

/**
 * Mails in the background: the answer must not wait on the mail server, nor differ with what was
 * mailed (or whether it could be). A failure is logged; the message itself, which holds a link, is not.
 */
export function deliver(ctx: PortalContext, message: Message | undefined): void {
  const { mailer, logger } = ctx.services;
  if (message === undefined || mailer === undefined) return;
  mailer.send(message).catch((err: unknown) => logger.error({ err, subject: message.subject }, 'portal mail not sent'));
}
