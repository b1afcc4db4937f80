// Portal sessions and CSRF tokens. Every visitor carries one cookie holding a random id: once
// logged in, the id of a session the store keeps (as its SHA-256); before, an id the store does
// not know. A form's CSRF token is an HMAC of that id, so it is bound to this browser, and a
// login replaces the id (no session fixation) and with it every token issued before.
import { createHmac, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { safeEqual, sha256 } from '../crypto.ts';
import type { Login } from '../admin/accounts.ts';
import { cookieValues } from '../http/request.ts';
import type { Developer, Store } from '../store/port/index.ts';

const ID = /^[A-Za-z0-9_-]{43}$/;

export interface Visitor {
  /** The cookie's id: a session's, or an anonymous one. */
  id: string;
  /** The logged-in developer, if the id is a live session's. */
  developer: Developer | undefined;
  /** Whether the response must set the cookie (a new visitor). */
  fresh: boolean;
}

export interface Sessions {
  visitor(req: IncomingMessage): Promise<Visitor>;
  /** A new session for the developer just logged in: its id goes into the cookie. Undefined: their password changed meanwhile. */
  start(login: Login): Promise<string | undefined>;
  end(id: string): Promise<void>;
  /** The Set-Cookie value carrying `id`. */
  cookie(id: string): string;
  csrfToken(id: string): string;
  checkCsrf(id: string, token: string | undefined): boolean;
}

export function newVisitorId(): string {
  return randomBytes(32).toString('base64url');
}

export function createSessions(options: { store: Store; secretKey: KeyObject; clock: () => number; lifetimeMs: number; secure: boolean }): Sessions {
  const { store, secretKey, clock, lifetimeMs, secure } = options;
  // Over TLS the __Host- prefix makes browsers refuse the cookie unless it is Secure, for this host only, on Path=/.
  const cookieName = secure ? '__Host-portal' : 'portal';
  const attributes = `; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.floor(lifetimeMs / 1000)}${secure ? '; Secure' : ''}`;
  const csrfToken = (id: string) => createHmac('sha256', secretKey).update(`portal-csrf|${id}`).digest('base64url');

  return {
    async visitor(req) {
      const id = readCookie(req.headers.cookie, cookieName);
      if (id === undefined || !ID.test(id)) return { id: newVisitorId(), developer: undefined, fresh: true };
      return { id, developer: await store.accounts.findSession(sha256(id), clock()), fresh: false };
    },
    async start(login) {
      const id = newVisitorId();
      const now = clock();
      const started = await store.accounts.createSession({ idHash: sha256(id), developerId: login.developer.id, passwordHash: login.passwordHash, now, expiresAt: now + lifetimeMs });
      return started ? id : undefined;
    },
    end: (id) => store.accounts.deleteSession(sha256(id)),
    cookie: (id) => `${cookieName}=${id}${attributes}`,
    csrfToken,
    checkCsrf: (id, token) => token !== undefined && safeEqual(Buffer.from(token), Buffer.from(csrfToken(id))),
  };
}

/** RFC 6265 §5.4: the first cookie of that name. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return cookieValues(header, name)[0];
}
