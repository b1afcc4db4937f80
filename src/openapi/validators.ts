// Validation from an OpenAPI document, compiled once per document. A request: each operation's
// path, query, header and cookie parameters (read by their style and explode, then checked by
// ajv against their schemas as one object) and its body by content type; a failure is a 400
// problem+json listing each one with where it was: `in`, `name` and a JSON pointer. An answer:
// its status, content type, body and required headers against the operation's responses.
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { GatewayError } from '../errors.ts';
import { readBody, tooLarge } from '../http/body.ts';
import { contentTypeProblem, decodesAsUtf8, hasBody, isJsonType, mediaParameters, mediaType } from '../http/request.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';
import { readMultipart } from '../http/multipart.ts';
import { ambiguousQuery, byName, exactNumber, formFields, notPlainNumber } from '../http/query.ts';
import { jsonBodyFailures } from '../json/body.ts';
import { escapeToken, parsePointer } from '../json/pointer.ts';
import { MAX_FAILURES, schemaFailures, type SchemaCheck } from '../json/schema.ts';
import { loadDocument, resolveSchema, type ApiDocument, type MediaType, type ObjectMap, type Operation, type Parameter, type Response } from './document.ts';
import { compileParameter, isIgnoredParameter, type ParameterShape, type RawRequest } from './parameters.ts';
import { parseQuery } from './query-parameters.ts';

/** One failure of a request: where (`in`: path, query, header, cookie or body; the parameter's name), a JSON pointer, and what is wrong. */
export interface RequestFailure {
  in: 'path' | 'query' | 'header' | 'cookie' | 'body';
  name?: string;
  pointer: string;
  message: string;
}

/** One mismatch of an upstream's answer with the document: the status, a header (`name`), or the body. */
export interface ResponseFailure {
  in: 'status' | 'header' | 'body';
  name?: string;
  pointer: string;
  message: string;
}

/** What a map by status ('200', '4XX', 'DEFAULT') has for `status`: exactly, else by its class, else the default. */
export function forStatus<T>(byStatus: ReadonlyMap<string, T>, status: number): T | undefined {
  const code = String(status);
  return byStatus.get(code) ?? byStatus.get(`${code[0]}XX`) ?? byStatus.get('DEFAULT');
}

/** An answer that has no body, whatever it says: to HEAD, and a 1xx, 204 or 304 (RFC 9110 §6.4.1). */
export const bodiless = (method: string, status: number) => method === 'HEAD' || status < 200 || status === 204 || status === 304;

/** The upstream's answer as a response check reads it (its body whole and uncompressed). */
export interface Answer {
  status: number;
  headers: Readonly<Record<string, string | string[]>>;
  body: Buffer;
}

const LOCATIONS = ['path', 'query', 'header', 'cookie'] as const;

/**
 * The OpenAPI documents of one load or one compilation of a config: a file that policies name is
 * read once, and each document's schemas are compiled once, however many routes use them.
 */
export class Documents {
  readonly #read = new Map<string, ApiDocument>();
  readonly #validators = new Map<ApiDocument, DocumentValidators>();

  /** The document in `file` (an absolute path), read the first time; throws DocumentError. */
  load(file: string): ApiDocument {
    let doc = this.#read.get(file);
    if (doc === undefined) this.#read.set(file, (doc = loadDocument(file)));
    return doc;
  }

  validators(doc: ApiDocument): DocumentValidators {
    let found = this.#validators.get(doc);
    if (found === undefined) this.#validators.set(doc, (found = new DocumentValidators(doc)));
    return found;
  }
}

/** What the validators of one document share: its files, compiled into an ajv that coerces (parameters, forms, response headers), one that does not (JSON bodies) and one for JSON answers. */
export class DocumentValidators {
  readonly #doc: ApiDocument;
  /** Parameters, forms and headers: strings read as their schemas' types. */
  readonly #coercing: Ajvs;
  /** JSON request bodies. */
  readonly #strict: Ajvs;
  /** JSON answers, made when a route first asks for response validation. */
  #answers: Ajvs | undefined;
  /** Each schema compiled once, whichever route or check asks for it. */
  readonly #checks = new Map<string, SchemaCheck>();

  constructor(doc: ApiDocument) {
    this.#doc = doc;
    this.#coercing = documentAjvs(doc, true, 'request');
    this.#strict = documentAjvs(doc, false, 'request');
  }

