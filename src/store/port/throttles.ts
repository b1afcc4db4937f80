// Throttles: attempts counted against accounts (portal logins, password grants, apps), with backoff.

/**
 * How attempts at one account (a portal email, a password-grant username, an app) are slowed:
 * `free` counted attempts, then each must come `baseDelayMs` × 2^(count − free) after the last,
 * at most `maxDelayMs`; once none came for `resetAfterMs`, the count starts over.
 */
export interface BackoffRule {
  free: number;
  baseDelayMs: number;
  maxDelayMs: number;
  resetAfterMs: number;
}

/** One account an attempt counts against. */
export interface AttemptAccount {
  account: string;
  rule: BackoffRule;
  /**
   * Another account of the same call: this one's wait then holds the attempt back only while
   * that one has attempts counted within its rule's window (cleared, or its attempts all taken
   * back, it is clean again); the attempt counts against this one either way. So a ceiling
   * shared by many parties slows those already failing and never keeps out one with a clean record.
   */
  gatesOnlyIfFailing?: string;
}

export type AttemptResult = { allowed: true } | { allowed: false; retryAt: number };

/** When the rule lets the next attempt through, after `count` counted attempts the last of which came at `lastAt`. */
export function nextAttemptAt(rule: BackoffRule, count: number, lastAt: number): number {
  if (count < rule.free) return -Infinity;
  return lastAt + Math.min(rule.maxDelayMs, rule.baseDelayMs * 2 ** Math.min(count - rule.free, 52));
}

export interface ThrottleStore {
  /**
   * Counts one attempt against every account given, atomically, if each one's rule lets it
   * through now (an account with `gatesOnlyIfFailing` only while the account it names has
   * attempts counted); otherwise counts none and resolves to when the latest of them would.
   * TypeError when `gatesOnlyIfFailing` names no account of the call.
   */
  countAttempts(accounts: readonly AttemptAccount[], now: number): Promise<AttemptResult>;
  clearLoginFailures(account: string): Promise<void>;
  /** Takes one counted attempt back (an attempt counted before it was known to succeed). */
  takeBackLoginFailure(account: string): Promise<void>;
}
