// User-supplied JSON Schemas (request and response validation) and OpenAPI 3 documents: compiled
// once, and their failures turned into a list of JSON pointers with messages.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import type { PolicyIssue, PolicySite } from './policy.ts';
import { escapeToken } from './json-pointer.ts';

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

export interface OpenApiOperation {
  /** JSON pointer of the operation inside the document. */
  pointer: string;
  operation: Record<string, unknown>;
  pathItem: Record<string, unknown>;
  pathPointer: string;
}

export function loadOpenApi(file: string): Record<string, unknown> {
  const doc = parseYaml(readFileSync(file, 'utf8')) as unknown;
  if (doc === null || typeof doc !== 'object' || typeof (doc as { openapi?: unknown }).openapi !== 'string' || !String((doc as { openapi: string }).openapi).startsWith('3.')) {
    throw new Error('not an OpenAPI 3 document');
  }
  return doc as Record<string, unknown>;
}

/** The operation for a route's method and path ({param} segments match whatever the document names them). */
export function findOperation(doc: Record<string, unknown>, method: string, path: string): OpenApiOperation | undefined {
  const shape = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown>>;
  const key = Object.keys(paths).find((p) => shape(p) === shape(path));
  if (key === undefined) return undefined;
  const pathItem = paths[key]!;
  const operation = pathItem[method.toLowerCase()] as Record<string, unknown> | undefined;
  if (operation === undefined) return undefined;
  const pathPointer = `#/paths/${escapeToken(key)}`;
  return { pointer: `${pathPointer}/${method.toLowerCase()}`, operation, pathItem, pathPointer };
}

/** Follows one local $ref (#/components/…) to the object and its pointer. */
function deref(doc: Record<string, unknown>, value: Record<string, unknown>, pointer: string): [Record<string, unknown>, string] {
  const ref = value.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return [value, pointer];
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return [(node ?? {}) as Record<string, unknown>, ref];
}

/** A schema for the query object built from the operation's query parameters; refs point into `docKey`. */
export function openApiQuerySchema(doc: Record<string, unknown>, op: OpenApiOperation, docKey: string): object {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  const lists: [unknown, string][] = [
    [op.pathItem.parameters, `${op.pathPointer}/parameters`],
    [op.operation.parameters, `${op.pointer}/parameters`],
  ];
  for (const [list, base] of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((raw, i) => {
      const [param, pointer] = deref(doc, raw as Record<string, unknown>, `${base}/${i}`);
      if (param.in !== 'query' || typeof param.name !== 'string') return;
      properties[param.name] = param.schema === undefined ? {} : { $ref: `${docKey}${pointer}/schema` };
      if (param.required === true) required.push(param.name);
    });
  }
  return { type: 'object', properties, required };
}

/** The operation's application/json request body schema, and whether a body is required. */
export function openApiBodySchema(doc: Record<string, unknown>, op: OpenApiOperation, docKey: string): { schema: object; required: boolean } | undefined {
  if (op.operation.requestBody === undefined) return undefined;
  const [body, pointer] = deref(doc, op.operation.requestBody as Record<string, unknown>, `${op.pointer}/requestBody`);
  const json = (body.content as Record<string, unknown> | undefined)?.['application/json'] as Record<string, unknown> | undefined;
  if (json?.schema === undefined) return undefined;
  return { schema: { $ref: `${docKey}${pointer}/content/application~1json/schema` }, required: body.required === true };
}

/** Schemas of the operation's application/json responses, by status code ('200', '4XX', 'default'). */
export function openApiResponseSchemas(doc: Record<string, unknown>, op: OpenApiOperation, docKey: string): Map<string, object> {
  const out = new Map<string, object>();
  for (const [status, raw] of Object.entries((op.operation.responses ?? {}) as Record<string, Record<string, unknown>>)) {
    const [response, pointer] = deref(doc, raw, `${op.pointer}/responses/${escapeToken(status)}`);
    const json = (response.content as Record<string, unknown> | undefined)?.['application/json'] as Record<string, unknown> | undefined;
    if (json?.schema !== undefined) out.set(status.toUpperCase(), { $ref: `${docKey}${pointer}/content/application~1json/schema` });
  }
  return out;
}

/** The OpenAPI document a policy names and the operation of the route it guards, or what is wrong. */
export function routeOperation(file: string, site: PolicySite): { doc: Record<string, unknown>; op: OpenApiOperation } | PolicyIssue {
  let doc: Record<string, unknown>;
  try {
    doc = loadOpenApi(path.resolve(site.configDir, file));
  } catch (err) {
    return { path: ['openapi'], message: `cannot use ${file}: ${(err as Error).message.split('\n')[0]}` };
  }
  const op = site.method === undefined || site.path === undefined ? undefined : findOperation(doc, site.method, site.path);
  if (op === undefined) return { path: ['openapi'], message: `${file} has no operation ${site.method ?? ''} ${site.path ?? ''}` };
  return { doc, op };
}
