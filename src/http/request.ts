// Facts about the incoming request that every later step relies on, established once:
// the normalised path.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';

const badPath = (why: string) => new GatewayError(400, 'invalid_path', `request path rejected: ${why}`);

// The path is refused rather than normalised, so that the path that is matched and authorised is
// byte for byte the path every common upstream parser routes on (WHATWG URL, find-my-way,
// Python's urllib): RFC 3986 §3.3 pchar and "/" only. So no '#' (an upstream drops it and what
// follows as a fragment) and no character a parser would percent-encode. An upstream that decodes
// the path before routing (Werkzeug, Django, Starlette, Go, servlets) reads `%61dmin` as `admin`,
// a route the gateway never matched (§6.2.2.2): so no escape of an unreserved character, which
// has one spelling, nor of a control, '/', a backslash (a separator to some), '%' (a second
// decoding) or ';'. Escapes of the other characters a segment may hold raw ('$', '@', ':'…) are
// common (encodeURIComponent writes them); the route table refuses those whose decoded spelling
// names another route (SUB_DELIM_ESCAPE).
const PATH_CHARS = /^(?:[A-Za-z0-9\-._~!$&'()*+,=:@/]|%(?:2[0-46-9A-Ca-c]|3[ACDEFacdef]|40|5[BDEbde]|60|7[BCDbcd]|[89A-Fa-f][0-9A-Fa-f]))*$/;

/** An escape of a character a path segment may also hold as itself: RFC 3986 sub-delims, ':' and '@'. */
export const SUB_DELIM_ESCAPE = /%(?:2[146-9A-Ca-c]|3[ADad]|40)/;
const SUB_DELIM_ESCAPES = new RegExp(SUB_DELIM_ESCAPE.source, 'g');

/** The path with its escaped sub-delims, ':' and '@' written as themselves: as a decoding router reads it. */
export function decodeSubDelims(path: string): string {
  return path.replace(SUB_DELIM_ESCAPES, (escaped) => String.fromCharCode(parseInt(escaped.slice(1), 16)));
}

// The query keeps what RFC 3986 §3.4 allows, and '[' ']', which clients send raw in keys; never
// '#', which would end the query for the upstream, nor anything an upstream would re-encode.
const QUERY_CHARS = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?[\]]|%[0-9A-Fa-f]{2})*$/;

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
  if (!PATH_CHARS.test(path)) throw badPath(charFault(path, 'path'));
  // An upstream that cannot decode a parameter refuses it or, as Python does, replaces it with
  // U+FFFD, so that different targets reach it as one: escapes must decode as UTF-8.
  if (path.includes('%') && !decodesAsUtf8(path)) throw badPath('percent-escapes must encode UTF-8');
  if (path.includes('%') && NON_ASCII_ESCAPE.test(path)) {
    const fold = foldsIntoAscii(path);
    if (fold === 'nfkc') throw badPath('an escape decodes to a character that Unicode folds into ASCII (a fullwidth "．", "／" or "ａ")');
    if (fold === 'best-fit') throw badPath('an escape decodes to a character that Windows best-fit mappings turn into "/" or "\\" (such as "∕", "⁄" or "¥")');
  }
  if (path.includes('//')) throw badPath('empty segments are not allowed');
  // A dot segment starts with "/."; most paths have none, and skip the split.
  if (path.includes('/.')) {
    for (const segment of path.split('/')) {
      if (segment === '.' || segment === '..') throw badPath('dot segments are not allowed');
    }
  }
  if (query.length > 0 && !QUERY_CHARS.test(query)) throw new GatewayError(400, 'invalid_query', `request query rejected: ${charFault(query, 'query')}`);
  // Else the gateway reads U+FFFD where another parser keeps the escape as written.
  if (query.includes('%') && !decodesAsUtf8(query)) throw new GatewayError(400, 'invalid_query', 'request query rejected: percent-escapes must encode UTF-8');
  return { path, query };
}

const NON_ASCII_ESCAPE = /%[89A-Fa-f][0-9A-Fa-f]/;

