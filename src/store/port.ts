// The store port: the narrow set of operations the gateway needs from durable state.
// Every driver implements it and runs the contract suite in test/store/contract.ts.

export type Status = 'active' | 'disabled';
/** Whether an operator let the app use its keys: apps registered in the portal for a product with `approval: manual` start pending. */
export type Approval = 'approved' | 'pending';
export type CredentialStatus = 'approved' | 'revoked';
export type TokenKind = 'access' | 'refresh';

export interface Developer {
  id: string;
  email: string;
  name: string;
  status: Status;
  /**
   * Whether the developer proved the email address: through the mailed link, a password reset, or
   * an invitation; an operator's developers are vouched for. An unverified one registers no app.
   */
  verified: boolean;
  createdAt: number;
}

/** What a mailed link is for: confirming a sign-up's address, or setting a new password. */
export type EmailTokenPurpose = 'verify' | 'reset';

export interface App {
  id: string;
  developerId: string;
  developerEmail: string;
  name: string;
  product: string;
  status: Status;
  approval: Approval;
  createdAt: number;
}

export interface Credential {
  key: string;
  appId: string;
  status: CredentialStatus;
  /** Epoch ms after which the secret no longer authenticates; null: no expiry. */
  expiresAt: number | null;
  createdAt: number;
}

/** Whether a key still authenticates: approved, and the overlap after a rotation, if any, not over. */
export function isLive(c: Credential, now: number): boolean {
  return c.status === 'approved' && (c.expiresAt === null || c.expiresAt > now);
}

/** What client authentication needs: the credential, its app and the app's developer. */
export interface Client {
  credential: Credential;
  secretHash: Buffer;
  app: App;
  developerStatus: Status;
}

export interface TokenRecord {
  /** The token's digest (its public 16-byte id, then its SHA-256); the token itself is never stored. */
  hash: Buffer;
  kind: TokenKind;
  appId: string;
  key: string;
  product: string;
  /** Space-delimited granted scopes (RFC 6749 §3.3). */
  scope: string;
  subject: string | null;
  /** Every token descending from one grant shares a family; reuse of a rotated refresh token revokes it. */
  family: string;
  issuedAt: number;
  expiresAt: number;
}

/** An access token whose token, credential, app and developer were all valid when read. */
export interface ActiveToken extends TokenRecord {
  appName: string;
  developerEmail: string;
}

export interface NewTokenHashes {
  accessHash: Buffer;
  accessExpiresAt: number;
  refreshHash: Buffer;
  refreshExpiresAt: number;
}

export interface RotateRequest extends NewTokenHashes {
  hash: Buffer;
  appId: string;
  now: number;
  /** The narrower scope asked for; undefined keeps the refresh token's scope. */
  scope: readonly string[] | undefined;
  /** A spent token presented again within this many ms of its rotation is refused without revoking its family. */
  reuseGraceMs?: number;
}

export type RotateResult =
  | { ok: true; previous: TokenRecord; scope: string }
  | { ok: false; reason: 'invalid' | 'reused' | 'scope' };

/** One quota counter: the calls counted in [start, end), and in the window just before (rolling quotas). */
export interface QuotaWindow {
  key: string;
  start: number;
  end: number;
  count: number;
  previous: number;
}

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

/** What createApp needs: the app, its first credential, and the limit on the developer's apps. */
export interface NewApp {
  developerId: string;
  name: string;
  product: string;
  key: string;
  secretHash: Buffer;
  now: number;
  approval?: Approval;
  maxAppsOfDeveloper?: number;
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

/** Calls of one app in one hour (`hour`: epoch ms of the hour's start). */
export interface UsageCount {
  appId: string;
  hour: number;
  count: number;
}

export interface Store {
  /**
   * With `passwordHash`, the developer can log in to the portal at once (a sign-up). `verified`
   * defaults to true (an operator's developer); an open sign-up passes false.
   */
  createDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): Promise<Developer>;
  /**
   * If an unverified developer holds the email: deletes it with its apps (credentials, tokens,
   * usage), sessions and mailed links, and creates a verified developer for the email, without a
   * password, in one transaction. Undefined (and nothing changed) otherwise.
   */
  replaceUnverifiedDeveloper(input: { email: string; name: string; now: number }): Promise<Developer | undefined>;
  findDeveloper(email: string): Promise<Developer | undefined>;
  findDeveloperById(id: string): Promise<Developer | undefined>;
  listDevelopers(): Promise<Developer[]>;
  /** Disabling also revokes every token issued to the developer's apps and ends every portal session; enabling brings neither back. */
  setDeveloperStatus(email: string, status: Status): Promise<Developer | undefined>;

