// OpenAPI parameters read from a raw request, as OAS 3.1.1 "Parameter Object" defines them (its
// "Style Values" and "Style Examples" tables, Appendix D on headers and cookies, Appendix E on
// percent-encoding; 3.0.3 serializes these styles the same way). compileParameter checks a
// parameter's style once; its reader then only scans strings. Values stay strings: ajv coerces later.
//
// Percent-decoding. RFC 6570 styles (matrix, label, simple, form) leave their delimiters (, ; . = &)
// unencoded and encode them inside values, so a value is split first and each piece decoded after:
// '%2C' is data, ',' a delimiter. spaceDelimited, pipeDelimited and deepObject are the other way
// round: Appendix E says their delimiters (space, '|', '[' ']') MUST be percent-encoded, and that a
// single decoding pass cannot tell an encoded delimiter from data; their values are decoded first,
// then split. A malformed percent-encoding (or one that is not UTF-8) is a read error. Header and
// cookie values reach the upstream as sent, and upstreams differ on decoding them (Express's cookie
// parser and PHP decode, Go and most header readers do not): a '%' in them is refused, so that the
// value checked is the value read either way. A cookie whose name, decoded, is a parameter's name
// is refused too: PHP reads `t%31=x` as the cookie t1.
// Cookies follow the table's examples without RFC 6570's leading '?' (Appendix D leaves it open).
//
// '+' in the query string is a space: Appendix C and E treat the query string as
// application/x-www-form-urlencoded (where '+' must be sent as %2B), and that is how the upstream's
// framework will read it; a gateway that read '+' otherwise would validate another value than the
// one the upstream acts on. Everywhere else (path, headers, cookies) '+' is itself.
//
// Empty values (the table's "empty" column is the empty string): a primitive reads as ''. A list
// written in one value (simple, label, form explode false, matrix explode false, the delimited
// styles) reads '' as [] or {}: RFC 6570 §2.3 leaves the empty list undefined, and reading [''] would
// make [] impossible to send. Exploded lists are one value per occurrence, so '?color=' is [''].
//
// Repeated names. A query parameter whose value is one string (a primitive, or a list in one value)
// given twice is an error rather than a pick: the gateway must not validate the first while the
// upstream acts on the last. The same holds for a repeated cookie, deepObject key or object key.
import { percentDecode } from '../http/query.ts';
import { cookiePairs, cookieValues, trimOws, wellFormedCookies } from '../http/request.ts';

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';
export type ParameterShape = 'primitive' | 'array' | 'object';

export interface ParameterSpec {
  name: string;
  in: ParameterLocation;
  /** As in the document; the default per location when absent (path: simple, query: form, header: simple, cookie: form). */
  style?: string;
  /** As in the document; default true for form, false otherwise. */
  explode?: boolean;
  /** What the parameter's schema describes (the caller resolves the schema: type array → 'array', type object or properties → 'object', anything else → 'primitive'). */
  shape: ParameterShape;
  /** For an 'object' with style form and explode true: the property names the schema declares (each is its own query parameter). */
  properties?: readonly string[];
  /**
   * For an 'object' with style form and explode true and no `properties` (a free-form object, as in
   * the specification's `freeForm` example): the names of the operation's other query parameters.
   * Every other name in the query string is then one of the object's properties.
   */
  otherQueryNames?: readonly string[];
}

/** The raw parts of a request that parameters are read from. */
export interface RawRequest {
  /** Path parameters as matched by the route template, still percent-encoded (e.g. for /orders/{id} and /orders/a%20b: { id: 'a%20b' }); for label/matrix styles the segment includes its '.' or ';' prefix. */
  path: Readonly<Record<string, string>>;
  /** Node's IncomingHttpHeaders (names lower-cased; repeated headers may be string[] or joined by ', '). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** parseQuery of the query string: every query parameter of the request reads from one parse. */
  parsedQuery: ParsedQuery;
}

/** The value read: strings (never numbers: type coercion is done later by ajv), arrays of strings, or objects of strings; or absent; or an error saying what is malformed. */
export type Read = { value: string | string[] | Record<string, string> } | { absent: true } | { error: string };

