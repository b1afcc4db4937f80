// The key and secret of a registration or a rotation, carried from the POST that made them to the
// one GET that shows them (Post/Redirect/Get: reloading that page repeats nothing). They travel in
// a short-lived cookie sealed (src/seal.ts) under the gateway's secret key. Every instance shares
// that key, so the GET may reach another instance than the POST, and nothing keeps the secret at
// rest but the browser, sealed. The session id and the app id are the
// cipher's additional data: another session, or another app's page, cannot open it. The cookie's
// path is the reveal page's, and the GET that shows it clears it. Clearing is only the browser's
// part: the same value sent again (a saved request) would open again within its lifetime. So
// each seal holds a random id, and opening spends it in the store (its SHA-256, remembered until
// the seal expires): the first open on any instance shows the secret, every later one nothing.
import { randomBytes, type KeyObject } from 'node:crypto';
import { createSealer } from '../seal.ts';
import type { IncomingMessage } from 'node:http';
import { sha256 } from '../crypto.ts';
import type { Store } from '../store/port/index.ts';
import { readCookie } from './session.ts';

/** What the reveal page shows: no secret for a public app; overlapUntil (epoch ms) after a rotation only. */
export interface Shown {
  key: string;
  secret?: string;
  overlapUntil?: number;
}

export interface Reveals {
  /** The one-time page of an app's new key and secret. */
  path(appId: string): string;
  /** The Set-Cookie value that carries `shown` to this session's next GET of the app's reveal page. */
  seal(sessionId: string, appId: string, shown: Shown): string;
  /**
   * What the request's cookie holds for this session and app, the first time it is opened:
   * undefined when absent, expired, altered, another's, or opened before (on any instance).
   * Rejects with StoreUnavailable when the store cannot spend it: nothing is shown then.
   */
  open(req: IncomingMessage, sessionId: string, appId: string): Promise<Shown | undefined>;
  /** The Set-Cookie value that removes the cookie. */
  clear(appId: string): string;
}

// A distinct HKDF info per use of the secret key: this key opens nothing else.
const KEY_INFO = 'token-gateway portal reveal v1';
const ID_BYTES = 16;

/** What a seal holds: what the page shows, the seal's own expiry, and the id its one opening spends. */
type Sealed = Shown & { expiresAt: number; id: string };

export function createReveals(options: { store: Store; secretKey: KeyObject; clock: () => number; lifetimeMs: number; secure: boolean }): Reveals {
  const { store, clock, lifetimeMs, secure } = options;
  const sealer = createSealer(options.secretKey, KEY_INFO);
  // The __Host- prefix needs Path=/; __Secure- still makes browsers refuse it unless it is Secure.
  const name = secure ? '__Secure-portal-reveal' : 'portal-reveal';
  const path = (appId: string) => `/apps/${appId}/secret`;
  const attributes = (appId: string, maxAge: number) => `; Path=${path(appId)}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const boundTo = (sessionId: string, appId: string) => `${sessionId}|${appId}`;

  function seal(sessionId: string, appId: string, shown: Shown): string {
    // The expiry is sealed too: Max-Age alone is only the browser's word.
    const contents: Sealed = { ...shown, expiresAt: clock() + lifetimeMs, id: randomBytes(ID_BYTES).toString('base64url') };
    return `${name}=${sealer.seal(contents, boundTo(sessionId, appId))}${attributes(appId, Math.floor(lifetimeMs / 1000))}`;
  }

  async function open(req: IncomingMessage, sessionId: string, appId: string): Promise<Shown | undefined> {
    const value = readCookie(req.headers.cookie, name);
    if (value === undefined) return undefined;
    // Altered, sealed for another session or app, or under another secret key: nothing.
    const opened = sealer.open(value, boundTo(sessionId, appId)) as Sealed | undefined;
    if (opened === undefined) return undefined;
    const { expiresAt, id, ...shown } = opened;
    const now = clock();
    // A seal without an id is malformed (seal always puts one in): with nothing to spend it would
    // open every time, so it is not shown.
    if (expiresAt <= now || typeof id !== 'string') return undefined;
    return (await store.once.spendOnce(sha256(id), now, expiresAt)) ? shown : undefined;
  }

  return { path, seal, open, clear: (appId) => `${name}=${attributes(appId, 0)}` };
}
