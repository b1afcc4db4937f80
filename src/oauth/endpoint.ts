// The steps the OAuth endpoints share (token, revocation, introspection): POST only, no
// credentials in the query string, a form body, client authentication.
import type { IncomingMessage } from 'node:http';
import type { Deps } from '../deps.ts';
import { readBody } from '../http/body.ts';
import type { Client } from '../store/port.ts';
import { authenticateClient, presentedCredentials } from './client-auth.ts';
import { GatewayError } from '../errors.ts';
import { invalidRequest, OAuthError, temporarilyUnavailable } from './errors.ts';
import { isFormContentType, parseForm } from './form.ts';

const BODY_LIMIT = 16 * 1024;

export interface FormContext {
  req: IncomingMessage;
  query: string;
  now: number;
  form: Map<string, string>;
  client: Client | undefined;
}

export type FormStep<C extends FormContext> = (ctx: C, deps: Deps) => void | Promise<void>;

export function requirePost(endpoint: string): FormStep<FormContext> {
  return function requirePost(ctx) {
    if (ctx.req.method !== 'POST') throw new OAuthError(405, 'invalid_request', `the ${endpoint} accepts POST only`, { headers: { allow: 'POST' } });
  };
}

/** RFC 6749 §2.3.1: credentials must not travel in the request URI; RFC 6750 §2.3 tokens neither. */
export function rejectQueryCredentials(ctx: FormContext): void {
  if (ctx.query === '') return;
  const query = new URLSearchParams(ctx.query);
  for (const name of ['client_secret', 'token', 'refresh_token', 'access_token', 'password']) {
    if (query.has(name)) throw invalidRequest(`${name} must not be sent in the query string`);
  }
}

export async function parseBody(ctx: FormContext): Promise<void> {
  if (!isFormContentType(ctx.req.headers['content-type'])) {
    throw invalidRequest('the body must be application/x-www-form-urlencoded (UTF-8)');
  }
  ctx.form = parseForm((await readBody(ctx.req, BODY_LIMIT)).toString('utf8'));
}

export async function clientAuth(ctx: FormContext, deps: Deps): Promise<void> {
  const presented = presentedCredentials(ctx.req, ctx.form);
  try {
    ctx.client = await authenticateClient(deps.store, deps.secretKey, presented, ctx.now);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // The store failed: the client may be fine, and may try again.
    throw Object.assign(temporarilyUnavailable('the store failed to authenticate the client'), { cause: err });
  }
}
