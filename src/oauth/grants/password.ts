import { orderedId } from '../../crypto.ts';
import type { Deps } from '../../deps.ts';
import { invalidRequest } from '../errors.ts';
import { mintAccess, mintPair, tokenBody, type TokenResponseBody } from '../tokens.ts';
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
  if (username === undefined) throw invalidRequest('parameter "username" is required');
  if (password === undefined) throw invalidRequest('parameter "password" is required');
  const server = deps.authServers.get(product.authServer ?? '');
  if (server === undefined) throw new Error(`product ${product.name} has no authorization server`);

  const subject = await server.verify(username, password);
  const granted = (scope ?? product.scopes).join(' ');
  const base = { appId: client.app.id, key: client.credential.key, product: product.name, scope: granted, subject, family: orderedId().toString('hex'), issuedAt: now };
  if (!product.grants.has('refresh_token')) {
    const minted = mintAccess(product, now);
    await deps.store.saveTokens([{ ...base, hash: minted.accessHash, kind: 'access', expiresAt: minted.accessExpiresAt }]);
    return tokenBody(product, minted, granted, scope);
  }
  const minted = mintPair(product, now);
  await deps.store.saveTokens([
    { ...base, hash: minted.accessHash, kind: 'access', expiresAt: minted.accessExpiresAt },
    { ...base, hash: minted.refreshHash, kind: 'refresh', expiresAt: minted.refreshExpiresAt },
  ]);
  return tokenBody(product, minted, granted, scope);
}
