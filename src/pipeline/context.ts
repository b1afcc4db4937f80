import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActiveToken } from '../store/port.ts';

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
  /** The tightest quota seen so far, whose RateLimit-* headers the answer carries. */
  rateLimit: RateLimit | undefined;
  /** The request body, once a step has read it whole (validation); the upstream then gets these bytes. */
  body: Buffer | undefined;
}

export interface RateLimit {
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

/**
 * Adds the tightest quota's RateLimit-* headers to `headers`, a fresh object the caller is about
 * to give writeHead. Not through setHeader: once setHeader has been called, writeHead passes
 * every other header of the answer through setHeader too.
 */
export function withRateLimit<T extends Record<string, unknown>>(ctx: RequestContext | undefined, headers: T): T {
  const limit = ctx?.rateLimit;
  if (limit === undefined) return headers;
  return Object.assign(headers, { 'ratelimit-limit': String(limit.limit), 'ratelimit-remaining': String(limit.remaining), 'ratelimit-reset': String(limit.reset) });
}

/** One compiled step of a route. The last step of every route writes the response. */
export type Step = (ctx: RequestContext) => void | Promise<void>;

/** Walks the route's prebuilt steps; a step that throws ends the walk. */
export async function runSteps(steps: readonly Step[], ctx: RequestContext): Promise<void> {
  for (const step of steps) {
    const pending = step(ctx);
    if (pending !== undefined) await pending;
  }
}
