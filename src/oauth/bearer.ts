// RFC 6750: bearer tokens on protected routes, and DPoP-bound ones (RFC 9449 §7), and the one
// place their challenges are written.
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
import type { ReadClientCertificate } from '../http/client-certificate.ts';
import { DPOP_ALGORITHMS, DpopRefusal, proofHeader, type DpopVerifier } from './dpop.ts';

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Equal strings, in time that depends on their length only. */
function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const DPOP_ALGS = `algs="${DPOP_ALGORITHMS.join(' ')}"`;

/** `dpop`: whether some product takes DPoP-bound tokens only, so that a request without a token is told of DPoP too (RFC 9449 §7.1). */
export function createBearerErrors(realm: string, dpop = false) {
  const challenge = (error?: string, description?: string, scope?: string) => {
    let value = `Bearer realm="${realm}"`;
    if (error !== undefined) value += `, error="${error}"`;
    if (description !== undefined) value += `, error_description="${description}"`;
    if (scope !== undefined) value += `, scope="${scope}"`;
    return { 'www-authenticate': value };
  };
  // RFC 9449 §7.1: the DPoP scheme's challenge names the algorithms a proof may use.
  const dpopChallenge = (error: string, description: string, nonce?: string) => ({
    'www-authenticate': `DPoP error="${error}", error_description="${description}", ${DPOP_ALGS}`,
    ...(nonce === undefined ? {} : { 'dpop-nonce': nonce }),
  });
  // RFC 9110 §11.6.1: two challenges in one header, comma-separated.
  const missing = dpop ? { 'www-authenticate': `Bearer realm="${realm}", DPoP ${DPOP_ALGS}` } : challenge();
  return {
    /** §3.1: a request without authentication gets a challenge without an error code. */
    missing: () => new GatewayError(401, 'unauthorized', 'a bearer token is required', { headers: missing }),
    /** RFC 9449 §7.1: a DPoP-scheme request refused, for its token (invalid_token) or its proof. */
    dpop: (code: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce' | 'invalid_request', description: string, nonce?: string) =>
      new GatewayError(code === 'invalid_request' ? 400 : 401, code, description, { headers: dpopChallenge(code, description, nonce) }),
    /** RFC 9449 §7.2: a bound token sent as a bearer token. */
    boundAsBearer: () =>
      new GatewayError(401, 'invalid_token', 'this access token is DPoP-bound: send it with the DPoP scheme and a proof', {
        headers: challenge('invalid_token', 'this access token is DPoP-bound: send it with the DPoP scheme and a proof'),
      }),
    /** RFC 8705 §3: a certificate-bound token on a request without that certificate. */
    otherCertificate: () =>
      new GatewayError(401, 'invalid_token', 'this access token is bound to a client certificate the request did not present', {
        headers: challenge('invalid_token', 'this access token is bound to a client certificate the request did not present'),
      }),
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
 * The record of a presented access token, if it is valid: an opaque token's by its digest, a JWT's
 * by its jti once its signature and claims hold. Synchronous when the store has it in memory.
 */
type FindToken = (ctx: RequestContext, token: string) => ActiveToken | undefined | Promise<ActiveToken | undefined>;

function createFindToken(env: { store: Store; clock: () => number; verifyJwt: JwtVerifier; products: ReadonlyMap<string, ProductSettings> }): FindToken {
  const { store, clock, verifyJwt, products } = env;
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
  return function findToken(ctx, token) {
    if (!looksLikeJwt(token)) {
      const digest = accessDigest(ctx.req.socket, token);
      return digest === undefined ? undefined : store.cache.findAccessToken(digest, clock());
    }
    const verified = verifyJwt(token, clock());
    if (verified instanceof Promise) return verified.then((v) => jwtRecord(ctx, token, v));
    return jwtRecord(ctx, token, verified);
  };
  function jwtRecord(ctx: RequestContext, token: string, verified: VerifiedJwt | undefined): ActiveToken | undefined | Promise<ActiveToken | undefined> {
    if (verified === undefined) return undefined;
    const found = store.cache.findAccessToken(verified.digest, clock());
    const matched = (t: ActiveToken | undefined) => {
      if (t === undefined || !jwtMatches(verified, t, products)) return undefined;
      ctx.accessJwt = token;
      return t;
    };
    return found instanceof Promise ? found.then(matched) : matched(found);
  }
}

/**
 * RFC 9449 §7: `Authorization: DPoP <token>` with a proof of the key the token is bound to, made
 * for this method and URI and naming this token (§4.3); resolves to the token once all of that
 * holds. Every refusal is a DPoP challenge.
 */
function createDpopAccess(find: FindToken, dpop: DpopVerifier, clock: () => number, errors: BearerErrors) {
  async function checked(ctx: RequestContext, token: string, now: number): Promise<ActiveToken> {
    if (token === '' || !TOKEN68.test(token)) throw errors.dpop('invalid_request', 'the DPoP access token is empty or malformed');
    const proof = proofHeader(ctx.req);
    if (proof === undefined) throw errors.dpop('invalid_dpop_proof', 'a DPoP proof is required with the DPoP scheme');
    const found = await find(ctx, token);
    if (found === undefined) throw errors.dpop('invalid_token', 'the access token is invalid, expired or revoked');
    const cnf = found.cnf;
    if (cnf === undefined || !('jkt' in cnf)) throw errors.dpop('invalid_token', 'this access token is not DPoP-bound: send it with the Bearer scheme');
    const jkt = await dpop.verify(proof, { method: ctx.req.method ?? 'GET', htu: dpop.htu(ctx.req, ctx.protocol, ctx.path), accessToken: token, now });
    if (jkt !== cnf.jkt) throw errors.dpop('invalid_dpop_proof', 'the DPoP proof is signed by another key than the one the token is bound to');
    return found;
  }
  return async function dpopAccess(ctx: RequestContext, token: string): Promise<ActiveToken> {
    const now = clock();
    try {
      return await checked(ctx, token, now);
    } catch (err) {
      // The proof's refusals (src/oauth/dpop.ts) as this surface's challenge, with the nonce to use.
      throw err instanceof DpopRefusal ? errors.dpop(err.code, err.message, dpop.nonce(now)) : err;
    }
  };
}

/**
 * The step that authenticates a call: §2.1, the Authorization header only, scheme
 * case-insensitive. §2 allows one way of sending the token per request: a token in the query
 * (§2.3, refused outright: URIs end up in logs) or in a form body besides the header is a 400, as
 * are two Authorization headers.
 */
export function createVerifyToken(
  env: {
    store: Store;
    clock: () => number;
    maxBodySize: number;
    verifyJwt: JwtVerifier;
    products: ReadonlyMap<string, ProductSettings>;
    dpop: DpopVerifier;
    clientCertificate: ReadClientCertificate;
  },
  errors: BearerErrors,
): Step {
  const { clock, products, dpop, clientCertificate } = env;
  const find = createFindToken(env);
  const dpopAccess = createDpopAccess(find, dpop, clock, errors);
  // listen.maxBodySize bounds a chunked form too; when it is the smaller bound, the 413 is the listener's.
  const formLimit = Math.min(FORM_BODY_LIMIT, env.maxBodySize);
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
    // Only once its proof holds is the call the token holder's.
    if (scheme === 'dpop') return dpopAccess(ctx, token).then((found) => accepted(ctx, found));
    if (scheme !== 'bearer') throw errors.missing();
    if (token === '') throw errors.invalidRequest('the bearer token is empty');
    if (!TOKEN68.test(token)) throw errors.invalidRequest('the bearer token is malformed');
    // A bearer call's proof, if it sends one, is not looked at: the token must be a bearer token.
    const found = find(ctx, token);
    return found instanceof Promise ? found.then((t) => acceptBearer(ctx, t)) : acceptBearer(ctx, found);
  };
  /** The body is read only once the token is accepted, and only a small form's. */
  function accepted(ctx: RequestContext, found: ActiveToken): void | Promise<void> {
    ctx.token = found;
    if (formBodyToCheck(ctx.req)) return checkFormBody(ctx);
  }
  /** RFC 9449 §7.2: a DPoP-bound token is refused as a bearer token, as is an unbound one of a product that binds every token. */
  function acceptBearer(ctx: RequestContext, found: ActiveToken | undefined): void | Promise<void> {
    if (found === undefined) throw errors.invalidToken();
    const { cnf } = found;
    if (cnf !== undefined && 'jkt' in cnf) throw errors.boundAsBearer();
    const constraint = products.get(found.product)?.senderConstraint ?? 'none';
    if (cnf !== undefined) {
      // RFC 8705 §3: the request's certificate must be the one the token was issued to.
      if (clientCertificate(ctx.req)?.thumbprint !== cnf['x5t#S256']) throw errors.otherCertificate();
    } else if (constraint !== 'none') {
      // A product that binds every token: an unbound one of it is from before it did.
      throw errors.invalidToken();
    }
    return accepted(ctx, found);
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
