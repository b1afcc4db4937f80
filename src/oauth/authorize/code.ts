// Authorization codes (RFC 6749 §4.1.2, OAuth 2.1 §4.1.2): short-lived, single use, bound to the
// app, the redirect URI and the PKCE challenge. A code is stored as the grant's first refresh
// token would be (src/store/port/tokens.ts RotateRequest): redeemed once into its successors, its
// second redemption revoking them. It is stored under the digest of the code and its binding, so
// only the same redirect URI and a verifier of the same challenge find it.
import { newToken, orderedId, PREFIX } from '../../crypto.ts';
import type { ProductSettings } from '../../config/load.ts';
import type { Store } from '../../store/port/index.ts';

/**
 * What a code is bound to besides its app: the token request must present the same. `redirectUri`
 * is '' when the authorization request named none (its app has one): the token request names none either.
 */
export const codeBinding = (redirectUri: string, challenge: string) => `${redirectUri}\n${challenge}`;

export interface CodeGrant {
  appId: string;
  /** The key (client_id) the authorization request named. */
  key: string;
  product: ProductSettings;
  /** Space-delimited, as the user granted. */
  scope: string;
  subject: string;
  /** As the authorization request named it; '' when it named none. */
  redirectUri: string;
  /** The S256 code_challenge. */
  challenge: string;
  now: number;
}

/** Saves a new code and returns it; durable when the promise resolves. */
export async function issueCode(store: Store, grant: CodeGrant): Promise<string> {
  const { token, digest } = newToken(PREFIX.code, codeBinding(grant.redirectUri, grant.challenge));
  const codeLifetimeMs = grant.product.authorization!.codeLifetimeMs;
  await store.tokens.saveTokens([
    {
      hash: digest,
      kind: 'refresh',
      appId: grant.appId,
      key: grant.key,
      product: grant.product.name,
      scope: grant.scope,
      subject: grant.subject,
      // The family of every token the code will give: its second redemption revokes them all.
      family: orderedId().toString('hex'),
      issuedAt: grant.now,
      expiresAt: grant.now + codeLifetimeMs,
    },
  ]);
  return token;
}