/**
 * An upstream that folds compatibility characters (NFKC: frameworks that normalise names) reads
 * U+FF0E "．" as ".", U+FF0F "／" as "/", U+FF41 "ａ" as "a" and U+FF05 "％" as "%": a dot segment,
 * a separator, another route's name or a second decoding in a path the gateway matched otherwise.
 * Windows' best-fit mappings (a wide path handed to an ANSI API: code page 1252 and its kin, 932,
 * 949) go further and turn characters NFKC leaves alone into separators. No escaped character may
 * fold into ASCII either way.
 */
function foldsIntoAscii(path: string): 'nfkc' | 'best-fit' | undefined {
  for (const segment of path.split('/')) {
    if (!NON_ASCII_ESCAPE.test(segment)) continue;
    for (const ch of decodeURIComponent(segment)) {
      if (ch <= '\x7f') continue;
      if (BEST_FIT_SEPARATORS.has(ch)) return 'best-fit';
      if (/[\x00-\x7f]/.test(ch.normalize('NFKC'))) return 'nfkc';
    }
  }
  return undefined;
}

/** Best-fit "/": U+2044 FRACTION SLASH, U+2215 DIVISION SLASH, U+2571, U+29F8 BIG SOLIDUS; "\\": U+2216 SET MINUS, U+2572, U+29F5, U+29F9, and the yen and won signs of code pages 932 and 949. */
const BEST_FIT_SEPARATORS = new Set(['\u2044', '\u2215', '\u2571', '\u29f8', '\u2216', '\u2572', '\u29f5', '\u29f9', '\u00a5', '\u20a9']);

/** Whether every percent-escape of `text` is well formed and, together, UTF-8. */
export function decodesAsUtf8(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** Names the first character that made PATH_CHARS or QUERY_CHARS fail; only on the way to a 400. */
function charFault(text: string, part: 'path' | 'query'): string {
  const allowed = part === 'path' ? /[A-Za-z0-9\-._~!$&'()*+,=:@/]/ : /[A-Za-z0-9\-._~!$&'()*+,;=:@/?[\]]/;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return `"%" must start a two-digit hex escape`;
      if (part === 'path' && !PATH_CHARS.test(`%${hex}`)) {
        const byte = parseInt(hex, 16);
        return byte > 0x20 && byte < 0x7f && allowed.test(String.fromCharCode(byte))
          ? `the escape %${hex} is not allowed: send "${String.fromCharCode(byte)}" as itself`
          : `the escape %${hex} is not allowed in the path`;
      }
      i += 2;
    } else if (!allowed.test(c)) {
      const shown = c >= '!' && c <= '~' ? `"${c}"` : `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      // ';' (path parameters) and a backslash are refused in any form, so encoding them would not help.
      const advice = part === 'path' && (c === ';' || c === '\\') ? '' : c === '#' ? ' (a fragment is never sent); percent-encode it' : '; percent-encode it';
      return `${shown} is not allowed in the ${part}${advice}`;
    }
  }
  return `invalid ${part}`;
}

/** The query string as an object (without a prototype): one value a string, a repeated parameter an array. */
export function queryObject(query: string): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  if (query === '') return out;
  for (const [k, v] of new URLSearchParams(query)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
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

/** RFC 9110 §5.6.2: a token (a field name, a method, a parameter's name). */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const TCHAR = TOKEN.source.slice(1, -2);

// RFC 9110 §5.6.6: parameters = *( OWS ";" OWS [ parameter ] ), parameter = token "=" ( token / quoted-string ).
const PARAMETER = new RegExp(`^[ \\t]*;[ \\t]*(?:(${TCHAR}+)=("(?:[^"\\\\]|\\\\.)*"|${TCHAR}*))?[ \\t]*`);

/**
 * A Content-Type's (or Content-Disposition's) parameters by lower-cased name, values unquoted;
 * undefined when one is given twice, is an RFC 2231 or 5987 one, or cannot be read:
 * `boundary=a; boundary=b` is one body to one multipart parser and another to the next,
 * `charset=utf-8; charset=utf-7` one text to one reader and another to the next, and Werkzeug,
 * Go and Python's email read `boundary*=c`, `name*0=…` or `charset*=…` over the plain parameter.
 */
export function mediaParameters(value: string | string[] | undefined): Map<string, string> | undefined {
  const text = (Array.isArray(value) ? value[0] : value) ?? '';
  const params = new Map<string, string>();
  let rest = text.slice(text.indexOf(';') === -1 ? text.length : text.indexOf(';')).trimEnd();
  while (rest !== '') {
    const found = PARAMETER.exec(rest);
    if (found === null) return undefined;
    rest = rest.slice(found[0].length);
    if (found[1] === undefined) continue;
    const name = found[1].toLowerCase();
    if (params.has(name) || name.includes('*')) return undefined;
    const raw = found[2]!;
    params.set(name, raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw);
  }
  return params;
}

/**
 * Why a body's Content-Type could say one thing to the gateway and another to the upstream: a
 * parameter given twice (two boundaries, two charsets), or JSON or a form in another charset than
 * UTF-8. JSON has no charset parameter (RFC 8259 §11), yet Express's body-parser and Spring decode
 * by it: with `charset=utf-7`, `+ACI-` becomes a quote the schema never saw.
 */
export function contentTypeProblem(type: string, header: string | string[] | undefined): string | undefined {
  const params = mediaParameters(header);
  if (params === undefined) return 'the Content-Type gives a parameter twice, an RFC 2231 one (boundary*, charset*0), or one that cannot be read';
  const charset = params.get('charset');
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && (isJsonType(type) || type === 'application/x-www-form-urlencoded')) {
    return `a ${type} body must be UTF-8 (charset=utf-8 or none)`;
  }
  return undefined;
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** RFC 9110 §5.6.3: optional whitespace is spaces and tabs, nothing else. */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** The name-value pairs of a Cookie header ('a=1; b=2', RFC 6265 §4.2.1), in order; pairs without '=' are skipped (§5.2). */
export function* cookiePairs(header: string): Generator<[name: string, value: string]> {
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1) yield [trimOws(pair.slice(0, eq)), trimOws(pair.slice(eq + 1))];
  }
}

