// CORS, as the Fetch standard defines it (§3.2 "CORS protocol"): which other origins' pages may
// call a route (or the OAuth endpoints) from a browser and read the answer. The whole protocol is
// here: the options, the origins normalised into a set once, the preflight answer, and the headers
// every other answer of the route carries, the gateway's own errors included.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { NOSNIFF } from '../http/problem.ts';
import { TOKEN } from '../http/request.ts';
import { answerHeaders, type AnswerHeaders, type RequestContext } from '../pipeline/context.ts';
import type { OriginHandlers, OriginMark, OriginPolicy, PolicyIssue, PolicySite } from './policy.ts';

// RFC 9110 §5.1, §9.1: field names and methods are tokens.
const Tokens = Type.Array(Type.String({ pattern: TOKEN.source, title: 'header name', examples: ['Content-Type', 'X-Request-Id'] }));

const CorsOptions = Type.Object(
  {
    origins: about(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), "Exact origins (scheme://host[:port]), or ['*'] for any origin without credentials."),
    methods: Type.Optional(
      about(
        Type.Array(Type.String({ pattern: TOKEN.source, title: 'method', examples: ['GET', 'POST'] }), { minItems: 1 }),
        "The methods a preflight may ask for; default: the route's method (POST on the OAuth endpoints).",
      ),
    ),
    headers: Type.Optional(about(Tokens, 'The request headers a page may send.', { default: ['Authorization', 'Content-Type'] })),
    exposeHeaders: Type.Optional(about(Tokens, 'The response headers a page may read besides the safelisted ones.', { default: [] })),
    credentials: Type.Optional(about(Type.Boolean(), 'Whether a page may send cookies or HTTP authentication it holds, and read the answer.', { default: false })),
    maxAge: Type.Optional(about(Type.Integer({ minimum: 0, maximum: 86400 }), "Seconds a browser may cache a preflight's answer (Chromium caps it at 7200).", { default: 600 })),
  },
  Strict,
);

const DEFAULT_HEADERS = ['Authorization', 'Content-Type'];
const DEFAULT_MAX_AGE = 600;
const ANY = '*';

/** Fetch §3.2.3: the response headers of the protocol; an upstream's own never reach the client of a CORS route. */
const CORS_RESPONSE_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'access-control-expose-headers',
] as const;

/** A preflight's answer depends on all three (Fetch §3.2.5), whether it allows or refuses. */
const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

/** Fetch §3.2.2: a preflight is an OPTIONS request with an Origin and an Access-Control-Request-Method. */
export function preflightMethod(req: RequestContext['req']): string | undefined {
  if (req.method !== 'OPTIONS' || req.headers.origin === undefined) return undefined;
  const method = req.headers['access-control-request-method'];
  return typeof method === 'string' && method !== '' ? method : undefined;
}

/**
 * An origin as a browser serialises it (HTML §7.1.1 "ASCII serialization of an origin"): lower-case
 * scheme and host, no default port, no path; or why the text is not one.
 */
