// Request validation: the query string and the JSON body against JSON Schemas, or the whole request
// against the route's operation in an OpenAPI 3 document (src/openapi/validators.ts); a body size
// limit and a content type check. Failure: 400 problem+json listing every failure with a JSON
// pointer; the upstream never sees it.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { readBody, tooLarge } from '../http/body.ts';
import { ambiguousQuery, exactNumber, notPlainNumber } from '../http/query.ts';
import { contentTypeProblem, hasBody, isJsonType, mediaType, queryObject } from '../http/request.ts';
import { jsonBodyFailures } from '../json/body.ts';
import { escapeToken, getAt, parsePointer } from '../json/pointer.ts';
import { MAX_FAILURES, schemaFailures, tryCompile, userAjv, type Failure, type SchemaCheck } from '../json/schema.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { siteOperation } from './operation.ts';
import type { PolicyIssue, RequestPolicy } from './policy.ts';

const JsonSchema = Type.Unsafe<object>({ type: 'object' });

const ValidateRequestOptions = Type.Object(
  {
    query: Type.Optional(about(JsonSchema, "JSON Schema of the query parameters as an object; values are coerced to the schema's types.")),
    body: Type.Optional(about(JsonSchema, 'JSON Schema of the JSON body.')),
    openapi: Type.Optional(
      about(Type.String({ minLength: 1 }), "Validate against this route's operation in an OpenAPI 3 document instead (YAML or JSON): parameters of every kind, and bodies by content type."),
    ),
    maxBodySize: Type.Optional(about(Type.Integer({ minimum: 0 }), 'Largest body accepted, in bytes (default 1 MiB, and never more than listen.maxBodySize); larger: 413.')),
    contentTypes: Type.Optional(
      about(
        Type.Array(Type.String({ pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+$', title: 'media type', examples: ['application/json'] }), { minItems: 1 }),
        'Media types a body may have; others: 415.',
        { default: ['application/json'] },
      ),
    ),
  },
  { ...Strict, minProperties: 1 },
);

type Options = typeof ValidateRequestOptions.static;

interface Compiled {
  query: SchemaCheck | undefined;
  /** The parameter names the query schema declares at its top level. */
  declared: ReadonlySet<string>;
  /** Those of them that are integers, or arrays of integers. */
  integers: ReadonlySet<string>;
  body: SchemaCheck | undefined;
}

/** Compiles the options' schemas, or says what is wrong with them. */
function compile(options: Options): Compiled | PolicyIssue {
  const query = options.query === undefined ? undefined : tryCompile(userAjv({ coerce: true }), options.query);
  if (typeof query === 'string') return { path: ['query'], message: `is not a valid JSON Schema: ${query}` };
  const body = options.body === undefined ? undefined : tryCompile(userAjv(), options.body);
  if (typeof body === 'string') return { path: ['body'], message: `is not a valid JSON Schema: ${body}` };
  const properties = (options.query as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const integers = new Set(Object.keys(properties).filter((name) => isIntegerSchema(properties[name], options.query)));
  return { query, declared: new Set(Object.keys(properties)), integers, body };
}

/** Follows local $refs (#/…, into the query schema) to the schema they name. */
function resolved(node: unknown, root: unknown): Record<string, unknown> | undefined {
  let at = node as Record<string, unknown> | undefined;
  for (let i = 0; i < 8 && typeof at?.$ref === 'string'; i++) {
    const ref = at.$ref as string;
    const path = ref.startsWith('#') ? parsePointer(ref.slice(1)) : undefined;
    at = path === undefined ? undefined : (getAt(root, path) as Record<string, unknown> | undefined);
  }
  return at;
}

function isIntegerSchema(node: unknown, root: unknown): boolean {
  const schema = resolved(node, root);
  if (schema?.type === 'integer') return true;
  return schema?.type === 'array' && resolved(schema.items, root)?.type === 'integer';
}

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
  message: notPlainNumber(integer),
});

function refuse(found: readonly Failure[]): void {
  if (found.length > 0) throw new GatewayError(400, 'invalid_request', 'the request is not valid', { extensions: { errors: found.slice(0, MAX_FAILURES) }, policy: 'validateRequest' });
}

export const validateRequest: RequestPolicy<typeof ValidateRequestOptions> = {
  phase: 'request',
  schema: ValidateRequestOptions,
  check(options, site) {
    if (options.openapi !== undefined) {
      const mixed = (['query', 'body', 'contentTypes'] as const).filter((key) => options[key] !== undefined);
      if (mixed.length > 0) return mixed.map((key) => ({ path: [key], message: 'cannot go with openapi: the document says what the request may be' }));
      const found = siteOperation(options.openapi, site)!;
      if ('message' in found) return [found];
      try {
        found.validators.request(found.operation, found.routePath, 0);
      } catch (err) {
        if (!(err instanceof TypeError)) throw err;
        return [{ path: ['openapi'], message: err.message }];
      }
      return [];
    }
    const issues: PolicyIssue[] = [];
    const types = options.contentTypes ?? ['application/json'];
    if (options.body !== undefined && !types.some(isJsonType)) {
      issues.push({ path: ['contentTypes'], message: 'a body schema needs a JSON media type (application/json or application/*+json)' });
    }
    const compiled = site.compiled.once(options, () => compile(options));
    return 'path' in compiled ? [...issues, compiled] : issues;
  },
  create(options, env) {
    // listen.maxBodySize bounds every body, so a chunked one too: it is not raised here.
    const limit = Math.min(options.maxBodySize ?? 1024 * 1024, env.maxBodySize);
    if (options.openapi !== undefined) {
      const found = siteOperation(options.openapi, env)!;
      if ('message' in found) throw new Error(`validateRequest on ${env.route}: ${found.message}`);
      return found.validators.request(found.operation, found.routePath, limit);
    }
    const compiled = env.compiled.once(options, () => compile(options));
    if ('path' in compiled) throw new Error(`validateRequest on ${env.route}: ${compiled.message}`);
    const { query: checkQuery, declared, integers, body: checkBody } = compiled;
    const bodyRequired = checkBody !== undefined;
    const types = new Set(options.contentTypes ?? ['application/json']);
    // A query-only validation leaves the body streaming through.
    const readsBody = checkBody !== undefined || options.maxBodySize !== undefined;

    async function validateBody(ctx: RequestContext, found: Failure[]): Promise<void> {
      const { req } = ctx;
      const type = mediaType(req.headers['content-type']);
      if (checkBody !== undefined && !types.has(type)) {
        throw new GatewayError(415, 'unsupported_media_type', `the body must be ${[...types].join(' or ')}`, { policy: 'validateRequest' });
      }
      const problem = checkBody === undefined ? undefined : contentTypeProblem(type, req.headers['content-type']);
      if (problem !== undefined) throw new GatewayError(415, 'unsupported_media_type', problem, { policy: 'validateRequest' });
      // Bearer verification may have read a form body already (to look for a second token).
      ctx.body ??= await readBody(req, limit);
      if (ctx.body.length > limit) throw tooLarge(limit);
      if (checkBody !== undefined && isJsonType(type)) {
        found.push(...jsonBodyFailures(ctx.body, checkBody, '/body'));
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
        // The query holds at most 100 parameters in 8 KiB: every failure is listed.
        const failed = schemaFailures(checkQuery, coerced, '/query', 0);
        if (failed.length === 0) plainDecimals(coerced, raw, integers, found);
        else for (const f of failed) found.push(f);
      }
      const withBody = hasBody(ctx.req);
      if (withBody && readsBody) return validateBody(ctx, found);
      if (!withBody && bodyRequired) found.push({ pointer: '/body', message: 'is required' });
      refuse(found);
    };
  },
};
