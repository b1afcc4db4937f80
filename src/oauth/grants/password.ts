import { secretHash } from '../../crypto.ts';
import { admitAttempt, attemptSucceeded, attemptUndecided, PASSWORD_APP, PASSWORD_USER, PASSWORD_USER_BY_APP, type Accounts } from '../../login-throttle.ts';
import { invalidRequest, OAuthError } from '../errors.ts';
import { accessToken, grantRecords, mintAccess, mintPair, signingKeyFor, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantEnv, GrantRequest } from './grant.ts';

export const grantType = 'password';
export const parameters: ReadonlySet<string> = new Set(['username', 'password']);

/**
 * The username as the throttle counts it: NFKC, trimmed, lower-cased (so "Alice " and "ＡＬＩＣＥ"
 * share alice's attempts, whatever the authorization server makes of them), and keyed-hashed so
 * the store never holds what someone typed, a password pasted into the wrong field included.
 */
function keyedName(env: GrantEnv, username: string): string {
  return secretHash(env.secretKey, `password-grant-user|${username.normalize('NFKC').trim().toLowerCase()}`).toString('base64url');
}

/** 429, with the RFC 8628 error code registered for "slow down" at the token endpoint. */
function throttled(retryAfter: number): OAuthError {
  return new OAuthError(429, 'slow_down', 'too many failed password attempts; try again later', { headers: { 'retry-after': String(retryAfter) } });
}

/**
 * Whose attempts a password-grant request is: the username as this app tries it (the app slows
 * only itself), the username across all apps (a much higher ceiling), and the app across all
 * usernames (credential stuffing). None involves the caller's address or how the client
 * authenticated; the app's id covers every key it has.
 */
function attemptAccounts(env: GrantEnv, appId: string, username: string): Accounts {
  const user = keyedName(env, username);
  const userByApp = `password|user-app|${appId}|${user}`;
  return [
    { account: userByApp, rule: PASSWORD_USER_BY_APP },
    // The ceiling holds back only an app that has failed for this username itself: strangers who
    // keep it high (renewing its wait from their last failure) would otherwise keep every app out.
    { account: `password|user|${user}`, rule: PASSWORD_USER, gatesOnlyIfFailing: userByApp },
    { account: `password|app|${appId}`, rule: PASSWORD_APP },
  ];
}

/**
 * RFC 6749 §4.3, as the seed's §4.1 rule 2 has it: the client is already authenticated; the
 * configured authorization server checks the username and password, and only then are tokens
 * minted. A refresh token comes with them when the product enables the refresh_token grant.
 */
export async function handle({ form, client, product, scope, now }: GrantRequest, env: GrantEnv): Promise<TokenResponseBody> {
  const username = form.get('username');
  const password = form.get('password');
  if (username === undefined) throw invalidRequest("parameter 'username' is required");
  if (password === undefined) throw invalidRequest("parameter 'password' is required");
  const { store } = env;
  const accounts = attemptAccounts(env, client.app.id, username);
  const [userByApp, user, app] = accounts.map((a) => a.account) as [string, string, string];
  // Counted before the authorization server is asked, so parallel guesses cannot slip past.
  const retryAfter = await admitAttempt(store, accounts, now);
  if (retryAfter !== undefined) throw throttled(retryAfter);
  let subject: string;
  try {
    // The config loader guarantees a product with the password grant names a known server.
    subject = await env.authServers.get(product.authServer!)!.verify(username, password);
  } catch (err) {
    // A server that is down or too slow judged nothing: a user must not be slowed down by its outage.
    if (err instanceof OAuthError && err.code === 'temporarily_unavailable') await attemptUndecided(store, accounts);
    throw err;
  }
  // A success clears the username's counts and takes the attempt back from the app's failures.
  await attemptSucceeded(store, [userByApp, user], [app]);
  const granted = (scope ?? client.app.scopes ?? product.scopes).join(' ');
  const key = signingKeyFor(env.signing, product, now);
  const minted = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  await env.store.tokens.saveTokens(grantRecords(client, product, minted, granted, subject, now));
  const access = accessToken(env.signing, key, minted, { client, product, scope: granted, subject, now });
  return tokenBody(product, { ...minted, access }, granted, scope);
}
