// User-supplied JSON Schemas (validateRequest's and validateResponse's own): compiled once; and
// ajv's failures, of these and of OpenAPI documents' schemas, as JSON pointers with messages.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { escapeToken } from './pointer.ts';

export interface Failure {
  pointer: string;
  message: string;
}

/** A schema compiled twice: to stop at its first failure, and to find them all. */
export interface SchemaCheck {
  first: ValidateFunction;
  all: ValidateFunction;
}

/** Most failures one answer lists. */
export const MAX_FAILURES = 100;

/**
 * Input of up to this many bytes is searched for every failure; longer input that fails is told its
 * first. Finding every failure costs time and memory in proportion to how many the input chooses
 * to have: a 10 MiB body of five million wrong items held the event loop for 10 s and took 2 GB.
 */
export const LIST_ALL_UP_TO = 64 * 1024;

/** The failures of `data` (`size` bytes when read) below `prefix`: none when it passes; at most MAX_FAILURES. */
export function schemaFailures(check: SchemaCheck, data: unknown, prefix: string, size: number): Failure[] {
  if (check.first(data)) return [];
  if (size > LIST_ALL_UP_TO) return failures(prefix, check.first.errors);
  check.all(data);
  return failures(prefix, check.all.errors?.slice(0, MAX_FAILURES));
}

/**
 * The ajvs for schemas written by users, one stopping at the first failure and one finding them
 * all (for SchemaCheck): formats checked, no remote refs. tryCompile checks each schema against
 * JSON Schema's meta-schema first.
 */
export function userAjv(options: { coerce?: boolean } = {}): { first: Ajv; all: Ajv } {
  const make = (allErrors: boolean) => {
    const ajv = new Ajv({ allErrors, strict: false, validateSchema: false, ...(options.coerce ? { coerceTypes: 'array' as const } : {}) });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    return ajv;
  };
  return { first: make(false), all: make(true) };
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
export function tryCompile(ajv: { first: Ajv; all: Ajv }, schema: unknown): SchemaCheck | string {
  try {
    metaChecker ??= userAjv().all;
    // Throws "schema is invalid: …", as compiling with validateSchema would.
    metaChecker.validateSchema(schema as object, true);
    return { first: ajv.first.compile(schema as object), all: ajv.all.compile(schema as object) };
  } catch (err) {
    return (err as Error).message;
  }
}