  /**
   * The step validating requests of `op`, served at `routePath` (the document's path after the
   * base path); `maxBodySize` bounds a body it reads. Throws a TypeError naming what the document
   * gets wrong (a style its parameter cannot have, a schema ajv cannot compile).
   */
  request(op: Operation, routePath: string, maxBodySize: number): Step {
    const params = op.parameters.filter((p) => !isIgnoredParameter(p));
    // The path the gateway authorises is the path the upstream routes on: a ';' in it is refused
    // (servlets and Rack drop `;…` from a segment before routing), so a matrix parameter could never arrive.
    const matrix = params.find((p) => p.in === 'path' && p.style === 'matrix');
    if (matrix !== undefined) throw new TypeError(`path parameter ${matrix.name}: style matrix puts ';' in the path, which the gateway refuses; use simple or label`);
    const queryNames = params.filter((p) => p.in === 'query').map((p) => p.name);
    const declared = new Set(queryNames);
    const deepPrefixes = params.filter((p) => p.in === 'query' && p.style === 'deepObject').map((p) => `${p.name}[`);
    // Each parameter's reader, and where a failure of it is reported, worked out once.
    const readers = params.map((p) => ({
      in: p.in,
      name: p.name,
      pointer: `/${p.in}/${escapeToken(p.name)}`,
      integer: isInteger(p.resolvedSchema),
      integerProperties: integerProperties(p.resolvedSchema),
      read: compileParameter({ name: p.name, in: p.in, ...(p.style !== undefined && { style: p.style }), ...(p.explode !== undefined && { explode: p.explode }), ...shapeOf(p, queryNames) }),
    }));
    const segments = routePath.split('/');
    const pathIndex = new Map(segments.flatMap((s, i) => (s.startsWith('{') ? [[s.slice(1, -1), i] as const] : [])));
    const checkParams = params.length === 0 ? undefined : this.#compile(this.#coercing, parametersSchema(params), `${op.method} ${op.path} parameters`);
    const body = op.body === undefined ? undefined : this.#bodyCheckers(op.body.content, `${op.method} ${op.path} body`);
    const bodyRequired = op.body?.required === true;

    const validateBody = async (ctx: RequestContext, found: RequestFailure[]): Promise<void> => {
      const type = mediaType(ctx.req.headers['content-type']);
      const checker = body!.find((b) => matches(b.range, type));
      if (checker === undefined) {
        throw new GatewayError(415, 'unsupported_media_type', `the body must be ${body!.map((b) => b.range).join(' or ')}`, { policy: 'openapi' });
      }
      const problem = contentTypeProblem(type, ctx.req.headers['content-type']);
      if (problem !== undefined) throw new GatewayError(415, 'unsupported_media_type', problem, { policy: 'openapi' });
      ctx.body ??= await readBody(ctx.req, maxBodySize);
      if (ctx.body.length > maxBodySize) throw tooLarge(maxBodySize);
      checker.check(ctx.body, ctx.req.headers['content-type'] as string, found);
      refuse(found);
    };

    return function validateOperation(ctx: RequestContext): void | Promise<void> {
      const found: RequestFailure[] = [];
      if (checkParams !== undefined) {
        const parts = ctx.path.split('/');
        const path: Record<string, string> = {};
        for (const [name, i] of pathIndex) path[name] = parts[i] ?? '';
        const raw: RawRequest = { path, headers: ctx.req.headers, parsedQuery: parseQuery(ctx.query) };
        if (ctx.query !== '') {
          const ambiguous: { pointer: string; message: string }[] = [];
          ambiguousQuery(ctx.query, queryObjectOf(raw), declared, ambiguous);
          for (const f of ambiguous) {
            const name = nameOf(f.pointer);
            // deepObject's own names (color[R]); its reader refuses deeper brackets and repeats.
            if (name !== undefined && deepPrefixes.some((prefix) => name.startsWith(prefix))) continue;
            found.push({ in: 'query', ...(name !== undefined && { name }), ...f });
          }
        }
        const values: Record<string, Record<string, unknown>> = { path: {}, query: {}, header: {}, cookie: {} };
        const given: Record<string, Record<string, unknown>> = { path: {}, query: {}, header: {}, cookie: {} };
        for (const p of readers) {
          const result = p.read(raw);
          if ('error' in result) found.push({ in: p.in, name: p.name, pointer: p.pointer, message: result.error });
          else if ('value' in result) {
            given[p.in]![p.name] = result.value;
            values[p.in]![p.name] = copy(result.value);
          }
        }
        // Parameters come from at most 8 KiB of target and 16 KiB of headers: every failure is listed.
        const failed = schemaFailures(checkParams, values, '', 0);
        if (failed.length === 0) exactNumbers(readers, values, given, found);
        else for (const f of located(failed)) found.push(f);
      }
      const withBody = hasBody(ctx.req);
      if (withBody && body !== undefined) return validateBody(ctx, found);
      // What the document does not describe was not checked: an upstream that reads a body on
      // this operation (a GET with a search body, a form on a DELETE) would read it unvalidated.
      if (withBody && body === undefined) found.push({ in: 'body', pointer: '/body', message: 'is not allowed: the operation takes no request body' });
      if (!withBody && bodyRequired) found.push({ in: 'body', pointer: '/body', message: 'is required' });
      refuse(found);
    };
  }

