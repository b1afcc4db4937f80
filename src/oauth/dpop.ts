// DPoP (RFC 9449): proofs that the caller holds a private key, checked at the token endpoint
// (§5) and on protected routes (§7); the one place their rules live. What a failed check becomes
// is each surface's: an RFC 6749 body at the token endpoint, a DPoP challenge on a route.
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createVerifier } from 'fast-jwt';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { safeEqual, secretHash, sha256 } from '../crypto.ts';
import type { DpopSettings } from '../config/types.ts';
import { repeatedHeader } from '../http/authorization.ts';
import type { PublicOrigin } from '../http/origin.ts';
import type { OnceStore } from '../store/port/index.ts';

/** Asymmetric algorithms only (§4.2: never none, never a MAC); named in the metadata's dpop_signing_alg_values_supported. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'] as const;
/** How far ahead of the gateway's clock a client's may run. */
const FUTURE_SKEW_MS = 5_000;
/** A proof is a header of a few hundred bytes; an RSA key makes it longer. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;
/**
 * The keys of proof headers seen lately, by the header's exact text: a client sends the same header
 * (its algorithm and public key) with every proof, and importing the key and computing its
 * thumbprint cost more than the signature check. Only a header whose key imported is kept.
 */
const PROOF_KEYS = 10_000;
/** A proof header holds its algorithm, type and public key: a few hundred characters, an RSA key of 4096 bits under 1,100. */
const MAX_HEADER_LENGTH = 1536;
/** RFC 7517 §4, RFC 7518 §6: members only a private or symmetric key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** RFC 7518 §3.1, RFC 8037 §3.1: the key type and curve each algorithm is defined for (ES256K's curve is not P-256's). */
const KEY_OF_ALGORITHM: Record<(typeof DPOP_ALGORITHMS)[number], { kty: string; crv?: readonly string[] }> = {
  ES256: { kty: 'EC', crv: ['P-256'] },
  ES384: { kty: 'EC', crv: ['P-384'] },
  ES512: { kty: 'EC', crv: ['P-521'] },
  EdDSA: { kty: 'OKP', crv: ['Ed25519', 'Ed448'] },
  Ed25519: { kty: 'OKP', crv: ['Ed25519'] },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
};
/**
 * RSA keys: 2048 bits at least (RFC 7518 §3.3); at most 4096 and the exponent 65537 are the
 * gateway's own bounds, since a huge key or exponent makes each check cost milliseconds.
 */
const RSA_BITS = { min: 2048, max: 4096 };
const RSA_EXPONENT = 'AQAB';

/** Why a proof was refused: `use_dpop_nonce` asks the client to try again with the nonce it is given. */
export class DpopRefusal extends Error {
  override readonly name = 'DpopRefusal';
  readonly code: 'invalid_dpop_proof' | 'use_dpop_nonce';
  constructor(code: 'invalid_dpop_proof' | 'use_dpop_nonce', description: string) {
    super(description);
    this.code = code;
  }
}

const refuse = (description: string) => new DpopRefusal('invalid_dpop_proof', description);
const NOT_SIGNED = 'the DPoP proof is not a valid signed dpop+jwt';

