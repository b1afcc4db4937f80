// A username and password checked by an authorization server (src/authserver/client.ts), for the
// password grant and for the login page of the authorization code grant alike: each attempt is
// counted first against the accounts it is made on (src/login-throttle.ts), so parallel guesses
// cannot slip past, and a server that is down judges nothing.
import type { KeyObject } from 'node:crypto';
import { secretHash } from '../crypto.ts';
import { admitAttempt, attemptSucceeded, attemptUndecided, PASSWORD_APP, PASSWORD_USER, PASSWORD_USER_BY_APP, type Accounts } from '../login-throttle.ts';
import { OAuthError } from './errors.ts';
import type { Store } from '../store/port/index.ts';
import type { TraceSpan } from '../pipeline/trace.ts';

export interface PasswordCheckEnv {
  store: Store;
  /** Key of the keyed hash of the usernames the throttle counts. */
  secretKey: KeyObject;
  authServers: ReadonlyMap<string, { verify(username: string, password: string, span?: TraceSpan): Promise<string> }>;
}

/**
 * The username as the throttle counts it: NFKC, trimmed, lower-cased (so "Alice " and "ＡＬＩＣＥ"
 * share alice's attempts, whatever the authorization server makes of them), and keyed-hashed so
 * the store never holds what someone typed, a password pasted into the wrong field included.
 */
function keyedName(env: PasswordCheckEnv, username: string): string {
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
function attemptAccounts(env: PasswordCheckEnv, appId: string, username: string): Accounts {
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
 * The subject the server names for the username and password. Throws OAuthError: slow_down (429,
 * Retry-After) while the attempt must wait, invalid_grant for wrong credentials,
 * temporarily_unavailable when the server cannot judge.
 */
export async function checkPassword(
  env: PasswordCheckEnv,
  attempt: { appId: string; authServer: string; username: string; password: string; now: number; span?: TraceSpan | undefined },
): Promise<string> {
  const { store } = env;
  const { username, password, now } = attempt;
  const accounts = attemptAccounts(env, attempt.appId, username);
  const [userByApp, user, app] = accounts.map((a) => a.account) as [string, string, string];
  // Counted before the authorization server is asked, so parallel guesses cannot slip past.
  const retryAfter = await admitAttempt(store, accounts, now);
  if (retryAfter !== undefined) throw throttled(retryAfter);
  let subject: string;
  try {
    // The config loader guarantees that the server named is known.
    subject = await env.authServers.get(attempt.authServer)!.verify(username, password, attempt.span);
  } catch (err) {
    // A server that is down or too slow judged nothing: a user must not be slowed down by its outage.
    if (err instanceof OAuthError && err.code === 'temporarily_unavailable') await attemptUndecided(store, accounts);
    throw err;
  }
  // A success clears the username's counts and takes the attempt back from the app's failures.
  await attemptSucceeded(store, [userByApp, user], [app]);
  return subject;
}
