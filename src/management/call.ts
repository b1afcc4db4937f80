// What a management operation gets and gives, and the HTTP details every operation shares, in one
// place: the refusal of an AdminError as problem+json with its status, ETag and If-Match (RFC 9110
// §8.8.3, §13.1.1), and cursor pagination.
import { sha256 } from '../crypto.ts';
import type { OperatorDeps } from '../admin/deps.ts';
import { AdminError } from '../admin/errors.ts';
import type { Config } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';

export interface Call {
  ctx: RequestContext;
  /** The operation's path parameters, percent-decoded. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The JSON body, as the document's schema accepted it; undefined without one. */
  body: unknown;
  /** src/admin's deps, acting as the calling management client. */
  deps: OperatorDeps;
  /** The config serving now: its products and routes. */
  config: () => Config;
  /** Saves the usage counted in memory, so that a report includes the last calls. */
  flushUsage: () => Promise<void>;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** Whether the answer carries the body's ETag (a resource that If-Match may name). */
  etag?: boolean;
  headers?: Record<string, string>;
}

export type ManagementOperation = (call: Call) => Promise<Reply>;

/** A resource's version: strong (RFC 9110 §8.8.3), from its representation. */
export function etagOf(body: unknown): string {
  return `"${sha256(JSON.stringify(body)).subarray(0, 16).toString('base64url')}"`;
}

/**
 * RFC 9110 §13.1.1: If-Match names the versions a change is meant for, compared strongly; `*` is
 * any version. Absent, the change is made whatever the version.
 */
export function requireMatch(call: Call, current: unknown): void {
  const header = call.ctx.req.headers['if-match'];
  if (header === undefined) return;
  const wanted = header.split(',').map((t) => t.trim());
  if (wanted.includes('*') || wanted.includes(etagOf(current))) return;
  throw new GatewayError(412, 'precondition_failed', 'If-Match does not name the current version: read the resource again, then change it');
}

/** Each refusal of src/admin as the status it is in HTTP terms; its code and message as they are. */
function statusOf(code: string): number {
  if (code.startsWith('unknown_')) return 404;
  if (/^(duplicate_|key_taken$|already_revoked$|app_disabled$|developer_disabled$|unverified_email$|too_many_apps$)/.test(code)) return 409;
  return 400;
}

export function asProblem(err: unknown): unknown {
  return err instanceof AdminError ? new GatewayError(statusOf(err.code), err.code, err.message) : err;
}

const DEFAULT_LIMIT = 100;

/** One page of `items` after the cursor, in the order of `keyOf`, which is unique per item. */
export function page<T>(items: readonly T[], keyOf: (item: T) => string, query: URLSearchParams): { items: T[]; next: string | null } {
  const limit = Number(query.get('limit') ?? DEFAULT_LIMIT);
  const cursor = query.get('cursor');
  const after = cursor === null ? undefined : cursorKey(cursor);
  const sorted = items.map((item) => ({ item, key: keyOf(item) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const from = after === undefined ? 0 : sorted.findIndex((entry) => entry.key > after);
  const start = from === -1 ? sorted.length : from;
  const slice = sorted.slice(start, start + limit);
  const last = slice.at(-1);
  return { items: slice.map((entry) => entry.item), next: start + limit < sorted.length && last !== undefined ? Buffer.from(last.key).toString('base64url') : null };
}

function cursorKey(cursor: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new GatewayError(400, 'invalid_cursor', 'the cursor is not one this API gave');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}
