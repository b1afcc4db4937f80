// The store port: the narrow set of operations the gateway needs from durable state.
// Every driver implements it and runs the contract suite in test/store/contract.ts.

export type Status = 'active' | 'disabled';
export type CredentialStatus = 'approved' | 'revoked';
export type TokenKind = 'access' | 'refresh';

export interface Developer {
  id: string;
  email: string;
  name: string;
  status: Status;
  createdAt: number;
}

export interface App {
  id: string;
  developerId: string;
  developerEmail: string;
  name: string;
  product: string;
  status: Status;
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

export interface Store {
  createDeveloper(input: { email: string; name: string; now: number }): Promise<Developer>;
  findDeveloper(email: string): Promise<Developer | undefined>;
  listDevelopers(): Promise<Developer[]>;
  /** Also invalidates every token issued to the developer's apps while disabled. */
  setDeveloperStatus(email: string, status: Status): Promise<Developer | undefined>;

  /** Creates the app and its first credential atomically; ConflictError on a duplicate name. */
  createApp(input: { developerId: string; name: string; product: string; key: string; secretHash: Buffer; now: number }): Promise<App>;
  findApp(developerEmail: string, name: string): Promise<App | undefined>;
  findAppByKey(key: string): Promise<App | undefined>;
  listApps(filter?: { developerEmail?: string }): Promise<App[]>;
  setAppStatus(appId: string, status: Status): Promise<App | undefined>;
  listCredentials(appId: string): Promise<Credential[]>;
  revokeCredential(key: string): Promise<boolean>;
  findClient(key: string): Promise<Client | undefined>;

  /** Durable when the promise resolves. */
  saveTokens(records: readonly TokenRecord[]): Promise<void>;
  /**
   * The token if it is an unexpired, unrevoked access token of an active credential, app and
   * developer. A driver answers at once, without a promise, when the answer is in its memory:
   * that is every call but the first for a token, on the path every proxied request takes.
   */
  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined | Promise<ActiveToken | undefined>;
  /** Atomically marks a refresh token used and saves its successors; reuse revokes the whole family. */
  rotateRefreshToken(request: RotateRequest): Promise<RotateResult>;
  /** Removes expired tokens and ended quota windows; resolves to the number of tokens removed. */
  purgeExpired(now: number): Promise<number>;

  /** Quota windows still open at `now`, as last saved. */
  loadQuotaWindows(now: number): Promise<QuotaWindow[]>;
  saveQuotaWindows(windows: readonly QuotaWindow[]): Promise<void>;

  close(): Promise<void>;
}

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: 'conflict';
  constructor(code: 'conflict', message: string) {
    super(message);
    this.code = code;
  }
}
