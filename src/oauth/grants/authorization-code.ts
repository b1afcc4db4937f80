import { createHash } from 'node:crypto';
import { PREFIX, tokenDigest } from '../../crypto.ts';
import { codeBinding } from '../authorize/code.ts';
import { invalidGrant, invalidRequest, invalidScope } from '../errors.ts';
import { accessToken, bindsRefresh, mintAccess, mintPair, signingKeyFor, tokenBody, type Minted, type TokenResponseBody } from '../tokens.ts';
import type { GrantEnv, GrantRequest } from './grant.ts';

export const grantType = 'authorization_code';
export const parameters: ReadonlySet<string> = new Set(['code', 'redirect_uri', 'code_verifier']);

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

const INVALID = 'the authorization code is invalid, expired or already used';

/**
 * RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6) as OAuth 2.1 has it. The code is stored under the
 * digest of the code bound to its redirect URI and challenge (src/oauth/authorize/code.ts): a code
 * presented with another redirect URI or verifier, or by another app, is not found. It is spent
 * once, into its access token (and refresh token, when the product rotates them); spent again, it
 * revokes every token issued from it (§10.5, RFC 9700 §4.2.4).
 */
export async function handle({ form, client, product, scope, now, cnf }: GrantRequest, env: GrantEnv): Promise<TokenResponseBody> {
  const code = form.get('code');
  // OAuth 2.1 §4.1.3: required when the authorization request named it; the code's binding says whether it did.
  const redirectUri = form.get('redirect_uri') ?? '';
  const verifier = form.get('code_verifier');
  if (code === undefined) throw invalidRequest("parameter 'code' is required");
  if (verifier === undefined) throw invalidRequest("parameter 'code_verifier' is required: every authorization code is bound to a PKCE challenge");
  if (!VERIFIER.test(verifier)) throw invalidRequest('code_verifier must be 43 to 128 unreserved characters (RFC 7636 section 4.1)');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const hash = tokenDigest(PREFIX.code, code, codeBinding(redirectUri, challenge));
  if (hash === undefined) throw invalidGrant(INVALID, 'not an authorization code of this gateway');
  const key = signingKeyFor(env.signing, product, now);
  const minted: Pick<Minted, 'access' | 'accessHash' | 'accessExpiresAt'> & Partial<Minted> = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  const result = await env.store.tokens.rotateRefreshToken({
    hash,
    appId: client.app.id,
    now,
    scope,
    ...(cnf === undefined ? {} : { cnf }),
    bindRefresh: bindsRefresh(client),
    accessHash: minted.accessHash,
    accessExpiresAt: minted.accessExpiresAt,
    ...(minted.refreshHash === undefined ? {} : { refreshHash: minted.refreshHash, refreshExpiresAt: minted.refreshExpiresAt! }),
  });
  if (!result.ok) {
    if (result.reason === 'scope') throw invalidScope('the requested scope exceeds the scope the user granted');
    throw invalidGrant(
      INVALID,
      result.reason === 'reused' ? 'authorization code used twice; the tokens issued from it are revoked' : "unknown, expired or another app's code, or another redirect_uri or code_verifier",
    );
  }
  const access = accessToken(env.signing, key, minted, { client, product, scope: result.scope, subject: result.previous.subject, now, cnf });
  return tokenBody(product, { ...minted, access }, result.scope, scope, cnf);
}
