// Values the gateway hands to a browser or a client and reads back unchanged: JSON sealed with
// AES-256-GCM under a key derived (HKDF) from the gateway's secret key, one key per purpose, so
// that a value sealed for one use opens nowhere else. Every instance shares the secret key, so a
// value sealed by one opens on another. The additional data binds a value to its context (a
// session, an app, a transaction): sealed for one, it does not open for another.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealer {
  /** `value` as JSON, sealed: base64url. */
  seal(value: unknown, boundTo: string): string;
  /** What `sealed` holds; undefined when it is altered, malformed, bound to something else or sealed under another key. */
  open(sealed: string, boundTo: string): unknown;
}

/** `purpose` names the use: 'token-gateway portal reveal v1'. */
export function createSealer(secretKey: KeyObject, purpose: string): Sealer {
  const key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), purpose, 32));
  return {
    seal(value, boundTo) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(boundTo));
      return Buffer.concat([iv, cipher.update(JSON.stringify(value)), cipher.final(), cipher.getAuthTag()]).toString('base64url');
    },
    open(text, boundTo) {
      const sealed = Buffer.from(text, 'base64url');
      if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES)).setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(sealed.subarray(-TAG_BYTES));
      try {
        return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, -TAG_BYTES)), decipher.final()]).toString('utf8')) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}
