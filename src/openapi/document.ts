// An OpenAPI 3.0 or 3.1 document and every file its $refs name, read once at config load, and
// its operations with their parameters, bodies and responses resolved. Schemas keep their $refs:
// ajv resolves them (src/openapi/validators.ts), each file added under its own file URL, so a
// relative $ref resolves against the file it is written in, as JSON Schema's base URI rules say.
// The objects of OpenAPI that a $ref may stand for outside schemas (path items, parameters,
// request bodies, responses, headers) are followed here. Only files: a remote $ref is refused.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { mediaType } from '../http/request.ts';
import { escapeToken, getAt, parsePointer } from '../json/pointer.ts';

/** What is wrong with a document: the file, the line when known, and the message. */
export interface DocumentIssue {
  file: string;
  line: number | undefined;
  message: string;
}

export class DocumentError extends Error {
  override readonly name = 'DocumentError';
  readonly issues: readonly DocumentIssue[];
  constructor(issues: DocumentIssue[]) {
    super(issues.map((i) => `${i.message} (${path.basename(i.file)}${i.line === undefined ? '' : `:${i.line}`})`).join('\n'));
    this.issues = issues;
  }
}

/** One file of a document: its value, and the line of a JSON pointer in it. */
interface SourceFile {
  url: string;
  value: unknown;
  lineOf(pointer: string): number | undefined;
}

/** Where an object is: the file's URL and a JSON pointer into it ('' for the root). */
export interface Location {
  url: string;
  pointer: string;
}

export type ObjectMap = Record<string, unknown>;

export const isObject = (v: unknown): v is ObjectMap => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A parameter of an operation, its $ref followed. */
export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  style: string | undefined;
  explode: boolean | undefined;
  /** The parameter's schema: a $ref ajv resolves (to `location`#…/schema), or undefined without one. */
  schema: object | undefined;
  /** The schema itself, $refs followed at its top, for what the reader needs to know (its type). */
  resolvedSchema: ObjectMap | undefined;
  /** A parameter with `content` in place of `schema`: its one media type (the value is that type's serialization). */
  contentType: string | undefined;
  description: string | undefined;
  deprecated: boolean;
  example: unknown;
  location: Location;
}

export interface MediaType {
  type: string;
  /** A $ref to the media type's schema, for ajv; undefined without one. */
  schema: object | undefined;
  resolvedSchema: ObjectMap | undefined;
  example: unknown;
}

export interface Body {
  required: boolean;
  description: string | undefined;
  content: readonly MediaType[];
}

export interface Response {
  /** '200', '4XX' or 'default'. */
  status: string;
  description: string;
  content: readonly MediaType[];
  /** Its headers, by lower-cased name. */
  headers: ReadonlyMap<string, { required: boolean; schema: object | undefined; description: string | undefined }>;
}

export interface Operation {
  method: string;
  /** The path template as the document writes it, such as /orders/{id}. */
  path: string;
  operationId: string | undefined;
  summary: string | undefined;
  description: string | undefined;
  tags: readonly string[];
  deprecated: boolean;
  /** The alternatives of its security requirement (the operation's, else the document's): each a map of scheme → scopes. */
  security: readonly Readonly<Record<string, readonly string[]>>[];
  parameters: readonly Parameter[];
  body: Body | undefined;
  responses: readonly Response[];
  location: Location;
  /** The line of the operation in its file. */
  line: number | undefined;
  file: string;
}

