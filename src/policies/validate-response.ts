// Response validation: the upstream's JSON answer against a schema per status code, or the whole
// answer (status, content type, body, required headers) against the route's operation in an
// OpenAPI 3 document: the route's own when the route comes from one, or the one `openapi` names.
// `enforce`: an invalid answer never reaches the client (502); `report`: it is logged and passed through.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { jsonBodyFailures } from '../json/body.ts';
import { tryCompile, userAjv, type Failure, type SchemaCheck } from '../json/schema.ts';
import { bodiless, forStatus, type Answer } from '../openapi/response.ts';
import { siteOperation } from './operation.ts';
import type { PolicyIssue, PolicySite, ResponsePolicy } from './policy.ts';

const ValidateResponseOptions = Type.Object(
  {
    mode: Type.Optional(
      about(Type.Union([Type.Literal('enforce'), Type.Literal('report')]), 'enforce: an answer that does not match becomes 502; report: it passes, and the mismatch is logged.', {
        default: 'enforce',
      }),
    ),
    responses: Type.Optional(
      about(
        Type.Record(Type.String({ pattern: '^([1-5][0-9X]{2}|default)$', title: 'status', examples: ['200', '2XX', 'default'] }), Type.Unsafe<object>({ type: 'object' }), Strict),
        "JSON Schemas by status: '200', '2XX', 'default'.",
      ),
    ),
    openapi: Type.Optional(about(Type.String({ minLength: 1 }), "The OpenAPI 3 document (YAML or JSON) whose operation for this route's method and path says what its answers may be.")),
  },
  Strict,
);

type Options = typeof ValidateResponseOptions.static;

/** What checks an answer: the failures found in it. */
type Check = (method: string, answer: Answer) => readonly Failure[];

function compile(options: Options, site: PolicySite): Check | PolicyIssue {
  if (options.responses !== undefined) {
    if (options.openapi !== undefined) return { path: ['openapi'], message: 'cannot go with responses: give the schemas, or the document that has them' };
    return statusSchemas(options.responses);
  }
  const found = siteOperation(options.openapi, site);
  if (found === undefined) return { path: [], message: 'needs responses or openapi, unless the route comes from an OpenAPI document (openapi in the YAML)' };
  if ('message' in found) return found;
  try {
    return found.validators.response(found.operation);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return { path: options.openapi === undefined ? [] : ['openapi'], message: err.message };
  }
}

/** A JSON Schema per status ('200', '4XX', 'default'): an answer without one passes. */
function statusSchemas(responses: NonNullable<Options['responses']>): Check | PolicyIssue {
  const ajv = userAjv();
  const schemas = new Map<string, SchemaCheck>();
  for (const [status, schema] of Object.entries(responses)) {
    const fn = tryCompile(ajv, schema);
    if (typeof fn === 'string') return { path: ['responses', status], message: `is not a valid JSON Schema: ${fn}` };
    schemas.set(status.toUpperCase(), fn);
  }
  return (method, answer) => {
    const validate = forStatus(schemas, answer.status);
    // No schema for this status, or an answer that has no body by definition.
    if (validate === undefined) return [];
    if (answer.body.length === 0 && bodiless(method, answer.status)) return [];
    // As a request's body: the client must read the value that was checked.
    return jsonBodyFailures(answer.body, validate, '');
  };
}

export const validateResponse: ResponsePolicy<typeof ValidateResponseOptions> = {
  phase: 'response',
  schema: ValidateResponseOptions,
  check(options, site) {
    const compiled = compile(options, site);
    return typeof compiled === 'function' ? [] : [compiled];
  },
  create(options, env) {
    const check = compile(options, env);
    if (typeof check !== 'function') throw new Error(`validateResponse on ${env.route}: ${check.message}`);
    const enforce = (options.mode ?? 'enforce') === 'enforce';
    const { logger } = env;
    return {
      body(ctx, response) {
        const found = check(ctx.req.method ?? 'GET', response);
        if (found.length === 0) return response;
        logger.warn({ route: env.route, path: ctx.path, status: response.status, errors: found, enforced: enforce }, 'upstream response does not match its schema');
        if (!enforce) return response;
        throw new GatewayError(502, 'invalid_upstream_response', 'the upstream answered with a response that does not match its schema', { policy: 'validateResponse' });
      },
    };
  },
};
