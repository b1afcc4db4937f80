// Token and secret material: CSPRNG bytes, base64url, a prefix that says what the string is
// (so a leaked one is easy to find), and the hashes the store keeps instead of the values.
import { createHash, createHmac, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

export const PREFIX = { access: 'gwat_', refresh: 'gwrt_', secret: 'gws_' } as const;

/** 256 bits from the CSPRNG, base64url, behind the kind's prefix. */
export function newToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** A public identifier (app keys, record ids): 144 random bits, base64url. */
export function newId(): string {
  return randomBytes(18).toString('base64url');
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Keyed hash of a generated secret: high entropy, so a fast MAC is as safe as a slow KDF. */
export function secretHash(key: KeyObject, secret: string): Buffer {
  return createHmac('sha256', key).update(secret).digest();
}

export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