  /** The developer's portal password hash: null when none is set yet, undefined when there is no such developer. */
  findPasswordHash(email: string): Promise<string | null | undefined>;
  /** Sets the password hash; resolves to whether the developer exists. */
  setPasswordHash(email: string, hash: string): Promise<boolean>;
  /** Gives the developer a one-time invitation (the SHA-256 of its code), replacing any earlier one. */
  setInvitation(email: string, codeHash: Buffer, expiresAt: number): Promise<boolean>;
  /**
   * Sets the password if the invitation matches and has not expired, spends it, marks the
   * developer verified (the code reached them) and ends the developer's sessions, in one transaction. Undefined when the invitation does not hold.
   */
  acceptInvitation(input: { email: string; codeHash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined>;
  /** Keeps a mailed link's token (its SHA-256), replacing the developer's earlier one for the same purpose. */
  saveEmailToken(input: { hash: Buffer; developerId: string; purpose: EmailTokenPurpose; now: number; expiresAt: number }): Promise<void>;
  /**
   * Spends an unexpired confirmation token of this developer and marks the developer verified, in
   * one transaction; undefined when the token does not hold.
   */
  confirmEmail(input: { hash: Buffer; developerId: string; now: number }): Promise<Developer | undefined>;
  /**
   * Spends an unexpired reset token: sets the password, marks the developer verified (the link
   * proved the address), and ends every session of theirs, in one transaction; undefined when the
   * token does not hold.
   */
  resetPassword(input: { hash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined>;
  /**
   * Starts a session only while the developer is active and `passwordHash` is still their
   * password: a login checked before a reset, a password change or the account's replacement
   * (scrypt takes a while, and waits its turn) starts nothing after it. False: nothing started.
   */
  createSession(input: { idHash: Buffer; developerId: string; passwordHash: string; now: number; expiresAt: number }): Promise<boolean>;
  /** The session's developer, if the session is unexpired and the developer active and confirmed. */
  findSession(idHash: Buffer, now: number): Promise<Developer | undefined>;
  deleteSession(idHash: Buffer): Promise<void>;
  /** Ends every session of the developer (a password change). */
  deleteSessions(developerId: string): Promise<void>;
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

  /**
   * Creates the app (approved unless `approval` says otherwise) and its first credential
   * atomically. StoreError 'conflict' on a duplicate name; 'limit' when the developer already
   * holds `maxAppsOfDeveloper` apps.
   */
  createApp(input: NewApp): Promise<App>;
  findApp(developerEmail: string, name: string): Promise<App | undefined>;
  findAppByKey(key: string): Promise<App | undefined>;
  findAppById(id: string): Promise<App | undefined>;
  listApps(filter?: { developerEmail?: string }): Promise<App[]>;
  setAppStatus(appId: string, status: Status): Promise<App | undefined>;
  setAppApproval(appId: string, approval: Approval): Promise<App | undefined>;
  listCredentials(appId: string): Promise<Credential[]>;
  revokeCredential(key: string): Promise<boolean>;
  /**
   * Adds a credential to the app and gives each of its other approved credentials an expiry of
   * `overlapUntil` at the latest: they keep working until then, and so do their tokens.
   */
  rotateCredential(input: { appId: string; key: string; secretHash: Buffer; now: number; overlapUntil: number }): Promise<void>;
  /**
   * Deletes the app, its credentials, tokens and usage; its tokens stop working at once. With
   * `onlyIfActive`, only if the app and its developer are active (false otherwise).
   */
  deleteApp(appId: string, options?: { onlyIfActive?: boolean }): Promise<boolean>;
  findClient(key: string): Promise<Client | undefined>;

  /** Durable when the promise resolves. */
  saveTokens(records: readonly TokenRecord[]): Promise<void>;
  /**
   * The token if it is an unexpired, unrevoked access token of an active credential, app and
   * developer. A driver answers at once, without a promise, when the answer is in its memory:
   * that is every call but the first for a token, on the path every proxied request takes.
   */
  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined | Promise<ActiveToken | undefined>;
  /**
   * RFC 7009: revokes the token's whole family (a refresh token with every access token of its
   * grant) if the token is the app's; false for an unknown token or another app's.
   */
  revokeToken(hash: Buffer, appId: string, now: number): Promise<boolean>;
  /** Atomically marks a refresh token used and saves its successors; reuse revokes the whole family. */
  rotateRefreshToken(request: RotateRequest): Promise<RotateResult>;
  /** Removes expired tokens and ended quota windows; resolves to the number of tokens removed. */
  purgeExpired(now: number): Promise<number>;

  /** Quota windows still open at `now`, as last saved. */
  loadQuotaWindows(now: number): Promise<QuotaWindow[]>;
  saveQuotaWindows(windows: readonly QuotaWindow[]): Promise<void>;

  /** Adds calls to the apps' hourly counts. */
  addUsage(counts: readonly UsageCount[]): Promise<void>;
  /** The app's hourly counts from `fromHour` on, oldest first; hours without calls are absent. */
  usage(appId: string, fromHour: number): Promise<UsageCount[]>;

  close(): Promise<void>;
}

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: 'conflict' | 'limit';
  constructor(code: 'conflict' | 'limit', message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The store cannot answer now: another process holds its lock past the busy timeout, or its
 * database is read-only, full or gone. The call may succeed later; every surface answers 503.
 */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}
