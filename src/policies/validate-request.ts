// Request validation: the query string and the JSON body against JSON Schemas, or against the
// route's operation in an OpenAPI 3 document; a body size limit and a content type check.
// Failure: 400 problem+json listing every failure with a JSON pointer; the upstream never sees it.
import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { readBody, tooLarge } from '../http/body.ts';
import { hasBody, isJsonType, mediaType, queryObject } from '../http/request.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { escapeToken, getAt, parsePointer } from './json-pointer.ts';
import type { PolicyIssue, PolicySite, RequestPolicy } from './policy.ts';
import { failures, openApiBodySchema, openApiQuerySchema, routeOperation, tryCompile, userAjv, type Failure } from './schemas.ts';

const JsonSchema = Type.Unsafe<object>({ type: 'object' });

const ValidateRequestOptions = Type.Object(
  {
    /** JSON Schema of the query parameters as an object; values are coerced to the schema's types. */
    query: Type.Optional(JsonSchema),
    /** JSON Schema of the JSON body. */
    body: Type.Optional(JsonSchema),
    /** Validate against this route's operation in an OpenAPI 3 document instead (YAML or JSON). */
    openapi: Type.Optional(Type.String({ minLength: 1 })),
    /** Largest body accepted, in bytes (default 1 MiB, and never more than listen.maxBodySize); larger: 413. */
    maxBodySize: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Media types a body may have (default application/json); others: 415. */
    contentTypes: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+$' }), { minItems: 1 })),
  },
  { ...Strict, minProperties: 1 },
);

type Options = typeof ValidateRequestOptions.static;

const DOC = 'openapi';

interface Compiled {
  query: ValidateFunction | undefined;
  /** The parameter names the query schema declares at its top level. */
  declared: ReadonlySet<string>;
  /** Those of them that are integers, or arrays of integers. */
  integers: ReadonlySet<string>;
  body: ValidateFunction | undefined;
  bodyRequired: boolean;
}

/** Compiles the options' schemas, or says what is wrong with them. */
function compile(options: Options, site: PolicySite): Compiled | PolicyIssue {
  const queryAjv = userAjv({ coerce: true });
  const bodyAjv = userAjv();
  let querySchema: object | undefined = options.query;
  let bodySchema: object | undefined = options.body;
  let bodyRequired = options.body !== undefined;
  let doc: Record<string, unknown> | undefined;
  if (options.openapi !== undefined) {
    const found = routeOperation(options.openapi, site);
    if ('message' in found) return found;
    doc = found.doc;
    const { op } = found;
    queryAjv.addSchema(doc, DOC);
    bodyAjv.addSchema(doc, DOC);
    querySchema = openApiQuerySchema(doc, op, DOC);
    const body = openApiBodySchema(doc, op, DOC);
    bodySchema = body?.schema;
    bodyRequired = body?.required ?? false;
  }
  const query = querySchema === undefined ? undefined : tryCompile(queryAjv, querySchema);
  if (typeof query === 'string') return { path: [options.openapi === undefined ? 'query' : 'openapi'], message: `is not a valid JSON Schema: ${query}` };
  const body = bodySchema === undefined ? undefined : tryCompile(bodyAjv, bodySchema);
  if (typeof body === 'string') return { path: [options.openapi === undefined ? 'body' : 'openapi'], message: `is not a valid JSON Schema: ${body}` };
  const properties = (querySchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const integers = new Set(Object.keys(properties).filter((name) => isIntegerSchema(properties[name], doc)));
  return { query, declared: new Set(Object.keys(properties)), integers, body, bodyRequired };
}

/** Follows $refs (into the OpenAPI document, or the query schema's own) to the schema they name. */
function resolved(node: unknown, doc: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  let at = node as Record<string, unknown> | undefined;
  for (let i = 0; i < 8 && typeof at?.$ref === 'string'; i++) {
    const ref = (at.$ref as string).replace(new RegExp(`^${DOC}#`), '#');
    const path = ref.startsWith('#') ? parsePointer(ref.slice(1)) : undefined;
    at = doc !== undefined && path !== undefined ? (getAt(doc, path) as Record<string, unknown> | undefined) : undefined;
  }
  return at;
}

function isIntegerSchema(node: unknown, doc: Record<string, unknown> | undefined): boolean {
  const schema = resolved(node, doc);
  if (schema?.type === 'integer') return true;
  return schema?.type === 'array' && resolved(schema.items, doc)?.type === 'integer';
}

/**
 * What the schema checked must be what the upstream reads. Rack and some Java servers also split
 * a query on ';', and PHP, Rack and qs read `limit[]=1000` (or `limit%5B%5D`) as `limit`: so
 * `?q=x;limit=1000` and `?limit[]=1000` would pass a schema that caps `limit` at 100 and reach
 * such an upstream as limit=1000. A ';' separator, and a bracketed name the schema does not
 * declare, are refused.
 */
export function ambiguousQuery(query: string, raw: Record<string, string | string[]>, declared: ReadonlySet<string>, found: Failure[]): void {
  if (query.includes(';')) found.push({ pointer: '/query', message: "must separate parameters with '&' only, not ';'" });
  for (const name in raw) {
    if ((name.includes('[') || name.includes(']')) && !declared.has(name)) {
      found.push({ pointer: `/query/${escapeToken(name)}`, message: 'is a bracketed name the schema does not declare' });
    }
  }
}

// ajv coerces "0x64", "1e2" and " 7" to numbers, which an upstream would read otherwise: a
// number in the query must be written as a plain decimal. And exactly: "0.99999999999999999" is
// the number 1 to ajv (a minimum of 1 passes) but 0 to parseInt and PHP's intval.
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function exactDecimal(given: string, value: number): boolean {
  if (!DECIMAL.test(given)) return false;
  const written = given.includes('.') ? given.replace(/0+$/, '').replace(/\.$/, '') : given;
  return String(value) === written;
}

// "100.0" is 100 to the schema, and an error to int(), Atoi and parseInt's careful callers (Flask
// then falls back to no limit at all): an integer is written without a fraction.
const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function plainDecimals(coerced: Record<string, unknown>, raw: Record<string, string | string[]>, integers: ReadonlySet<string>, found: Failure[]): void {
  for (const name in coerced) {
    const value = coerced[name];
    const given = raw[name];
    const integer = integers.has(name);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const g = Array.isArray(given) ? given[i] : given;
        if (typeof value[i] === 'number' && typeof g === 'string' && !exactNumber(g, value[i] as number, integer)) found.push(notDecimal(name, i, integer));
      }
    } else if (typeof value === 'number' && typeof given === 'string' && !exactNumber(given, value, integer)) {
      found.push(notDecimal(name, undefined, integer));
    }
  }
}

