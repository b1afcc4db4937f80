import { accessToken, grantRecords, mintAccess, signingKeyFor, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantEnv, GrantRequest } from './grant.ts';

export const grantType = 'client_credentials';
export const parameters: ReadonlySet<string> = new Set();

/** RFC 6749 §4.4: an access token for the client itself, never a refresh token. */
export async function handle({ client, product, scope, now, cnf }: GrantRequest, env: GrantEnv): Promise<TokenResponseBody> {
  const granted = (scope ?? client.app.scopes ?? product.scopes).join(' ');
  const key = signingKeyFor(env.signing, product, now);
  const minted = mintAccess(product, now);
  await env.store.tokens.saveTokens(grantRecords(client, product, minted, { scope: granted, subject: null, now, cnf }));
  const access = accessToken(env.signing, key, minted, { client, product, scope: granted, subject: null, now, cnf });
  return tokenBody(product, { access }, granted, scope, cnf);
}
