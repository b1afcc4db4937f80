// Minting: opaque tokens with a prefix, their SHA-256 for the store, and the RFC 6749 §5.1 body.
import { newToken, orderedId, PREFIX } from '../crypto.ts';
import type { ProductSettings } from '../config/load.ts';
import type { Client, TokenRecord } from '../store/port/index.ts';

export interface TokenResponseBody {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  /** A string of seconds, as in the seed's only payload. */
  refresh_token_expires_in?: string;
  scope?: string;
}

export interface Minted {
  access: string;
  accessHash: Buffer;
  accessExpiresAt: number;
  refresh: string;
  refreshHash: Buffer;
  refreshExpiresAt: number;
}

export function mintAccess(product: ProductSettings, now: number): Pick<Minted, 'access' | 'accessHash' | 'accessExpiresAt'> {
  const { token, digest } = newToken(PREFIX.access);
  return { access: token, accessHash: digest, accessExpiresAt: now + product.accessTokenLifetime * 1000 };
}

export function mintPair(product: ProductSettings, now: number): Minted {
  const { token, digest } = newToken(PREFIX.refresh);
  return { ...mintAccess(product, now), refresh: token, refreshHash: digest, refreshExpiresAt: now + product.refreshTokenLifetime * 1000 };
}

/** RFC 6749 §5.1; `scope` is included when it differs from what was asked for (§3.3). */
export function tokenBody(product: ProductSettings, minted: { access: string; refresh?: string }, granted: string, requested: readonly string[] | undefined): TokenResponseBody {
  const body: TokenResponseBody = { access_token: minted.access, token_type: 'Bearer', expires_in: product.accessTokenLifetime };
  if (minted.refresh !== undefined) {
    body.refresh_token = minted.refresh;
    body.refresh_token_expires_in = String(product.refreshTokenLifetime);
  }
  if (granted !== (requested?.join(' ') ?? '')) body.scope = granted;
  return body;
}

/** The records of a new grant: a new family holding the access token and, if minted, the refresh token. */
export function grantRecords(
  client: Client,
  product: ProductSettings,
  minted: Pick<Minted, 'accessHash' | 'accessExpiresAt'> & Partial<Minted>,
  scope: string,
  subject: string | null,
  now: number,
): TokenRecord[] {
  const base = { appId: client.app.id, key: client.credential.key, product: product.name, scope, subject, family: orderedId().toString('hex'), issuedAt: now };
  const records: TokenRecord[] = [{ ...base, hash: minted.accessHash, kind: 'access', expiresAt: minted.accessExpiresAt }];
  if (minted.refreshHash !== undefined && minted.refreshExpiresAt !== undefined) {
    records.push({ ...base, hash: minted.refreshHash, kind: 'refresh', expiresAt: minted.refreshExpiresAt });
  }
  return records;
}