function normaliseOrigin(text: string): { origin: string } | { problem: string } {
  if (text === 'null') {
    // Sandboxed frames, file: pages and redirected requests all send "null": any page can be one of them.
    return { problem: 'the "null" origin cannot be allowed: any page can send it (a sandboxed frame, a file: page)' };
  }
  const shape = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/[^/?#@\s]+$/.exec(text);
  if (shape === null) return { problem: `"${text}" is not an origin (scheme://host[:port], no path)` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `"${text}" is not an origin (scheme://host[:port], no path)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `"${text}" is not an http or https origin` };
  return { origin: url.origin };
}

function checkOptions(options: CorsOptionsType, site: PolicySite): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const { origins } = options;
  origins.forEach((entry, i) => {
    if (entry === ANY) {
      // Fetch §3.2.4: a browser refuses `*` on a request with credentials; listing it would silently fail.
      if (options.credentials === true) issues.push({ path: ['origins', i], message: '"*" cannot be used with credentials: true; list the origins' });
      else if (origins.length > 1) issues.push({ path: ['origins', i], message: '"*" allows every origin: list it alone' });
      return;
    }
    const result = normaliseOrigin(entry);
    if ('problem' in result) issues.push({ path: ['origins', i], message: result.problem });
  });
  const own = ownMethod(site);
  if (options.methods !== undefined && !options.methods.includes(own)) {
    issues.push({ path: ['methods'], message: `must include ${own}, the method ${site.tokenEndpoint ? 'of the OAuth endpoints' : 'of the route'}` });
  }
  return issues;
}

type CorsOptionsType = typeof CorsOptions.static;

/** The method a preflight is about: the route's own; the OAuth endpoints take POST only. */
function ownMethod(site: PolicySite): string {
  return site.tokenEndpoint ? 'POST' : site.method!;
}

/** `vary` with `Origin` added, keeping what the upstream said varies (RFC 9110 §12.5.5). */
function addVary(vary: unknown, field: string): string {
  if (vary === undefined) return field;
  const text = Array.isArray(vary) ? vary.join(', ') : String(vary);
  const lower = field.toLowerCase();
  for (const part of text.split(',')) {
    const name = part.trim().toLowerCase();
    if (name === '*' || name === lower) return text;
  }
  return text === '' ? field : `${text}, ${field}`;
}

/** Fetch §3.2.2: Access-Control-Request-Headers lists names, comma-separated (lower-cased by browsers, but not necessarily by others). */
function requestedHeadersAllowed(requested: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (requested === undefined) return true;
  for (const part of requested.split(',')) {
    const name = part.trim().toLowerCase();
    if (name !== '' && !allowed.has(name)) return false;
  }
  return true;
}

const refused = (message: string) => new GatewayError(403, 'cors_rejected', message, { policy: 'cors', headers: { vary: PREFLIGHT_VARY } });
const originRefused = refused('this origin may not call this resource from a browser');
const methodRefused = refused('this method may not be used from another origin');
const headerRefused = refused('a requested header may not be sent from another origin');

/**
 * The headers of the actual (non-preflight) answers for one origin: the upstream's own CORS
 * headers dropped, the policy's written, Origin added to Vary (except with `*`, which answers
 * the same to everyone: Fetch §3.2.5 says not to use Vary then).
 */
function answerFor(allow: Readonly<Record<string, string>>, vary: boolean): AnswerHeaders {
  return function cors(headers) {
    for (const name of CORS_RESPONSE_HEADERS) if (headers[name] !== undefined) delete headers[name];
    Object.assign(headers, allow);
    if (vary) headers.vary = addVary(headers.vary, 'Origin');
  };
}

/**
 * The OAuth endpoints write their answers themselves, after the handler's setHeader(X-Request-Id):
 * the CORS headers join it there, as lists built here from each of `answers`.
 */
function setHeaders(answerOf: (origin: string | undefined) => AnswerHeaders, answers: readonly AnswerHeaders[]): OriginMark {
  const lists = new Map<AnswerHeaders, [string, string][]>();
  for (const answer of answers) {
    const out: Record<string, unknown> = {};
    answer(out);
    lists.set(answer, Object.entries(out) as [string, string][]);
  }
  return function corsHeaders(ctx: RequestContext): void {
    for (const [name, value] of lists.get(answerOf(ctx.req.headers.origin))!) ctx.res.setHeader(name, value);
  };
}

export const cors: OriginPolicy<typeof CorsOptions> = {
  phase: 'origin',
  schema: CorsOptions,
  tokenEndpoint: () => true,
  check: checkOptions,
  create(options, env): OriginHandlers {
    const any = options.origins.includes(ANY);
    const origins = new Set(any ? [] : options.origins.map((o) => (normaliseOrigin(o) as { origin: string }).origin));
    const methods = options.methods ?? [ownMethod(env)];
    const allowedMethods = new Set(methods);
    const headers = options.headers ?? DEFAULT_HEADERS;
    const allowedHeaders = new Set(headers.map((h) => h.toLowerCase()));

    // Fetch §3.2.3: credentials are allowed by the exact string "true" only; absent otherwise.
    const credentials: Record<string, string> = options.credentials === true ? { 'access-control-allow-credentials': 'true' } : {};
    const exposed: Record<string, string> = (options.exposeHeaders ?? []).length > 0 ? { 'access-control-expose-headers': options.exposeHeaders!.join(', ') } : {};
    const preflightHeaders: Record<string, string> = {
      ...credentials,
      'access-control-allow-methods': methods.join(', '),
      ...(headers.length > 0 ? { 'access-control-allow-headers': headers.join(', ') } : {}),
      'access-control-max-age': String(options.maxAge ?? DEFAULT_MAX_AGE),
      vary: PREFLIGHT_VARY,
      ...NOSNIFF,
    };

    // Everything an answer will carry, per origin, built here: a call only looks its Origin up.
    const allow = (origin: string) => ({ 'access-control-allow-origin': origin, ...credentials, ...exposed });
    const allowAll = answerFor(allow(ANY), false);
    const refuse = answerFor({}, true);
    const byOrigin = new Map([...origins].map((o) => [o, answerFor(allow(o), true)]));
    const allowed = (origin: string | undefined): AnswerHeaders | undefined => (any ? allowAll : origin === undefined ? undefined : byOrigin.get(origin));
    const answerOf = (origin: string | undefined): AnswerHeaders => allowed(origin) ?? refuse;

    /** Fetch §3.2.3, §4.8: the preflight, answered here without a token or the upstream; a refusal carries no Access-Control-Allow-*. */
    function corsPreflight(ctx: RequestContext): void {
      const { headers: asked } = ctx.req;
      const origin = asked.origin!;
      if (!any && !origins.has(origin)) throw originRefused;
      if (!allowedMethods.has(asked['access-control-request-method'] as string)) throw methodRefused;
      if (!requestedHeadersAllowed(asked['access-control-request-headers'], allowedHeaders)) throw headerRefused;
      ctx.res.writeHead(204, answerHeaders(ctx, { 'access-control-allow-origin': any ? ANY : origin, ...preflightHeaders })).end();
    }

    if (env.tokenEndpoint) return { mark: setHeaders(answerOf, [allowAll, refuse, ...byOrigin.values()]), allowed, preflight: corsPreflight };
    return {
      mark: function corsHeaders(ctx: RequestContext): void {
        ctx.cors = answerOf(ctx.req.headers.origin);
      },
      allowed,
      preflight: corsPreflight,
    };
  },
};
