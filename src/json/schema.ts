// User-supplied JSON Schemas (validateRequest's and validateResponse's own): compiled once; and
// ajv's failures, of these and of OpenAPI documents' schemas, as JSON pointers with messages.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { escapeToken } from './pointer.ts';

export interface Failure {
  pointer: string;
  message: string;
}

/**
 * An ajv for schemas written by users: every failure reported, formats checked, no remote refs.
 * tryCompile checks each schema against JSON Schema's meta-schema first.
 */
export function userAjv(options: { coerce?: boolean } = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, ...(options.coerce ? { coerceTypes: 'array' as const } : {}) });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/** Checks user schemas against the meta-schema: one for the process, so the meta-schema compiles once, not for every policy. */
let metaChecker: Ajv | undefined;

/** ajv's errors as JSON pointers below `prefix` (/query, /body). */
export function failures(prefix: string, errors: readonly ErrorObject[] | null | undefined): Failure[] {
  return (errors ?? []).map((e) => {
    const params = e.params as { missingProperty?: string; additionalProperty?: string };
    if (e.keyword === 'required') return { pointer: `${prefix}${e.instancePath}/${escapeToken(params.missingProperty ?? '')}`, message: 'is required' };
    if (e.keyword === 'additionalProperties') {
      return { pointer: `${prefix}${e.instancePath}/${escapeToken(params.additionalProperty ?? '')}`, message: 'is not allowed' };
    }
    return { pointer: `${prefix}${e.instancePath}`, message: e.message ?? 'is invalid' };
  });
}

/** Compiles a schema, or returns ajv's complaint about it. */
export function tryCompile(ajv: Ajv, schema: unknown): ValidateFunction | string {
  try {
    metaChecker ??= userAjv();
    // Throws "schema is invalid: …", as compiling with validateSchema would.
    metaChecker.validateSchema(schema as object, true);
    return ajv.compile(schema as object);
  } catch (err) {
    return (err as Error).message;
  }
}
