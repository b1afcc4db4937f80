// A signing key as the gateway holds it: made here, its private half encrypted under the
// gateway's secret key before it reaches the store (AES-256-GCM, bound to its kid), and read back
// into the KeyObjects jose verifies with and the fast-jwt signers that sign with it. fast-jwt
// signs: it signs synchronously through node:crypto, three times faster than jose through
// WebCrypto, on the token endpoint's path (npm run bench prints both).
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, generateKeyPair, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { createSigner } from 'fast-jwt';
import { exportJWK, type JWK } from 'jose';
import type { SigningAlgorithm, SigningKeyRecord } from '../../store/port/index.ts';

const generate = promisify(generateKeyPair);

export interface SigningKey {
  kid: string;
  algorithm: SigningAlgorithm;
  publicJwk: JWK;
  publicKey: KeyObject;
  privateKey: KeyObject;
  createdAt: number;
  activatesAt: number;
  revokedAt: number | null;
  /** The compact JWS of `claims`, with typ, alg and this kid in its header. */
  sign(typ: string, claims: Record<string, unknown>): string;
}

/** Keys made by the gateway: `gwk_` and 128 random bits, never the shape of an app key (which has no '_'). */
export const KID = /^gwk_[A-Za-z0-9_-]{22}$/;

async function keyPair(algorithm: SigningAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (algorithm) {
    case 'ES256':
      return generate('ec', { namedCurve: 'P-256' });
    case 'EdDSA':
      return generate('ed25519');
    case 'RS256':
      return generate('rsa', { modulusLength: 2048 });
  }
}

/** The key that encrypts private keys at rest: derived, so the secret key itself encrypts nothing. */
function wrappingKey(secretKey: KeyObject): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey.export(), Buffer.alloc(0), 'token gateway signing keys', 32));
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

function encrypt(secretKey: KeyObject, kid: string, plain: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', wrappingKey(secretKey), iv).setAAD(Buffer.from(kid));
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

function decrypt(secretKey: KeyObject, kid: string, stored: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', wrappingKey(secretKey), stored.subarray(0, IV_BYTES)).setAAD(Buffer.from(kid));
  decipher.setAuthTag(stored.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(stored.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/** A new key pair and its record: published from `now`, signing from `activatesAt`. */
export async function newSigningKey(algorithm: SigningAlgorithm, secretKey: KeyObject, now: number, activatesAt: number): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await keyPair(algorithm);
  const kid = `gwk_${randomBytes(16).toString('base64url')}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: 'sig' };
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return { kid, algorithm, publicJwk: JSON.stringify(publicJwk), privateKey: encrypt(secretKey, kid, pkcs8), createdAt: now, activatesAt, revokedAt: null };
}

/** The record as keys; throws when the private key does not decrypt (another secret key, or a record tampered with). */
export function openSigningKey(record: SigningKeyRecord, secretKey: KeyObject): SigningKey {
  const publicJwk = JSON.parse(record.publicJwk) as JWK;
  const privateKey = createPrivateKey({ key: decrypt(secretKey, record.kid, record.privateKey), format: 'der', type: 'pkcs8' });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  // One signer per typ, made on first use: it holds the parsed key and the encoded header.
  const signers = new Map<string, (claims: Record<string, unknown>) => string>();
  return {
    kid: record.kid,
    algorithm: record.algorithm,
    publicJwk,
    publicKey: createPublicKey(privateKey),
    privateKey,
    createdAt: record.createdAt,
    activatesAt: record.activatesAt,
    revokedAt: record.revokedAt,
    sign(typ, claims) {
      let signer = signers.get(typ);
      if (signer === undefined) {
        signer = createSigner({ key: pem, algorithm: record.algorithm, header: { alg: record.algorithm, typ, kid: record.kid } });
        signers.set(typ, signer);
      }
      return signer(claims);
    },
  };
}
