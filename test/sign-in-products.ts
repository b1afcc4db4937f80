// Config parts for tests of apps that sign users in: two products with the authorization_code
// grant (one also with client_credentials), logging users in through the helpers' auth server
// `users`, beside the helpers' hello and orders, which do not.
import type { ConfigParts } from './helpers.ts';

export const SIGN_IN_PRODUCTS = `
  signin:
    routes: [hello]
    scopes: [profile]
    grants: [authorization_code, refresh_token]
    login: users
  mixed:
    routes: [hello]
    grants: [authorization_code, client_credentials]
    login: users
`;

/** The authorization_code grant needs the gateway's issuer. */
export const SIGN_IN_OAUTH = '  issuer: http://127.0.0.1';

export const SIGN_IN: ConfigParts = { products: SIGN_IN_PRODUCTS, oauth: SIGN_IN_OAUTH };