/** A query string split into its parameters, by parseQuery. */
export interface ParsedQuery {
  /** Each name (percent-decoded, '+' as space) with its values in order, still percent-encoded. */
  readonly params: ReadonlyMap<string, readonly string[]>;
  /** Set when a name has a malformed percent-encoding: no query parameter can then be read reliably. */
  readonly error: string | undefined;
}

const DEFAULT_STYLE: Readonly<Record<ParameterLocation, string>> = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' };

/** A parameter's style and explode, the defaults of its location filled in (OpenAPI 3.x §4.8.12.4: explode defaults to true for form only). */
export function serialization(p: { in: ParameterLocation; style?: string | undefined; explode?: boolean | undefined }): { style: string; explode: boolean } {
  const style = p.style ?? DEFAULT_STYLE[p.in];
  return { style, explode: p.explode ?? style === 'form' };
}

/** Whether a style is its location's default. */
export const isDefaultStyle = (location: ParameterLocation, style: string) => DEFAULT_STYLE[location] === style;

/** OAS 3.1.1 "Style Values": where each style may be used, and for which types. */
const STYLES: Readonly<Record<string, { in: readonly ParameterLocation[]; shapes: readonly ParameterShape[] }>> = {
  matrix: { in: ['path'], shapes: ['primitive', 'array', 'object'] },
  label: { in: ['path'], shapes: ['primitive', 'array', 'object'] },
  simple: { in: ['path', 'header'], shapes: ['primitive', 'array', 'object'] },
  form: { in: ['query', 'cookie'], shapes: ['primitive', 'array', 'object'] },
  spaceDelimited: { in: ['query'], shapes: ['array', 'object'] },
  pipeDelimited: { in: ['query'], shapes: ['array', 'object'] },
  deepObject: { in: ['query'], shapes: ['object'] },
};

/** OAS 3.1.1 Parameter Object: header parameters with these names SHALL be ignored. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

const ABSENT: Read = Object.freeze({ absent: true });

type Reader = (request: RawRequest) => Read;

/** Whether the specification says to ignore this parameter's definition (header Accept, Content-Type, Authorization). */
export function isIgnoredParameter(spec: Pick<ParameterSpec, 'name' | 'in'>): boolean {
  return spec.in === 'header' && IGNORED_HEADERS.has(spec.name.toLowerCase());
}

/** Compiles, once, the reader of one parameter: checks the style is allowed for the location and the shape (throws a TypeError with a clear message otherwise, e.g. "style deepObject is only for query parameters"). */
export function compileParameter(spec: ParameterSpec): (request: RawRequest) => Read {
  if (typeof spec.name !== 'string' || spec.name === '') throw new TypeError('a parameter needs a non-empty name');
  if (!Object.hasOwn(DEFAULT_STYLE, spec.in)) throw new TypeError(`parameter ${spec.name}: in must be path, query, header or cookie`);
  const where = `${spec.in} parameter ${spec.name}`;
  const { style, explode } = serialization(spec);
  const allowed = Object.hasOwn(STYLES, style) ? STYLES[style] : undefined;
  if (allowed === undefined) throw new TypeError(`${where}: unknown style ${style}`);
  if (!allowed.in.includes(spec.in)) throw new TypeError(`${where}: style ${style} is only for ${allowed.in.join(' and ')} parameters`);
  if (!allowed.shapes.includes(spec.shape)) throw new TypeError(`${where}: style ${style} is only for ${allowed.shapes.join(' and ')} values, not ${spec.shape}`);
  // Style Examples: explode true is n/a for the delimited styles, and deepObject with explode false
  // is undefined; deepObject with explode absent (its default is false) is read as the one defined form.
  if ((style === 'spaceDelimited' || style === 'pipeDelimited') && spec.explode === true) throw new TypeError(`${where}: style ${style} with explode true is undefined`);
  if (style === 'deepObject' && spec.explode === false) throw new TypeError(`${where}: style deepObject with explode false is undefined`);
  // Appendix D: form with explode true gives several name=value pairs, which a Cookie header cannot carry.
  if (spec.in === 'cookie' && explode && spec.shape !== 'primitive') throw new TypeError(`${where}: a cookie cannot carry an exploded ${spec.shape}; set explode to false`);
  const p: Compiled = { name: spec.name, where, shape: spec.shape, explode };
  switch (spec.in) {
    case 'path':
      if (style === 'matrix') return matrixReader(p);
      if (style === 'label') return labelReader(p);
      return simplePathReader(p);
    case 'header':
      return headerReader(p);
    case 'cookie':
      return cookieReader(p);
    case 'query':
      if (style === 'deepObject') return deepObjectReader(p);
      if (style === 'spaceDelimited') return delimitedReader(p, ' ');
      if (style === 'pipeDelimited') return delimitedReader(p, '|');
      if (explode && spec.shape === 'array') return formExplodedArrayReader(p);
      if (explode && spec.shape === 'object') return formExplodedObjectReader(p, spec.properties, spec.otherQueryNames);
      return formReader(p);
  }
}

