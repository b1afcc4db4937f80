// The authorization flow's steps, one per path and method: each reads what it needs, answers with
// a page or a redirect (src/oauth/authorize/flow.ts writes both), and throws what it refuses.
import type { IncomingMessage } from 'node:http';
import { readBody } from '../../http/body.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import { OAuthError } from '../errors.ts';
import { isFormContentType, parseForm } from '../form.ts';
import { OAUTH_PATHS } from '../endpoint.ts';
import { afterLogin, answerWithCode, expired, FlowStop, formTarget, page, productOf, queryParameters, send, type FlowAnswer, type FlowEnv } from './flow.ts';
import { ProviderLoginError, transactionOfState } from './identity-provider.ts';
import * as pages from './pages.ts';
import type { PushedRequests } from './pushed.ts';
import { AuthorizationError, readAuthorizationRequest } from './request.ts';
import type { Transaction } from './transaction.ts';

const FORM_LIMIT = 16 * 1024;

type FlowStep = (ctx: RequestContext) => Promise<void>;

/** A step answering GET (and HEAD) only. */
function get(answer: (ctx: RequestContext) => Promise<FlowAnswer>): FlowStep {
  return async (ctx) => {
    if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw new FlowStop(405, 'Method not allowed', 'This page answers GET only.', { headers: { allow: 'GET, HEAD' } });
    send(ctx.req, ctx.res, await answer(ctx));
  };
}

/** The form of a POST from the gateway's own page: same origin when the browser says, a form body, its CSRF token checked by the caller. */
async function readOwnForm(req: IncomingMessage, issuerOrigin: string): Promise<Map<string, string>> {
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== issuerOrigin) throw new FlowStop(403, 'Cannot continue', 'This form was sent from another site.', { detail: `Origin ${origin.slice(0, 100)}` });
  if (!isFormContentType(req.headers['content-type'])) throw new FlowStop(415, 'Cannot continue', 'Forms are sent as application/x-www-form-urlencoded.');
  try {
    return parseForm((await readBody(req, FORM_LIMIT)).toString('utf8'));
  } catch (err) {
    if (err instanceof OAuthError) throw new FlowStop(400, 'Cannot continue', 'This form cannot be used: a field was sent twice.');
    throw err;
  }
}

/** A page's transaction: `?tx=` and the cookie of this browser. */
function transactionOf(env: FlowEnv, ctx: RequestContext, now: number): Transaction {
  const tx = env.transactions.read(ctx.req, new URLSearchParams(ctx.query).get('tx'), now);
  if (tx === undefined) throw expired();
  return tx;
}

/** GET /oauth2/authorize: the request checked, a transaction started, and the browser sent to log in. */
export function authorizeStep(env: FlowEnv, pushed: PushedRequests): FlowStep {
  return get(async (ctx) => {
    const now = env.clock();
    let params = queryParameters(ctx.query);
    const requestUri = params.get('request_uri');
    if (requestUri !== undefined) {
      // RFC 9126 §4: only the pushed parameters count, and the client_id must be the pusher's.
      const clientId = params.get('client_id');
      if (clientId === undefined) throw new AuthorizationError('invalid_request', 'a request_uri comes with the client_id of the app that pushed it');
      const opened = pushed.open(requestUri, clientId, now);
      if (opened === undefined) throw new AuthorizationError('invalid_request_uri', 'the request_uri is unknown, expired, or was pushed by another app');
      params = opened;
    }
    const { request, product } = await readAuthorizationRequest(params, { store: env.store, products: env.products, now, via: requestUri === undefined ? 'query' : 'pushed' });
    const tx = env.transactions.start(request, now);
    const login = product.authorization!.login;
    if (login.kind === 'authServer') return { redirect: `${OAUTH_PATHS.login}?tx=${tx.id}`, cookies: beginIn(env, ctx, tx, now) };
    const provider = env.identityProviders.get(login.name)!;
    let started: Awaited<ReturnType<typeof provider.begin>>;
    try {
      started = await provider.begin(tx.id);
    } catch (err) {
      throw providerStop(err);
    }
    return { redirect: started.url, cookies: beginIn(env, ctx, { ...tx, login: started.login }, now) };
  });
}

/** The cookies that keep `tx` in this browser; a request too large for a cookie goes back to the app. */
function beginIn(env: FlowEnv, ctx: RequestContext, tx: Transaction, now: number): string[] {
  const cookies = env.transactions.begin(ctx.req, tx, now);
  if (cookies !== undefined) return cookies;
  const to = { redirectUri: tx.request.redirectUri, state: tx.request.state };
  throw new AuthorizationError('invalid_request', 'the request is too large for this browser to hold while the user signs in: send a shorter state', to);
}

/** A provider's failure as the page the user sees; `denied` goes to the app instead. */
function providerStop(err: unknown): Error {
  if (!(err instanceof ProviderLoginError)) return err as Error;
  if (err.kind === 'unavailable') {
    return new FlowStop(503, 'Sign-in unavailable', 'The sign-in service cannot be reached right now. Try again in a few minutes.', { detail: err.message, headers: { 'retry-after': '30' } });
  }
  return new FlowStop(502, 'Sign-in failed', 'The answer of the sign-in service could not be verified, so you are not signed in.', { detail: err.message });
}

