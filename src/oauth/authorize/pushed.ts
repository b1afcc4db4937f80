// Pushed authorization requests (RFC 9126): the request, checked at /oauth2/par, comes back as a
// request_uri the app sends the browser with. The request_uri holds the request itself, sealed
// under the gateway's secret key (src/seal.ts) and bound to the app's key: no store, no instance of
// its own, and nobody can read or change it on the way through the browser. It works until it
// expires, however often (§4: a user may reload the page); the code it leads to is issued once.
import type { KeyObject } from 'node:crypto';
import { createSealer } from '../../seal.ts';

/** RFC 9126 §2.2: the URN prefix of request_uri values. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** How long a pushed request waits for the browser. */
export const PUSHED_LIFETIME_S = 60;

export interface PushedRequests {
  /** A request_uri for the parameters the app pushed. */
  push(params: ReadonlyMap<string, string>, clientId: string, now: number): string;
  /** The parameters of a request_uri pushed by this app; undefined when it is not one, another's, or expired. */
  open(requestUri: string, clientId: string, now: number): Map<string, string> | undefined;
}

export function createPushedRequests(secretKey: KeyObject): PushedRequests {
  const sealer = createSealer(secretKey, 'token-gateway pushed authorization request v1');
  return {
    push: (params, clientId, now) => REQUEST_URI_PREFIX + sealer.seal({ params: [...params], expiresAt: now + PUSHED_LIFETIME_S * 1000 }, clientId),
    open(requestUri, clientId, now) {
      if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined;
      const pushed = sealer.open(requestUri.slice(REQUEST_URI_PREFIX.length), clientId) as { params: [string, string][]; expiresAt: number } | undefined;
      if (pushed === undefined || !(pushed.expiresAt > now) || !Array.isArray(pushed.params)) return undefined;
      return new Map(pushed.params);
    },
  };
}