interface Compiled {
  name: string;
  /** "query parameter color", to begin error messages. */
  where: string;
  shape: ParameterShape;
  explode: boolean;
}

// --- path -------------------------------------------------------------------------------------

/** simple: 'blue', 'blue,black,brown', 'R,100,G,200' or (explode) 'R=100,G=200'. */
function simplePathReader(p: Compiled): Reader {
  return function readSimplePath(request) {
    const raw = own(request.path, p.name);
    return raw === undefined ? ABSENT : simpleValue(p, raw, false);
  };
}

/** label: '.blue'; arrays '.blue,black,brown' or (explode) '.blue.black.brown'; objects '.R,100,G,200' or (explode) '.R=100.G=200'. */
function labelReader(p: Compiled): Reader {
  const separator = p.explode ? '.' : ',';
  return function readLabel(request) {
    const raw = own(request.path, p.name);
    if (raw === undefined) return ABSENT;
    if (raw[0] !== '.') return { error: `${p.where} must begin with '.'` };
    const body = raw.slice(1);
    if (p.shape === 'primitive') return decoded(p, body, false);
    if (p.shape === 'array') return list(p, body, separator, false);
    return p.explode ? pairList(p, body, separator, false) : keyValueList(p, body, ',', false);
  };
}

/** matrix: ';color=blue'; arrays ';color=blue,black' or (explode) ';color=blue;color=black'; objects ';color=R,100,G,200' or (explode) ';R=100;G=200'. */
function matrixReader(p: Compiled): Reader {
  return function readMatrix(request) {
    const raw = own(request.path, p.name);
    if (raw === undefined) return ABSENT;
    if (raw[0] !== ';') return { error: `${p.where} must begin with ';'` };
    const segments = raw.slice(1).split(';');
    // RFC 6570 §3.2.7: ';name' without '=' is the empty value.
    if (p.shape === 'object' && p.explode) return pairs(p, raw === ';' ? [] : segments, false, true);
    const values: string[] = [];
    for (const segment of segments) {
      const eq = segment.indexOf('=');
      const name = percentDecode(eq === -1 ? segment : segment.slice(0, eq), false);
      if (name === undefined) return malformed(p);
      if (name !== p.name) return { error: `${p.where} has an unexpected ';' segment` };
      values.push(eq === -1 ? '' : segment.slice(eq + 1));
    }
    if (p.shape === 'array' && p.explode) return decodedAll(p, values, false);
    if (values.length !== 1) return { error: `${p.where} is given more than once` };
    const value = values[0] as string;
    if (p.shape === 'primitive') return decoded(p, value, false);
    return p.shape === 'array' ? list(p, value, ',', false) : keyValueList(p, value, ',', false);
  };
}

// --- header and cookie ------------------------------------------------------------------------

