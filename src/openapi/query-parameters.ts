// Query parameters: the query string split once per request, then each parameter read by its
// style (form, exploded or not, spaceDelimited, pipeDelimited, deepObject). '+' is a space:
// Appendix C and E treat the query string as application/x-www-form-urlencoded (where '+' must be
// sent as %2B), and that is how the upstream's framework will read it; a gateway that read '+'
// otherwise would validate another value than the one the upstream acts on. form splits a value
// on its unencoded delimiters first and decodes each piece after, as RFC 6570 does; the delimited
// styles and deepObject are decoded first, then split: Appendix E says their delimiters (space,
// '|', '[' ']') MUST be percent-encoded, and that a single decoding pass cannot tell an encoded
// delimiter from data. A parameter whose value is one string (a primitive, or a list in
// one value) given twice is an error rather than a pick: the gateway must not validate the first
// while the upstream acts on the last; so is a repeated deepObject or object key.
import { percentDecode } from '../http/query.ts';
import { ABSENT, decoded, decodedAll, keyValueList, keyValues, list, malformed, type Compiled, type Reader } from './parameter-values.ts';
import type { ParsedQuery, Read } from './parameters.ts';

/**
 * Splits a query string (without '?') on '&' into its parameters: names percent-decoded with '+'
 * as space, values left encoded (each style splits them before or after decoding). Empty pieces
 * ('a=1&&b=2') are skipped; a piece without '=' has the empty value. Once per request: every
 * parameter reads the result, RawRequest.parsedQuery.
 */
export function parseQuery(query: string): ParsedQuery {
  const params = new Map<string, string[]>();
  if (query === '') return { params, error: undefined };
  for (const piece of query.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const name = percentDecode(eq === -1 ? piece : piece.slice(0, eq), true);
    if (name === undefined) return { params: new Map(), error: 'the query string has a malformed percent-encoding' };
    const value = eq === -1 ? '' : piece.slice(eq + 1);
    const values = params.get(name);
    if (values === undefined) params.set(name, [value]);
    else values.push(value);
  }
  return { params, error: undefined };
}

/** The one value of a query parameter, or why there is not one. */
function singleQueryValue(p: Compiled, query: ParsedQuery): string | Read {
  if (query.error !== undefined) return { error: query.error };
  const values = query.params.get(p.name);
  if (values === undefined) return ABSENT;
  // A second value would make the parameter ambiguous (which one does the upstream read?).
  if (values.length > 1) return { error: `${p.where} is given more than once` };
  return values[0] as string;
}

/** form: primitives '?color=blue'; with explode false, arrays '?color=blue,black' and objects '?color=R,100,G,200'. */
export function formReader(p: Compiled): Reader {
  return function readForm(request) {
    const raw = singleQueryValue(p, request.parsedQuery);
    if (typeof raw !== 'string') return raw;
    if (p.shape === 'primitive') return decoded(p, raw, true);
    return p.shape === 'array' ? list(p, raw, ',', true) : keyValueList(p, raw, ',', true);
  };
}

/** form, explode true, array: '?color=blue&color=black', one item per occurrence. */
export function formExplodedArrayReader(p: Compiled): Reader {
  return function readFormExplodedArray(request) {
    const query = request.parsedQuery;
    if (query.error !== undefined) return { error: query.error };
    const values = query.params.get(p.name);
    return values === undefined ? ABSENT : decodedAll(p, values, true);
  };
}

/** form, explode true, object: '?R=100&G=200', each property its own parameter; absent when none is given. */
export function formExplodedObjectReader(p: Compiled, properties: readonly string[] | undefined, others: readonly string[] | undefined): Reader {
  const declared = properties === undefined ? undefined : [...new Set(properties)];
  const skipped = new Set(others);
  return function readFormExplodedObject(request) {
    const query = request.parsedQuery;
    if (query.error !== undefined) return { error: query.error };
    const entries: [string, string][] = [];
    const names = declared ?? [...query.params.keys()].filter((name) => !skipped.has(name));
    for (const name of names) {
      const values = query.params.get(name);
      if (values === undefined) continue;
      if (values.length > 1) return { error: `${p.where}: property ${name} is given more than once` };
      const value = percentDecode(values[0] as string, true);
      if (value === undefined) return malformed(p);
      entries.push([name, value]);
    }
    return entries.length === 0 ? ABSENT : { value: Object.fromEntries(entries) };
  };
}

/** spaceDelimited and pipeDelimited: '?color=blue%20black', '?color=R%7C100%7CG%7C200'; decoded, then split (Appendix E). */
export function delimitedReader(p: Compiled, separator: ' ' | '|'): Reader {
  return function readDelimited(request) {
    const raw = singleQueryValue(p, request.parsedQuery);
    if (typeof raw !== 'string') return raw;
    const value = percentDecode(raw, true);
    if (value === undefined) return malformed(p);
    const items = value === '' ? [] : value.split(separator);
    return p.shape === 'array' ? { value: items } : keyValues(p, items);
  };
}

/** deepObject: '?color[R]=100&color[G]=200' (brackets usually percent-encoded); one level of brackets only. */
export function deepObjectReader(p: Compiled): Reader {
  const prefix = `${p.name}[`;
  return function readDeepObject(request) {
    const query = request.parsedQuery;
    if (query.error !== undefined) return { error: query.error };
    const entries: [string, string][] = [];
    for (const [name, values] of query.params) {
      if (name === p.name) return { error: `${p.where} must be given as ${p.name}[property]=value` };
      if (!name.startsWith(prefix)) continue;
      const close = name.indexOf(']', prefix.length);
      if (close === -1) return { error: `${p.where} has a '[' without ']'` };
      const key = name.slice(prefix.length, close);
      // Style Values: deepObject represents objects with scalar properties; deeper nesting is undefined.
      if (close !== name.length - 1 || key.includes('[')) return { error: `${p.where} is nested more than one level deep` };
      // Names are compared decoded, so color[R] and color%5BR%5D are one name given twice.
      if (values.length > 1) return { error: `${p.where}: property ${key} is given more than once` };
      const value = percentDecode(values[0] as string, true);
      if (value === undefined) return malformed(p);
      entries.push([key, value]);
    }
    return entries.length === 0 ? ABSENT : { value: Object.fromEntries(entries) };
  };
}
