// Request validation: the query string and the JSON body against JSON Schemas, or against the
// route's operation in an OpenAPI 3 document; a body size limit and a content type check.
// Failure: 400 problem+json listing every failure with a JSON pointer; the upstream never sees it.
import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Strict } from '../config/fragments.ts';
import { GatewayError } from '../errors.ts';
import { readBody } from '../http/body.ts';
import { hasBody, isJsonType, mediaType, queryObject } from '../http/request.ts';
import type { RequestContext } from '../pipeline/context.ts';
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
    /** Largest body accepted, in bytes (default 1 MiB); larger: 413. */
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
  if (options.openapi !== undefined) {
    const found = routeOperation(options.openapi, site);
    if ('message' in found) return found;
    const { doc, op } = found;
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
  return { query, body, bodyRequired };
}

// ajv coerces "0x64", "1e2" and " 7" to numbers, which an upstream would read otherwise: a
// number in the query must be written as a plain decimal.
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function plainDecimals(coerced: Record<string, unknown>, raw: Record<string, string | string[]>): Failure[] {
  const found: Failure[] = [];
  for (const [name, value] of Object.entries(coerced)) {
    const given = raw[name];
    const pairs = Array.isArray(value) ? value.map((v, i) => [v, Array.isArray(given) ? given[i] : given] as const) : [[value, given] as const];
    pairs.forEach(([v, g], i) => {
      if (typeof v === 'number' && typeof g === 'string' && !DECIMAL.test(g)) {
        found.push({ pointer: `/query/${name.replace(/~/g, '~0').replace(/\//g, '~1')}${Array.isArray(value) ? `/${i}` : ''}`, message: 'must be a plain decimal number' });
      }
    });
  }
  return found;
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
    const limit = options.maxBodySize ?? 1024 * 1024;
    const types = new Set(options.contentTypes ?? ['application/json']);
    // A query-only validation leaves the body streaming through.
    const readsBody = compiled.body !== undefined || compiled.bodyRequired || options.maxBodySize !== undefined;

    return async function validateRequest(ctx: RequestContext): Promise<void> {
      const found: Failure[] = [];
      if (compiled.query !== undefined) {
        const raw = queryObject(ctx.query);
        const coerced = { ...raw } as Record<string, unknown>;
        if (!compiled.query(coerced)) found.push(...failures('/query', compiled.query.errors));
        else found.push(...plainDecimals(coerced, raw));
      }

      const { req } = ctx;
      const withBody = hasBody(req);
      if (withBody && readsBody) {
        const type = mediaType(req.headers['content-type']);
        if (compiled.body !== undefined && !types.has(type)) {
          throw new GatewayError(415, 'unsupported_media_type', `the body must be ${[...types].join(' or ')}`);
        }
        ctx.body = await readBody(req, limit);
        if (compiled.body !== undefined && isJsonType(type)) {
          let value: unknown;
          try {
            value = JSON.parse(ctx.body.toString('utf8'));
          } catch {
            found.push({ pointer: '/body', message: 'is not valid JSON' });
          }
          if (value !== undefined && !compiled.body(value)) found.push(...failures('/body', compiled.body.errors));
        }
      } else if (!withBody && compiled.bodyRequired) {
        found.push({ pointer: '/body', message: 'is required' });
      }
      if (found.length > 0) throw new GatewayError(400, 'invalid_request', 'the request is not valid', { extensions: { errors: found } });
    };
  },
};