/** A proof header's key: its thumbprint (what a bound token's cnf.jkt names), and the check of a proof's signature with it, which resolves to its claims. */
interface ProofKey {
  jkt: string;
  verify(proof: string): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** Whether a header's key may sign with its algorithm: a public key of the algorithm's type and curve, for signatures (RFC 7517 §4.2 to §4.4), as jose's EmbeddedJWK asks. */
function keyFits(jwk: JWK, alg: string): boolean {
  const wanted = Object.hasOwn(KEY_OF_ALGORITHM, alg) ? KEY_OF_ALGORITHM[alg as keyof typeof KEY_OF_ALGORITHM] : undefined;
  if (wanted === undefined || jwk.kty !== wanted.kty || PRIVATE_MEMBERS.some((m) => m in jwk)) return false;
  if (wanted.crv !== undefined && !wanted.crv.includes(jwk.crv ?? '')) return false;
  if (wanted.kty === 'RSA' && jwk.e !== RSA_EXPONENT) return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  return jwk.key_ops === undefined || (Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'));
}

/**
 * §4.3 checks 2 to 7 that depend on the header alone: typ dpop+jwt, an asymmetric algorithm, a
 * public key (never a private one) of that algorithm's type and curve. Signatures are then checked
 * by fast-jwt with node:crypto (the key and algorithm fixed here); Ed25519, the fully-specified
 * name of RFC 9864 that fast-jwt does not know, by jose.
 */
async function proofKey(proof: string): Promise<ProofKey> {
  const header = decodeProtectedHeader(proof);
  const { alg, jwk } = header;
  if (typeof header.typ !== 'string' || header.typ.toLowerCase().replace(/^application\//, '') !== 'dpop+jwt') throw refuse(NOT_SIGNED);
  if (typeof alg !== 'string' || typeof jwk !== 'object' || jwk === null || Array.isArray(jwk) || !keyFits(jwk, alg)) throw refuse(NOT_SIGNED);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  if (alg === 'Ed25519') {
    return { jkt, verify: async (p) => (await jwtVerify(p, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['Ed25519'] })).payload as Record<string, unknown> };
  }
  const imported = createPublicKey({ key: jwk as JWK & { kty: string }, format: 'jwk' });
  const bits = imported.asymmetricKeyDetails?.modulusLength ?? 0;
  if (imported.asymmetricKeyType === 'rsa' && (bits < RSA_BITS.min || bits > RSA_BITS.max)) throw refuse(NOT_SIGNED);
  const key = imported.export({ format: 'pem', type: 'spki' }) as string;
  const verify = createVerifier({ key, algorithms: [alg as 'ES256'], checkTyp: 'dpop+jwt', cache: false, ignoreExpiration: true, ignoreNotBefore: true });
  return { jkt, verify: (p) => verify(p) as Record<string, unknown> };
}

/** What the proof must match: the request as the client sent it. */
interface ProofTarget {
  method: string;
  /** The URIs the client may have addressed, without query and fragment (§4.3 check 9), each normalised by normalHtu. */
  htu: readonly string[];
  /** On a route: the access token the proof must name (ath, §4.3 check 12). */
  accessToken?: string;
  now: number;
}

/** §4.3 check 9: the URI with syntax- and scheme-based normalisation (RFC 3986 §6.2.2, §6.2.3): case, default port, no query or fragment. */
function normalHtu(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** The one DPoP header of a request; undefined without one, a refusal when there are several (§4.3 check 1). */
export function proofHeader(req: IncomingMessage): string | undefined {
  const proof = req.headers.dpop;
  if (proof === undefined) return undefined;
  if (repeatedHeader(req.rawHeaders, 'dpop')) throw refuse('the request has more than one DPoP header');
  return proof as string;
}

export interface DpopVerifier {
  /** The SHA-256 thumbprint (RFC 7638) of the key that signed a valid, unspent proof; throws a DpopRefusal otherwise. Spends the proof. */
  verify(proof: string, target: ProofTarget): Promise<string>;
  /** The nonce proofs must carry now (DPoP-Nonce), when nonces are on. */
  nonce(now: number): string | undefined;
  /**
   * The URIs of `path` a request's proof may name (htu): at the origin a trusted proxy or
   * listen.publicHost says the client addressed, else at the connection's own address (and
   * localhost for a loopback one); and at oauth.issuer's. Never at a Host header's.
   */
  htu(req: IncomingMessage, listener: string, path: string): string[];
}

/**
 * `secretKey` keys the nonces: any instance sharing the store (and so the key) takes any other's,
 * with nothing stored. A nonce is good for the window it was made in and the next.
 */
export function createDpopVerifier(settings: DpopSettings, env: { once: OnceStore; secretKey: KeyObject; origin: PublicOrigin; issuer: string | undefined }): DpopVerifier {
  const { maxAgeMs } = settings;
  const windowMs = Math.max(1000, maxAgeMs);
  const keys = new Map<string, ProofKey>();
  /** The proof's claims and its key's thumbprint once its signature holds; its header's key is remembered only then. */
  async function checkSignature(proof: string): Promise<{ jkt: string; claims: Record<string, unknown> }> {
    const dot = proof.indexOf('.');
    if (dot === -1 || dot > MAX_HEADER_LENGTH) throw refuse(NOT_SIGNED);
    const encoded = proof.slice(0, dot);
    const known = keys.get(encoded);
    const key = known ?? (await proofKey(proof));
    const claims = await key.verify(proof);
    if (known === undefined) {
      if (keys.size >= PROOF_KEYS) keys.delete(keys.keys().next().value!);
      keys.set(encoded, key);
    }
    return { jkt: key.jkt, claims };
  }
  // The nonces of the last two windows, each made once: every proof's check asks for both.
  let made: [window: number, nonce: string][] = [];
  function nonceAt(window: number): string {
    const known = made.find(([w]) => w === window);
    if (known !== undefined) return known[1];
    const nonce = `${window.toString(36)}.${secretHash(env.secretKey, `dpop-nonce ${window}`).subarray(0, 16).toString('base64url')}`;
    made = [[window, nonce] as [number, string], ...made].slice(0, 2);
    return nonce;
  }
  function nonceGood(nonce: unknown, now: number): boolean {
    if (typeof nonce !== 'string' || nonce.length > 64) return false;
    const window = Math.floor(now / windowMs);
    const given = Buffer.from(nonce);
    return safeEqual(given, Buffer.from(nonceAt(window))) || safeEqual(given, Buffer.from(nonceAt(window - 1)));
  }
  return {
    nonce: (now) => (settings.nonce ? nonceAt(Math.floor(now / windowMs)) : undefined),
    htu(req, listener, path) {
      const proto = env.origin.proto(req, listener);
      const named = env.origin.host(req);
      // §4.3 check 9 is against the server's own URI: a Host header of the client's choosing would
      // let a proof made for another server (one the token was sent to by mistake) pass here.
      const hosts = named === undefined ? env.origin.own(req) : [named];
      const origins = [...hosts.map((h) => `${proto}://${h}`), ...(env.issuer === undefined ? [] : [env.issuer])];
      return origins.flatMap((o) => normalHtu(`${o}${path}`) ?? []);
    },
    async verify(proof, target) {
      if (proof.length > MAX_PROOF_LENGTH) throw refuse('the DPoP proof is too long');
      let jkt: string;
      let claims: Record<string, unknown>;
      try {
        // §4.3 checks 2 to 7: one JWS of the header's key, and its signature.
        ({ jkt, claims } = await checkSignature(proof));
      } catch {
        // Whatever fails here fails on the client's bytes: a header, key or signature that does not hold.
        throw refuse(NOT_SIGNED);
      }
      const { jti, htm, htu, iat, ath } = claims;
      if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) throw refuse('the DPoP proof has no valid jti');
      if (htm !== target.method) throw refuse('the DPoP proof is for another method');
      if (typeof htu !== 'string' || !target.htu.includes(normalHtu(htu) ?? '')) throw refuse('the DPoP proof is for another URI');
      if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('the DPoP proof has no iat');
      const issuedAt = iat * 1000;
      if (issuedAt > target.now + FUTURE_SKEW_MS || issuedAt < target.now - maxAgeMs) throw refuse('the DPoP proof is too old, or from the future');
      if (target.accessToken !== undefined) {
        // §4.3 check 12: base64url of the SHA-256 of the access token's ASCII.
        const expected = sha256(target.accessToken).toString('base64url');
        if (typeof ath !== 'string' || !safeEqual(Buffer.from(ath), Buffer.from(expected))) throw refuse('the DPoP proof does not name this access token (ath)');
      }
      if (settings.nonce && !nonceGood(claims.nonce, target.now)) throw new DpopRefusal('use_dpop_nonce', 'the DPoP proof must carry the nonce in DPoP-Nonce');
      // §11.1: single-use, on every instance sharing the store, for as long as its iat is accepted.
      const spent = await env.once.spendOnce(sha256(`dpop ${jkt} ${jti}`), target.now, Math.max(issuedAt, target.now) + maxAgeMs + FUTURE_SKEW_MS);
      if (!spent) throw refuse('the DPoP proof was used before');
      return jkt;
    },
  };
}
