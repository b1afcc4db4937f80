// A DPoP client's side (RFC 9449 §4), for tests: a key pair and the proofs it signs, with every
// claim open to being made wrong.
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface ProofOptions {
  method: string;
  url: string;
  accessToken?: string;
  nonce?: string;
  /** Overrides of the claims (undefined removes one). */
  claims?: Record<string, unknown>;
  /** Overrides of the header. */
  header?: Record<string, unknown>;
}

export interface DpopKey {
  alg: string;
  jwk: JWK;
  /** RFC 7638 thumbprint: what a bound token's cnf.jkt names. */
  jkt: string;
  proof(options: ProofOptions): Promise<string>;
}

export async function dpopKey(alg: 'ES256' | 'EdDSA' | 'RS256' | 'PS256' = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  return { alg, jwk, jkt, proof: (options) => signProof(privateKey, alg, jwk, options) };
}

export function ath(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/** `url` without its query and fragment, as §4.2 says htu is. */
function htu(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

async function signProof(privateKey: CryptoKey, alg: string, jwk: JWK, o: ProofOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: randomUUID(),
    htm: o.method,
    htu: htu(o.url),
    iat: Math.floor(Date.now() / 1000),
    ...(o.accessToken === undefined ? {} : { ath: ath(o.accessToken) }),
    ...(o.nonce === undefined ? {} : { nonce: o.nonce }),
    ...o.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg, jwk, ...o.header }).sign(privateKey);
}
