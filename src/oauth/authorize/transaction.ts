// An authorization under way, from the authorization endpoint through the login and the consent
// to the code: the request as checked, the OpenID provider's login (what its answer must match),
// and who logged in. It lives in the browser that started it, in a cookie sealed under the
// gateway's secret key (src/seal.ts) and bound to its id, one cookie per authorization so that two
// tabs do not mix; every instance can read it. The id is in the URL of each page; the cookie proves
// the page is in the browser that started it. Its forms carry a CSRF token made from the id.
// Issuing the code spends the id in the store: a consent sent again (a replay, a second tab)
// gets no second code.
import { createHmac, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { safeEqual, sha256 } from '../../crypto.ts';
import { cookiePairs, cookieValues } from '../../http/request.ts';
import { createSealer } from '../../seal.ts';
import type { Store } from '../../store/port/index.ts';
import type { AuthorizationRequest } from './request.ts';

/** How long a user has from the app's request to the consent: the login included. */
export const TRANSACTION_LIFETIME_MS = 10 * 60_000;

/** 128 random bits, base64url. */
const ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * At most this many authorizations under way in one browser (its tabs), and each cookie at most
 * the size RFC 6265 §6.1 has every browser keep: a browser's Cookie header then stays within the
 * 16 KiB of request head Node reads. Without the bound, a page that navigated a window it opened to
 * a few authorizations with long states got every /oauth2/ request of that browser a 431 for as
 * long as the cookies lived.
 */
const MAX_PER_BROWSER = 3;
const COOKIE_LIMIT = 4096;

export interface Transaction {
  id: string;
  request: AuthorizationRequest;
  expiresAt: number;
  /** The OpenID provider's login under way: the state, nonce and PKCE verifier its answer is checked against. */
  login?: { state: string; nonce: string; verifier: string };
  /** Who logged in; set once the login succeeded. */
  subject?: string;
}

export interface Transactions {
  start(request: AuthorizationRequest, now: number): Transaction;
  /**
   * The Set-Cookie values that begin `tx` in the browser of `req`: its cookie, after the removal of
   * the browser's oldest transactions beyond MAX_PER_BROWSER. Undefined when its cookie would be
   * larger than browsers keep.
   */
  begin(req: IncomingMessage, tx: Transaction, now: number): string[] | undefined;
  /** The Set-Cookie value that keeps `tx` in the browser (sealed again whenever it changes). */
  cookie(tx: Transaction, now: number): string;
  /** The Set-Cookie value that removes it. */
  clear(id: string): string;
  /** The transaction `id` in the request's cookie: undefined when absent, altered, another's or expired. */
  read(req: IncomingMessage, id: string | null | undefined, now: number): Transaction | undefined;
  csrfToken(tx: Transaction): string;
  checkCsrf(tx: Transaction, token: string | undefined): boolean;
  /** Spends the transaction: true once, on whichever instance asks first. */
  spend(tx: Transaction, now: number): Promise<boolean>;
}

export function createTransactions(options: { store: Store; secretKey: KeyObject; secure: boolean }): Transactions {
  const { store, secretKey, secure } = options;
  const sealer = createSealer(secretKey, 'token-gateway authorization transaction v1');
  // Path=/oauth2/: the cookie goes to the authorization pages only, never with an API call. Lax:
  // the OpenID provider's answer is a top-level navigation from its site.
  const name = (id: string) => `${secure ? '__Secure-' : ''}gateway-authorize-${id}`;
  const attributes = (maxAge: number) => `; Path=/oauth2/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const csrfToken = (tx: Transaction) => createHmac('sha256', secretKey).update(`authorize-csrf|${tx.id}`).digest('base64url');
  const cookie = (tx: Transaction, now: number) => `${name(tx.id)}=${sealer.seal(tx, tx.id)}${attributes(Math.max(1, Math.ceil((tx.expiresAt - now) / 1000)))}`;
  const clear = (id: string) => `${name(id)}=${attributes(0)}`;
  /** The ids of the transactions whose cookies the request carries, oldest first (RFC 6265 §5.4: same path, by creation time). */
  function carried(req: IncomingMessage): string[] {
    const ids = new Set<string>();
    const prefix = name('');
    if (req.headers.cookie === undefined) return [];
    for (const [n] of cookiePairs(req.headers.cookie)) if (n.startsWith(prefix) && ID.test(n.slice(prefix.length))) ids.add(n.slice(prefix.length));
    return [...ids];
  }
  return {
    start: (request, now) => ({ id: randomBytes(16).toString('base64url'), request, expiresAt: now + TRANSACTION_LIFETIME_MS }),
    begin(req, tx, now) {
      const own = cookie(tx, now);
      if (own.length > COOKIE_LIMIT) return undefined;
      const others = carried(req);
      return [...others.slice(0, Math.max(0, others.length - (MAX_PER_BROWSER - 1))).map(clear), own];
    },
    cookie,
    clear,
    read(req, id, now) {
      if (id == null || !ID.test(id)) return undefined;
      const value = cookieValues(req.headers.cookie, name(id))[0];
      const tx = value === undefined ? undefined : (sealer.open(value, id) as Transaction | undefined);
      return tx !== undefined && tx.id === id && tx.expiresAt > now ? tx : undefined;
    },
    csrfToken,
    checkCsrf: (tx, token) => token !== undefined && safeEqual(Buffer.from(token), Buffer.from(csrfToken(tx))),
    spend: (tx, now) => store.once.spendOnce(sha256(`authorize|${tx.id}`), now, tx.expiresAt),
  };
}
