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

// Stripped from requests as well: the caller's credentials, the Host (the upstream's own is
// sent), and everything a client could send to pose as the gateway or as a proxy before it.
const REQUEST_DROP = new Set([...HOP_BY_HOP, 'host', 'authorization', 'forwarded', 'x-real-ip']);
const GATEWAY_PREFIXES = ['x-forwarded-', 'x-gateway-'];

function connectionNamed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const names = (Array.isArray(value) ? value.join(',') : value).split(',').map((s) => s.trim().toLowerCase());
  return new Set(names.filter((n) => n !== ''));
}

/** The headers the upstream receives: the client's, filtered, then the gateway's own. */
export function upstreamRequestHeaders(ctx: RequestContext): Record<string, string | string[]> {
  const incoming = ctx.req.headers;
  const named = connectionNamed(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (REQUEST_DROP.has(name) || named?.has(name) || GATEWAY_PREFIXES.some((p) => name.startsWith(p))) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  out['x-forwarded-for'] = ctx.clientIp;
  out['x-forwarded-proto'] = ctx.protocol;
  if (incoming.host !== undefined) out['x-forwarded-host'] = incoming.host;
  const token = ctx.token;
  if (token !== undefined) {
    out['x-gateway-app'] = token.appName;
    out['x-gateway-client-id'] = token.key;
    out['x-gateway-developer'] = token.developerEmail;
    out['x-gateway-product'] = token.product;
    out['x-gateway-scope'] = token.scope;
    if (token.subject !== null) out['x-gateway-subject'] = token.subject;
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
