// Response transform: set or remove headers; on JSON bodies remove, rename or set fields by JSON
// pointer, with constants or values from the request context. Header changes alone keep the body
// streaming; body changes hold the answer whole.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { isJsonType, mediaType, TOKEN } from '../http/request.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { getAt, parsePointer, removeAt, setAt } from '../json/pointer.ts';
import type { PolicyIssue, ResponseHandler, ResponsePolicy } from './policy.ts';

const HeaderName = Type.String({ pattern: TOKEN.source, title: 'header name', examples: ['X-Request-Id'] });
const Pointer = Type.String({ pattern: '^(/.*)?$', title: 'JSON pointer', examples: ['/data/id', ''] });
const Source = Type.Union(['app', 'product', 'developer', 'clientId', 'subject', 'scope', 'route'].map((s) => Type.Literal(s)));

const SetMembers = Type.Array(
  Type.Union([
    Type.Object({ pointer: about(Pointer, 'Where the value goes.'), value: about(Type.Unknown(), 'The value.') }, { ...Strict, required: ['pointer', 'value'] }),
    Type.Object({ pointer: about(Pointer, 'Where the value goes.'), from: about(Source, 'What of the call the value is.') }, Strict),
  ]),
);

const HeaderChanges = Type.Object(
  {
    set: Type.Optional(
      about(Type.Record(HeaderName, Type.String({ pattern: '^[\\t\\x20-\\x7e]*$', title: 'header value of printable ASCII', examples: ['no-store'] }), Strict), 'Headers set on the answer, by name.'),
    ),
    remove: Type.Optional(about(Type.Array(HeaderName), 'Headers removed from the answer.')),
  },
  { ...Strict, minProperties: 1 },
);

const BodyChanges = Type.Object(
  {
    remove: Type.Optional(about(Type.Array(Pointer), 'Members removed from the JSON body, by JSON pointer.')),
    rename: Type.Optional(about(Type.Record(Pointer, Pointer, Strict), 'Members moved, from pointer to pointer.')),
    set: Type.Optional(about(SetMembers, 'Members set: each a value, or `from` what of the call (app, product, developer, clientId, subject, scope, route).')),
  },
  { ...Strict, minProperties: 1 },
);

const TransformResponseOptions = Type.Object(
  {
    headers: Type.Optional(about(HeaderChanges, "Changes to the answer's headers.")),
    body: Type.Optional(about(BodyChanges, 'Changes to a JSON body (other bodies pass as they are).')),
  },
  { ...Strict, minProperties: 1 },
);

type Options = typeof TransformResponseOptions.static;

const SOURCES: Record<string, (ctx: RequestContext, route: string) => unknown> = {
  app: (ctx) => ctx.token?.appName ?? null,
  product: (ctx) => ctx.token?.product ?? null,
  developer: (ctx) => ctx.token?.developerEmail ?? null,
  clientId: (ctx) => ctx.token?.key ?? null,
  subject: (ctx) => ctx.token?.subject ?? null,
  scope: (ctx) => ctx.token?.scope ?? null,
  route: (_ctx, route) => route,
};

function bodyHandler(body: NonNullable<Options['body']>, route: string): NonNullable<ResponseHandler['body']> {
  const removes = (body.remove ?? []).map((p) => parsePointer(p)!);
  const renames = Object.entries(body.rename ?? {}).map(([from, to]) => [parsePointer(from)!, parsePointer(to)!] as const);
  const sets = (body.set ?? []).map((s) => {
    const at = parsePointer(s.pointer)!;
    if ('from' in s) {
      const source = SOURCES[s.from]!;
      return (ctx: RequestContext, doc: unknown) => setAt(doc, at, source(ctx, route));
    }
    return (_ctx: RequestContext, doc: unknown) => setAt(doc, at, structuredClone(s.value));
  });
  return function transformBody(ctx, response) {
    if (!isJsonType(mediaType(response.headers['content-type']))) return response;
    let doc: unknown;
    try {
      doc = JSON.parse(response.body.toString('utf8'));
    } catch {
      // Fail closed: a field the transform should remove must not slip out in a broken body.
      throw new GatewayError(502, 'invalid_upstream_response', 'the upstream answered with a JSON body that cannot be read', { policy: 'transformResponse' });
    }
    for (const at of removes) removeAt(doc, at);
    for (const [from, to] of renames) {
      const value = getAt(doc, from);
      if (value !== undefined && removeAt(doc, from)) setAt(doc, to, value);
    }
    for (const set of sets) set(ctx, doc);
    return { ...response, body: Buffer.from(JSON.stringify(doc)) };
  };
}

export const transformResponse: ResponsePolicy<typeof TransformResponseOptions> = {
  phase: 'response',
  schema: TransformResponseOptions,
  check(options) {
    const issues: PolicyIssue[] = [];
    const bad = (path: (string | number)[], pointer: string) => {
      if (parsePointer(pointer)?.length === 0) issues.push({ path, message: 'must point below the root' });
    };
    options.body?.remove?.forEach((p, i) => {
      bad(['body', 'remove', i], p);
    });
    for (const [from, to] of Object.entries(options.body?.rename ?? {})) {
      bad(['body', 'rename', from], from);
      bad(['body', 'rename', from], to);
    }
    options.body?.set?.forEach((s, i) => {
      bad(['body', 'set', i, 'pointer'], s.pointer);
    });
    return issues;
  },
  create(options, env) {
    const handler: ResponseHandler = {};
    const { headers, body } = options;
    if (headers !== undefined) {
      const remove = (headers.remove ?? []).map((h) => h.toLowerCase());
      const set = Object.entries(headers.set ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const);
      handler.headers = function transformHeaders(_ctx, response) {
        for (const name of remove) delete response.headers[name];
        for (const [name, value] of set) response.headers[name] = value;
      };
    }
    if (body !== undefined) handler.body = bodyHandler(body, env.route);
    return handler;
  },
};
