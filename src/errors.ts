// The base of every error that becomes a response. Each protocol renders it in one place:
// src/oauth/errors.ts (RFC 6749 §5.2), src/oauth/bearer.ts (RFC 6750), src/http/problem.ts (RFC 9457).
import { StoreUnavailable } from './store/port/index.ts';

export class GatewayError extends Error {
  /** HTTP status of the response. */
  readonly status: number;
  /** Stable, machine-readable code (an RFC error code where one exists). */
  readonly code: string;
  /** For the log only; never sent to the client. */
  readonly detail: string | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** Further members of the problem body (RFC 9457 §3.2), e.g. the list of validation failures. */
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  /** The policy that refused (quota, validateRequest…), for the metrics; undefined: the gateway's own check. */
  readonly policy: string | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { detail?: string; headers?: Record<string, string>; extensions?: Record<string, unknown>; cause?: unknown; policy?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.detail = options.detail;
    this.headers = options.headers;
    this.extensions = options.extensions;
    this.policy = options.policy;
  }

  /** Whether `message` may be shown to the client. */
  get expose(): boolean {
    return this.status < 500 || this.status === 501 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/**
 * Turns anything thrown into a GatewayError: the store's failure a 503 that says to try again,
 * anything unknown a 500 with a fixed message.
 */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof StoreUnavailable) {
    return new GatewayError(503, 'temporarily_unavailable', 'The service is temporarily unavailable; try again in a moment.', {
      detail: err.message,
      headers: { 'retry-after': '1' },
      cause: err,
    });
  }
  return new GatewayError(500, 'server_error', 'internal error', { cause: err });
}
