// An OpenAPI 3.0 or 3.1 document and every file its $refs name, read once at config load, and
// its operations with their parameters, bodies and responses resolved: what the rest of the
// gateway reads of a document (the types below), and loadDocument, which reads its files
// (sources.ts) and its operations (operations.ts). Schemas keep their $refs: ajv resolves them
// (src/openapi/schemas.ts), each file added under its own file URL, so a relative $ref resolves
// against the file it is written in, as JSON Schema's base URI rules say; resolveSchema follows
// them for a reader that needs the schema itself. Only files: a remote $ref is refused.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getAt, parsePointer } from '../json/pointer.ts';
import { Reader } from './operations.ts';
import { collectFiles, readSource, type SourceFile } from './sources.ts';

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

/** Reads a document and the files it refers to; throws DocumentError listing every problem. */
export function loadDocument(file: string): ApiDocument {
  const issues: DocumentIssue[] = [];
  const root = readSource(pathToFileURL(path.resolve(file)).href, issues);
  if (root === undefined) throw new DocumentError(issues);
  return documentOf(root, file, issues);
}

/**
 * A document the gateway carries itself (the management API's), as a value: one file, named
 * `file` in messages, whose $refs point into itself.
 */
export function builtInDocument(file: string, value: object): ApiDocument {
  return documentOf({ url: pathToFileURL(path.resolve(file)).href, value, lineOf: () => undefined }, file, []);
}

function documentOf(root: SourceFile, file: string, issues: DocumentIssue[]): ApiDocument {
  const files = new Map<string, SourceFile>();
  const rootUrl = root.url;
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
