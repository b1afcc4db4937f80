// What the request, body and response checks share: a request's failure and the 400 it becomes,
// the schema compiler each check is handed (one per document, validators.ts), the rule that a
// number ajv coerced must have been written as a plain decimal, the types a schema names, and
// the media-type ranges of a body or answer, matched most specific first.
import { GatewayError } from '../errors.ts';
import { exactNumber, notPlainNumber } from '../http/query.ts';
import { isJsonType } from '../http/request.ts';
import { escapeToken, parsePointer } from '../json/pointer.ts';
import { MAX_FAILURES, type SchemaCheck } from '../json/schema.ts';
import type { MediaType, ObjectMap } from './document.ts';

/** One failure of a request: where (`in`: path, query, header, cookie or body; the parameter's name), a JSON pointer, and what is wrong. */
export interface RequestFailure {
  in: 'path' | 'query' | 'header' | 'cookie' | 'body';
  name?: string;
  pointer: string;
  message: string;
}

/** The ajv of a document that compiles a schema: coercing (parameters, forms, response headers), strict (JSON request bodies) or answers (JSON answers). */
export type AjvKind = 'coercing' | 'strict' | 'answers';

/** Compiles a schema of the document once, whichever check asks; throws a TypeError naming `what` when ajv cannot. */
export type Compile = (kind: AjvKind, schema: object, what: string) => SchemaCheck;

export function typesOf(schema: ObjectMap | undefined): string[] {
  const type = schema?.type;
  return Array.isArray(type) ? type.map(String) : typeof type === 'string' ? [type] : [];
}

export function isInteger(schema: ObjectMap | undefined): boolean {
  return typesOf(schema).includes('integer') || typesOf(schema?.items as ObjectMap | undefined).includes('integer');
}

/** The parameter a pointer such as /query/limit/0 is about. */
export const nameOf = (pointer: string) => parsePointer(pointer)?.[1];

/** A parameter as the number check needs it, worked out once: where it is, its pointer, whether its schema wants integers. */
interface Numeric {
  in: RequestFailure['in'];
  name: string;
  pointer: string;
  integer: boolean;
  /** For an object: which of its properties are integers. */
  integerProperties?: ReadonlySet<string> | undefined;
}

/** ajv coerces "0x64", "1e2" or "100.0"; an upstream reads them otherwise: a number must be written as a plain, exact decimal (an integer without a fraction). */
export function exactNumbers(params: readonly Numeric[], values: Record<string, Record<string, unknown>>, given: Record<string, Record<string, unknown>>, found: RequestFailure[]): void {
  for (const p of params) {
    const value = values[p.in]![p.name];
    if (value === undefined) continue;
    const raw = given[p.in]![p.name];
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        exactNumberAt(p, v, (raw as string[])[i], `/${i}`, found);
      });
    } else if (value !== null && typeof value === 'object') {
      // An object's integer rule is each property's own: the object's schema is no integer.
      for (const key in value) exactNumberAt(p, (value as ObjectMap)[key], (raw as Record<string, string>)[key], `/${escapeToken(key)}`, found, p.integerProperties?.has(key) === true);
    } else exactNumberAt(p, value, raw, '', found);
  }
}

function exactNumberAt(p: Numeric, value: unknown, raw: unknown, below: string, found: RequestFailure[], integer = p.integer): void {
  if (found.length >= MAX_FAILURES) return;
  if (typeof value !== 'number' || typeof raw !== 'string' || exactNumber(raw, value, integer && Number.isInteger(value))) return;
  found.push({ in: p.in, name: p.name, pointer: p.pointer + below, message: notPlainNumber(integer) });
}

export function refuse(found: readonly RequestFailure[]): void {
  if (found.length > 0) throw new GatewayError(400, 'invalid_request', 'the request is not valid', { extensions: { errors: found.slice(0, MAX_FAILURES) }, policy: 'openapi' });
}

/**
 * The media types of a body or answer, the most specific first, so that the first to match a
 * type is the one that describes it (OpenAPI: "the most specific key is applicable"): an exact
 * type, then application/*+json, then a type/*, then *\/*.
 */
export function bySpecificity(content: readonly MediaType[]): MediaType[] {
  const rank = (range: string) => (range === '*/*' ? 3 : range === 'application/*+json' ? 1 : range.endsWith('/*') ? 2 : 0);
  return [...content].sort((a, b) => rank(a.type) - rank(b.type));
}

/** Whether a media type matches a range of the document (application/json, application/*, *\/*). */
export function matches(range: string, type: string): boolean {
  if (range === type || range === '*/*') return true;
  if (range.endsWith('/*')) return type.startsWith(range.slice(0, -1));
  return range === 'application/*+json' && isJsonType(type);
}