  /**
   * What checks the upstream's answers to `op`: its status must be one the operation declares (or
   * `default`), a body of a declared media type that its schema accepts, and every required
   * header present and as its schema says. Throws a TypeError naming a schema ajv cannot compile.
   */
  response(op: Operation): (method: string, answer: Answer) => ResponseFailure[] {
    const what = (r: Response) => `${op.method} ${op.path} response ${r.status}`;
    const byStatus = new Map(
      op.responses.map((r) => [
        r.status,
        {
          status: r.status,
          content: bySpecificity(r.content).map((media) => ({
            range: media.type,
            // Only JSON is parsed: the schema of another media type describes bytes the gateway does not read.
            validate: media.schema !== undefined && isJsonType(media.type) ? this.#compile((this.#answers ??= documentAjvs(this.#doc, false, 'response')), media.schema, what(r)) : undefined,
          })),
          headers: headersCheck(r, (schema) => this.#compile(this.#coercing, schema, `${what(r)} headers`)),
        },
      ]),
    );
    return function checkResponse(method, answer) {
      const declared = forStatus(byStatus, answer.status);
      if (declared === undefined) return [{ in: 'status', pointer: '/status', message: `is ${answer.status}, which the document does not declare for this operation` }];
      const found: ResponseFailure[] = [];
      if (declared.headers !== undefined) {
        const values = Object.create(null) as Record<string, string>;
        for (const name of declared.headers.names) {
          const value = answer.headers[name];
          if (value !== undefined) values[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        for (const f of schemaFailures(declared.headers.validate, values, '/header', 0)) found.push({ in: 'header', name: nameOf(f.pointer)!, ...f });
      }
      // The check reads the first Content-Type, a browser the last (Fetch "extract a MIME type"): JSON checked could be read as HTML.
      const contentType = answer.headers['content-type'];
      if (Array.isArray(contentType) && contentType.length > 1) {
        found.push({ in: 'header', name: 'content-type', pointer: '/header/content-type', message: 'is given more than once' });
        return found;
      }
      if (bodiless(method, answer.status)) return found;
      const ranges = declared.content.map((c) => c.range).join(' or ');
      if (answer.body.length === 0) {
        if (declared.content.length > 0) found.push({ in: 'body', pointer: '/body', message: `is empty; the document declares ${ranges} for ${declared.status}` });
        return found;
      }
      if (declared.content.length === 0) {
        found.push({ in: 'body', pointer: '/body', message: `is not empty; the document declares no body for ${declared.status}` });
        return found;
      }
      const type = mediaType(contentType);
      const media = declared.content.find((c) => matches(c.range, type));
      if (media === undefined) {
        found.push({ in: 'header', name: 'content-type', pointer: '/header/content-type', message: `is ${type === '' ? 'missing' : type}; the document declares ${ranges} for ${declared.status}` });
      } else if (media.validate !== undefined) {
        // As a request's body: the client must read the value that was checked (one member of a name, exact numbers, UTF-8).
        for (const f of jsonBodyFailures(answer.body, media.validate, '/body')) found.push({ in: 'body', ...f });
      }
      return found;
    };
  }

  #compile(ajv: Ajvs, schema: object, what: string): SchemaCheck {
    const key = `${ajv === this.#coercing ? 'coercing' : ajv === this.#strict ? 'strict' : 'answers'} ${JSON.stringify(schema)}`;
    let check = this.#checks.get(key);
    if (check !== undefined) return check;
    try {
      check = { first: ajv.first.compile(schema), all: ajv.all.compile(schema) };
    } catch (err) {
      throw new TypeError(`${what}: ${(err as Error).message}`);
    }
    this.#checks.set(key, check);
    return check;
  }

  /** A checker per media type of the body: JSON against its schema, forms and multipart by their fields. */
  #bodyCheckers(content: readonly MediaType[], what: string): { range: string; check: (body: Buffer, contentType: string, found: RequestFailure[]) => void }[] {
    return bySpecificity(content).map((media) => {
      const range = media.type;
      if (media.schema === undefined) return { range, check: () => {} };
      if (isJsonType(range)) {
        const validate = this.#compile(this.#strict, media.schema, what);
        return {
          range,
          check(body, _type, found) {
            for (const f of jsonBodyFailures(body, validate, '/body')) found.push({ in: 'body', ...f });
          },
        };
      }
      if (range === 'application/x-www-form-urlencoded' || range === 'multipart/form-data') {
        const validate = this.#compile(this.#coercing, media.schema, what);
        const arrays = arrayProperties(media.resolvedSchema);
        const files = fileProperties(media.resolvedSchema);
        const properties = (media.resolvedSchema?.properties ?? {}) as Record<string, ObjectMap>;
        const declared = new Set(Object.keys(properties));
        // Each field as the number check of parameters reads it: in the body, by its name.
        const fieldNumbers = [...declared].map((name) => ({ in: 'body' as const, name, pointer: `/body/${escapeToken(name)}`, integer: isInteger(properties[name]) }));
        return {
          range,
          check(body, contentType, found) {
            const text = range === 'multipart/form-data' ? '' : body.toString('latin1');
            // As in a query: URLSearchParams makes U+FFFD of what is not UTF-8, which an upstream reads otherwise.
            const unreadable = range === 'multipart/form-data' ? undefined : /[^\x00-\x7f]/.test(text) ? 'must be ASCII, other characters percent-encoded as UTF-8' : decodesAsUtf8(text) ? undefined : 'has a percent-escape that is malformed or not UTF-8';
            if (unreadable !== undefined) {
              found.push({ in: 'body', pointer: '/body', message: unreadable });
              return;
            }
            const fields = range === 'multipart/form-data' ? multipartFields(body, contentType, files, found) : formFields(text);
            if (fields === undefined) return;
            const value: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
            const given: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
            const raw = Object.create(null) as Record<string, string | string[]>;
            for (const [name, list] of fields) {
              if (list.length > 1 && !arrays.has(name) && found.length < MAX_FAILURES) found.push({ in: 'body', name, pointer: `/body/${escapeToken(name)}`, message: 'is given more than once' });
              given[name] = arrays.has(name) ? list : list[0];
              value[name] = arrays.has(name) ? [...list] : list[0];
              raw[name] = list.length === 1 ? list[0]! : list;
            }
            // As in the query: a ';' separator and a bracketed name the schema does not declare are read otherwise by some upstreams.
            const ambiguous: { pointer: string; message: string }[] = [];
            ambiguousQuery(text, raw, declared, ambiguous, '/body');
            for (const f of ambiguous) found.push({ in: 'body', ...f });
            const failed = schemaFailures(validate, value, '/body', body.length);
            if (failed.length === 0) exactNumbers(fieldNumbers, { body: value }, { body: given }, found);
            else for (const f of failed) found.push({ in: 'body', ...f });
          },
        };
      }
      // Another media type (text, octet-stream): its schema describes bytes the gateway does not parse.
      return { range, check: () => {} };
    });
  }
}

/** Which way a value travels: `readOnly` properties are required of answers only, `writeOnly` ones of requests only. */
type Direction = 'request' | 'response';

/** An ajv that stops at a schema's first failure, and one that finds them all (json/schema.ts's SchemaCheck). */
interface Ajvs {
  first: Ajv;
  all: Ajv;
}

const documentAjvs = (doc: ApiDocument, coerce: boolean, direction: Direction): Ajvs => ({ first: documentAjv(doc, coerce, direction, false), all: documentAjv(doc, coerce, direction, true) });

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
    for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
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

function typesOf(schema: ObjectMap | undefined): string[] {
  const type = schema?.type;
  return Array.isArray(type) ? type.map(String) : typeof type === 'string' ? [type] : [];
}

/** How a parameter's value is written: a list, name/value pairs, or one value. */
function shapeOf(p: Parameter, queryNames: readonly string[]): { shape: ParameterShape; properties?: readonly string[]; otherQueryNames?: readonly string[] } {
  const types = typesOf(p.resolvedSchema);
  if (types.includes('array')) return { shape: 'array' };
  if (types.includes('object') || p.resolvedSchema?.properties !== undefined) {
    const properties = Object.keys((p.resolvedSchema?.properties ?? {}) as ObjectMap);
    return properties.length > 0 ? { shape: 'object', properties } : { shape: 'object', otherQueryNames: queryNames.filter((n) => n !== p.name) };
  }
  return { shape: 'primitive' };
}

function isInteger(schema: ObjectMap | undefined): boolean {
  return typesOf(schema).includes('integer') || typesOf(schema?.items as ObjectMap | undefined).includes('integer');
}

/** The properties of an object's schema that are integers (a deepObject's or a form object's values). */
function integerProperties(schema: ObjectMap | undefined): ReadonlySet<string> | undefined {
  const properties = schema?.properties as Record<string, ObjectMap> | undefined;
  return properties === undefined ? undefined : new Set(Object.keys(properties).filter((name) => isInteger(properties[name])));
}

/**
 * A response's headers as one object schema (by lower-cased name, as Node gives them); the
 * values are strings (the simple style), coerced to their schemas' types. Content-Type is not
 * one of them: the spec says it is ignored there, and the media types say it.
 */
function headersCheck(r: Response, compile: (schema: object) => SchemaCheck): { names: string[]; validate: SchemaCheck } | undefined {
  const headers = [...r.headers].map(([name, h]) => ({ ...h, name })).filter((h) => h.name !== 'content-type');
  if (headers.length === 0) return undefined;
  const schema = {
    type: 'object',
    properties: Object.fromEntries(headers.map((h) => [h.name, h.schema ?? {}])),
    required: headers.filter((h) => h.required).map((h) => h.name),
  };
  return { names: headers.map((h) => h.name), validate: compile(schema) };
}

/** The parameters as one JSON Schema: an object per location, each parameter a property with its schema. */
function parametersSchema(params: readonly Parameter[]): object {
  const properties: ObjectMap = {};
  for (const location of LOCATIONS) {
    const here = params.filter((p) => p.in === location);
    properties[location] = {
      type: 'object',
      properties: Object.fromEntries(here.map((p) => [p.name, p.contentType === undefined ? (p.schema ?? {}) : {}])),
      required: here.filter((p) => p.required).map((p) => p.name),
    };
  }
  return { type: 'object', properties };
}

const copy = (value: string | string[] | Record<string, string>): unknown => (Array.isArray(value) ? [...value] : typeof value === 'object' ? { ...value } : value);

/** Failures with their location and parameter named (their pointer starts /path, /query, /header or /cookie). */
function located(list: readonly { pointer: string; message: string }[]): RequestFailure[] {
  return list.map((f) => {
    const name = nameOf(f.pointer);
    return { in: parsePointer(f.pointer)![0] as RequestFailure['in'], ...(name !== undefined && { name }), pointer: f.pointer, message: f.message };
  });
}

/** The parameter a pointer such as /query/limit/0 is about. */
const nameOf = (pointer: string) => parsePointer(pointer)?.[1];

/** A parameter as the number check needs it, worked out once: where it is, its pointer, whether its schema wants integers. */
interface Numeric {
  in: RequestFailure['in'];
  name: string;
  pointer: string;
  integer: boolean;
  /** For an object: which of its properties are integers. */
  integerProperties?: ReadonlySet<string> | undefined;
}

/** ajv coerces "0x64", "1e2" or "100.0"; an upstream reads them otherwise: a number must be written as a plain, exact decimal (an integer without a fraction). */
function exactNumbers(params: readonly Numeric[], values: Record<string, Record<string, unknown>>, given: Record<string, Record<string, unknown>>, found: RequestFailure[]): void {
  for (const p of params) {
    const value = values[p.in]![p.name];
    if (value === undefined) continue;
    const raw = given[p.in]![p.name];
    if (Array.isArray(value)) value.forEach((v, i) => exactNumberAt(p, v, (raw as string[])[i], `/${i}`, found));
    else if (value !== null && typeof value === 'object') {
      // An object's integer rule is each property's own: the object's schema is no integer.
      for (const key in value) exactNumberAt(p, (value as ObjectMap)[key], (raw as Record<string, string>)[key], `/${escapeToken(key)}`, found, p.integerProperties?.has(key) === true);
    } else exactNumberAt(p, value, raw, '', found);
  }
}

function exactNumberAt(p: Numeric, value: unknown, raw: unknown, below: string, found: RequestFailure[], integer = p.integer): void {
  if (found.length >= MAX_FAILURES) return;
  if (typeof value !== 'number' || typeof raw !== 'string' || exactNumber(raw, value, integer && Number.isInteger(value))) return;
  found.push({ in: p.in, name: p.name, pointer: p.pointer + below, message: notPlainNumber(integer) });
}

function queryObjectOf(raw: RawRequest): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [name, values] of raw.parsedQuery.params) out[name] = values.length === 1 ? values[0]! : [...values];
  return out;
}

