// Header and cookie parameters: simple in a header, form in the Cookie header (Appendix D; without
// RFC 6570's leading '?', which it leaves open). Their values reach the upstream as sent, and
// upstreams differ on decoding them (Express's cookie parser and PHP decode, Go and most header
// readers do not): a '%' in them is refused, so that the value checked is the value read either
// way. A cookie whose name, decoded, is a parameter's name is refused too: PHP reads `t%31=x` as
// the cookie t1. A repeated cookie is an error rather than a pick.
import { cookiePairs, cookieValues, trimOws, wellFormedCookies } from '../http/request.ts';
import { ABSENT, decoded, keyValueList, list, own, simpleValue, type Compiled, type Reader } from './parameter-values.ts';
import type { Read } from './parameters.ts';

/** simple, with optional whitespace around the value and (lists) around each item trimmed. */
export function headerReader(p: Compiled): Reader {
  const key = p.name.toLowerCase();
  return function readHeader(request) {
    const raw = own(request.headers, key);
    if (raw === undefined) return ABSENT;
    if (typeof raw !== 'string' && raw.length > 1 && p.shape === 'primitive') return { error: `${p.where} is given more than once` };
    // RFC 9110 §5.3: repeated list-valued fields combine with ','; §5.6.1: OWS may surround each item.
    const value = trimOws(typeof raw === 'string' ? raw : raw.join(','));
    if (value.includes('%')) return escaped(p);
    if (p.shape === 'primitive') return decoded(p, value, false);
    return simpleValue(p, value, true);
  };
}

/** form, in the Cookie header: 'color=blue', 'color=blue,black,brown', 'color=R,100,G,200'. */
export function cookieReader(p: Compiled): Reader {
  return function readCookie(request) {
    const header = own(request.headers, 'cookie');
    if (header === undefined) return ABSENT;
    const text = typeof header === 'string' ? header : header.join('; ');
    if (!wellFormedCookies(text))
      return { error: `${p.where}: the Cookie header has a pair that is not name=value as RFC 6265 writes them (a space, a control or a non-ASCII character), which parsers split differently` };
    const raw = cookieValue(text, p.name);
    if (raw === undefined) return ABSENT;
    if (raw === MORE_THAN_ONCE) return { error: `${p.where} is given more than once` };
    if (raw === SPELLED_OTHERWISE) return { error: `${p.where} is spelled otherwise (a percent-escape, '+' or '.'), as PHP reads its name` };
    if (raw.includes('%')) return escaped(p);
    if (p.shape === 'primitive') return decoded(p, raw, false);
    return p.shape === 'array' ? list(p, raw, ',', false) : keyValueList(p, raw, ',', false);
  };
}

const MORE_THAN_ONCE = Symbol('more than once');
const SPELLED_OTHERWISE = Symbol('spelled otherwise');

/** The one cookie named `name`, or that there is more than one, or one whose name is `name` decoded. */
function cookieValue(header: string, name: string): string | typeof MORE_THAN_ONCE | typeof SPELLED_OTHERWISE | undefined {
  const values = cookieValues(header, name);
  if (values.length > 1) return MORE_THAN_ONCE;
  for (const [spelled] of cookiePairs(header)) if (spelled !== name && PHP_SPELLING.test(spelled) && readsAs(spelled, name)) return SPELLED_OTHERWISE;
  return values[0];
}

/** What PHP reads otherwise in a cookie's name: escapes, and '+' or '.' (which it makes '_'). */
const PHP_SPELLING = /[%+.]/;

/**
 * Whether a cookie's name reads as `name` to PHP (php_register_variable_ex, and before 8.1.11 its
 * decoding of cookie names): percent-decoded with '+' as a space, leading spaces dropped, cut at a
 * NUL or at '[' (`t[]` is an array named t), then '.' and ' ' as '_'. Compared byte by byte as it is
 * decoded, stopping at the first difference, and without decodeURIComponent, whose exception on
 * each malformed name of a long header would cost more than the rest of the request.
 */
function readsAs(spelled: string, name: string): boolean {
  const want = Buffer.from(name);
  let j = 0;
  for (let i = 0; i < spelled.length; ) {
    let byte = spelled.charCodeAt(i);
    if (byte === 0x25) {
      if (!/^[0-9A-Fa-f]{2}$/.test(spelled.slice(i + 1, i + 3))) return false;
      byte = Number.parseInt(spelled.slice(i + 1, i + 3), 16);
      i += 3;
    } else {
      if (byte === 0x2b) byte = 0x20;
      i++;
    }
    if (byte === 0x00 || byte === 0x5b) break;
    if (j === 0 && byte === 0x20) continue;
    if (want[j] !== byte && !(want[j] === 0x5f && (byte === 0x2e || byte === 0x20))) return false;
    j++;
  }
  return j === want.length;
}

function escaped(p: Compiled): Read {
  return { error: `${p.where} must not hold a '%': it reaches the upstream as sent, and upstreams differ on decoding it` };
}
