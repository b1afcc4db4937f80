// Tokens: access and refresh tokens by their digest, refresh rotation, revocation by family.

export type TokenKind = 'access' | 'refresh';

/**
 * What a sender-constrained token is bound to (RFC 7800 `cnf`): the SHA-256 thumbprint of a DPoP
 * key (RFC 9449 §6, `jkt`) or of a client certificate (RFC 8705 §3.1, `x5t#S256`).
 */
export type Confirmation = { jkt: string } | { 'x5t#S256': string };

/** How a token is bound: to a DPoP key (RFC 9449) or a client certificate (RFC 8705); undefined for a bearer token. */
export function bindingOf(cnf: Confirmation | undefined): 'dpop' | 'mtls' | undefined {
  return cnf === undefined ? undefined : 'jkt' in cnf ? 'dpop' : 'mtls';
}

/** Whether two bindings are the same (both absent included). */
export function sameConfirmation(a: Confirmation | undefined, b: Confirmation | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return 'jkt' in a ? 'jkt' in b && a.jkt === b.jkt : 'x5t#S256' in b && a['x5t#S256'] === b['x5t#S256'];
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
  /** Absent: a bearer token, which works for whoever holds it. */
  cnf?: Confirmation;
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

/**
 * A refresh token, or an authorization code (stored as a refresh token: spent once into its
 * successors, its reuse revoking them), redeemed. Without `refreshHash` no refresh token follows
 * (a code of a product without refresh_token).
 */
export interface RotateRequest extends Omit<NewTokenHashes, 'refreshHash' | 'refreshExpiresAt'> {
  refreshHash?: Buffer;
  refreshExpiresAt?: number;
  hash: Buffer;
  appId: string;
  now: number;
  /** The narrower scope asked for; undefined keeps the refresh token's scope. */
  scope: readonly string[] | undefined;
  /** A spent token presented again within this many ms of its rotation is refused without revoking its family. */
  reuseGraceMs?: number;
  /**
   * The key or certificate the client proved it holds, if any: the new access token is bound to it.
   * A refresh token that is bound is redeemed only with the same binding (RFC 9449 §5): otherwise
   * the answer is 'invalid', and nothing is spent.
   */
  cnf?: Confirmation;
  /** Whether the new refresh token is bound to `cnf` too (a public client's, RFC 9449 §5). */
  bindRefresh?: boolean;
}

/** The successors of a redeemed refresh token (or code): what they share, each with its binding. */
export function successorRecords(previous: TokenRecord, req: RotateRequest, scope: string): TokenRecord[] {
  const base = { appId: previous.appId, key: previous.key, product: previous.product, scope, subject: previous.subject, family: previous.family, issuedAt: req.now };
  const bound = req.cnf === undefined ? {} : { cnf: req.cnf };
  const records: TokenRecord[] = [{ ...base, ...bound, hash: req.accessHash, kind: 'access', expiresAt: req.accessExpiresAt }];
  if (req.refreshHash !== undefined) records.push({ ...base, ...(req.bindRefresh === true ? bound : {}), hash: req.refreshHash, kind: 'refresh', expiresAt: req.refreshExpiresAt! });
  return records;
}

export type RotateResult = { ok: true; previous: TokenRecord; scope: string } | { ok: false; reason: 'invalid' | 'reused' | 'scope' };

export interface TokenStore {
  /** Durable when the promise resolves. */
  saveTokens(records: readonly TokenRecord[]): Promise<void>;
  /**
   * The token if it is an unexpired, unrevoked access token of an active credential, app and
   * developer (its expiry cut to its key's, when the key's overlap ends first), read from the
   * driver; the gateway reads it through the TokenCache. A driver may answer without a promise.
   */
  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined | Promise<ActiveToken | undefined>;
  /**
   * RFC 7009: revokes the token's whole family (a refresh token with every access token of its
   * grant) if the token is the app's; false for an unknown token or another app's.
   */
  revokeToken(hash: Buffer, appId: string, now: number): Promise<boolean>;
  /** Atomically marks a refresh token used and saves its successors; reuse revokes the whole family. */
  rotateRefreshToken(request: RotateRequest): Promise<RotateResult>;
  /**
   * Revokes every family with an unexpired, unrevoked token of the app (access and refresh); the
   * app and its keys stay as they are. Resolves to the number of tokens revoked.
   */
  revokeAppTokens(appId: string, now: number): Promise<number>;
  /**
   * "Log this user out everywhere": revokes every family with an unexpired, unrevoked token issued
   * for `subject`, across every app. Resolves to the number of tokens revoked.
   */
  revokeSubjectTokens(subject: string, now: number): Promise<number>;
}
