// What an app's client type and redirect URIs must be, given its product's grants: checked alike
// when the app is registered (CLI, portal, management API, apps-as-code) and when its redirect
// URIs are replaced.
import { MAX_REDIRECT_URIS, redirectUriProblem } from '../oauth/redirect-uris.ts';
import type { ClientType } from '../store/port/index.ts';
import { AdminError } from './errors.ts';

/** A URI as a message names it: quoted, and cut short when long (one may be 2000 characters). */
const named = (uri: string): string => JSON.stringify(uri.length > 100 ? `${uri.slice(0, 100)}…` : uri);

/** What the rules read of a product: its name and grants (the config's, or the management API's). */
export interface ProductGrants {
  name: string;
  grants: ReadonlySet<string>;
}

export const CLIENT_TYPES: readonly ClientType[] = ['confidential', 'public'];

export function requireClientType(value: string): ClientType {
  if (!(CLIENT_TYPES as readonly string[]).includes(value)) throw new AdminError('invalid_type', `an app's type is confidential or public, not "${value}"`);
  return value as ClientType;
}

/** Whether the product's apps send users to a redirect URI: only the authorization code grant does. */
export const signsUsersIn = (product: Pick<ProductGrants, 'grants'>): boolean => product.grants.has('authorization_code');

/**
 * OAuth 2.1 §2.1: a public client holds no secret, so of the grants it can have only the one whose
 * code PKCE binds to it; client_credentials and password authenticate the client by its secret.
 */
export function requireTypeFits(product: ProductGrants, type: ClientType): void {
  if (type === 'public' && !signsUsersIn(product)) {
    throw new AdminError(
      'public_client_grants',
      `a public app holds no secret, so it needs the authorization_code grant, and product "${product.name}" offers ${[...product.grants].join(', ')} only: register a confidential app`,
    );
  }
}

/**
 * The app's redirect URIs, each one an app may register (src/oauth/redirect-uris.ts), none twice,
 * at most MAX_REDIRECT_URIS. A public app, which has no grant but the authorization code, needs at
 * least one (RFC 6749 §3.1.2.2 as OAuth 2.1 makes it: registration is required); a confidential
 * app of a product with several grants may register none and use the others; an app of a product
 * without the authorization code grant takes none, since nothing would ever send a user to them.
 */
export function requireRedirectUris(product: ProductGrants, uris: readonly string[], type: ClientType): readonly string[] {
  if (uris.length > MAX_REDIRECT_URIS) throw new AdminError('invalid_redirect_uri', `an app has at most ${MAX_REDIRECT_URIS} redirect URIs, not ${uris.length}`);
  const seen = new Set<string>();
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) throw new AdminError('invalid_redirect_uri', `the redirect URI ${named(uri)} ${problem}`);
    if (seen.has(uri)) throw new AdminError('invalid_redirect_uri', `the redirect URI ${named(uri)} is listed twice`);
    seen.add(uri);
  }
  if (type === 'public' && uris.length === 0) {
    throw new AdminError(
      'redirect_uri_required',
      'a public app signs users in (the authorization_code grant, its only one): it needs at least one redirect URI, where users are sent back after signing in',
    );
  }
  if (!signsUsersIn(product) && uris.length > 0) {
    throw new AdminError('redirect_uri_not_allowed', `product "${product.name}" does not offer the authorization_code grant, the only one that sends users to a redirect URI: its apps take none`);
  }
  return [...uris];
}
