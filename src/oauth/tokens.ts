// Minting: opaque tokens with a prefix, their SHA-256 for the store, and the RFC 6749 §5.1 body.
// A product with `accessTokenFormat: jwt` gets a JWT access token instead (src/oauth/signing/jwt.ts),
// stored the same way under the digest of its jti, so that revocation and introspection treat it
// as they treat an opaque one.
import { newToken, orderedId, PREFIX } from '../crypto.ts';
import type { ProductSettings } from '../config/load.ts';
import { bindingOf, type Client, type Confirmation, type TokenRecord } from '../store/port/index.ts';
import { temporarilyUnavailable } from './errors.ts';
import type { KeyRing } from './signing/key-ring.ts';
import { newJti, signAccessToken } from './signing/jwt.ts';
import type { SigningKey } from './signing/keys.ts';

export interface TokenResponseBody {
  access_token: string;
  /** DPoP for a token bound to a DPoP key (RFC 9449 §5); a certificate-bound token stays Bearer (RFC 8705 §3). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token?: string;
  /** A string of seconds, as in the seed's only payload. */
  refresh_token_expires_in?: string;
  scope?: string;
}

export interface Minted {
  /** The opaque token; for a JWT, its jti (the token is signed once the grant is saved). */
  access: string;
  accessHash: Buffer;
  accessExpiresAt: number;
  refresh: string;
  refreshHash: Buffer;
  refreshExpiresAt: number;
}

export function mintAccess(product: ProductSettings, now: number): Pick<Minted, 'access' | 'accessHash' | 'accessExpiresAt'> {
  if (product.accessTokenFormat === 'jwt') {
    const { jti, digest } = newJti();
    // A JWT's exp is in whole seconds: its record expires at the same instant.
    return { access: jti, accessHash: digest, accessExpiresAt: (Math.floor(now / 1000) + product.accessTokenLifetime) * 1000 };
  }
  const { token, digest } = newToken(PREFIX.access);
  return { access: token, accessHash: digest, accessExpiresAt: now + product.accessTokenLifetime * 1000 };
}

/** What signs JWT access tokens: the key ring, and the issuer they name. */
export interface AccessTokenSigning {
  keys: KeyRing;
  issuer: string | undefined;
}

/**
 * The key that will sign a JWT product's token, found before anything is written: a grant must not
 * spend a refresh token, or save a token, that it then cannot hand out. Undefined for an opaque product.
 */
export function signingKeyFor(signing: AccessTokenSigning, product: ProductSettings, now: number): SigningKey | undefined {
  if (product.accessTokenFormat !== 'jwt') return undefined;
  const key = signing.keys.signer(now);
  if (key === undefined || signing.issuer === undefined) throw temporarilyUnavailable('no signing key is ready yet');
  return key;
}

/** The access token the client gets: the opaque token as minted, or the JWT signed over the grant as saved. */
export function accessToken(
  signing: AccessTokenSigning,
  key: SigningKey | undefined,
  minted: Pick<Minted, 'access' | 'accessExpiresAt'>,
  grant: { client: Client; product: ProductSettings; scope: string; subject: string | null; now: number; cnf: Confirmation | undefined },
): string {
  if (key === undefined) return minted.access;
  return signAccessToken(key, signing.issuer!, {
    key: grant.client.credential.key,
    appName: grant.client.app.name,
    product: grant.product,
    scope: grant.scope,
    subject: grant.subject,
    jti: minted.access,
    issuedAt: grant.now,
    expiresAt: minted.accessExpiresAt,
    cnf: grant.cnf,
  });
}

export function mintPair(product: ProductSettings, now: number): Minted {
  const { token, digest } = newToken(PREFIX.refresh);
  return { ...mintAccess(product, now), refresh: token, refreshHash: digest, refreshExpiresAt: now + product.refreshTokenLifetime * 1000 };
}

/** RFC 6749 §5.1; `scope` is included when it differs from what was asked for (§3.3). */
export function tokenBody(
  product: ProductSettings,
  minted: { access: string; refresh?: string },
  granted: string,
  requested: readonly string[] | undefined,
  cnf: Confirmation | undefined,
): TokenResponseBody {
  const type = bindingOf(cnf) === 'dpop' ? 'DPoP' : 'Bearer';
  const body: TokenResponseBody = { access_token: minted.access, token_type: type, expires_in: product.accessTokenLifetime };
  if (minted.refresh !== undefined) {
    body.refresh_token = minted.refresh;
    body.refresh_token_expires_in = String(product.refreshTokenLifetime);
  }
  if (granted !== (requested?.join(' ') ?? '')) body.scope = granted;
  return body;
}

/**
 * The records of a new grant: a new family holding the access token and, if minted, the refresh
 * token. Bound to `cnf`: the access token always; the refresh token when the client is public
 * (RFC 9449 §5, RFC 8705 §4), a confidential client's being bound to its authentication already.
 */
export function grantRecords(
  client: Client,
  product: ProductSettings,
  minted: Pick<Minted, 'accessHash' | 'accessExpiresAt'> & Partial<Minted>,
  grant: { scope: string; subject: string | null; now: number; cnf: Confirmation | undefined },
): TokenRecord[] {
  const { scope, subject, now, cnf } = grant;
  const base = { appId: client.app.id, key: client.credential.key, product: product.name, scope, subject, family: orderedId().toString('hex'), issuedAt: now };
  const bound = cnf === undefined ? {} : { cnf };
  const records: TokenRecord[] = [{ ...base, ...bound, hash: minted.accessHash, kind: 'access', expiresAt: minted.accessExpiresAt }];
  if (minted.refreshHash !== undefined && minted.refreshExpiresAt !== undefined) {
    records.push({ ...base, ...(bindsRefresh(client) ? bound : {}), hash: minted.refreshHash, kind: 'refresh', expiresAt: minted.refreshExpiresAt });
  }
  return records;
}

/** Whether a client's refresh tokens are bound as its access tokens are: a public client's (RFC 9449 §5). */
export function bindsRefresh(client: Client): boolean {
  return client.app.type === 'public';
}