function refuse(found: readonly RequestFailure[]): void {
  if (found.length > 0) throw new GatewayError(400, 'invalid_request', 'the request is not valid', { extensions: { errors: found.slice(0, MAX_FAILURES) }, policy: 'openapi' });
}

/**
 * The media types of a body or answer, the most specific first, so that the first to match a
 * type is the one that describes it (OpenAPI: "the most specific key is applicable"): an exact
 * type, then application/*+json, then a type/*, then *\/*.
 */
function bySpecificity(content: readonly MediaType[]): MediaType[] {
  const rank = (range: string) => (range === '*/*' ? 3 : range === 'application/*+json' ? 1 : range.endsWith('/*') ? 2 : 0);
  return [...content].sort((a, b) => rank(a.type) - rank(b.type));
}

/** Whether a media type matches a range of the document (application/json, application/*, *\/*). */
function matches(range: string, type: string): boolean {
  if (range === type || range === '*/*') return true;
  if (range.endsWith('/*')) return type.startsWith(range.slice(0, -1));
  return range === 'application/*+json' && isJsonType(type);
}

/** The names of the properties of a form's schema that are files, or arrays of files (OpenAPI 3.0's format: binary, 3.1's contentMediaType or contentEncoding). */
function fileProperties(schema: ObjectMap | undefined): Set<string> {
  const properties = (schema?.properties ?? {}) as Record<string, ObjectMap>;
  const isFile = (s: ObjectMap | undefined) => s?.format === 'binary' || s?.contentMediaType !== undefined || s?.contentEncoding !== undefined;
  return new Set(Object.keys(properties).filter((name) => isFile(properties[name]) || isFile(properties[name]?.items as ObjectMap | undefined)));
}

