// docs/management-api.md, written from the management API's OpenAPI document (./document.ts) by
// `npm run docs:management`: per tag, each operation with its scope, parameters, request body
// fields and responses; the scopes; the schemas; the error codes. test/management/reference.test.ts
// fails when the committed page differs from what the document says now.
import { MANAGEMENT_SCOPES } from '../admin/management-clients.ts';
import { AdminError } from '../admin/errors.ts';
import { GatewayError } from '../errors.ts';
import { asProblem } from './call.ts';
import { managementDocument } from './document.ts';

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
}

interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}

interface Response {
  $ref?: string;
  description: string;
  headers?: Record<string, { description?: string }>;
  content?: Record<string, { schema: Schema }>;
}

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
}

interface Document {
  info: { description: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation | Parameter[]>>;
  components: { parameters: Record<string, Parameter>; responses: Record<string, Response>; schemas: Record<string, Schema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every code a problem of this API may carry, with what it means. The statuses of src/admin's codes
 * come from the one function that maps them (./call.ts), so this table cannot say another.
 */
const CODES: readonly (readonly [code: string, meaning: string, status?: number])[] = [
  ['invalid_request', 'The query, a header or the body does not match the operation; `errors` lists each failure with a JSON pointer.', 400],
  ['invalid_cursor', 'The `cursor` is not one this API gave.', 400],
  ['invalid_path', 'A path segment is not valid percent-encoded UTF-8.', 400],
  ['invalid_email', 'Not an email address, or a reserved one.'],
  ['invalid_name', 'A developer or app name that is empty, longer than 100 characters, or holds control characters.'],
  ['invalid_key', 'An imported key that is not 8 to 255 letters, digits, `.`, `_`, `~` or `-`, beginning with a letter or digit.'],
  ['invalid_secret', 'An imported secret that is not 16 to 512 printable ASCII characters.'],
  ['invalid_subject', 'A subject that is empty, longer than 255 characters, or holds control characters.'],
  [
    'invalid_redirect_uri',
    'A redirect URI an app may not register (not https, http on a loopback address or a private-use scheme; a fragment; another spelling of the same URI), one listed twice, or more than 10.',
  ],
  ['redirect_uri_required', 'A public app signs users in (the authorization_code grant): it needs at least one redirect URI.'],
  ['redirect_uri_not_allowed', 'The product does not have the authorization_code grant: its apps take no redirect URIs.'],
  ['public_client_grants', 'A public app for a product without the authorization_code grant: a public app holds no secret, so it can use no other.'],
  ['public_client_secret', 'A key with a secret imported for a public app, which holds none.'],
  [
    'invalid_certificate',
    'A certificate registration that cannot be one: not a PEM certificate nor a SHA-256 thumbprint, more than 4, a subject DN or subjectAltName that does not parse, or one for a public app.',
  ],
  ['unauthorized', 'No bearer token.', 401],
  ['invalid_token', 'The access token is invalid, expired or revoked.', 401],
  ['insufficient_scope', 'The token is not a management client’s, or lacks the scope the operation needs (`WWW-Authenticate` names it).', 403],
  ['not_found', 'No operation at this path.', 404],
  ['unknown_developer', 'No such developer.'],
  ['unknown_app', 'No such app.'],
  ['unknown_product', 'The configuration declares no such API product.'],
  ['unknown_key', 'The app holds no such key.'],
  ['duplicate_developer', 'A developer with this email exists.'],
  ['duplicate_app', 'The developer has an app of this name.'],
  ['key_taken', 'An app holds this key already (any app, even revoked: a key names one client for good).'],
  ['already_revoked', 'The key is revoked already.'],
  ['developer_disabled', 'The developer is disabled: no new app for them.'],
  ['unverified_email', 'The developer signed up in the portal and has not confirmed the address yet.'],
  ['idempotency_key_in_use', 'A request with this `Idempotency-Key` is still running.', 409],
  ['precondition_failed', '`If-Match` does not name the current version: read the resource again.', 412],
  ['idempotency_key_reused', 'This `Idempotency-Key` was used with another body.', 422],
  ['temporarily_unavailable', 'The store is unavailable; nothing was changed: try again.', 503],
];

const doc = managementDocument as unknown as Document;

/** The name a `$ref` points at: `#/components/schemas/Developer` is `Developer`. */
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const schemaLink = (name: string) => `[\`${name}\`](#schema-${name.toLowerCase()})`;
/** A table cell: one line, no column break. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function resolveParameter(p: Parameter): Parameter {
  return p.$ref === undefined ? p : doc.components.parameters[refName(p.$ref)]!;
}

/** A schema in words: its type, values and bounds; a named one as a link to it. */
function describeType(s: Schema): string {
  if (s.$ref !== undefined) return schemaLink(refName(s.$ref));
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum !== undefined) return `one of ${s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(', ')}`;
  if (s.oneOf !== undefined) return s.oneOf.map(describeType).join(' or ');
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  const base = types.map((t) => (t === 'array' && s.items !== undefined ? `array of ${describeType(s.items)}` : t)).join(' or ');
  return [base || 'any', ...bounds(s)].join(', ');
}

function bounds(s: Schema): string[] {
  const out: string[] = [];
  if (s.format !== undefined) out.push(s.format);
  if (s.minLength !== undefined || s.maxLength !== undefined) out.push(range(s.minLength, s.maxLength, 'characters'));
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(range(s.minimum, s.maximum, ''));
  if (s.pattern !== undefined) out.push(`matching \`${s.pattern}\``);
  if (s.default !== undefined) out.push(`default \`${JSON.stringify(s.default)}\``);
  return out;
}

function range(min: number | undefined, max: number | undefined, unit: string): string {
  const text = min !== undefined && max !== undefined ? `${min} to ${max}` : min !== undefined ? `at least ${min}` : `at most ${max}`;
  return unit === '' ? text : `${text} ${unit}`;
}

interface Field {
  name: string;
  schema: Schema;
  required: boolean;
}

/** The fields of an object schema, its `$ref`s followed and its `allOf` parts merged; undefined when it has alternatives. */
function fieldsOf(s: Schema): Field[] | undefined {
  if (s.$ref !== undefined) return fieldsOf(doc.components.schemas[refName(s.$ref)]!);
  if (s.oneOf !== undefined) return undefined;
  const parts = s.allOf === undefined ? [] : s.allOf.map((part) => fieldsOf(part) ?? []);
  const own = Object.entries(s.properties ?? {}).map(([name, schema]) => ({ name, schema, required: (s.required ?? []).includes(name) }));
  return [...parts.flat(), ...own];
}

function fieldTable(fields: readonly Field[]): string[] {
  if (fields.length === 0) return ['No fields.'];
  return [
    '| field | type | required | description |',
    '|---|---|---|---|',
    ...fields.map((f) => `| \`${f.name}\` | ${cell(describeType(f.schema))} | ${f.required ? 'yes' : 'no'} | ${cell(f.schema.description ?? '')} |`),
  ];
}

/** A schema's fields as a table, or one table per alternative. */
function schemaFields(s: Schema): string[] {
  const fields = fieldsOf(s);
  if (fields !== undefined) return fieldTable(fields);
  const target = s.$ref === undefined ? s : doc.components.schemas[refName(s.$ref)]!;
  const alternatives = target.oneOf ?? [];
  return ['Exactly one of:', '', ...alternatives.flatMap((alt, i) => [...(i === 0 ? [] : ['', 'or:', '']), ...fieldTable(fieldsOf(alt) ?? [])])];
}

function parameterSection(parameters: readonly Parameter[]): string[] {
  if (parameters.length === 0) return [];
  return [
    'Parameters:',
    '',
    '| name | in | type | required | description |',
    '|---|---|---|---|---|',
    ...parameters.map((p) => `| \`${p.name}\` | ${p.in} | ${cell(describeType(p.schema))} | ${p.required === true ? 'yes' : 'no'} | ${cell(p.description ?? '')} |`),
    '',
  ];
}

function bodySection(op: Operation): string[] {
  const body = op.requestBody;
  if (body === undefined) return [];
  const [type, media] = Object.entries(body.content)[0]!;
  const named = media.schema.$ref === undefined ? '' : ` ${schemaLink(refName(media.schema.$ref))}`;
  return [`Request body${named} (\`${type}\`, ${body.required ? 'required' : 'optional'}):`, '', ...schemaFields(media.schema), ''];
}

/** Whether a response is one of the shared refusals, which the Errors section describes once. */
const isProblem = (r: Response) => r.$ref !== undefined && refName(r.$ref).startsWith('Problem');

function responseSection(op: Operation): string[] {
  const entries = Object.entries(op.responses);
  const rows = entries
    .filter(([, r]) => !isProblem(r))
    .map(([status, r]) => {
      const media = Object.entries(r.content ?? {})[0];
      const schema = media === undefined ? 'none' : `${describeType(media[1].schema)} (\`${media[0]}\`)`;
      const headers = Object.keys(r.headers ?? {}).map((h) => `\`${h}\``);
      return `| ${status} | ${cell(schema)} | ${headers.join(', ')} | ${cell(r.description)} |`;
    });
  const refusals = entries.filter(([, r]) => isProblem(r)).map(([status]) => status);
  return [
    'Responses:',
    '',
    '| status | body | headers | description |',
    '|---|---|---|---|',
    ...rows,
    '',
    ...(refusals.length === 0 ? [] : [`Refusals ([problem+json](#errors)): ${refusals.join(', ')}.`, '']),
  ];
}

function operationSection(path: string, method: string, op: Operation, shared: readonly Parameter[]): string[] {
  const scope = op.security.flatMap((s) => Object.values(s).flat());
  const parameters = [...shared, ...(op.parameters ?? [])].map(resolveParameter);
  return [
    `### \`${method.toUpperCase()} ${doc.servers[0]!.url}${path}\``,
    '',
    `${op.summary}.`,
    '',
    `Scope: ${scope.map((s) => `\`${s}\``).join(', ')}. Operation id: \`${op.operationId}\`.`,
    '',
    ...parameterSection(parameters),
    ...bodySection(op),
    ...responseSection(op),
  ];
}

