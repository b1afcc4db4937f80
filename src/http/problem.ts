// RFC 9457 problem details: the one place a protected-route, policy or upstream error becomes a
// response. Internal errors become a fixed 500; their message goes to the log only.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { asGatewayError, type GatewayError } from '../errors.ts';

/**
 * On every answer the gateway writes itself (problem+json, OAuth's, the metadata, the admin
 * listener's, a preflight; the portal's pages have their own set): a browser takes the
 * Content-Type as said and never sniffs a body into HTML or script. An upstream's answer, proxied,
 * keeps its own say, as Kong and Envoy leave it.
 */
export const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const;

/** Writes the problem answer for `thrown`, with `headers` (RateLimit-*, say) besides its own. */
export function sendProblem(res: ServerResponse, thrown: unknown, headers: Record<string, string> = {}): GatewayError {
  const err = asGatewayError(thrown);
  const status = err.expose ? err.status : 500;
  const body = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail: err.expose ? err.message : 'internal error',
    code: err.expose ? err.code : 'server_error',
    ...(err.expose ? err.extensions : undefined),
  };
  const payload = JSON.stringify(body);
  if (res.headersSent) {
    res.destroy();
    return err;
  }
  res.writeHead(status, {
    ...headers,
    ...(err.expose ? err.headers : undefined),
    ...NOSNIFF,
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
  return err;
}
