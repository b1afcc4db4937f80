// The operations of a document: each path item and method of its paths, with the $refs of
// OpenAPI's own objects (path items, parameters, request bodies, responses, headers) followed
// across the files read, each problem noted with its file and line. A schema is kept as a $ref
// for ajv (to the place it is written, so its own $refs resolve against its file), and resolved
// at its top for what the reader needs to know of it (its type).
import { fileURLToPath } from 'node:url';
import { mediaType } from '../http/request.ts';
import { escapeToken } from '../json/pointer.ts';
import type { Body, DocumentIssue, Location, MediaType, ObjectMap, Operation, Parameter, Response } from './document.ts';
import { lookup, refUrl, type SourceFile } from './sources.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Follows the $refs of OpenAPI objects (path items, parameters, bodies, responses, headers) across the files read. */
export class Reader {
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
