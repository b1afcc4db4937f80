import type { Deps } from '../../deps.ts';
import { invalidRequest } from '../errors.ts';
import { grantRecords, mintAccess, mintPair, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantRequest } from './grant.ts';

export const grantType = 'password';
export const parameters: ReadonlySet<string> = new Set(['username', 'password']);

/**
 * RFC 6749 §4.3, as the seed's §4.1 rule 2 has it: the client is already authenticated; the
 * configured authorization server checks the username and password, and only then are tokens
 * minted. A refresh token comes with them when the product enables the refresh_token grant.
 */
export async function handle({ form, client, product, scope, now }: GrantRequest, deps: Deps): Promise<TokenResponseBody> {
  const username = form.get('username');
  const password = form.get('password');
  if (username === undefined) throw invalidRequest("parameter 'username' is required");
  if (password === undefined) throw invalidRequest("parameter 'password' is required");
  // The config loader guarantees a product with the password grant names a known server.
  const subject = await deps.authServers.get(product.authServer!)!.verify(username, password);
  const granted = (scope ?? product.scopes).join(' ');
  const minted = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  await deps.store.saveTokens(grantRecords(client, product, minted, granted, subject, now));
  return tokenBody(product, minted, granted, scope);
}
