import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { ActiveToken } from '../store/port/index.ts';
import type { CallSpan } from './trace.ts';

/** Everything a step of a route may read or set; created once per request. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** The normalised path that was matched and authorised; the upstream gets exactly this. */
  path: string;
  /** Raw query string without '?', or ''. */
  query: string;
  clientIp: string;
  /** 'http' or 'https', of the listener. */
  protocol: string;
  /** Set by bearer verification. */
  token: ActiveToken | undefined;
  /** The access token as presented, when it is one of the gateway's JWTs (upstreamIdentity: token forwards it). */
  accessJwt: string | undefined;
  /** The header that tells the upstream who calls, instead of the X-Gateway-* headers (upstreamIdentity: jwt or token). */
  identity: readonly [name: string, value: string] | undefined;
  /** The quotas and spike arrests the call was counted by, in order, for the answer's RateLimit-Policy and RateLimit headers. */
  rateLimits: RateLimit[] | undefined;
  /** The request body, once a step has read it whole (validation); the upstream then gets these bytes. */
  body: Buffer | undefined;
  /** The client's X-Request-Id when it is a short printable value, else one the gateway made: sent upstream, answered and logged. */
  requestId: string;
  /** Milliseconds the upstream took, once it has answered. */
  upstreamMs: number | undefined;
  /** The upstream's status, once it has answered. */
  upstreamStatus: number | undefined;
  /** Set first on a route with a CORS policy: writes the CORS headers of whatever answers the call. */
  cors: AnswerHeaders | undefined;
  /** The fields the access line adds (what an OAuth endpoint did, or the code of a failure); never a credential. */
  log: Record<string, string> | undefined;
  /** The call's span, when the config asks for traces (telemetry.traces). */
  span: CallSpan | undefined;
}

/** Changes the headers of an answer about to be written. */
export type AnswerHeaders = (headers: Record<string, unknown>) => void;

/**
 * A quota's or spike arrest's state after the call, as draft-ietf-httpapi-ratelimit-headers says
 * it: the policy's RateLimit-Policy member (its quota per window, made once), the units it still
 * allows (r) and the seconds until it is whole again (t).
 */
export interface RateLimit {
  /** The policy's name in both headers, unique among the policies of its route: a Structured Field String (no `"` or backslash). */
  name: string;
  /** `"name";q=<quota>;w=<window seconds>`: policyMember() made it. */
  policy: string;
  remaining: number;
  reset: number;
}

/** A policy's RateLimit-Policy member: `quota` units per `window` seconds. */
export const policyMember = (name: string, quota: number, window: number) => `"${name}";q=${quota};w=${window}`;

/** The upstream's RateLimit headers of the older drafts, dropped from an answer that carries the gateway's own. */
const OLD_RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const;

/**
 * Adds the gateway's own headers of an answer to `headers`, a fresh object the caller is about to
 * give writeHead: X-Request-Id, the CORS policy's headers, and RateLimit-Policy and RateLimit (a list
 * member for each quota and spike arrest that counted the call, in the order they did). Not through
 * setHeader: once setHeader has been called, writeHead passes every other header of the answer
 * through setHeader too.
 */
export function answerHeaders<T extends Record<string, unknown>>(ctx: RequestContext, headers: T): T {
  const out = headers as Record<string, unknown>;
  out['x-request-id'] = ctx.requestId;
  ctx.cors?.(out);
  const limits = ctx.rateLimits;
  if (limits === undefined) return headers;
  const fields = rateLimitFields(limits);
  out['ratelimit-policy'] = fields.policy;
  out.ratelimit = fields.state;
  for (const name of OLD_RATE_LIMIT_HEADERS) if (name in out) delete out[name];
  return headers;
}

/** The values of RateLimit-Policy and RateLimit: a list member for each of `limits`, in order. */
export function rateLimitFields(limits: readonly RateLimit[]): { policy: string; state: string } {
  let policy = '';
  let state = '';
  for (const l of limits) {
    const separator = policy === '' ? '' : ', ';
    policy += separator + l.policy;
    state += `${separator}"${l.name}";r=${l.remaining};t=${l.reset}`;
  }
  return { policy, state };
}

/**
 * One compiled step of a route. The last step of every route writes the response. An OAuth
 * endpoint's own steps take its form context (`C`), made from the request's by the route's last step.
 */
export type Step<C = RequestContext> = (ctx: C) => void | Promise<unknown>;

/**
 * Writes the answer to what a route's steps threw, in the route's protocol (problem+json, or RFC
 * 6749 §5.2 on the OAuth endpoints), logs what the client must not see, and sets the access
 * line's fields; returns the error, for the metrics.
 */
export type Failure = (ctx: RequestContext, thrown: unknown) => GatewayError;

/**
 * Walks prebuilt steps; a step that throws ends the walk. Synchronous steps run without a
 * promise between them: only a step that returns one makes the rest wait for it.
 */
export function runSteps<C>(steps: readonly Step<C>[], ctx: C, from = 0): void | Promise<unknown> {
  for (let i = from; i < steps.length; i++) {
    const pending = steps[i]!(ctx);
    if (pending !== undefined) return i === steps.length - 1 ? pending : pending.then(() => runSteps(steps, ctx, i + 1));
  }
}
