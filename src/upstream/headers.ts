// Which headers cross the gateway, in each direction. RFC 9110 §7.6.1: hop-by-hop headers, and
// every header the Connection header names, end at the gateway.
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../pipeline/context.ts';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

// Stripped from requests as well: the caller's credentials; the Host (the upstream's own is
// sent); Expect (the gateway answers 100-continue itself); everything a client could send to
// pose as the gateway or as a proxy before it; and the overrides some frameworks honour, which
// would make the upstream act on a path or method other than the one authorised.
const REQUEST_DROP = new Set([
  ...HOP_BY_HOP,
  'host',
  'authorization',
  'expect',
  'forwarded',
  'x-real-ip',
  'x-original-url',
  'x-rewrite-url',
  'x-http-method',
  'x-http-method-override',
  'x-method-override',
]);

/** Whether a client's request header is dropped. Names with '_' are dropped as well: servers
 * that map '_' to '-' (CGI, WSGI) would read X_Gateway_App as the gateway's own header. */
function dropped(name: string, named: ReadonlySet<string> | undefined): boolean {
  return REQUEST_DROP.has(name) || named?.has(name) === true || name.includes('_') || name.startsWith('x-forwarded-') || name.startsWith('x-gateway-');
}

// A header value carries visible ASCII only; anything else (a non-Latin user name) and '%' are
// percent-encoded as UTF-8, so the value is always valid and the upstream can decode it.
const UNSAFE = /[^\x20-\x24\x26-\x7e]/;
export function headerValue(text: string): string {
  return UNSAFE.test(text) ? text.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c)) : text;
}

const CLOSE = new Set(['close']);

function connectionNamed(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  // The usual values, without a Set per call: keep-alive is hop-by-hop anyway.
  if (value === 'keep-alive' || value === 'Keep-Alive') return undefined;
  if (value === 'close' || value === 'Close') return CLOSE;
  const names = (Array.isArray(value) ? value.join(',') : value).split(',').map((s) => s.trim().toLowerCase());
  return new Set(names.filter((n) => n !== ''));
}

/** The headers the upstream receives: the client's, filtered, then the gateway's own. */
export function upstreamRequestHeaders(ctx: RequestContext): Record<string, string | string[]> {
  const incoming = ctx.req.headers;
  const named = connectionNamed(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (dropped(name, named)) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  out['x-forwarded-for'] = ctx.clientIp;
  out['x-forwarded-proto'] = ctx.protocol;
  if (incoming.host !== undefined) out['x-forwarded-host'] = incoming.host;
  const token = ctx.token;
  if (token !== undefined) {
    out['x-gateway-app'] = headerValue(token.appName);
    out['x-gateway-client-id'] = token.key;
    out['x-gateway-developer'] = headerValue(token.developerEmail);
    out['x-gateway-product'] = token.product;
    out['x-gateway-scope'] = token.scope;
    if (token.subject !== null) out['x-gateway-subject'] = headerValue(token.subject);
  }
  return out;
}

/** The upstream's response headers the client receives. */
export function clientResponseHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = connectionNamed(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || named?.has(name)) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
