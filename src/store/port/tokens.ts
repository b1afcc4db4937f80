// Tokens: access and refresh tokens by their digest, refresh rotation, revocation by family.

export type TokenKind = 'access' | 'refresh';

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