/** simple, with optional whitespace around the value and (lists) around each item trimmed. */
function headerReader(p: Compiled): Reader {
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
function cookieReader(p: Compiled): Reader {
  return function readCookie(request) {
    const header = own(request.headers, 'cookie');
    if (header === undefined) return ABSENT;
    const text = typeof header === 'string' ? header : header.join('; ');
    if (!wellFormedCookies(text)) return { error: `${p.where}: the Cookie header has a pair that is not name=value as RFC 6265 writes them (a space, a control or a non-ASCII character), which parsers split differently` };
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

// --- query ------------------------------------------------------------------------------------

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
function formReader(p: Compiled): Reader {
  return function readForm(request) {
    const raw = singleQueryValue(p, request.parsedQuery);
    if (typeof raw !== 'string') return raw;
    if (p.shape === 'primitive') return decoded(p, raw, true);
    return p.shape === 'array' ? list(p, raw, ',', true) : keyValueList(p, raw, ',', true);
  };
}

/** form, explode true, array: '?color=blue&color=black', one item per occurrence. */
function formExplodedArrayReader(p: Compiled): Reader {
  return function readFormExplodedArray(request) {
    const query = request.parsedQuery;
    if (query.error !== undefined) return { error: query.error };
    const values = query.params.get(p.name);
    return values === undefined ? ABSENT : decodedAll(p, values, true);
  };
}

/** form, explode true, object: '?R=100&G=200', each property its own parameter; absent when none is given. */
function formExplodedObjectReader(p: Compiled, properties: readonly string[] | undefined, others: readonly string[] | undefined): Reader {
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
function delimitedReader(p: Compiled, separator: ' ' | '|'): Reader {
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
function deepObjectReader(p: Compiled): Reader {
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

// --- values -----------------------------------------------------------------------------------

/** simple (path and header): 'blue', 'blue,black', 'R,100,G,200' or (explode) 'R=100,G=200'. */
function simpleValue(p: Compiled, raw: string, trimItems: boolean): Read {
  if (p.shape === 'primitive') return decoded(p, raw, false);
  const items = raw === '' ? [] : raw.split(',');
  if (trimItems) for (let i = 0; i < items.length; i++) items[i] = trimOws(items[i] as string);
  if (p.shape === 'array') return decodedAll(p, items, false);
  if (p.explode) return pairs(p, items, false, false);
  const decodedItems = decodeAll(items, false);
  return decodedItems === undefined ? malformed(p) : keyValues(p, decodedItems);
}

/** A list in one value: '' is [], otherwise split on the separator, then each item decoded. */
function list(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  return decodedAll(p, raw === '' ? [] : raw.split(separator), plus);
}

/** An object as a key,value list in one value: 'R,100,G,200'. */
function keyValueList(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  const items = decodeAll(raw === '' ? [] : raw.split(separator), plus);
  return items === undefined ? malformed(p) : keyValues(p, items);
}

/** An object as key=value pairs in one value: 'R=100.G=200' (label, explode). */
function pairList(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  return pairs(p, raw === '' ? [] : raw.split(separator), plus, false);
}

/** Decoded items taken two by two as key and value. */
function keyValues(p: Compiled, items: readonly string[]): Read {
  if (items.length % 2 !== 0) return { error: `${p.where} has a key without a value` };
  const entries: [string, string][] = [];
  for (let i = 0; i < items.length; i += 2) entries.push([items[i] as string, items[i + 1] as string]);
  return objectOf(p, entries);
}

/** Raw 'key=value' items, split on the first '=' then decoded; a bare 'key' is the empty value only where the style says so (matrix). */
function pairs(p: Compiled, items: readonly string[], plus: boolean, bareKeyIsEmpty: boolean): Read {
  const entries: [string, string][] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq === -1 && !bareKeyIsEmpty) return { error: `${p.where} has a property without '='` };
    const key = percentDecode(eq === -1 ? item : item.slice(0, eq), plus);
    const value = eq === -1 ? '' : percentDecode(item.slice(eq + 1), plus);
    if (key === undefined || value === undefined) return malformed(p);
    entries.push([key, value]);
  }
  return objectOf(p, entries);
}

/** An object from its entries; a repeated key is ambiguous. Object.fromEntries defines '__proto__' as an own property. */
function objectOf(p: Compiled, entries: readonly [string, string][]): Read {
  const value = Object.fromEntries(entries) as Record<string, string>;
  if (Object.keys(value).length !== entries.length) return { error: `${p.where} has a property given more than once` };
  return { value };
}

function decoded(p: Compiled, raw: string, plus: boolean): Read {
  const value = percentDecode(raw, plus);
  return value === undefined ? malformed(p) : { value };
}

function decodedAll(p: Compiled, raw: readonly string[], plus: boolean): Read {
  const value = decodeAll(raw, plus);
  return value === undefined ? malformed(p) : { value };
}

function decodeAll(raw: readonly string[], plus: boolean): string[] | undefined {
  const out: string[] = [];
  for (const item of raw) {
    const value = percentDecode(item, plus);
    if (value === undefined) return undefined;
    out.push(value);
  }
  return out;
}

function malformed(p: Compiled): Read {
  return { error: `${p.where} has a malformed percent-encoding` };
}

function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
