// The steps the OAuth endpoints share (token, revocation, introspection): POST only, no
// credentials in the query string, a form body, client authentication.
import type { KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { readBody } from '../http/body.ts';
import type { Client, Store } from '../store/port/index.ts';
import { authenticateClient, presentedCredentials } from './client-auth.ts';
import { GatewayError } from '../errors.ts';
import { runSteps, type RequestContext, type Step } from '../pipeline/context.ts';
import { invalidRequest, OAuthError, sendOAuthError, temporarilyUnavailable } from './errors.ts';
import { isFormContentType, parseForm } from './form.ts';

const BODY_LIMIT = 16 * 1024;

/** Where the OAuth endpoints are served; the server routes to them and the metadata names them. */
export const OAUTH_PATHS = {
  token: '/oauth2/token',
  revocation: '/oauth2/revoke',
  introspection: '/oauth2/introspect',
  metadata: '/.well-known/oauth-authorization-server',
} as const;

/** RFC 6749 §2.3.1, RFC 6750 §2.3: what must never travel in a request URI. */
const QUERY_FORBIDDEN = ['client_secret', 'token', 'refresh_token', 'access_token', 'password'];

export interface FormContext {
  req: IncomingMessage;
  query: string;
  now: number;
  form: Map<string, string>;
  client: Client | undefined;
}

export type FormStep<C extends FormContext> = (ctx: C) => void | Promise<void>;

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

export function clientAuth({ store, secretKey }: Pick<OAuthEnv, 'store' | 'secretKey'>): FormStep<FormContext> {
  return async function clientAuth(ctx) {
    const presented = presentedCredentials(ctx.req, ctx.form);
    try {
      ctx.client = await authenticateClient(store, secretKey, presented, ctx.now);
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
  /** The token endpoint's policies (an IP list, a spike arrest), run first. */
  policies: readonly Step[];
  steps: readonly FormStep<C>[];
  /** The endpoint's context, from the shared one. */
  context: (base: FormContext) => C;
  /** Writes the success; resolves to the fields the access log adds (never a credential). */
  answer: (ctx: C, res: ServerResponse) => Promise<Record<string, string>>;
}

/** What an OAuth endpoint did: the fields its access line adds (never a credential), and the failure it answered. */
export interface EndpointOutcome {
  log: Record<string, string>;
  error: GatewayError | undefined;
}

/** An OAuth endpoint: the policies, the steps, the answer; every failure written by sendOAuthError. */
export function createFormEndpoint<C extends FormContext>(env: Pick<OAuthEnv, 'clock' | 'logger' | 'realm'>, spec: FormEndpointSpec<C>) {
  // RFC 9110 §15.5.2: every 401 carries a challenge, whichever way the client authenticated.
  const challenge = `Basic realm="${env.realm}", charset="UTF-8"`;
  const { clock, logger } = env;
  const { name, policies, steps, context, answer } = spec;
  return async function formEndpoint(request: RequestContext): Promise<EndpointOutcome> {
    const { req, res } = request;
    const ctx = context({ req, query: request.query, now: clock(), form: new Map(), client: undefined });
    try {
      if (policies.length > 0) await runSteps(policies, request);
      for (const step of steps) await step(ctx);
      return { log: await answer(ctx, res), error: undefined };
    } catch (thrown) {
      const err = sendOAuthError(res, thrown, challenge);
      if (!err.expose || err.status >= 500) logger.error({ err: err.cause ?? err, detail: err.detail, id: request.requestId }, `${name} failed`);
      return { log: { error: err.code, ...(err.detail === undefined ? {} : { detail: err.detail }) }, error: err };
    }
  };
}
