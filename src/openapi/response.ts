// An upstream's answer checked against the operation's responses: its status must be declared
// (exactly, by its class, or `default`), a body must be of a declared media type and, for JSON,
// accepted by its schema as a request's body would be, and the required headers must be there and
// as their schemas say. Each mismatch is listed; the policy (validate-response) decides what to do.
import { isJsonType, mediaType } from '../http/request.ts';
import { jsonBodyFailures } from '../json/body.ts';
import { schemaFailures, type SchemaCheck } from '../json/schema.ts';
import { bySpecificity, matches, nameOf, type Compile } from './checks.ts';
import type { Operation, Response } from './document.ts';

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

/**
 * What checks the upstream's answers to `op`: its status must be one the operation declares (or
 * `default`), a body of a declared media type that its schema accepts, and every required
 * header present and as its schema says. Throws a TypeError naming a schema ajv cannot compile.
 */
export function responseCheck(op: Operation, compile: Compile): (method: string, answer: Answer) => ResponseFailure[] {
  const what = (r: Response) => `${op.method} ${op.path} response ${r.status}`;
  const byStatus = new Map(
    op.responses.map((r) => [
      r.status,
      {
        status: r.status,
        content: bySpecificity(r.content).map((media) => ({
          range: media.type,
          // Only JSON is parsed: the schema of another media type describes bytes the gateway does not read.
          validate: media.schema !== undefined && isJsonType(media.type) ? compile('answers', media.schema, what(r)) : undefined,
        })),
        headers: headersCheck(r, (schema) => compile('coercing', schema, `${what(r)} headers`)),
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
