// RFC 6749 §5.2 error responses of the token endpoint: the error classes and the one function
// that writes them.
import type { ServerResponse } from 'node:http';
import { asGatewayError, GatewayError } from '../errors.ts';
import { NOSNIFF } from '../http/problem.ts';
import { StoreUnavailable } from '../store/port/index.ts';

export class OAuthError extends GatewayError {}

// The seed's section 7 makes every credential failure a 401, invalid_grant included.
export const invalidRequest = (description: string, status = 400) => new OAuthError(status, 'invalid_request', description);
export const invalidClient = (detail?: string) => new OAuthError(401, 'invalid_client', 'client authentication failed', detail === undefined ? {} : { detail });
export const invalidGrant = (description: string, detail?: string) => new OAuthError(401, 'invalid_grant', description, detail === undefined ? {} : { detail });
export const unauthorizedClient = (description: string) => new OAuthError(400, 'unauthorized_client', description);
export const unsupportedGrantType = (description: string) => new OAuthError(400, 'unsupported_grant_type', description);
export const invalidScope = (description: string) => new OAuthError(400, 'invalid_scope', description);
/** RFC 9449 §5: a proof refused at the token endpoint; use_dpop_nonce carries the nonce to use (§8). */
export const dpopRefused = (code: 'invalid_dpop_proof' | 'use_dpop_nonce', description: string, nonce: string | undefined) =>
  new OAuthError(400, code, description, nonce === undefined ? {} : { headers: { 'dpop-nonce': nonce } });
export const temporarilyUnavailable = (detail: string, cause?: unknown) =>
  new OAuthError(503, 'temporarily_unavailable', 'the authorization server is unavailable, try again later', { detail, headers: { 'retry-after': '1' }, cause });

// RFC 6749 §5.2 and §4.1.2.1: error_description holds %x20-21 / %x23-5B / %x5D-7E only; an
// echoed client value could hold anything else.
const NOT_DESCRIBABLE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g;
export function describable(text: string): string {
  return text.replace(NOT_DESCRIBABLE, '?');
}

/**
 * On every answer of the token, introspection and revocation endpoints, errors included: RFC 6749
 * §5.1 forbids caching one (no-store, and no-cache for HTTP/1.0 caches), and nosniff as on every
 * answer the gateway writes itself. Spread after any error's own headers so none can override it.
 */
export const NO_STORE_NOSNIFF = { 'cache-control': 'no-store', pragma: 'no-cache', ...NOSNIFF } as const;

/** The one place a token endpoint error becomes a response. */
export function sendOAuthError(res: ServerResponse, thrown: unknown, challenge: string): GatewayError {
  const err = thrown instanceof StoreUnavailable ? temporarilyUnavailable(thrown.message, thrown) : asGatewayError(thrown);
  // A shared HTTP error is an invalid_request in RFC 6749 terms when it is about the request
  // (400, 413); a policy's refusal (403 ip_denied, 429 spike_arrest) keeps its own code.
  const exposed = err instanceof OAuthError ? err.expose : err.expose && err.status < 500;
  const status = exposed ? err.status : 500;
  const code = err instanceof OAuthError || !(status === 400 || status === 413) ? err.code : 'invalid_request';
  const body = exposed ? { error: code, error_description: describable(err.message) } : { error: 'server_error', error_description: 'internal error' };
  const payload = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    ...(exposed ? err.headers : undefined),
    ...NO_STORE_NOSNIFF,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  };
  if (status === 401) headers['www-authenticate'] = challenge;
  if (!res.headersSent) res.writeHead(status, headers).end(payload);
  else res.destroy();
  return err;
}