export interface ApiDocument {
  /** The document's own file (absolute path). */
  file: string;
  version: '3.0' | '3.1';
  title: string;
  apiVersion: string;
  description: string | undefined;
  /** The path of the first server's URL ('' when it has none), such as /v1. */
  serverPath: string;
  /** Tags as the document declares them (name, description), in its order. */
  tags: readonly { name: string; description: string | undefined }[];
  /** Every file read, by URL, for ajv. */
  files: ReadonlyMap<string, unknown>;
  operations: readonly Operation[];
  /** The OAuth 2.0 security schemes' scopes, with their descriptions. */
  scopes: ReadonlyMap<string, string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Reads a document and the files it refers to; throws DocumentError listing every problem. */
export function loadDocument(file: string): ApiDocument {
  const issues: DocumentIssue[] = [];
  const files = new Map<string, SourceFile>();
  const rootUrl = pathToFileURL(path.resolve(file)).href;
  const root = readSource(rootUrl, issues);
  if (root === undefined) throw new DocumentError(issues);
  files.set(rootUrl, root);
  const doc = root.value as ObjectMap;
  const version = typeof doc?.openapi === 'string' ? /^3\.(0|1)\.\d+$/.exec(doc.openapi)?.[1] : undefined;
  if (doc === null || typeof doc !== 'object' || version === undefined) {
    throw new DocumentError([{ file: path.resolve(file), line: root.lineOf('/openapi'), message: 'not an OpenAPI 3.0 or 3.1 document (its "openapi" must be 3.0.x or 3.1.x)' }]);
  }
  collectFiles(root, files, issues);
  const reader = new Reader(files, issues);
  const operations = reader.operations(rootUrl, doc);
  if (issues.length > 0) throw new DocumentError(issues);
  const info = (doc.info ?? {}) as ObjectMap;
  return {
    file: path.resolve(file),
    version: version === '0' ? '3.0' : '3.1',
    title: typeof info.title === 'string' ? info.title : path.basename(file),
    apiVersion: typeof info.version === 'string' ? info.version : '',
    description: typeof info.description === 'string' ? info.description : undefined,
    serverPath: serverPath(doc),
    tags: (Array.isArray(doc.tags) ? (doc.tags as ObjectMap[]) : []).map((t) => ({ name: String(t.name), description: typeof t.description === 'string' ? t.description : undefined })),
    files: new Map([...files].map(([url, f]) => [url, f.value])),
    operations,
    scopes: oauthScopes(doc),
  };
}

/** A path template with its parameters unnamed: two templates of one shape match the same paths. */
export const pathShape = (template: string) => template.replace(/\{[^}]+\}/g, '{}');

/**
 * The operation a route written out by hand is checked against: the one for `method` whose path
 * has the route's shape, as the document writes it or below its server's path. `routePath` is
 * that path as the gateway serves it, with the document's parameter names.
 */
export function findOperation(doc: ApiDocument, method: string, routePath: string): { operation: Operation; routePath: string } | undefined {
  const wanted = pathShape(routePath);
  for (const operation of doc.operations) {
    if (operation.method !== method) continue;
    for (const served of [operation.path, doc.serverPath + operation.path]) if (pathShape(served) === wanted) return { operation, routePath: served };
  }
  return undefined;
}

function readSource(url: string, issues: DocumentIssue[], from?: { file: string; line: number | undefined }): SourceFile | undefined {
  const file = fileURLToPath(url);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    issues.push({ file: from?.file ?? file, line: from?.line, message: `cannot read ${file}: ${reason}` });
    return undefined;
  }
  const lines = new LineCounter();
  const parsed = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (parsed.errors.length > 0) {
    for (const e of parsed.errors) issues.push({ file, line: e.linePos?.[0].line, message: e.message.split('\n')[0] ?? e.code });
    return undefined;
  }
  let value: unknown;
  try {
    value = parsed.toJS({ maxAliasCount: 100 });
  } catch (err) {
    issues.push({ file, line: undefined, message: (err as Error).message.split('\n')[0] ?? 'unreadable YAML' });
    return undefined;
  }
  const lineOf = (pointer: string): number | undefined => {
    const node = nodeAtPointer(parsed.contents, pointer);
    return node?.range ? lines.linePos(node.range[0]).line : undefined;
  };
  return { url, value, lineOf };
}

/** The YAML node a JSON pointer names; for a mapping entry, its key (so the line is the entry's). */
function nodeAtPointer(contents: unknown, pointer: string): Node | undefined {
  let node = contents;
  let found: Node | undefined = contents as Node | undefined;
  for (const key of parsePointer(pointer) ?? []) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair === undefined) return found;
      found = pair.key as Node;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(key)];
      if (node === undefined) return found;
      found = node as Node;
    } else {
      return found;
    }
  }
  return found;
}

/** Reads every file a $ref names, transitively; notes refs that are remote or point nowhere. */
function collectFiles(start: SourceFile, files: Map<string, SourceFile>, issues: DocumentIssue[]): void {
  const pending = [start];
  const refs: { ref: string; url: string; at: SourceFile; pointer: string }[] = [];
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    const at = source;
    walk(at.value, '', (ref, pointer) => {
      const line = at.lineOf(pointer);
      const target = refUrl(ref, at.url);
      if (typeof target !== 'string') {
        issues.push({ file: fileURLToPath(at.url), line, message: `$ref "${ref}": ${target.error}` });
        return;
      }
      const fileUrl = target.split('#')[0]!;
      refs.push({ ref, url: target, at, pointer });
      if (files.has(fileUrl)) return;
      const read = readSource(fileUrl, issues, { file: fileURLToPath(at.url), line });
      if (read === undefined) return;
      files.set(fileUrl, read);
      pending.push(read);
    });
  }
  for (const { ref, url, at, pointer } of refs) {
    const [fileUrl, fragment = ''] = url.split('#') as [string, string?];
    const file = files.get(fileUrl);
    if (file !== undefined && lookup(file.value, fragment) === undefined) {
      issues.push({ file: fileURLToPath(at.url), line: at.lineOf(pointer), message: `$ref "${ref}" points nowhere (${path.basename(fileURLToPath(fileUrl))} has no ${fragment || '/'})` });
    }
  }
}

