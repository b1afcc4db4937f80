// A document's files as ajv reads them: one ajv per use (parameters and forms coerced, JSON bodies
// not, answers in their own direction) with every file under its URL, so $refs across files
// resolve, and OpenAPI's schemas rewritten where JSON Schema reads them otherwise (3.0's boolean
// exclusive bounds, readOnly and writeOnly properties that are required in one direction only).
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { made, type Ajvs } from '../json/schema.ts';
import { resolveSchema, type ApiDocument, type ObjectMap } from './document.ts';

/** Which way a value travels: `readOnly` properties are required of answers only, `writeOnly` ones of requests only. */
type Direction = 'request' | 'response';

export const documentAjvs = (doc: ApiDocument, coerce: boolean, direction: Direction): Ajvs => ({
  first: documentAjv(doc, coerce, direction, false),
  all: made(() => documentAjv(doc, coerce, direction, true)),
});

/** One ajv with every file of the document under its URL, so $refs across files resolve. */
function documentAjv(doc: ApiDocument, coerce: boolean, direction: Direction, allErrors: boolean): Ajv {
  const options = { allErrors, strict: false, validateSchema: false, ...(coerce && { coerceTypes: 'array' as const }) };
  const ajv = doc.version === '3.1' ? new Ajv2020(options) : new Ajv(options);
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  // OpenAPI's own formats: int32/int64/float/double are ranges ajv checks through `type`; binary is any bytes.
  for (const format of ['int32', 'int64', 'float', 'double', 'binary', 'password']) ajv.addFormat(format, true);
  for (const [url, value] of doc.files) ajv.addSchema(asJsonSchema(value, { version: doc.version, direction, resolve: (schema) => resolveSchema(doc.files, schema, url)?.value }) as object, url);
  return ajv as Ajv;
}

/** Values in a schema that are data, not schemas: left as written. */
const DATA = new Set(['example', 'examples', 'default', 'enum', 'const']);

/**
 * A file's schemas as ajv reads them for one direction. OpenAPI 3.0's schemas take
 * exclusiveMinimum/exclusiveMaximum as booleans beside minimum and maximum (JSON Schema draft 4);
 * ajv reads draft 7, where they are the bounds themselves. And a property marked `readOnly` is
 * sent by the server only, one marked `writeOnly` by the client only: where `required` names it,
 * it is required in that direction alone (OpenAPI 3.0 §4.7.25, 3.1 by JSON Schema's annotations).
 */
function asJsonSchema(value: unknown, how: SchemaReading): unknown {
  if (Array.isArray(value)) return value.map((v) => asJsonSchema(v, how));
  if (value === null || typeof value !== 'object') return value;
  const out: ObjectMap = {};
  for (const [key, v] of Object.entries(value)) out[key] = DATA.has(key) ? v : asJsonSchema(v, how);
  if (how.version === '3.0') {
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof out[flag] !== 'boolean') continue;
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
  }
  // The properties `required` may name: the schema's own, and those of the parts of its allOf.
  const parts = Array.isArray(out.allOf) ? (out.allOf as unknown[]).map((p) => how.resolve(p)) : [];
  const properties: Record<string, unknown> = Object.assign({}, ...parts.map((p) => p?.properties ?? {}), out.properties ?? {});
  const otherWay = how.direction === 'request' ? 'readOnly' : 'writeOnly';
  const keep = (name: unknown) => how.resolve(properties[name as string])?.[otherWay] !== true;
  if (Array.isArray(out.required)) out.required = out.required.filter(keep);
  for (const part of Array.isArray(out.allOf) ? (out.allOf as ObjectMap[]) : []) {
    if (Array.isArray(part?.required)) part.required = part.required.filter(keep);
  }
  return out;
}

/** How asJsonSchema reads one file: its version and direction, and what a schema stands for, its $refs followed (a property's flags may sit on the schema it names). */
interface SchemaReading {
  version: ApiDocument['version'];
  direction: Direction;
  resolve(schema: unknown): ObjectMap | undefined;
}
