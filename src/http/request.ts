// Facts about the incoming request that every later step relies on, established once:
// the normalised path.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';

const badPath = (why: string) => new GatewayError(400, 'invalid_path', `request path rejected: ${why}`);

// Refused rather than normalised, so that the path that is matched and authorised is byte for
// byte the path the upstream receives: dot segments (plain or encoded), encoded slashes and
// backslashes, NUL, backslashes, ';' parameters and empty segments.
const FORBIDDEN = /%(2f|5c|00)|[\\;\x00]|\/\/|%2e/i;

export interface RequestTarget {
  path: string;
  /** The raw query string without '?', or '' */
  query: string;
}

/** Longer request targets get 414; so do queries of more parameters (each costs every step that reads the query). */
const MAX_TARGET_LENGTH = 8192;
const MAX_QUERY_PARAMETERS = 100;

function tooManyParameters(query: string): boolean {
  let count = 1;
  for (let i = query.indexOf('&'); i !== -1; i = query.indexOf('&', i + 1)) if (++count > MAX_QUERY_PARAMETERS) return true;
  return false;
}

export function splitTarget(url: string): RequestTarget {
  if (url.length > MAX_TARGET_LENGTH) throw new GatewayError(414, 'uri_too_long', `the request target is longer than ${MAX_TARGET_LENGTH} bytes`);
  if (url[0] !== '/') throw badPath('must start with "/"');
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  if (query.length > 0 && tooManyParameters(query)) throw new GatewayError(414, 'uri_too_long', `the query has more than ${MAX_QUERY_PARAMETERS} parameters`);
  if (FORBIDDEN.test(path)) throw badPath('encoded separators, dot segments, ";", NUL and empty segments are not allowed');
  // A dot segment starts with "/."; most paths have none, and skip the split.
  if (path.includes('/.')) {
    for (const segment of path.split('/')) {
      if (segment === '.' || segment === '..') throw badPath('dot segments are not allowed');
    }
  }
  return { path, query };
}

/** The query string as an object (without a prototype): one value a string, a repeated parameter an array. */
export function queryObject(query: string): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  if (query === '') return out;
  for (const [k, v] of new URLSearchParams(query)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Whether the request carries a body (RFC 9112 §6.3: Content-Length, or Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? Number(length) > 0 : req.headers['transfer-encoding'] !== undefined;
}

/** The media type of a Content-Type value, lower-cased, without parameters. */
export function mediaType(value: string | string[] | undefined): string {
  return ((Array.isArray(value) ? value[0] : value) ?? '').split(';')[0]!.trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
