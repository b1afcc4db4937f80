import type { Deps } from '../../deps.ts';
import { invalidRequest, OAuthError } from '../errors.ts';
import { grantRecords, mintAccess, mintPair, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantRequest } from './grant.ts';

export const grantType = 'password';
export const parameters: ReadonlySet<string> = new Set(['username', 'password']);

// Guessing passwords through the gateway: every attempt counts against the username before the
// authorization server is asked (parallel guesses cannot slip past), and a success clears it;
// failures count against the client too, so one client cannot try every username. Neither key
// involves the caller's address or how the client authenticated.
const USER_ATTEMPTS = 5;
const CLIENT_FAILURES = 50;
const WINDOW_MS = 15 * 60_000;

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
  const userKey = `password|${product.authServer}|user|${username}`;
  const clientKey = `password|client|${client.credential.key}`;
  const clientFailures = await store.loginFailures(clientKey, now, WINDOW_MS);
  if (clientFailures.count >= CLIENT_FAILURES) throw throttled(clientFailures.since, now);
  const attempts = await store.addLoginFailure(userKey, now, WINDOW_MS);
  if (attempts.count > USER_ATTEMPTS) throw throttled(attempts.since, now);
  let subject: string;
  try {
    // The config loader guarantees a product with the password grant names a known server.
    subject = await deps.authServers.get(product.authServer!)!.verify(username, password);
  } catch (err) {
    if (err instanceof OAuthError && err.code === 'invalid_grant') await store.addLoginFailure(clientKey, now, WINDOW_MS);
    throw err;
  }
  await store.clearLoginFailures(userKey);
  const granted = (scope ?? product.scopes).join(' ');
  const minted = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  await deps.store.saveTokens(grantRecords(client, product, minted, granted, subject, now));
  return tokenBody(product, minted, granted, scope);
}
