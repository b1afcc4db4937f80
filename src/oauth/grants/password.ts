import type { Deps } from '../../deps.ts';
import { secretHash } from '../../crypto.ts';
import { invalidRequest, OAuthError } from '../errors.ts';
import { grantRecords, mintAccess, mintPair, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantRequest } from './grant.ts';

export const grantType = 'password';
export const parameters: ReadonlySet<string> = new Set(['username', 'password']);

// Guessing passwords through the gateway: every attempt counts against the username and against
// the app (whichever of its keys it uses) before the authorization server is asked, so parallel
// guesses cannot slip past; a success clears the username's count and takes its attempt back
// from the app's. Neither key involves the caller's address or how the client authenticated.
const USER_ATTEMPTS = 5;
const CLIENT_FAILURES = 50;
const WINDOW_MS = 15 * 60_000;

/**
 * The username as the throttle counts it: NFKC, trimmed, lower-cased (so "Alice " and "ＡＬＩＣＥ"
 * share alice's attempts, whatever the authorization server makes of them), and keyed-hashed so
 * the store never holds what someone typed, a password pasted into the wrong field included.
 */
function keyedName(deps: Deps, username: string): string {
  return secretHash(deps.secretKey, `password-grant-user|${username.normalize('NFKC').trim().toLowerCase()}`).toString('base64url');
}

/** 429, with the RFC 8628 error code registered for "slow down" at the token endpoint. */
function throttled(since: number, now: number): OAuthError {
  const retryAfter = Math.max(1, Math.ceil((since + WINDOW_MS - now) / 1000));
  return new OAuthError(429, 'slow_down', 'too many failed password attempts; try again later', { headers: { 'retry-after': String(retryAfter) } });
}

/**
 * RFC 6749 §4.3, as the seed's §4.1 rule 2 has it: the client is already authenticated; the
 * configured authorization server checks the username and password, and only then are tokens
 * minted. A refresh token comes with them when the product enables the refresh_token grant.
 */
export async function handle({ form, client, product, scope, now }: GrantRequest, deps: Deps): Promise<TokenResponseBody> {
  const username = form.get('username');
  const password = form.get('password');
  if (username === undefined) throw invalidRequest("parameter 'username' is required");
  if (password === undefined) throw invalidRequest("parameter 'password' is required");
  const { store } = deps;
  const userKey = `password|user|${keyedName(deps, username)}`;
  const clientKey = `password|app|${client.app.id}`;
  // Both counted before the authorization server is asked, so parallel guesses cannot slip past.
  const byClient = await store.addLoginFailure(clientKey, now, WINDOW_MS);
  if (byClient.count > CLIENT_FAILURES) throw throttled(byClient.since, now);
  const byUser = await store.addLoginFailure(userKey, now, WINDOW_MS);
  if (byUser.count > USER_ATTEMPTS) throw throttled(byUser.since, now);
  // The config loader guarantees a product with the password grant names a known server.
  const subject = await deps.authServers.get(product.authServer!)!.verify(username, password);
  // A success clears the username and takes its attempt back from the client's failures.
  await store.clearLoginFailures(userKey);
  await store.takeBackLoginFailure(clientKey);
  const granted = (scope ?? product.scopes).join(' ');
  const minted = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  await deps.store.saveTokens(grantRecords(client, product, minted, granted, subject, now));
  return tokenBody(product, minted, granted, scope);
}
