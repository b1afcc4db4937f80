// The step that validates requests of one operation: its path, query, header and cookie
// parameters, each read by its style and explode (parameters.ts), then checked by ajv against
// their schemas as one object, and its body by content type (body.ts). Every failure is listed
// with where it was (`in`, `name` and a JSON pointer) in one 400 problem+json; what the document
// does not describe (a body on an operation that takes none, a query name read two ways) fails too.
import { ambiguousQuery } from '../http/query.ts';
import { hasBody } from '../http/request.ts';
import { escapeToken, parsePointer } from '../json/pointer.ts';
import { schemaFailures } from '../json/schema.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';
import { bodyCheckers, validateBody } from './body.ts';
import { exactNumbers, isInteger, nameOf, refuse, typesOf, type Compile, type RequestFailure } from './checks.ts';
import type { ObjectMap, Operation, Parameter } from './document.ts';
import { compileParameter, isIgnoredParameter, type ParameterShape, type RawRequest } from './parameters.ts';
import { parseQuery } from './query-parameters.ts';

const LOCATIONS = ['path', 'query', 'header', 'cookie'] as const;

/**
 * The step validating requests of `op`, served at `routePath` (the document's path after the
 * base path); `maxBodySize` bounds a body it reads. Throws a TypeError naming what the document
 * gets wrong (a style its parameter cannot have, a schema ajv cannot compile).
 */
export function requestStep(op: Operation, routePath: string, maxBodySize: number, compile: Compile): Step {
  const params = op.parameters.filter((p) => !isIgnoredParameter(p));
  // The path the gateway authorises is the path the upstream routes on: a ';' in it is refused
  // (servlets and Rack drop `;…` from a segment before routing), so a matrix parameter could never arrive.
  const matrix = params.find((p) => p.in === 'path' && p.style === 'matrix');
  if (matrix !== undefined) throw new TypeError(`path parameter ${matrix.name}: style matrix puts ';' in the path, which the gateway refuses; use simple or label`);
  const checkParams = params.length === 0 ? undefined : parametersCheck(op, params, routePath, compile);
  const body = op.body === undefined ? undefined : bodyCheckers(op.body.content, `${op.method} ${op.path} body`, compile);
  const bodyRequired = op.body?.required === true;
  return function validateOperation(ctx: RequestContext): void | Promise<void> {
    const found: RequestFailure[] = [];
    checkParams?.(ctx, found);
    const withBody = hasBody(ctx.req);
    if (withBody && body !== undefined) return validateBody(ctx, found, body, maxBodySize);
    // What the document does not describe was not checked: an upstream that reads a body on
    // this operation (a GET with a search body, a form on a DELETE) would read it unvalidated.
    if (withBody && body === undefined) found.push({ in: 'body', pointer: '/body', message: 'is not allowed: the operation takes no request body' });
    if (!withBody && bodyRequired) found.push({ in: 'body', pointer: '/body', message: 'is required' });
    refuse(found);
  };
}