export function exactNumber(given: string, value: number, integer: boolean): boolean {
  return exactDecimal(given, value) && (!integer || INTEGER.test(given));
}

/**
 * A copy of the query for ajv to coerce in place, arrays included, so `raw` keeps what was sent.
 * Built key by key: spreading a prototype-less object is many times slower.
 */
function coercible(raw: Record<string, string | string[]>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const name in raw) {
    const value = raw[name]!;
    out[name] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

const notDecimal = (name: string, i: number | undefined, integer: boolean): Failure => ({
  pointer: `/query/${escapeToken(name)}${i === undefined ? '' : `/${i}`}`,
  message: integer ? 'must be a plain decimal integer, without a fraction' : 'must be a plain decimal number, exactly representable',
});

function refuse(found: readonly Failure[]): void {
  if (found.length > 0) throw new GatewayError(400, 'invalid_request', 'the request is not valid', { extensions: { errors: found }, policy: 'validateRequest' });
}

export const validateRequest: RequestPolicy<typeof ValidateRequestOptions> = {
  phase: 'request',
  schema: ValidateRequestOptions,
  check(options, site) {
    const issues: PolicyIssue[] = [];
    const types = options.contentTypes ?? ['application/json'];
    if (options.body !== undefined && !types.some(isJsonType)) {
      issues.push({ path: ['contentTypes'], message: 'a body schema needs a JSON media type (application/json or application/*+json)' });
    }
    const compiled = compile(options, site);
    return 'path' in compiled ? [...issues, compiled] : issues;
  },
  create(options, env) {
    const compiled = compile(options, env);
    if ('path' in compiled) throw new Error(`validateRequest on ${env.route}: ${compiled.message}`);
    const { query: checkQuery, declared, integers, body: checkBody, bodyRequired } = compiled;
    // listen.maxBodySize bounds every body, so a chunked one too: it is not raised here.
    const limit = Math.min(options.maxBodySize ?? 1024 * 1024, env.maxBodySize);
    const types = new Set(options.contentTypes ?? ['application/json']);
    // A query-only validation leaves the body streaming through.
    const readsBody = checkBody !== undefined || bodyRequired || options.maxBodySize !== undefined;

    async function validateBody(ctx: RequestContext, found: Failure[]): Promise<void> {
      const { req } = ctx;
      const type = mediaType(req.headers['content-type']);
      if (checkBody !== undefined && !types.has(type)) {
        throw new GatewayError(415, 'unsupported_media_type', `the body must be ${[...types].join(' or ')}`, { policy: 'validateRequest' });
      }
      // Bearer verification may have read a form body already (to look for a second token).
      ctx.body ??= await readBody(req, limit);
      if (ctx.body.length > limit) throw tooLarge(limit);
      if (checkBody !== undefined && isJsonType(type)) {
        let value: unknown;
        try {
          value = JSON.parse(ctx.body.toString('utf8'));
        } catch {
          found.push({ pointer: '/body', message: 'is not valid JSON' });
        }
        if (value !== undefined && !checkBody(value)) found.push(...failures('/body', checkBody.errors));
      }
      refuse(found);
    }

    // Synchronous unless there is a body to read: most calls validate a query string only.
    return function validateRequest(ctx: RequestContext): void | Promise<void> {
      const found: Failure[] = [];
      if (checkQuery !== undefined) {
        const raw = queryObject(ctx.query);
        ambiguousQuery(ctx.query, raw, declared, found);
        const coerced = coercible(raw);
        if (!checkQuery(coerced)) found.push(...failures('/query', checkQuery.errors));
        else plainDecimals(coerced, raw, integers, found);
      }
      const withBody = hasBody(ctx.req);
      if (withBody && readsBody) return validateBody(ctx, found);
      if (!withBody && bodyRequired) found.push({ pointer: '/body', message: 'is required' });
      refuse(found);
    };
  },
};
