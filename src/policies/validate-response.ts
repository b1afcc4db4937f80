// Response validation: the upstream's JSON answer against a schema per status code, or the
// route's operation in an OpenAPI 3 document. `enforce`: an invalid answer never reaches the
// client (502); `report`: it is logged and passed through.
import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import type { PolicyIssue, PolicySite, ResponsePolicy } from './policy.ts';
import { failures, openApiResponseSchemas, routeOperation, tryCompile, userAjv } from './schemas.ts';

const ValidateResponseOptions = Type.Object(
  {
    mode: Type.Optional(Type.Union([Type.Literal('enforce'), Type.Literal('report')])),
    /** JSON Schemas by status: '200', '2XX', 'default'. */
    responses: Type.Optional(Type.Record(Type.String({ pattern: '^([1-5][0-9X]{2}|default)$' }), Type.Unsafe<object>({ type: 'object' }), Strict)),
    openapi: Type.Optional(Type.String({ minLength: 1 })),
  },
  { ...Strict, minProperties: 1 },
);

type Options = typeof ValidateResponseOptions.static;

function compile(options: Options, site: PolicySite): Map<string, ValidateFunction> | PolicyIssue {
  const ajv = userAjv();
  let schemas = new Map(Object.entries(options.responses ?? {}).map(([status, schema]) => [status.toUpperCase(), schema]));
  if (options.openapi !== undefined) {
    const found = routeOperation(options.openapi, site);
    if ('message' in found) return found;
    const { doc, op } = found;
    ajv.addSchema(doc, 'openapi');
    schemas = new Map([...openApiResponseSchemas(doc, op, 'openapi'), ...schemas]);
  }
  const compiled = new Map<string, ValidateFunction>();
  for (const [status, schema] of schemas) {
    const fn = tryCompile(ajv, schema);
    if (typeof fn === 'string') return { path: options.openapi === undefined ? ['responses', status] : ['openapi'], message: `is not a valid JSON Schema: ${fn}` };
    compiled.set(status, fn);
  }
  return compiled;
}

export const validateResponse: ResponsePolicy<typeof ValidateResponseOptions> = {
  phase: 'response',
  schema: ValidateResponseOptions,
  check(options, site) {
    const compiled = compile(options, site);
    return compiled instanceof Map ? [] : [compiled];
  },
  create(options, env) {
    const schemas = compile(options, env);
    if (!(schemas instanceof Map)) throw new Error(`validateResponse on ${env.route}: ${schemas.message}`);
    const enforce = (options.mode ?? 'enforce') === 'enforce';
    const { logger } = env;
    return {
      body(ctx, response) {
        const code = String(response.status);
        const validate = schemas.get(code) ?? schemas.get(`${code[0]}XX`) ?? schemas.get('DEFAULT');
        // No schema for this status, or an answer that has no body by definition.
        if (validate === undefined) return response;
        if (response.body.length === 0 && (response.status === 204 || response.status === 304 || ctx.req.method === 'HEAD')) return response;
        let value: unknown;
        let found;
        try {
          value = JSON.parse(response.body.toString('utf8'));
          found = validate(value) ? [] : failures('', validate.errors);
        } catch {
          found = [{ pointer: '', message: 'is not valid JSON' }];
        }
        if (found.length === 0) return response;
        logger.warn({ route: env.route, path: ctx.path, status: response.status, errors: found, enforced: enforce }, 'upstream response does not match its schema');
        if (!enforce) return response;
        throw new GatewayError(502, 'invalid_upstream_response', 'the upstream answered with a response that does not match its schema', { policy: 'validateResponse' });
      },
    };
  },
};
