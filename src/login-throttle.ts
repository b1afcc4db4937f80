// Password guessing is slowed in one way wherever a password is checked (the portal's login, the
// password grant): every attempt is counted against its accounts before the password is
// checked, so parallel guesses cannot slip past; past a few failures each account must wait
// longer between attempts (exponential backoff), rather than being locked for a fixed time that
// anyone could renew to keep its owner out.
import type { AttemptAccount, BackoffRule, Store } from './store/port/index.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A portal account (by email): 5 failures, then 1 s, 2 s, 4 s … at most 15 minutes apart. */
export const PORTAL_LOGIN: BackoffRule = { free: 5, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, resetAfterMs: DAY };

/** A username tried by one app: that app slows itself down after 5 failures, and no other app. */
export const PASSWORD_USER_BY_APP: BackoffRule = { free: 5, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, resetAfterMs: DAY };

/**
 * A username across every app: a ceiling far above one app's, so only many apps together reach
 * it, and then with delays of at most a minute, never a lockout. It slows only the apps that have
 * failed for the username themselves (every attempt still counts): one with a clean record goes ahead.
 */
export const PASSWORD_USER: BackoffRule = { free: 50, baseDelayMs: SECOND, maxDelayMs: MINUTE, resetAfterMs: DAY };

/** One app trying many usernames (credential stuffing): 50 failures, then it slows down, itself only. */
export const PASSWORD_APP: BackoffRule = { free: 50, baseDelayMs: SECOND, maxDelayMs: 15 * MINUTE, resetAfterMs: 15 * MINUTE };

/** Requests from one client address that make the portal send mail: 10, then one an hour. */
export const MAIL_REQUESTS: BackoffRule = { free: 10, baseDelayMs: HOUR, maxDelayMs: HOUR, resetAfterMs: HOUR };

/** Requests to mail one address, from anywhere: 5, then one an hour. */
export const MAIL_TO: BackoffRule = { free: 5, baseDelayMs: HOUR, maxDelayMs: HOUR, resetAfterMs: HOUR };

export type Accounts = readonly AttemptAccount[];

/**
 * Counts the attempt against every account, or none when one of them must still wait: then
 * resolves to the seconds to wait (for Retry-After). Undefined: counted, go ahead.
 */
export async function admitAttempt(store: Store, accounts: Accounts, now: number): Promise<number | undefined> {
  const result = await store.throttles.countAttempts(accounts, now);
  return result.allowed ? undefined : Math.max(1, Math.ceil((result.retryAt - now) / SECOND));
}

/** A right password: the accounts in `clear` start over, the others get the attempt back. */
export async function attemptSucceeded(store: Store, clear: readonly string[], takeBack: readonly string[] = []): Promise<void> {
  for (const account of clear) await store.throttles.clearLoginFailures(account);
  for (const account of takeBack) await store.throttles.takeBackLoginFailure(account);
}

/** An attempt nobody could judge (the authorization server was down or too slow) counts against no account. */
export async function attemptUndecided(store: Store, accounts: Accounts): Promise<void> {
  for (const { account } of accounts) await store.throttles.takeBackLoginFailure(account);
}

/** "try again in 4 seconds", "… in 15 minutes". */
export function waitText(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}
