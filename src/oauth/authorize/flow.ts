// The authorization code flow's pages, as routes of the gateway's table: the authorization
// endpoint, the login (an OpenID provider's, through its answer at the callback, or the gateway's
// form for an authorization server), the consent, and the code sent to the app. Each answer is a
// page or a redirect, written in one place; each failure too (`fail`): to the app's redirect URI
// once it is known good, else as a page.
import type { KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ProductSettings } from '../../config/load.ts';
import { asGatewayError, GatewayError } from '../../errors.ts';
import type { Html } from '../../html.ts';
import type { Failure, RequestContext } from '../../pipeline/context.ts';
import type { Store } from '../../store/port/index.ts';
import { unusableBecause } from '../client-auth.ts';
import { OAUTH_PATHS } from '../endpoint.ts';
import { describable, OAuthError } from '../errors.ts';
import { parseForm } from '../form.ts';
import { issueCode } from './code.ts';
import type { IdentityProviderClient } from './identity-provider.ts';
import * as pages from './pages.ts';
import { AuthorizationError, redirectWith } from './request.ts';
import type { Transaction, Transactions } from './transaction.ts';

/** What the flow is compiled with. */
export interface FlowEnv {
  store: Store;
  secretKey: KeyObject;
  clock: () => number;
  logger: Logger;
  /** oauth.issuer: the `iss` of every answer (RFC 9207). */
  issuer: string;
  /** Its origin, the one the pages' forms must come from. */
  issuerOrigin: string;
  /** Where the OpenID providers send the user back: the redirect URI registered at each. */
  callbackUrl: string;
  products: ReadonlyMap<string, ProductSettings>;
  identityProviders: ReadonlyMap<string, IdentityProviderClient>;
  /** Checks an authorization server's user (src/oauth/password-check.ts), throttled. */
  checkPassword(attempt: { appId: string; authServer: string; username: string; password: string; now: number }): Promise<string>;
  transactions: Transactions;
}

/** What a step of the flow answers: a page, or a redirect (303: the browser then GETs it). */
export type FlowAnswer = ({ status: number; page: Html; formTo?: string } | { redirect: string }) & { cookies?: string[]; headers?: Record<string, string> };

/**
 * No page can be framed (clickjacking) or load anything from elsewhere; forms go to the gateway,
 * and to the app's redirect URI that the consent's answer redirects to (form-action applies to
 * redirects). A page's URL holds its transaction, so it goes to no other site as a referrer; but
 * same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with the page's
 * own form (the Fetch standard, "serializing a request origin"), which readOwnForm refuses.
 */
