// RFC 6750: bearer tokens on protected routes, and the one place their challenges are written.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { PREFIX, tokenDigest } from '../crypto.ts';
import { GatewayError } from '../errors.ts';
import { parseAuthorization, repeatedAuthorization } from '../http/authorization.ts';
import { readBody } from '../http/body.ts';
import { hasBody, mediaType } from '../http/request.ts';
import { contentCharset } from './form.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';
import type { ActiveToken, Store } from '../store/port/index.ts';
import type { ProductSettings } from '../config/types.ts';
import { jwtMatches, looksLikeJwt, type JwtVerifier, type VerifiedJwt } from './signing/jwt.ts';

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Equal strings, in time that depends on their length only. */
function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export function createBearerErrors(realm: string) {
  const challenge = (error?: string, description?: string, scope?: string) => {
    let value = `Bearer realm="${realm}"`;
    if (error !== undefined) value += `, error="${error}"`;
    if (description !== undefined) value += `, error_description="${description}"`;
    if (scope !== undefined) value += `, scope="${scope}"`;
    return { 'www-authenticate': value };
  };
  return {
    /** §3.1: a request without authentication gets a challenge without an error code. */
    missing: () => new GatewayError(401, 'unauthorized', 'a bearer token is required', { headers: challenge() }),
    invalidRequest: (description: string) => new GatewayError(400, 'invalid_request', description, { headers: challenge('invalid_request', description) }),
    invalidToken: () =>
      new GatewayError(401, 'invalid_token', 'the access token is invalid, expired or revoked', {
        headers: challenge('invalid_token', 'the access token is invalid, expired or revoked'),
      }),
    insufficientScope: (description: string, scope: readonly string[]) =>
      new GatewayError(403, 'insufficient_scope', description, {
        headers: challenge('insufficient_scope', description, scope.length > 0 ? scope.join(' ') : undefined),
      }),
  };
}

export type BearerErrors = ReturnType<typeof createBearerErrors>;

/**
 * A form body (§2.2) is read whole and looked through for a second token, whatever its framing
 * (Content-Length or chunked) and its charset: the parameter name is ASCII, so any ASCII-based
 * charset spells it alike. What cannot be looked through is refused rather than passed on: a
 * larger form (413), a compressed one or one in a charset that is not ASCII-based (415).
 */
const FORM_BODY_LIMIT = 64 * 1024;
const formTooLarge = new GatewayError(413, 'payload_too_large', `a form body on a protected route is limited to ${FORM_BODY_LIMIT} bytes (it is checked for a second token)`, {
  headers: { connection: 'close' },
});
const ASCII_BASED = /^(?:utf-?8|us-ascii|iso-8859-[0-9]+|windows-125[0-8]|latin-?1)$/i;

function formBodyToCheck(req: IncomingMessage): boolean {
  if (!hasBody(req) || mediaType(req.headers['content-type']) !== 'application/x-www-form-urlencoded') return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new GatewayError(415, 'unsupported_media_type', 'a form body must not be compressed');
  }
  const charset = contentCharset(req.headers['content-type']!);
  if (charset !== undefined && !ASCII_BASED.test(charset)) throw new GatewayError(415, 'unsupported_media_type', `a form body in charset ${charset} is not accepted`);
  return true;
}

/**
 * The step that authenticates a call: §2.1, the Authorization header only, scheme
 * case-insensitive. §2 allows one way of sending the token per request: a token in the query
 * (§2.3, refused outright: URIs end up in logs) or in a form body besides the header is a 400, as
 * are two Authorization headers.
 */
