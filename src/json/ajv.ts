// The ajv that reads schemas written by users: formats checked (ajv-formats), unknown keywords
// let through, no remote refs; whoever compiles checks the schema first (json/schema.ts).
import { Ajv, type CodeOptions } from 'ajv';
import addFormats from 'ajv-formats';

/** `coerce`: strings read as their schemas' types (query parameters); `code`: for scripts/build.ts's standalone code. */
export function formatsAjv(allErrors: boolean, coerce = false, code?: CodeOptions): Ajv {
  const ajv = new Ajv({ allErrors, strict: false, validateSchema: false, ...(coerce && { coerceTypes: 'array' as const }), ...(code && { code }) });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}
