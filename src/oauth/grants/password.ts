import { checkPassword } from '../password-check.ts';
import { invalidRequest } from '../errors.ts';
import { accessToken, grantRecords, mintAccess, mintPair, signingKeyFor, tokenBody, type TokenResponseBody } from '../tokens.ts';
import type { GrantEnv, GrantRequest } from './grant.ts';

export const grantType = 'password';
export const parameters: ReadonlySet<string> = new Set(['username', 'password']);

/**
 * RFC 6749 §4.3, as the seed's §4.1 rule 2 has it: the client is already authenticated; the
 * configured authorization server checks the username and password, and only then are tokens
 * minted. A refresh token comes with them when the product enables the refresh_token grant.
 */
export async function handle({ form, client, product, scope, now, cnf, span }: GrantRequest, env: GrantEnv): Promise<TokenResponseBody> {
  const username = form.get('username');
  const password = form.get('password');
  if (username === undefined) throw invalidRequest("parameter 'username' is required");
  if (password === undefined) throw invalidRequest("parameter 'password' is required");
  // The config loader guarantees a product with the password grant names a known server.
  const subject = await checkPassword(env, { appId: client.app.id, authServer: product.authServer!, username, password, now, span });
  const granted = (scope ?? client.app.scopes ?? product.scopes).join(' ');
  const key = signingKeyFor(env.signing, product, now);
  const minted = product.grants.has('refresh_token') ? mintPair(product, now) : mintAccess(product, now);
  await env.store.tokens.saveTokens(grantRecords(client, product, minted, { scope: granted, subject, now, cnf }));
  const access = accessToken(env.signing, key, minted, { client, product, scope: granted, subject, now, cnf });
  return tokenBody(product, { ...minted, access }, granted, scope, cnf);
}
