// OpenAPI parameters read from a raw request, as OAS 3.1.1 "Parameter Object" defines them (its
// "Style Values" and "Style Examples" tables, Appendix D on headers and cookies, Appendix E on
// percent-encoding; 3.0.3 serializes these styles the same way). compileParameter checks a
// parameter's style once and picks its location's reader (path-parameters.ts, query-parameters.ts,
// header-parameters.ts); a reader then only scans strings. Values stay strings: ajv coerces later.
// A malformed percent-encoding (or one that is not UTF-8) is a read error, and a name given twice
// where one value is expected is an error rather than a pick.
import { cookieReader, headerReader } from './header-parameters.ts';
import type { Compiled } from './parameter-values.ts';
import { labelReader, matrixReader, simplePathReader } from './path-parameters.ts';
import { deepObjectReader, delimitedReader, formExplodedArrayReader, formExplodedObjectReader, formReader } from './query-parameters.ts';

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
