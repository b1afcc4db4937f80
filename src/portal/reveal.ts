// The key and secret of a registration or a rotation, carried from the POST that made them to the
// one GET that shows them (Post/Redirect/Get: reloading that page repeats nothing). They travel in
// a short-lived cookie sealed with AES-256-GCM under a key derived (HKDF) from the gateway's secret
// key. Every instance shares that key, so the GET may reach another instance than the POST, and
// nothing keeps the secret at rest but the browser, sealed. The session id and the app id are the
// cipher's additional data: another session, or another app's page, cannot open it. The cookie's
// path is the reveal page's, and the GET that shows it clears it.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { readCookie } from './session.ts';

/** What the reveal page shows; overlapUntil (epoch ms) after a rotation only. */
export interface Shown {
  key: string;
  secret: string;
  overlapUntil?: number;
}

export interface Reveals {
  /** The one-time page of an app's new key and secret. */
  path(appId: string): string;
  /** The Set-Cookie value that carries `shown` to this session's next GET of the app's reveal page. */
  seal(sessionId: string, appId: string, shown: Shown): string;
  /** What the request's cookie holds for this session and app: undefined when absent, expired, altered or another's. */
  open(req: IncomingMessage, sessionId: string, appId: string): Shown | undefined;
  /** The Set-Cookie value that removes the cookie. */
  clear(appId: string): string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
// A distinct HKDF info per use of the secret key: this key opens nothing else.
const KEY_INFO = 'token-gateway portal reveal v1';

export function createReveals(options: { secretKey: KeyObject; clock: () => number; lifetimeMs: number; secure: boolean }): Reveals {
  const { clock, lifetimeMs, secure } = options;
  const key = Buffer.from(hkdfSync('sha256', options.secretKey, Buffer.alloc(0), KEY_INFO, 32));
  // The __Host- prefix needs Path=/; __Secure- still makes browsers refuse it unless it is Secure.
  const name = secure ? '__Secure-portal-reveal' : 'portal-reveal';
  const path = (appId: string) => `/apps/${appId}/secret`;
  const attributes = (appId: string, maxAge: number) => `; Path=${path(appId)}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const boundTo = (sessionId: string, appId: string) => Buffer.from(`${sessionId}|${appId}`);

  function seal(sessionId: string, appId: string, shown: Shown): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(boundTo(sessionId, appId));
    // The expiry is sealed too: Max-Age alone is only the browser's word.
    const plain = Buffer.from(JSON.stringify({ ...shown, expiresAt: clock() + lifetimeMs }));
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return `${name}=${sealed.toString('base64url')}${attributes(appId, Math.floor(lifetimeMs / 1000))}`;
  }

  function open(req: IncomingMessage, sessionId: string, appId: string): Shown | undefined {
    const value = readCookie(req.headers.cookie, name);
    if (value === undefined) return undefined;
    const sealed = Buffer.from(value, 'base64url');
    if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES)).setAAD(boundTo(sessionId, appId));
    decipher.setAuthTag(sealed.subarray(-TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, -TAG_BYTES)), decipher.final()]);
    } catch {
      // Altered, sealed for another session or app, or under another secret key.
      return undefined;
    }
    const { expiresAt, ...shown } = JSON.parse(plain.toString('utf8')) as Shown & { expiresAt: number };
    return expiresAt > clock() ? shown : undefined;
  }

  return { path, seal, open, clear: (appId) => `${name}=${attributes(appId, 0)}` };
}