/** What reads and checks the parameters of `op` (`params`, those the document does not say to ignore), adding each failure to `found`. */
function parametersCheck(op: Operation, params: readonly Parameter[], routePath: string, compile: Compile): (ctx: RequestContext, found: RequestFailure[]) => void {
  const queryNames = params.filter((p) => p.in === 'query').map((p) => p.name);
  const declared = new Set(queryNames);
  const deepPrefixes = params.filter((p) => p.in === 'query' && p.style === 'deepObject').map((p) => `${p.name}[`);
  // Each parameter's reader, and where a failure of it is reported, worked out once.
  const readers = params.map((p) => ({
    in: p.in,
    name: p.name,
    pointer: `/${p.in}/${escapeToken(p.name)}`,
    integer: isInteger(p.resolvedSchema),
    integerProperties: integerProperties(p.resolvedSchema),
    read: compileParameter({ name: p.name, in: p.in, ...(p.style !== undefined && { style: p.style }), ...(p.explode !== undefined && { explode: p.explode }), ...shapeOf(p, queryNames) }),
  }));
  const segments = routePath.split('/');
  const pathIndex = new Map(segments.flatMap((s, i) => (s.startsWith('{') ? [[s.slice(1, -1), i] as const] : [])));
  const validate = compile('coercing', parametersSchema(params), `${op.method} ${op.path} parameters`);
  return function checkParameters(ctx, found) {
    const parts = ctx.path.split('/');
    const path: Record<string, string> = {};
    for (const [name, i] of pathIndex) path[name] = parts[i] ?? '';
    const raw: RawRequest = { path, headers: ctx.req.headers, parsedQuery: parseQuery(ctx.query) };
    if (ctx.query !== '') {
      const ambiguous: { pointer: string; message: string }[] = [];
      ambiguousQuery(ctx.query, queryObjectOf(raw), declared, ambiguous);
      for (const f of ambiguous) {
        const name = nameOf(f.pointer);
        // deepObject's own names (color[R]); its reader refuses deeper brackets and repeats.
        if (name !== undefined && deepPrefixes.some((prefix) => name.startsWith(prefix))) continue;
        found.push({ in: 'query', ...(name !== undefined && { name }), ...f });
      }
    }
    const values: Record<string, Record<string, unknown>> = { path: {}, query: {}, header: {}, cookie: {} };
    const given: Record<string, Record<string, unknown>> = { path: {}, query: {}, header: {}, cookie: {} };
    for (const p of readers) {
      const result = p.read(raw);
      if ('error' in result) found.push({ in: p.in, name: p.name, pointer: p.pointer, message: result.error });
      else if ('value' in result) {
        given[p.in]![p.name] = result.value;
        values[p.in]![p.name] = copy(result.value);
      }
    }
    // Parameters come from at most 8 KiB of target and 16 KiB of headers: every failure is listed.
    const failed = schemaFailures(validate, values, '', 0);
    if (failed.length === 0) exactNumbers(readers, values, given, found);
    else for (const f of located(failed)) found.push(f);
  };
}

/** How a parameter's value is written: a list, name/value pairs, or one value. */
function shapeOf(p: Parameter, queryNames: readonly string[]): { shape: ParameterShape; properties?: readonly string[]; otherQueryNames?: readonly string[] } {
  const types = typesOf(p.resolvedSchema);
  if (types.includes('array')) return { shape: 'array' };
  if (types.includes('object') || p.resolvedSchema?.properties !== undefined) {
    const properties = Object.keys((p.resolvedSchema?.properties ?? {}) as ObjectMap);
    return properties.length > 0 ? { shape: 'object', properties } : { shape: 'object', otherQueryNames: queryNames.filter((n) => n !== p.name) };
  }
  return { shape: 'primitive' };
}

/** The properties of an object's schema that are integers (a deepObject's or a form object's values). */
function integerProperties(schema: ObjectMap | undefined): ReadonlySet<string> | undefined {
  const properties = schema?.properties as Record<string, ObjectMap> | undefined;
  return properties === undefined ? undefined : new Set(Object.keys(properties).filter((name) => isInteger(properties[name])));
}

/** The parameters as one JSON Schema: an object per location, each parameter a property with its schema. */
function parametersSchema(params: readonly Parameter[]): object {
  const properties: ObjectMap = {};
  for (const location of LOCATIONS) {
    const here = params.filter((p) => p.in === location);
    properties[location] = {
      type: 'object',
      properties: Object.fromEntries(here.map((p) => [p.name, p.contentType === undefined ? (p.schema ?? {}) : {}])),
      required: here.filter((p) => p.required).map((p) => p.name),
    };
  }
  return { type: 'object', properties };
}

const copy = (value: string | string[] | Record<string, string>): unknown => (Array.isArray(value) ? [...value] : typeof value === 'object' ? { ...value } : value);

/** Failures with their location and parameter named (their pointer starts /path, /query, /header or /cookie). */
function located(list: readonly { pointer: string; message: string }[]): RequestFailure[] {
  return list.map((f) => {
    const name = nameOf(f.pointer);
    return { in: parsePointer(f.pointer)![0] as RequestFailure['in'], ...(name !== undefined && { name }), pointer: f.pointer, message: f.message };
  });
}

function queryObjectOf(raw: RawRequest): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [name, values] of raw.parsedQuery.params) out[name] = values.length === 1 ? values[0]! : [...values];
  return out;
}
