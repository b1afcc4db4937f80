// Whether a schema a user wrote is a JSON Schema: ajv's validator of draft-07's meta-schema (with
// formats, so that a `pattern` must be a regular expression), compiled on first use: 20 ms of a
// start whose config has a schema. `npm run build` puts ajv's standalone code for it in this
// module's place (scripts/build.ts), as it does for the config file's validator.
import type { ValidateFunction } from 'ajv';
import { formatsAjv } from './ajv.ts';

/** The meta-schema of ajv's default draft, as a schema's `$schema` names it (also with an empty fragment). */
export const META_SCHEMA_ID = 'http://json-schema.org/draft-07/schema';

let compiled: ValidateFunction | undefined;

export function metaSchemaValidator(): ValidateFunction {
  compiled ??= formatsAjv(true).getSchema(META_SCHEMA_ID);
  if (compiled === undefined) throw new Error(`ajv has no ${META_SCHEMA_ID}`);
  return compiled;
}