/** Calls `found` with each $ref string and the pointer of the object holding it. */
function walk(value: unknown, pointer: string, found: (ref: string, pointer: string) => void): void {
  if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${pointer}/${i}`, found));
  if (value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string') found(v, `${pointer}/$ref`);
    // An example or a default is data: a "$ref" key in it is not a reference.
    else if (key !== 'example' && key !== 'examples' && key !== 'default' && key !== 'const' && key !== 'enum') walk(v, `${pointer}/${escapeToken(key)}`, found);
  }
}

/**
 * The schema `raw`, written in the file at `base`, stands for: its $refs followed across the
 * document's files (at most 16); siblings of a $ref (a description, readOnly) win over its
 * target's. `base` is the file the result is written in, `ref` the last $ref followed.
 */
export function resolveSchema(files: ReadonlyMap<string, unknown>, raw: unknown, base: string): { value: ObjectMap; base: string; ref: string | undefined } | undefined {
  let node = raw;
  let here = base;
  let ref: string | undefined;
  const overrides: ObjectMap[] = [];
  for (let i = 0; i < 16; i++) {
    if (node === true) node = {};
    if (!isObject(node)) return undefined;
    if (typeof node.$ref !== 'string') return { value: overrides.length === 0 ? node : Object.assign({}, node, ...overrides.reverse()), base: here, ref };
    const { $ref, ...siblings } = node;
    if (Object.keys(siblings).length > 0) overrides.push(siblings);
    let url: URL;
    try {
      url = here === '' ? new URL($ref) : new URL($ref, here);
    } catch {
      return undefined;
    }
    ref = url.href;
    here = url.href.split('#')[0]!;
    const pointer = parsePointer(decodeURIComponent(url.hash.slice(1)));
    node = pointer === undefined ? undefined : getAt(files.get(here), pointer);
  }
  return undefined;
}

/** The absolute URL a $ref names from `base`, or why it cannot be followed. */
function refUrl(ref: string, base: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return { error: 'is not a valid reference' };
  }
  if (url.protocol !== 'file:') return { error: 'only references to files beside the document are followed, never remote ones' };
  if (url.hash !== '' && !url.hash.startsWith('#/')) return { error: 'its fragment must be a JSON pointer (#/…)' };
  return url.href.replace(/#$/, '');
}

/** What a $ref's fragment (a percent-encoded JSON pointer) names in a file's value. */
function lookup(value: unknown, fragment: string): unknown {
  const path = parsePointer(decodeURIComponent(fragment));
  return path === undefined ? undefined : getAt(value, path);
}

/** The path of the first server's URL, its variables ({port}, {version}) given their defaults. */
function serverPath(doc: ObjectMap): string {
  const first = Array.isArray(doc.servers) ? (doc.servers[0] as ObjectMap | undefined) : undefined;
  if (typeof first?.url !== 'string') return '';
  const variables = (first.variables ?? {}) as Record<string, ObjectMap | undefined>;
  const url = first.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = variables[name]?.default;
    return typeof value === 'string' ? value : whole;
  });
  try {
    return new URL(url, 'http://server.invalid').pathname.replace(/\/$/, '');
  } catch {
    return '';
  }
}

function oauthScopes(doc: ObjectMap): Map<string, string> {
  const out = new Map<string, string>();
  const schemes = ((doc.components as ObjectMap | undefined)?.securitySchemes ?? {}) as Record<string, ObjectMap>;
  for (const scheme of Object.values(schemes)) {
    if (scheme?.type !== 'oauth2' && scheme?.type !== 'openIdConnect') continue;
    for (const flow of Object.values((scheme.flows ?? {}) as Record<string, ObjectMap>)) {
      for (const [scope, description] of Object.entries((flow?.scopes ?? {}) as Record<string, unknown>)) out.set(scope, String(description ?? ''));
    }
  }
  return out;
}

/** Follows the $refs of OpenAPI objects (path items, parameters, bodies, responses, headers) across the files read. */
class Reader {
  readonly #files: ReadonlyMap<string, SourceFile>;
  readonly #issues: DocumentIssue[];

  constructor(files: ReadonlyMap<string, SourceFile>, issues: DocumentIssue[]) {
    this.#files = files;
    this.#issues = issues;
  }

  /** The object at `at`, its $refs followed (at most 16 deep), and where it finally is. */
  follow(value: unknown, at: Location): { value: ObjectMap; at: Location } | undefined {
    let here = at;
    let node = value;
    for (let i = 0; i < 16; i++) {
      if (node === null || typeof node !== 'object') return undefined;
      const ref = (node as ObjectMap).$ref;
      if (typeof ref !== 'string') return { value: node as ObjectMap, at: here };
      const target = refUrl(ref, here.url);
      if (typeof target !== 'string') return undefined; // already reported
      const [url, fragment = ''] = target.split('#') as [string, string?];
      here = { url, pointer: decodeURIComponent(fragment) };
      node = lookup(this.#files.get(url)?.value, fragment);
    }
    this.#report(at, 'its $refs go round in a circle');
    return undefined;
  }

  #report(at: Location, message: string): void {
    this.#issues.push({ file: fileURLToPath(at.url), line: this.#files.get(at.url)?.lineOf(at.pointer), message });
  }

  /** A $ref to the schema at `at`, for ajv (which reads every file under its URL). */
  #schemaRef(value: unknown, at: Location): object | undefined {
    return value === undefined ? undefined : { $ref: `${at.url}#${at.pointer.split('/').map(encodeURIComponent).join('/')}` };
  }

  operations(rootUrl: string, doc: ObjectMap): Operation[] {
    const out: Operation[] = [];
    const docSecurity = Array.isArray(doc.security) ? (doc.security as Record<string, string[]>[]) : [];
    const paths = doc.paths;
    if (paths === undefined) return out;
    if (paths === null || typeof paths !== 'object') {
      this.#report({ url: rootUrl, pointer: '/paths' }, '"paths" must be an object');
      return out;
    }
    for (const [template, rawItem] of Object.entries(paths as ObjectMap)) {
      const itemAt = { url: rootUrl, pointer: `/paths/${escapeToken(template)}` };
      if (!template.startsWith('/')) {
        this.#report(itemAt, `path "${template}" must start with "/"`);
        continue;
      }
      const item = this.follow(rawItem, itemAt);
      if (item === undefined) continue;
      const shared = this.#parameters(item.value.parameters, { url: item.at.url, pointer: `${item.at.pointer}/parameters` });
      for (const method of METHODS) {
        const op = item.value[method] as ObjectMap | undefined;
        if (op === undefined) continue;
        const at = { url: item.at.url, pointer: `${item.at.pointer}/${method}` };
        const own = this.#parameters(op.parameters, { url: at.url, pointer: `${at.pointer}/parameters` });
        // An operation's parameter overrides the path item's of the same name and location.
        const parameters = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
        this.#checkPathParameters(template, parameters, at);
        const security = Array.isArray(op.security) ? (op.security as Record<string, string[]>[]) : docSecurity;
        out.push({
          method: method.toUpperCase(),
          path: template,
          operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
          summary: typeof op.summary === 'string' ? op.summary : undefined,
          description: typeof op.description === 'string' ? op.description : undefined,
          tags: Array.isArray(op.tags) ? op.tags.map(String) : [],
          deprecated: op.deprecated === true,
          security: security.map((s) => Object.fromEntries(Object.entries(s ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : []]))),
          parameters,
          body: this.#body(op.requestBody, { url: at.url, pointer: `${at.pointer}/requestBody` }),
          responses: this.#responses(op.responses, { url: at.url, pointer: `${at.pointer}/responses` }),
          location: at,
          line: this.#files.get(at.url)?.lineOf(at.pointer),
          file: fileURLToPath(at.url),
        });
      }
    }
    return out;
  }

  #parameters(list: unknown, at: Location): Parameter[] {
    if (list === undefined) return [];
    if (!Array.isArray(list)) {
      this.#report(at, '"parameters" must be a list');
      return [];
    }
    const out: Parameter[] = [];
    list.forEach((raw, i) => {
      const found = this.follow(raw, { url: at.url, pointer: `${at.pointer}/${i}` });
      if (found === undefined) return;
      const p = found.value;
      const where = found.at;
      if (typeof p.name !== 'string' || !['path', 'query', 'header', 'cookie'].includes(p.in as string)) {
        this.#report(where, 'a parameter needs a "name" and an "in" of path, query, header or cookie');
        return;
      }
      if (p.in === 'path' && p.required !== true) this.#report(where, `path parameter "${p.name}" must be required: true`);
      const content = p.content as ObjectMap | undefined;
      const contentType = content === undefined ? undefined : Object.keys(content)[0];
      const schemaAt = contentType === undefined ? { url: where.url, pointer: `${where.pointer}/schema` } : { url: where.url, pointer: `${where.pointer}/content/${escapeToken(contentType)}/schema` };
      const schema = contentType === undefined ? p.schema : (content![contentType] as ObjectMap | undefined)?.schema;
      out.push({
        name: p.name,
        in: p.in as Parameter['in'],
        required: p.required === true,
        style: typeof p.style === 'string' ? p.style : undefined,
        explode: typeof p.explode === 'boolean' ? p.explode : undefined,
        schema: this.#schemaRef(schema, schemaAt),
        resolvedSchema: schema === undefined ? undefined : this.follow(schema, schemaAt)?.value,
        contentType,
        description: typeof p.description === 'string' ? p.description : undefined,
        deprecated: p.deprecated === true,
        example: p.example,
        location: where,
      });
    });
    return out;
  }

  #checkPathParameters(template: string, parameters: readonly Parameter[], at: Location): void {
    const named = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    for (const name of named) {
      if (!parameters.some((p) => p.in === 'path' && p.name === name)) this.#report(at, `path parameter "${name}" of ${template} is not declared`);
    }
    for (const p of parameters) {
      if (p.in === 'path' && !named.includes(p.name)) this.#report(p.location, `path parameter "${p.name}" is not in the path ${template}`);
    }
  }

  #media(content: unknown, at: Location): MediaType[] {
    if (content === undefined || content === null || typeof content !== 'object') return [];
    return Object.entries(content as ObjectMap).map(([type, raw]) => {
      const media = (raw ?? {}) as ObjectMap;
      const schemaAt = { url: at.url, pointer: `${at.pointer}/${escapeToken(type)}/schema` };
      return {
        // A key may carry parameters (application/json; charset=utf-8): a request's type is matched without them.
        type: mediaType(type),
        schema: this.#schemaRef(media.schema, schemaAt),
        resolvedSchema: media.schema === undefined ? undefined : this.follow(media.schema, schemaAt)?.value,
        example: media.example ?? firstExample(media.examples),
      };
    });
  }

  #body(raw: unknown, at: Location): Body | undefined {
    if (raw === undefined) return undefined;
    const found = this.follow(raw, at);
    if (found === undefined) return undefined;
    return {
      required: found.value.required === true,
      description: typeof found.value.description === 'string' ? found.value.description : undefined,
      content: this.#media(found.value.content, { url: found.at.url, pointer: `${found.at.pointer}/content` }),
    };
  }

  #responses(raw: unknown, at: Location): Response[] {
    if (raw === undefined || raw === null || typeof raw !== 'object') return [];
    const out: Response[] = [];
    for (const [status, value] of Object.entries(raw as ObjectMap)) {
      const found = this.follow(value, { url: at.url, pointer: `${at.pointer}/${escapeToken(status)}` });
      if (found === undefined) continue;
      const headers = new Map<string, { required: boolean; schema: object | undefined; description: string | undefined }>();
      for (const [name, h] of Object.entries((found.value.headers ?? {}) as ObjectMap)) {
        const hAt = { url: found.at.url, pointer: `${found.at.pointer}/headers/${escapeToken(name)}` };
        const header = this.follow(h, hAt);
        if (header === undefined) continue;
        headers.set(name.toLowerCase(), {
          required: header.value.required === true,
          schema: this.#schemaRef(header.value.schema, { url: header.at.url, pointer: `${header.at.pointer}/schema` }),
          description: typeof header.value.description === 'string' ? header.value.description : undefined,
        });
      }
      out.push({
        status: status.toUpperCase(),
        description: typeof found.value.description === 'string' ? found.value.description : '',
        content: this.#media(found.value.content, { url: found.at.url, pointer: `${found.at.pointer}/content` }),
        headers,
      });
    }
    return out;
  }
}

function firstExample(examples: unknown): unknown {
  if (examples === null || typeof examples !== 'object') return undefined;
  const first = Object.values(examples as ObjectMap)[0] as ObjectMap | undefined;
  return first?.value;
}