/** The operations of a tag, in the document's order of paths and of methods. */
function tagSection(tag: { name: string; description: string }): string[] {
  const out = [`## ${tag.name}`, '', tag.description, ''];
  for (const [path, item] of Object.entries(doc.paths)) {
    const shared = (item.parameters ?? []) as Parameter[];
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (op?.tags.includes(tag.name)) out.push(...operationSection(path, method, op, shared));
    }
  }
  return out;
}

function statusOf(code: string, given: number | undefined): number {
  if (given !== undefined) return given;
  const problem = asProblem(new AdminError(code, ''));
  if (!(problem instanceof GatewayError)) throw new TypeError(`no status for ${code}`);
  return problem.status;
}

function errorsSection(): string[] {
  const problem = doc.components.schemas.Problem!;
  const statuses = Object.entries(doc.components.responses).map(([name, r]) => `| ${name.replace('Problem', '')} | ${cell(r.description)} |`);
  const codes = CODES.map(([code, meaning, status]) => ({ code, meaning, status: statusOf(code, status) })).sort((a, b) => a.status - b.status);
  return [
    '## Errors',
    '',
    'Every refusal is `application/problem+json` (RFC 9457), with these fields:',
    '',
    ...fieldTable(fieldsOf(problem)!),
    '',
    '| status | when |',
    '|---|---|',
    ...statuses,
    '',
    'The codes, by status:',
    '',
    '| code | status | meaning |',
    '|---|---|---|',
    ...codes.map((c) => `| \`${c.code}\` | ${c.status} | ${cell(c.meaning)} |`),
    '',
  ];
}

function schemasSection(): string[] {
  const out = ['## Schemas', ''];
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    out.push(`### Schema \`${name}\``, '');
    if (schema.description !== undefined) out.push(schema.description, '');
    out.push(...schemaFields(schema), '');
  }
  return out;
}

export function managementReference(): string {
  const out = [
    '# Management API reference',
    '',
    '<!-- Generated from src/management/document.ts by `npm run docs:management`; do not edit by hand. -->',
    '',
    doc.info.description,
    '',
    `Every path below is under the management listener's address (\`management.host\` and \`management.port\`), which also serves this document as OpenAPI 3.1 at \`/openapi.json\` and the token endpoint at \`/oauth2/token\`. How to turn it on, get a token and call it: [the guide](management.md).`,
    '',
    '## Scopes',
    '',
    'A management client is made with the scopes it may have (`gateway admin management-clients create --scopes …`); each operation names the one it needs.',
    '',
    '| scope | allows |',
    '|---|---|',
    ...Object.entries(MANAGEMENT_SCOPES).map(([scope, allows]) => `| \`${scope}\` | ${cell(allows)} |`),
    '',
  ];
  for (const tag of doc.tags) out.push(...tagSection(tag));
  out.push(...errorsSection(), ...schemasSection());
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
