// JWT access tokens (RFC 9068) and the identity tokens sent to upstreams, signed with the key
// ring's current key (fast-jwt, see keys.ts); and the verification of the gateway's own access tokens. Verification trusts
// the key, never the token: the kid must name a key this gateway published and has not revoked,
// and the algorithm is that key's (so no `none`, and no HMAC keyed with a public key). A verified
// token is remembered by its exact string until it expires or its key stops verifying; whether it
// is revoked is the store's record of its jti, read through the TokenCache like an opaque token's.
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { newToken, tokenDigest } from '../../crypto.ts';
import type { ProductSettings } from '../../config/types.ts';
import type { ActiveToken, Confirmation } from '../../store/port/index.ts';
import type { KeyRing } from './key-ring.ts';
import type { SigningKey } from './keys.ts';

export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** Explicit typing (RFC 8725 §3.11): an identity token is never taken for an access token, here or upstream. */
export const IDENTITY_TOKEN_TYPE = 'gateway-identity+jwt';
/** How far a verifier's clock may be from the signer's, for exp, nbf and iat. */
const CLOCK_TOLERANCE_S = 30;
/** Verified tokens remembered, at most. */
const VERIFIED_CACHE_SIZE = 10_000;

/** A JWT has three base64url parts; an opaque token of this gateway has none of its dots. */
export function looksLikeJwt(token: string): boolean {
  // Without a split: this runs on every call.
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  return token.startsWith('eyJ') && first > 0 && second > first && token.indexOf('.', second + 1) === -1;
}

/** The jti of a new JWT access token, and the digest its store record is kept under (as an opaque token's is). */
export function newJti(): { jti: string; digest: Buffer } {
  const { token, digest } = newToken('');
  return { jti: token, digest };
}

export interface AccessTokenClaims {
  key: string;
  appName: string;
  product: ProductSettings;
  scope: string;
  subject: string | null;
  jti: string;
  /** Epoch ms. */
  issuedAt: number;
  expiresAt: number;
  /** RFC 9449 §6.1, RFC 8705 §3.1: what the token is bound to. */
  cnf: Confirmation | undefined;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** RFC 9068 §2.2, with the app and product the gateway's own claims. */
export function signAccessToken(key: SigningKey, issuer: string, c: AccessTokenClaims): string {
  const claims: JWTPayload = {
    iss: issuer,
    sub: c.subject ?? c.key,
    aud: c.product.audience,
    client_id: c.key,
    scope: c.scope,
    iat: seconds(c.issuedAt),
    exp: seconds(c.expiresAt),
    jti: c.jti,
    app: c.appName,
    product: c.product.name,
    ...(c.cnf === undefined ? {} : { cnf: c.cnf }),
  };
  return key.sign(ACCESS_TOKEN_TYPE, claims);
}

/** The token an upstream gets instead of X-Gateway-* headers (upstreamIdentity: jwt). */
export function signIdentityToken(key: SigningKey, issuer: string, token: ActiveToken, audience: string, now: number, lifetime: number): string {
  const claims: JWTPayload = {
    iss: issuer,
    sub: token.subject ?? token.key,
    aud: audience,
    client_id: token.key,
    app: token.appName,
    product: token.product,
    scope: token.scope,
    // RFC 7800: what the caller's token was bound to, and so what the caller proved it holds.
    ...(token.cnf === undefined ? {} : { cnf: token.cnf }),
    jti: randomBytes(16).toString('base64url'),
    iat: seconds(now),
    exp: seconds(now) + lifetime,
  };
  return key.sign(IDENTITY_TOKEN_TYPE, claims);
}

export interface VerifiedJwt {
  /** The digest of its jti: the store record that says whether it is revoked. */
  digest: Buffer;
  kid: string;
  /** Epoch ms. */
  expiresAt: number;
  audience: readonly string[];
  product: unknown;
  clientId: unknown;
  issuer: string;
  jti: string;
}

/** Whether the claims say what the token's record says, and `aud` names the audience its product has now. */
export function jwtMatches(verified: VerifiedJwt, found: ActiveToken, products: ReadonlyMap<string, ProductSettings>): boolean {
  if (verified.product !== found.product || verified.clientId !== found.key) return false;
  const audience = products.get(found.product)?.audience;
  return audience !== undefined && verified.audience.includes(audience);
}

export type JwtVerifier = (token: string, now: number) => VerifiedJwt | undefined | Promise<VerifiedJwt | undefined>;

/**
 * Verified tokens by their exact string, at most VERIFIED_CACHE_SIZE. An entry is used only while
 * its key still verifies (checked on every use), so nothing needs to hear of a revoked key: a
 * runtime's cache, dropped at a reload, holds no listener on the long-lived key ring.
 */
class VerifiedTokens {
  readonly #verified = new Map<string, VerifiedJwt>();

  get(token: string): VerifiedJwt | undefined {
    return this.#verified.get(token);
  }

  forget(token: string): void {
    this.#verified.delete(token);
  }

  remember(token: string, entry: VerifiedJwt): VerifiedJwt {
    if (this.#verified.size >= VERIFIED_CACHE_SIZE) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(token, entry);
    return entry;
  }
}

/** Verifies the gateway's own JWT access tokens; undefined for any token it did not sign, or that is expired. */
export function createJwtVerifier(ring: KeyRing, issuer: string | undefined): JwtVerifier {
  const verified = new VerifiedTokens();
  async function verify(token: string, key: SigningKey, now: number): Promise<VerifiedJwt | undefined> {
    try {
      const { payload } = await jwtVerify(token, key.publicKey, {
        algorithms: [key.algorithm],
        typ: ACCESS_TOKEN_TYPE,
        issuer: issuer!,
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(now),
        requiredClaims: ['jti', 'exp', 'iat', 'aud', 'sub', 'client_id'],
      });
      const digest = typeof payload.jti === 'string' ? tokenDigest('', payload.jti) : undefined;
      if (digest === undefined) return undefined;
      // A key revoked while this was under way verifies nothing.
      if (ring.verifier(key.kid) === undefined) return undefined;
      const audience = typeof payload.aud === 'string' ? [payload.aud] : payload.aud!;
      return verified.remember(token, {
        digest,
        kid: key.kid,
        expiresAt: payload.exp! * 1000,
        audience,
        product: payload.product,
        clientId: payload.client_id,
        issuer: payload.iss!,
        jti: payload.jti as string,
      });
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
  }
  return function verifyJwt(token, now) {
    if (issuer === undefined) return undefined;
    const known = verified.get(token);
    if (known !== undefined) {
      if (known.expiresAt + CLOCK_TOLERANCE_S * 1000 > now && ring.verifier(known.kid) !== undefined) return known;
      verified.forget(token);
      return undefined;
    }
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    const key = ring.verifier(kid);
    if (key !== undefined) return verify(token, key, now);
    // A key added by another instance is known once the read its change started has ended.
    const reading = ring.reading();
    if (reading === undefined) return undefined;
    return reading.then(() => {
      const read = ring.verifier(kid);
      return read === undefined ? undefined : verify(token, read, now);
    });
  };
}