/** The names of the properties of a form's schema that are arrays (their fields may repeat). */
function arrayProperties(schema: ObjectMap | undefined): Set<string> {
  const properties = (schema?.properties ?? {}) as Record<string, ObjectMap>;
  return new Set(Object.keys(properties).filter((name) => typesOf(properties[name]).includes('array')));
}

/**
 * A multipart body's fields: text as itself, a file as its name. A file is accepted only where the
 * schema says the field is one (format: binary, contentMediaType or contentEncoding): elsewhere its
 * content would reach the upstream unchecked, read as the field's value by some parsers.
 */
function multipartFields(body: Buffer, contentType: string, files: ReadonlySet<string>, found: RequestFailure[]): Map<string, string[]> | undefined {
  const read = readMultipart(body, mediaParameters(contentType)?.get('boundary'));
  if ('problem' in read) {
    found.push({ in: 'body', pointer: '/body', message: read.problem });
    return undefined;
  }
  const fields: [string, string][] = [];
  for (const part of read.parts) {
    if (part.kind === 'file' && !files.has(part.name)) {
      found.push({ in: 'body', name: part.name, pointer: `/body/${escapeToken(part.name)}`, message: 'is a file, and the schema does not describe a file here (format: binary, contentMediaType or contentEncoding)' });
      if (found.length >= MAX_FAILURES) return undefined;
    } else fields.push([part.name, part.kind === 'file' ? part.filename : part.value]);
  }
  return byName(fields);
}