function securityHeaders(formTo: string | undefined): Record<string, string> {
  const forms = formTo === undefined ? "'self'" : `'self' ${formTo}`;
  return {
    'content-security-policy': `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${forms}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

/** The CSP source of where a redirect URI leads: its origin (any port on loopback, RFC 8252 §7.3), or its private-use scheme. */
export function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return url.protocol;
  return url.protocol === 'http:' ? `${url.protocol}//${url.hostname}:*` : url.origin;
}

export function send(req: IncomingMessage, res: ServerResponse, answer: FlowAnswer): void {
  const headers: Record<string, string | string[]> = { ...answer.headers, ...securityHeaders('page' in answer ? answer.formTo : undefined) };
  if (answer.cookies !== undefined && answer.cookies.length > 0) headers['set-cookie'] = answer.cookies;
  if ('redirect' in answer) {
    res.writeHead(303, { ...headers, location: answer.redirect, 'content-length': '0' }).end();
    return;
  }
  const body = Buffer.from(answer.page.text);
  res.writeHead(answer.status, { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export const page = (status: number, html: Html, more: { formTo?: string; cookies?: string[]; headers?: Record<string, string> } = {}): FlowAnswer => ({ status, page: html, ...more });

/** An answer the flow gives as a page, whatever step: the request cannot go on and cannot go back to the app. */
export class FlowStop extends GatewayError {
  readonly title: string;
  constructor(status: number, title: string, message: string, options: { detail?: string; headers?: Record<string, string> } = {}) {
    super(status, 'authorization_stopped', message, options);
    this.title = title;
  }
}

export const expired = () =>
  new FlowStop(400, 'Sign-in expired', 'This sign-in has expired, was already completed, or was started in another browser.', { detail: 'no transaction cookie for this id' });

/** The one writer of the flow's failures: to the app when its redirect URI is known good, else a page. */
export function flowFailure(env: Pick<FlowEnv, 'logger' | 'issuer'>): Failure {
  return function authorizationFailure(ctx: RequestContext, thrown: unknown): GatewayError {
    if (thrown instanceof AuthorizationError && thrown.redirectUri !== undefined) {
      send(ctx.req, ctx.res, { redirect: redirectWith(thrown.redirectUri, { error: thrown.code, error_description: describable(thrown.message), state: thrown.state, iss: env.issuer }) });
      ctx.log = { error: thrown.code };
      return thrown;
    }
    const err = asGatewayError(thrown);
    if (!err.expose) env.logger.error({ err: err.cause ?? err, id: ctx.requestId }, 'authorization flow failed');
    const status = err.expose ? err.status : 500;
    const title = err instanceof FlowStop ? err.title : status === 503 ? 'Try again later' : 'Cannot continue';
    const message = err.expose ? err.message : 'Something went wrong on our side. Try again in a moment.';
    if (!ctx.res.headersSent) send(ctx.req, ctx.res, page(status, pages.messagePage(title, message), { headers: err.expose ? { ...err.headers } : {} }));
    else ctx.res.destroy();
    ctx.log = { error: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }) };
    return err;
  };
}

/**
 * The parameters a refusal page may name. Any other name is text of whoever wrote the link, and
 * the page is the gateway's own: naming it would let a link show a message of its choosing there.
 */
const REQUEST_PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'response_mode', 'request', 'request_uri'];

/** The URL query of a request as single-valued parameters; a repeated one stops the flow (RFC 6749 §3.1). */
export function queryParameters(query: string): Map<string, string> {
  try {
    return parseForm(query);
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    const all = new URLSearchParams(query);
    const named = REQUEST_PARAMETERS.find((name) => all.getAll(name).length > 1);
    const what = named === undefined ? 'a parameter' : `parameter '${named}'`;
    throw new FlowStop(400, 'Cannot continue', `This request cannot be used: ${what} is repeated.`, { detail: err.message.slice(0, 200) });
  }
}

/**
 * After the login: the code at once when the product skips consent or the user already granted
 * these scopes; else the consent page, with the user in the transaction.
 */
export async function afterLogin(env: FlowEnv, tx: Transaction, subject: string, now: number): Promise<FlowAnswer> {
  const loggedIn: Transaction = { id: tx.id, request: tx.request, expiresAt: tx.expiresAt, subject };
  const product = productOf(env, tx);
  if (product.authorization!.consent === 'skip') return answerWithCode(env, loggedIn, now);
  const granted = await env.store.consents.findConsent(tx.request.appId, subject, now);
  if (tx.request.scope.every((s) => granted.includes(s))) return answerWithCode(env, loggedIn, now);
  return { redirect: `${OAUTH_PATHS.consent}?tx=${tx.id}`, cookies: [env.transactions.cookie(loggedIn, now)] };
}

export function productOf(env: Pick<FlowEnv, 'products'>, tx: Transaction): ProductSettings {
  const product = env.products.get(tx.request.product);
  // A reload took the product, or its authorization code grant, away meanwhile.
  if (product?.authorization === undefined) throw new FlowStop(400, 'Cannot continue', "The app's API no longer offers this sign-in.");
  return product;
}

/**
 * The code, sent to the app (§4.1.2, RFC 9207): once per transaction, on whichever instance, and
 * only while the app may still sign users in. `approved`: the user approved it on the consent page,
 * which is remembered only once the transaction is spent, so that an approval refused as spent
 * (sent again, from a second tab, after a deny) leaves no consent behind.
 */
export async function answerWithCode(env: FlowEnv, tx: Transaction, now: number, { approved = false } = {}): Promise<FlowAnswer> {
  const { request } = tx;
  const client = await env.store.cache.findClient(request.clientId);
  if (client === undefined || unusableBecause(client, now) !== undefined) {
    throw new FlowStop(400, 'Cannot continue', 'The app can no longer sign users in.');
  }
  if (!(await env.transactions.spend(tx, now))) throw expired();
  const product = productOf(env, tx);
  if (approved) {
    const before = await env.store.consents.findConsent(request.appId, tx.subject!, now);
    const scopes = [...new Set([...before, ...request.scope])];
    await env.store.consents.saveConsent(request.appId, tx.subject!, scopes, now, now + product.authorization!.consentLifetimeMs);
  }
  const code = await issueCode(env.store, {
    appId: request.appId,
    key: request.clientId,
    product,
    scope: request.scope.join(' '),
    subject: tx.subject!,
    redirectUri: request.redirectUriNamed ? request.redirectUri : '',
    challenge: request.challenge,
    now,
  });
  return { redirect: redirectWith(request.redirectUri, { code, state: request.state, iss: env.issuer }), cookies: [env.transactions.clear(tx.id)] };
}
