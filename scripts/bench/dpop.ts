// DPoP (RFC 9449) for the benchmark: a client's key pair per algorithm, a DPoP-bound token, and
// the proofs of its calls. Every call needs a proof of its own (its jti is spent once), so they are
// signed ahead of each measurement, in the bench's process while the gateway idles, and handed out
// one per request: the load generator signs nothing while the gateway is measured. They are signed
// with node:crypto (35 µs each here, synchronous) rather than jose (WebCrypto, about 250 µs), so
// that a run's worth takes seconds.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export type ProofAlgorithm = 'ES256' | 'EdDSA';

/** A DPoP client's key, and the proofs it signs (§4.2): typ dpop+jwt, its public key in the header. */
export class ProofSigner {
  readonly alg: ProofAlgorithm;
  readonly #key: KeyObject;
  readonly #header: string;
  /** jti: a random prefix of this key's, then a count; unique without a random draw per proof. */
  readonly #prefix = randomBytes(12).toString('base64url');
  #count = 0;

  constructor(alg: ProofAlgorithm) {
    const { privateKey, publicKey } = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    this.alg = alg;
    this.#key = privateKey;
    this.#header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg, jwk: { kty, crv, x, ...(y === undefined ? {} : { y }) } })).toString('base64url');
  }

  /** A proof for `htm` and `htu` (no query), issued now; naming `ath` (the access token's SHA-256) on a protected call. */
  proof(htm: string, htu: string, ath?: string): string {
    const claims = { jti: `${this.#prefix}.${this.#count++}`, htm, htu, iat: Math.floor(Date.now() / 1000), ...(ath === undefined ? {} : { ath }) };
    const input = `${this.#header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    // JWS ES256 is r‖s (RFC 7518 §3.4), not DER; Ed25519 signs the message itself.
    const signature = this.alg === 'ES256' ? sign('sha256', Buffer.from(input), { key: this.#key, dsaEncoding: 'ieee-p1363' }) : sign(null, Buffer.from(input), this.#key);
    return `${input}.${signature.toString('base64url')}`;
  }
}

/** §4.3 check 12: base64url of the SHA-256 of the access token. */
export const ath = (accessToken: string) => createHash('sha256').update(accessToken).digest('base64url');

/** A client_credentials token bound to `signer`'s key (§5): the token request carries a proof. */
export async function dpopToken(origin: string, basic: string, signer: ProofSigner): Promise<string> {
  const url = `${origin}/oauth2/token`;
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic, dpop: signer.proof('POST', url) },
    body: 'grant_type=client_credentials',
  });
  const body = (await answer.json()) as { access_token?: string; token_type?: string };
  if (answer.status !== 200 || body.token_type !== 'DPoP' || body.access_token === undefined) throw new Error(`${url} with an ${signer.alg} proof: ${answer.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * The headers of the calls of one DPoP case: `Authorization: DPoP <token>` and a proof of its own
 * for each, for GET on `url`. `prepare` signs, before a measurement of some seconds, half as many
 * again as that time takes at the last measurement's rate or at `floorRate`, whichever is higher
 * (a warm-up runs slower than the rounds after it); should the load outrun them, the rest are
 * signed on the spot and counted in `late`. Left over proofs are dropped: by the next measurement
 * of the case they may be older than oauth.dpop.maxAge.
 */
export class ProofSupply {
  readonly #signer: ProofSigner;
  readonly #htu: string;
  readonly #ath: string;
  readonly #authorization: string;
  #proofs: string[] = [];
  #handed = 0;
  #seconds = 0;
  readonly #floorRate: number;
  #rate = 0;
  /** Proofs signed during a measurement, by the load generator: none, when the margin held. */
  late = 0;

  constructor(signer: ProofSigner, url: string, token: string, floorRate = 5000) {
    const u = new URL(url);
    this.#signer = signer;
    this.#htu = `${u.origin}${u.pathname}`;
    this.#ath = ath(token);
    this.#authorization = `DPoP ${token}`;
    this.#floorRate = floorRate;
  }

  prepare(seconds: number): void {
    if (this.#seconds > 0) this.#rate = this.#handed / this.#seconds;
    // autocannon builds each connection's next request ahead: a few more than it sends.
    const count = Math.ceil(Math.max(this.#rate, this.#floorRate) * seconds * 1.5) + 256;
    this.#proofs = Array.from({ length: count }, () => this.#signer.proof('GET', this.#htu, this.#ath));
    this.#handed = 0;
    this.#seconds = seconds;
  }

  next(): Record<string, string> {
    const proof = this.#proofs.pop();
    this.#handed++;
    if (proof !== undefined) return { authorization: this.#authorization, dpop: proof };
    this.late++;
    return { authorization: this.#authorization, dpop: this.#signer.proof('GET', this.#htu, this.#ath) };
  }

  /** One call's headers, signed now: for the checks before the load. */
  fresh(): Record<string, string> {
    return { authorization: this.#authorization, dpop: this.#signer.proof('GET', this.#htu, this.#ath) };
  }
}

/**
 * That a DPoP case measures what it says: a call with a fresh proof passes, the same proof again
 * is refused (its jti is spent in the store), and the token as a bearer token is refused (§7.2).
 */
export async function checkDpopCase(url: string, supply: ProofSupply, token: string): Promise<void> {
  const headers = supply.fresh();
  for (const [name, init, status] of [
    ['a fresh proof', { headers }, 200],
    ['the same proof again', { headers }, 401],
    ['the token as a bearer token', { headers: { authorization: `Bearer ${token}` } }, 401],
  ] as const) {
    const answer = await fetch(url, init);
    if (answer.status !== status) throw new Error(`${url} with ${name}: ${answer.status} where ${status} was expected: ${await answer.text()}`);
    await answer.arrayBuffer();
  }
}