// RFC 6265 §4.1.1: cookie-pair = cookie-name "=" cookie-value, a token and cookie-octets, bare or
// quoted; and ',', the delimiter of OpenAPI's form style.
const COOKIE_OCTETS = '[\\x21\\x23-\\x3a\\x3c-\\x5b\\x5d-\\x7e]*';
const COOKIE_PAIR = new RegExp(`^${TCHAR}+=(?:${COOKIE_OCTETS}|"${COOKIE_OCTETS}")$`);

/** A ',' followed by a name and '=': `a=x,t=evil` is the cookie t to parsers that also split on ',' (Rack before 2.2, old connect). */
const COMMA_PAIR = /,[^,=]*=/;

/**
 * Whether every pair of a Cookie header is written as RFC 6265 §4.1.1 writes it. Parsers differ on
 * what is not: Werkzeug strips a name of any Unicode space (`\xa0t=…` is `t`), Python's
 * SimpleCookie splits `a=x t=evil` into two cookies, PHP and Rack keep a space before ';' in the
 * value (`t=t1 ; a=b` is "t1 "), and each picks its own of a repeated name.
 */
export function wellFormedCookies(header: string): boolean {
  for (const pair of header.split(';')) {
    const trimmed = trimOws(pair);
    if (trimmed === '') continue;
    if (pair.endsWith(' ') || pair.endsWith('\t') || !COOKIE_PAIR.test(trimmed) || COMMA_PAIR.test(trimmed)) return false;
  }
  return true;
}

/** The values of the cookies named `name` in a Cookie header, in order; names compared exactly. */
export function cookieValues(header: string | undefined, name: string): string[] {
  const found: string[] = [];
  if (header === undefined) return found;
  for (const [n, value] of cookiePairs(header)) if (n === name) found.push(value);
  return found;
}
