// Token and secret material: CSPRNG bytes, base64url, a prefix that says what the string is
// (so a leaked one is easy to find), and the digests the store keeps instead of the values.
import { createHmac, hash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

export const PREFIX = { access: 'gwat_', refresh: 'gwrt_', code: 'gwac_', secret: 'gws_', invitation: 'gwi_', mailLink: 'gwm_' } as const;

// CSPRNG bytes drawn from a pool filled 12 KiB at a time: one randomBytes call per token costs
// more than the token's whole hash. Each byte is handed out once.
const POOL_SIZE = 12 * 1024;
let pool = Buffer.alloc(0);
let offset = 0;

function random(size: number): Buffer {
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + size));
  offset += size;
  return out;
}

/** 16 bytes that sort by creation time: a 48-bit millisecond timestamp, then 80 random bits. */
export function orderedId(): Buffer {
  const id = random(16);
  id.writeUIntBE(Date.now(), 0, 6);
  return id;
}

const TOKEN_BYTES = 48;
const TOKEN_CHARS = 64;

/**
 * A token: its prefix, then base64url of a 16-byte time-ordered id and 256 random bits.
 * The digest the store keeps is that id followed by the SHA-256 of the whole token: the id
 * makes the store's index grow at one end (random keys cost a random page write per token),
 * the 256 secret bits stay unknown to whoever reads the store.
 */
export function newToken(prefix: string, binding?: string): { token: string; digest: Buffer } {
  const raw = random(TOKEN_BYTES);
  raw.writeUIntBE(Date.now(), 0, 6);
  const token = prefix + raw.toString('base64url');
  return { token, digest: Buffer.concat([raw.subarray(0, 16), sha256(bound(token, binding))]) };
}

/**
 * The store digest of a presented token, or undefined when it cannot be one of ours. A token made
 * with a binding (an authorization code's redirect URI and PKCE challenge) has the digest of that
 * binding only: presented with any other, it is not found.
 */
export function tokenDigest(prefix: string, token: string, binding?: string): Buffer | undefined {
  if (token.length !== prefix.length + TOKEN_CHARS || !token.startsWith(prefix)) return undefined;
  const raw = Buffer.from(token.slice(prefix.length), 'base64url');
  if (raw.length !== TOKEN_BYTES) return undefined;
  return Buffer.concat([raw.subarray(0, 16), sha256(bound(token, binding))]);
}

// A token never holds a line feed: the binding cannot be shifted into it.
const bound = (token: string, binding: string | undefined) => (binding === undefined ? token : `${token}\n${binding}`);

/** A generated app secret: 256 bits from the CSPRNG, base64url, behind its prefix. */
export function newSecret(): string {
  return PREFIX.secret + randomBytes(32).toString('base64url');
}

/** A one-time portal invitation code: 256 bits from the CSPRNG, behind its prefix. */
export function newInvitation(): string {
  return PREFIX.invitation + randomBytes(32).toString('base64url');
}

/** The token of a mailed link (confirm an address, reset a password): 256 bits from the CSPRNG, behind its prefix. */
export function newMailLinkToken(): string {
  return PREFIX.mailLink + randomBytes(32).toString('base64url');
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * An app key (the OAuth client_id): 32 letters and digits, about 190 random bits. No '-' or '_',
 * so a key never reads as a command-line option or needs encoding anywhere.
 */
export function newKey(): string {
  let key = '';
  while (key.length < 32) {
    // 248 = 4 × 62: bytes above it are skipped so that every character is equally likely.
    for (const byte of randomBytes(40)) if (byte < 248 && key.length < 32) key += ALPHANUMERIC[byte % 62];
  }
  return key;
}

/**
 * Any key a client may present: the gateway's own, or one imported from another gateway (Apigee's
 * consumer keys, Kong's client ids): RFC 3986 unreserved characters only, so that no path segment
 * or Basic authentication has to escape it, and a letter or digit first, so that it never reads
 * as a command-line option.
 */
export const CLIENT_KEY = /^[A-Za-z0-9][A-Za-z0-9._~-]{7,254}$/;

/** A record identifier: 144 random bits, base64url. */
export function newId(): string {
  return randomBytes(18).toString('base64url');
}

/** SHA-256 in one call: a third faster than createHash() for a token-sized input. */
export function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** Keyed hash of a generated secret: high entropy, so a fast MAC is as safe as a slow KDF. */
export function secretHash(key: KeyObject, secret: string): Buffer {
  return createHmac('sha256', key).update(secret).digest();
}

export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