export function createVerifyToken(env: { store: Store; clock: () => number; maxBodySize: number; verifyJwt: JwtVerifier; products: ReadonlyMap<string, ProductSettings> }, errors: BearerErrors): Step {
  const { store, clock, verifyJwt, products } = env;
  // listen.maxBodySize bounds a chunked form too; when it is the smaller bound, the 413 is the listener's.
  const formLimit = Math.min(FORM_BODY_LIMIT, env.maxBodySize);
  /**
   * The digest of the last token presented on each connection. A client sends the same token call
   * after call on a keep-alive connection, and its SHA-256 is the costliest step of verification
   * (about 10 µs in place, against 2 µs in a tight loop: OpenSSL's digest path is cold between
   * calls). The store still decides every time whether the token is valid. Nothing is kept beyond
   * the connection, which held the token anyway; the comparison is constant-time, since a proxy in
   * front may carry several clients' calls over one connection.
   */
  const lastOnConnection = new WeakMap<Socket, { token: string; digest: Buffer }>();
  function accessDigest(socket: Socket, token: string): Buffer | undefined {
    const last = lastOnConnection.get(socket);
    if (last !== undefined && sameToken(last.token, token)) return last.digest;
    const digest = tokenDigest(PREFIX.access, token);
    if (digest !== undefined) lastOnConnection.set(socket, { token, digest });
    return digest;
  }
  // Synchronous when the store has the token in memory: no promise on the usual path.
  return function verifyToken(ctx: RequestContext): void | Promise<void> {
    const { req } = ctx;
    // Any spelling of the name (access%5Ftoken…) holds "access" or a "%".
    const { query } = ctx;
    if ((query.includes('access') || query.includes('%')) && new URLSearchParams(query).has('access_token')) {
      throw errors.invalidRequest('the access token must not be sent in the query string');
    }
    const header = req.headers.authorization;
    if (header === undefined) throw errors.missing();
    if (repeatedAuthorization(req.rawHeaders)) throw errors.invalidRequest('the request has more than one Authorization header');
    const { scheme, credentials: token } = parseAuthorization(header);
    if (scheme !== 'bearer') throw errors.missing();
    if (token === '') throw errors.invalidRequest('the bearer token is empty');
    if (!TOKEN68.test(token)) throw errors.invalidRequest('the bearer token is malformed');
    const found = looksLikeJwt(token) ? jwtAccess(ctx, token) : opaqueAccess(ctx, token);
    // The body is read only once the token is accepted, and only a small form's.
    if (!formBodyToCheck(req)) return found;
    return found instanceof Promise ? found.then(() => checkFormBody(ctx)) : checkFormBody(ctx);
  };
  function opaqueAccess(ctx: RequestContext, token: string): void | Promise<void> {
    const digest = accessDigest(ctx.req.socket, token);
    if (digest === undefined) throw errors.invalidToken();
    const found = store.cache.findAccessToken(digest, clock());
    if (found instanceof Promise) return found.then((t) => accept(ctx, t));
    accept(ctx, found);
  }
  /** The signature and claims first (remembered by the token's string), then its record, as an opaque token's. */
  function jwtAccess(ctx: RequestContext, token: string): void | Promise<void> {
    const verified = verifyJwt(token, clock());
    if (verified instanceof Promise) return verified.then((v) => jwtRecord(ctx, token, v));
    return jwtRecord(ctx, token, verified);
  }
  function jwtRecord(ctx: RequestContext, token: string, verified: VerifiedJwt | undefined): void | Promise<void> {
    if (verified === undefined) throw errors.invalidToken();
    const found = store.cache.findAccessToken(verified.digest, clock());
    if (found instanceof Promise) return found.then((t) => acceptJwt(ctx, token, verified, t));
    acceptJwt(ctx, token, verified, found);
  }
  function acceptJwt(ctx: RequestContext, token: string, verified: VerifiedJwt, found: ActiveToken | undefined): void {
    if (found === undefined || !jwtMatches(verified, found, products)) throw errors.invalidToken();
    ctx.token = found;
    ctx.accessJwt = token;
  }
  /** §2.2: a form body may carry access_token; with the header too, that is two methods. The body is kept for the upstream. */
  async function checkFormBody(ctx: RequestContext): Promise<void> {
    ctx.body = await readBody(ctx.req, formLimit).catch((err: unknown) => {
      throw err instanceof GatewayError && err.status === 413 && formLimit === FORM_BODY_LIMIT ? formTooLarge : err;
    });
    if (new URLSearchParams(ctx.body.toString('latin1')).has('access_token')) {
      throw errors.invalidRequest('the access token must be sent in one way only, not in the header and the body');
    }
  }
  function accept(ctx: RequestContext, found: ActiveToken | undefined): void {
    if (found === undefined) throw errors.invalidToken();
    ctx.token = found;
  }
}

/**
 * The step that checks the token's product covers this route and its scopes include the route's,
 * and, for a route that requires a subject, that the token was issued for a user: a token of the
 * client itself (client_credentials) lacks the privilege, as §3.1 insufficient_scope says.
 */
export function createAuthorizeRoute(products: ReadonlySet<string>, scopes: readonly string[], errors: BearerErrors, requireSubject = false): Step {
  return function authorizeRoute(ctx: RequestContext): void {
    const token = ctx.token!;
    if (!products.has(token.product)) throw errors.insufficientScope("the token's API product does not include this route", scopes);
    if (requireSubject && token.subject === null) throw errors.insufficientScope('this route needs a token issued for a user (password or refresh_token grant)', scopes);
    if (scopes.length === 0) return;
    const held = token.scope.split(' ');
    if (!scopes.every((s) => held.includes(s))) throw errors.insufficientScope('the token lacks a scope this route requires', scopes);
  };
}
