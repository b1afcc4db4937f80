// User-supplied JSON Schemas (validateRequest's and validateResponse's own): compiled once; and
// ajv's failures, of these and of OpenAPI documents' schemas, as JSON pointers with messages.
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { formatsAjv } from './ajv.ts';
import { META_SCHEMA_ID, metaSchemaValidator } from './meta-schema.ts';
import { escapeToken } from './pointer.ts';

export interface Failure {
  pointer: string;
  message: string;
}

/**
 * A schema compiled to stop at its first failure, and, when an input first fails, again to find
 * them all: most schemas never see a failing input, and compiling is most of a start's work on a
 * config with schemas.
 */
export interface SchemaCheck {
  first: ValidateFunction;
  all: () => ValidateFunction;
}

/** An ajv that stops at a schema's first failure, and one that finds them all, made when first needed. */
export interface Ajvs {
  first: Ajv;
  all: () => Ajv;
}

/** `make()`, called once, on the first call. */
export function made<T extends object>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** `schema` compiled by `ajvs` as a SchemaCheck; throws what ajv says of it. */
export function compileCheck(ajvs: Ajvs, schema: object): SchemaCheck {
  return { first: ajvs.first.compile(schema), all: made(() => ajvs.all().compile(schema)) };
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
  const all = check.all();
  all(data);
  return failures(prefix, all.errors?.slice(0, MAX_FAILURES));
}

/**
 * The ajvs for schemas written by users, one stopping at the first failure and one finding them
 * all (for SchemaCheck): formats checked, no remote refs. tryCompile checks each schema against
 * JSON Schema's meta-schema first.
 */
export function userAjv(options: { coerce?: boolean } = {}): Ajvs {
  const coerce = options.coerce === true;
  return { first: formatsAjv(false, coerce), all: made(() => formatsAjv(true, coerce)) };
}

/** Checks user schemas that name another meta-schema, and words failures: one for the process. */
let metaChecker: Ajv | undefined;

/** Throws "schema is invalid: …", as ajv's compile does when it validates the schema. */
function checkMetaSchema(schema: unknown): void {
  const named = typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (named !== undefined && named !== META_SCHEMA_ID && named !== `${META_SCHEMA_ID}#`) {
    metaChecker ??= formatsAjv(true);
    metaChecker.validateSchema(schema as object, true);
    return;
  }
  const validate = metaSchemaValidator();
  if (validate(schema)) return;
  metaChecker ??= formatsAjv(true);
  throw new Error(`schema is invalid: ${metaChecker.errorsText(validate.errors)}`);
}

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
export function tryCompile(ajvs: Ajvs, schema: unknown): SchemaCheck | string {
  try {
    checkMetaSchema(schema);
    return compileCheck(ajvs, schema as object);
  } catch (err) {
    return (err as Error).message;
  }
}
