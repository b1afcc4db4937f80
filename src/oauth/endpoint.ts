// The steps the OAuth endpoints share (token, revocation, introspection): POST only, no
// credentials in the query string, a form body, client authentication; and the endpoint as a
// route's last step, with the one writer of its failures.
import type { KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { readBody } from '../http/body.ts';
import type { ReadClientCertificate } from '../http/client-certificate.ts';
import type { Client, Store } from '../store/port/index.ts';
import { authenticateClient, presentedCredentials } from './client-auth.ts';
import { GatewayError } from '../errors.ts';
import { runSteps, type Failure, type RequestContext, type Step } from '../pipeline/context.ts';
import { invalidRequest, OAuthError, sendOAuthError, temporarilyUnavailable } from './errors.ts';
import { isFormContentType, parseForm } from './form.ts';

const BODY_LIMIT = 16 * 1024;

/** Where the OAuth endpoints are served; the server routes to them and the metadata names them. */
export const OAUTH_PATHS = {
  token: '/oauth2/token',
  authorization: '/oauth2/authorize',
  par: '/oauth2/par',
  /** The authorization flow's own pages: the login form (authServer), the OpenID provider's return, consent, the stylesheet. */
  login: '/oauth2/login',
  callback: '/oauth2/callback',
  consent: '/oauth2/consent',
  stylesheet: '/oauth2/assets/portal.css',
  revocation: '/oauth2/revoke',
  introspection: '/oauth2/introspect',
  metadata: '/.well-known/oauth-authorization-server',
  jwks: '/.well-known/jwks.json',
} as const;

/** RFC 6749 §2.3.1, RFC 6750 §2.3: what must never travel in a request URI. */
const QUERY_FORBIDDEN = ['client_secret', 'token', 'refresh_token', 'access_token', 'password'];

export interface FormContext {
  /** The request's context: its response, and the access line's fields. */
  request: RequestContext;
  req: IncomingMessage;
  query: string;
  now: number;
  form: Map<string, string>;
  client: Client | undefined;
}

export type FormStep<C extends FormContext> = Step<C>;

/** What every OAuth endpoint is compiled with. */
export interface OAuthEnv {
  store: Store;
  /** Key of the keyed hash of app secrets. */
  secretKey: KeyObject;
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  /** The realm of the Basic challenge (oauth.realm). */
  realm: string;
  /** The certificate a request's client presented (RFC 8705), when it presented one the gateway believes. */
  clientCertificate: ReadClientCertificate;
}

export function requirePost(endpoint: string): FormStep<FormContext> {
  return function requirePost(ctx) {
    if (ctx.req.method !== 'POST') throw new OAuthError(405, 'invalid_request', `the ${endpoint} accepts POST only`, { headers: { allow: 'POST' } });
  };
}

/** RFC 6749 §2.3.1: credentials must not travel in the request URI; RFC 6750 §2.3 tokens neither. */
export function rejectQueryCredentials(ctx: FormContext): void {
  if (ctx.query === '') return;
  const query = new URLSearchParams(ctx.query);
  for (const name of QUERY_FORBIDDEN) {
    if (query.has(name)) throw invalidRequest(`${name} must not be sent in the query string`);
  }
}

export async function parseBody(ctx: FormContext): Promise<void> {
  if (!isFormContentType(ctx.req.headers['content-type'])) {
    throw invalidRequest('the body must be application/x-www-form-urlencoded (UTF-8)');
  }
  ctx.form = parseForm((await readBody(ctx.req, BODY_LIMIT)).toString('utf8'));
}

export function clientAuth({ store, secretKey, clientCertificate }: Pick<OAuthEnv, 'store' | 'secretKey' | 'clientCertificate'>): FormStep<FormContext> {
  return async function clientAuth(ctx) {
    const presented = presentedCredentials(ctx.req, ctx.form);
    try {
      ctx.client = await authenticateClient(store, secretKey, presented, clientCertificate(ctx.req), ctx.now);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      // The store failed: the client may be fine, and may try again.
      throw temporarilyUnavailable('the store failed to authenticate the client', err);
    }
  };
}

export interface FormEndpointSpec<C extends FormContext> {
  /** For the log: "token endpoint". */
  name: string;
  steps: readonly FormStep<C>[];
  /** The endpoint's context, from the shared one. */
  context: (base: FormContext) => C;
  /** Writes the success; resolves to the fields the access log adds (never a credential). */
  answer: (ctx: C, res: ServerResponse) => Promise<Record<string, string>>;
}

/** An OAuth endpoint as a route's parts: its last step, and the one writer of its failures. */
export interface FormEndpoint {
  /** Makes the endpoint's context and walks its steps, then the answer. */
  step: Step;
  /** RFC 6749 §5.2: every failure of the route, its policies' included, written by sendOAuthError. */
  fail: Failure;
}

/** An OAuth endpoint: the steps, the answer; every failure written by sendOAuthError. */
export function createFormEndpoint<C extends FormContext>(env: Pick<OAuthEnv, 'clock' | 'logger' | 'realm'>, spec: FormEndpointSpec<C>): FormEndpoint {
  // RFC 9110 §15.5.2: every 401 carries a challenge, whichever way the client authenticated.
  const challenge = `Basic realm="${env.realm}", charset="UTF-8"`;
  const { clock, logger } = env;
  const { name, context, answer } = spec;
  const steps: readonly FormStep<C>[] = [
    ...spec.steps,
    async function answered(ctx) {
      ctx.request.log = await answer(ctx, ctx.request.res);
    },
  ];
  return {
    step: function formEndpoint(request: RequestContext) {
      return runSteps(steps, context({ request, req: request.req, query: request.query, now: clock(), form: new Map(), client: undefined }));
    },
    fail: function oauthFailure(request, thrown) {
      const err = sendOAuthError(request.res, thrown, challenge);
      if (!err.expose || err.status >= 500) logger.error({ err: err.cause ?? err, detail: err.detail, id: request.requestId }, `${name} failed`);
      request.log = { error: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }) };
      return err;
    },
  };
}