/** GET /oauth2/callback: the OpenID provider's answer, checked, gives the user. */
export function callbackStep(env: FlowEnv): FlowStep {
  return get(async (ctx) => {
    const now = env.clock();
    const params = new URLSearchParams(ctx.query);
    const tx = env.transactions.read(ctx.req, transactionOfState(params.get('state') ?? undefined), now);
    if (tx?.login === undefined) throw expired();
    const login = productOf(env, tx).authorization!.login;
    const provider = env.identityProviders.get(login.name);
    if (login.kind !== 'identityProvider' || provider === undefined) throw expired();
    let subject: string;
    try {
      subject = await provider.finish(new URL(`${env.callbackUrl}?${ctx.query}`), tx.login);
    } catch (err) {
      if (err instanceof ProviderLoginError && err.kind === 'denied') {
        await env.transactions.spend(tx, now);
        throw new AuthorizationError('access_denied', 'the user did not sign in', { redirectUri: tx.request.redirectUri, state: tx.request.state });
      }
      throw providerStop(err);
    }
    return afterLogin(env, tx, subject, now);
  });
}

/** GET and POST /oauth2/login: an authorization server's user, with the form of the gateway. */
export function loginStep(env: FlowEnv): FlowStep {
  async function render(_ctx: RequestContext, tx: Transaction, status: number, more: { username?: string; error?: string } = {}): Promise<FlowAnswer> {
    const app = await env.store.apps.findAppById(tx.request.appId);
    // The form's answer may be the redirect to the app itself (no consent asked).
    return page(status, pages.loginPage({ txId: tx.id, csrf: env.transactions.csrfToken(tx), appName: app?.name ?? 'the app', ...more }), { formTo: formTarget(tx.request.redirectUri) });
  }
  const showForm = get(async (ctx) => render(ctx, loginTransaction(env, ctx), 200));
  return async (ctx) => {
    if (ctx.req.method !== 'POST') return showForm(ctx);
    const now = env.clock();
    const tx = loginTransaction(env, ctx);
    const form = await readOwnForm(ctx.req, env.issuerOrigin);
    if (!env.transactions.checkCsrf(tx, form.get('csrf'))) throw new FlowStop(403, 'Cannot continue', 'This form was not sent from this sign-in page. Go back and try again.');
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    if (username === '' || password === '') return send(ctx.req, ctx.res, await render(ctx, tx, 400, { username, error: 'Enter your username and password.' }));
    const login = productOf(env, tx).authorization!.login;
    let subject: string;
    try {
      subject = await env.checkPassword({ appId: tx.request.appId, authServer: login.name, username, password, now });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      const status = err.code === 'invalid_grant' ? 401 : err.status;
      const error =
        err.code === 'invalid_grant'
          ? 'Wrong username or password.'
          : err.code === 'slow_down'
            ? 'Too many failed attempts. Wait a little and try again.'
            : 'The sign-in service cannot be reached right now. Try again in a moment.';
      // The form again, and the access line says why, as flowFailure would.
      ctx.log = { error: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }) };
      const answer = await render(ctx, tx, status, { username, error });
      return send(ctx.req, ctx.res, { ...answer, headers: { ...err.headers } });
    }
    send(ctx.req, ctx.res, await afterLogin(env, tx, subject, now));
  };
}

/** The transaction of the login form: one whose product logs in with an authorization server, nobody logged in yet. */
function loginTransaction(env: FlowEnv, ctx: RequestContext): Transaction {
  const tx = transactionOf(env, ctx, env.clock());
  if (tx.subject !== undefined || productOf(env, tx).authorization!.login.kind !== 'authServer') throw expired();
  return tx;
}

/** GET and POST /oauth2/consent: what the app asks, approved or denied by the user who logged in. */
export function consentStep(env: FlowEnv): FlowStep {
  const showPage = get(async (ctx) => {
    const tx = consentTransaction(env, ctx);
    const app = await env.store.apps.findAppById(tx.request.appId);
    const developer = app === undefined ? undefined : await env.store.accounts.findDeveloperById(app.developerId);
    if (app === undefined || developer === undefined) throw new FlowStop(400, 'Cannot continue', 'The app was deleted.');
    const view = {
      txId: tx.id,
      csrf: env.transactions.csrfToken(tx),
      appName: app.name,
      developer: { name: developer.name, email: developer.email },
      product: productOf(env, tx).displayName,
      scopes: tx.request.scope,
      subject: tx.subject!,
      remembered: pages.duration(productOf(env, tx).authorization!.consentLifetimeMs),
    };
    return page(200, pages.consentPage(view), { formTo: formTarget(tx.request.redirectUri) });
  });
  return async (ctx) => {
    if (ctx.req.method !== 'POST') return showPage(ctx);
    const now = env.clock();
    const tx = consentTransaction(env, ctx);
    const form = await readOwnForm(ctx.req, env.issuerOrigin);
    if (!env.transactions.checkCsrf(tx, form.get('csrf'))) throw new FlowStop(403, 'Cannot continue', 'This form was not sent from this consent page. Go back and try again.');
    const decision = form.get('decision');
    if (decision === 'deny') {
      if (!(await env.transactions.spend(tx, now))) throw expired();
      throw new AuthorizationError('access_denied', 'the user denied the request', { redirectUri: tx.request.redirectUri, state: tx.request.state });
    }
    if (decision !== 'approve') throw new FlowStop(400, 'Cannot continue', 'Choose Allow or Deny.');
    send(ctx.req, ctx.res, await answerWithCode(env, tx, now, { approved: true }));
  };
}

function consentTransaction(env: FlowEnv, ctx: RequestContext): Transaction {
  const tx = transactionOf(env, ctx, env.clock());
  if (tx.subject === undefined) throw expired();
  return tx;
}

/** GET /oauth2/assets/portal.css: the portal's stylesheet, which the flow's pages share. */
export function stylesheetStep(css: string): FlowStep {
  const body = Buffer.from(css);
  return async ({ req, res }) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new FlowStop(405, 'Method not allowed', 'This file answers GET only.', { headers: { allow: 'GET, HEAD' } });
    res.writeHead(200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff', 'content-length': String(body.length) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
