// A request's body, checked by its media type: a JSON body against its schema as the bytes say
// it (one member of a name, exact numbers, UTF-8: json/body.ts), a form or multipart body by its
// fields, each coerced to its property's type as a query's parameters are. A body of another type
// (text, octet-stream) is not parsed: its schema describes bytes the gateway does not read.
import { GatewayError } from '../errors.ts';
import { readBody, tooLarge } from '../http/body.ts';
import { readMultipart } from '../http/multipart.ts';
import { ambiguousQuery, byName, formFields } from '../http/query.ts';
import { contentTypeProblem, decodesAsUtf8, isJsonType, mediaParameters, mediaType } from '../http/request.ts';
import { jsonBodyFailures } from '../json/body.ts';
import { escapeToken } from '../json/pointer.ts';
import { MAX_FAILURES, schemaFailures, type SchemaCheck } from '../json/schema.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { bySpecificity, exactNumbers, isInteger, matches, refuse, typesOf, type Compile, type RequestFailure } from './checks.ts';
import type { MediaType, ObjectMap } from './document.ts';

/** What checks a body of one media type range. */
export interface BodyChecker {
  range: string;
  check: (body: Buffer, contentType: string, found: RequestFailure[]) => void;
}

/** A checker per media type of the body: JSON against its schema, forms and multipart by their fields. */
export function bodyCheckers(content: readonly MediaType[], what: string, compile: Compile): BodyChecker[] {
  return bySpecificity(content).map((media): BodyChecker => {
    const range = media.type;
    if (media.schema === undefined) return { range, check: () => {} };
    if (isJsonType(range)) {
      const validate = compile('strict', media.schema, what);
      return {
        range,
        check(body, _type, found) {
          for (const f of jsonBodyFailures(body, validate, '/body')) found.push({ in: 'body', ...f });
        },
      };
    }
    if (range === 'application/x-www-form-urlencoded' || range === 'multipart/form-data') return formChecker(range, media, compile('coercing', media.schema, what));
    // Another media type (text, octet-stream): its schema describes bytes the gateway does not parse.
    return { range, check: () => {} };
  });
}

/**
 * A request's body checked by the checker of its content type (415 when the operation takes none
 * of that type), read up to `maxBodySize`; throws the 400 listing `found` and the body's failures.
 */
export async function validateBody(ctx: RequestContext, found: RequestFailure[], checkers: readonly BodyChecker[], maxBodySize: number): Promise<void> {
  const type = mediaType(ctx.req.headers['content-type']);
  const checker = checkers.find((b) => matches(b.range, type));
  if (checker === undefined) {
    throw new GatewayError(415, 'unsupported_media_type', `the body must be ${checkers.map((b) => b.range).join(' or ')}`, { policy: 'openapi' });
  }
  const problem = contentTypeProblem(type, ctx.req.headers['content-type']);
  if (problem !== undefined) throw new GatewayError(415, 'unsupported_media_type', problem, { policy: 'openapi' });
  ctx.body ??= await readBody(ctx.req, maxBodySize);
  if (ctx.body.length > maxBodySize) throw tooLarge(maxBodySize);
  checker.check(ctx.body, ctx.req.headers['content-type'] as string, found);
  refuse(found);
}

/** A form or multipart body: its fields read as a query's parameters are, then checked against the schema (`validate`, coercing). */
function formChecker(range: 'application/x-www-form-urlencoded' | 'multipart/form-data', media: MediaType, validate: SchemaCheck): BodyChecker {
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
      const unreadable =
        range === 'multipart/form-data'
          ? undefined
          : /[^\x00-\x7f]/.test(text)
            ? 'must be ASCII, other characters percent-encoded as UTF-8'
            : decodesAsUtf8(text)
              ? undefined
              : 'has a percent-escape that is malformed or not UTF-8';
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
      found.push({
        in: 'body',
        name: part.name,
        pointer: `/body/${escapeToken(part.name)}`,
        message: 'is a file, and the schema does not describe a file here (format: binary, contentMediaType or contentEncoding)',
      });
      if (found.length >= MAX_FAILURES) return undefined;
    } else fields.push([part.name, part.kind === 'file' ? part.filename : part.value]);
  }
  return byName(fields);
}
