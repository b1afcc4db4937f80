import { PREFIX, tokenDigest } from '../../crypto.ts';
import { invalidGrant, invalidRequest, invalidScope } from '../errors.ts';
import { accessToken, bindsRefresh, mintPair, signingKeyFor, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantEnv, GrantRequest } from './grant.ts';

export const grantType = 'refresh_token';
export const parameters: ReadonlySet<string> = new Set(['refresh_token']);

/**
 * RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every use returns a new access token and a new
 * refresh token, atomically; presenting an already rotated refresh token revokes its family.
 * The scope can narrow, never widen.
 */
export async function handle({ form, client, product, scope, now, cnf }: GrantRequest, env: GrantEnv): Promise<TokenResponseBody> {
  const presented = form.get('refresh_token');
  if (presented === undefined) throw invalidRequest("parameter 'refresh_token' is required");
  const hash = tokenDigest(PREFIX.refresh, presented);
  if (hash === undefined) throw invalidGrant('the refresh token is invalid, expired or revoked', 'not a refresh token of this gateway');
  const key = signingKeyFor(env.signing, product, now);
  const minted = mintPair(product, now);
  const result = await env.store.tokens.rotateRefreshToken({
    hash,
    appId: client.app.id,
    now,
    scope,
    reuseGraceMs: product.refreshReuseGraceMs,
    ...(cnf === undefined ? {} : { cnf }),
    bindRefresh: bindsRefresh(client),
    accessHash: minted.accessHash,
    accessExpiresAt: minted.accessExpiresAt,
    refreshHash: minted.refreshHash,
    refreshExpiresAt: minted.refreshExpiresAt,
  });
  if (!result.ok) {
    if (result.reason === 'scope') throw invalidScope('the requested scope exceeds the scope of the refresh token');
    throw invalidGrant('the refresh token is invalid, expired or revoked', result.reason === 'reused' ? 'reuse of a rotated refresh token; family revoked' : undefined);
  }
  const access = accessToken(env.signing, key, minted, { client, product, scope: result.scope, subject: result.previous.subject, now, cnf });
  return tokenBody(product, { ...minted, access }, result.scope, scope, cnf);
}
