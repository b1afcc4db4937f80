// An authorization request (RFC 6749 §4.1.1, OAuth 2.1 §4.1.1, RFC 7636 §4.3), read from the
// authorization endpoint's query or a pushed request's form, and checked in the order that decides
// where a refusal may go: until the app and its redirect URI are known good, nothing is sent to
// the redirect URI (§4.1.2.1: that would make the gateway an open redirector); after, every
// refusal goes there with `error`, `state` and `iss`.
import type { ProductSettings } from '../../config/load.ts';
import { CLIENT_KEY } from '../../crypto.ts';
import type { Client, Store } from '../../store/port/index.ts';
import { unusableBecause } from '../client-auth.ts';
import { OAuthError } from '../errors.ts';
import { scopeList } from '../token.ts';
import { redirectUriMatches } from '../redirect-uris.ts';

/** A request the gateway will act on: the app, where the user goes back, and what the code will be bound to. */
export interface AuthorizationRequest {
  /** The key (client_id) the request names. */
  clientId: string;
  appId: string;
  product: string;
  redirectUri: string;
  /** Whether the request named the redirect URI (OAuth 2.1 §4.1.3: then the token request must name it too). */
  redirectUriNamed: boolean;
  /** The scopes asked for; the app's whole scope when none were. */
  scope: readonly string[];
  state: string | undefined;
  /** The S256 code_challenge. */
  challenge: string;
}

/**
 * A refusal. `redirectUri` set: it goes to the app there (§4.1.2.1); unset: the app or its
 * redirect URI is in doubt, and the user sees a page.
 */
export class AuthorizationError extends OAuthError {
  redirectUri: string | undefined;
  state: string | undefined;
  constructor(code: string, description: string, to?: { redirectUri: string; state: string | undefined }) {
    super(400, code, description);
    this.redirectUri = to?.redirectUri;
    this.state = to?.state;
  }
}

/** RFC 7636 §4.2: BASE64URL(SHA-256(verifier)) is 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE = 2048;

export interface RequestSite {
  store: Store;
  products: ReadonlyMap<string, ProductSettings>;
  now: number;
  /** 'query': the authorization endpoint's own; 'pushed': a request pushed to /oauth2/par. */
  via: 'query' | 'pushed';
}

/**
 * The app and redirect URI first, with page errors; then the rest, with errors sent to the app.
 * `params` are single-valued (a repeated one was refused before).
 */
export async function readAuthorizationRequest(params: ReadonlyMap<string, string>, site: RequestSite): Promise<{ request: AuthorizationRequest; client: Client; product: ProductSettings }> {
  const clientId = params.get('client_id');
  if (clientId === undefined) throw new AuthorizationError('invalid_request', 'the request names no app (client_id is missing)');
  const client = CLIENT_KEY.test(clientId) ? await site.store.cache.findClient(clientId) : undefined;
  if (client === undefined) throw new AuthorizationError('invalid_client', 'the app this request names is not known here');
  if (unusableBecause(client, site.now) !== undefined)
    throw new AuthorizationError('invalid_client', 'the app this request names cannot sign users in now: it is disabled, waiting for approval, or its key was revoked');
  const { app } = client;
  const presented = params.get('redirect_uri');
  // OAuth 2.1 §2.3.2: without redirect_uri, an app with exactly one registered is sent there.
  const redirectUri = presented ?? (app.redirectUris.length === 1 ? app.redirectUris[0]! : undefined);
  if (redirectUri === undefined) throw new AuthorizationError('invalid_request', 'the request names no redirect_uri, and the app has registered more than one (or none)');
  if (!redirectUriMatches(app.redirectUris, redirectUri)) throw new AuthorizationError('invalid_request', 'the redirect_uri of this request is not one the app registered');

  const state = params.get('state');
  const to = { redirectUri, state: state !== undefined && state.length <= MAX_STATE ? state : undefined };
  const refuse = (code: string, description: string) => new AuthorizationError(code, description, to);
  if (state !== undefined && state.length > MAX_STATE) throw refuse('invalid_request', `state must be at most ${MAX_STATE} characters`);
  const product = site.products.get(app.product);
  if (product?.authorization === undefined) throw refuse('unauthorized_client', "the app's API product does not offer the authorization_code grant");
  if (site.via === 'query' && product.authorization.requirePar) throw refuse('invalid_request', 'this app must push its authorization requests to /oauth2/par first (RFC 9126)');
  if (params.has('request')) throw refuse('request_not_supported', 'request objects are not supported; push the request to /oauth2/par instead');
  const responseType = params.get('response_type');
  if (responseType === undefined) throw refuse('invalid_request', 'response_type is missing');
  if (responseType !== 'code') throw refuse('unsupported_response_type', 'response_type must be code');
  const responseMode = params.get('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') throw refuse('invalid_request', 'response_mode must be query');
  const challenge = params.get('code_challenge');
  if (challenge === undefined) throw refuse('invalid_request', 'code_challenge is missing: PKCE with S256 is required');
  // RFC 7636 §4.3: an absent method means plain, which OAuth 2.1 refuses like a named one.
  if (params.get('code_challenge_method') !== 'S256') throw refuse('invalid_request', 'code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(challenge)) throw refuse('invalid_request', 'code_challenge must be 43 base64url characters (S256)');
  const available = app.scopes ?? product.scopes;
  const asked = params.get('scope');
  const scope = asked === undefined ? [...available] : scopeList(asked);
  const unknown = scope.find((s) => !available.includes(s));
  if (unknown !== undefined) throw refuse('invalid_scope', `scope '${unknown.slice(0, 64)}' is not available to this app`);
  return { request: { clientId, appId: app.id, product: product.name, redirectUri, redirectUriNamed: presented !== undefined, scope, state, challenge }, client, product };
}

/** Where the app gets the answer (§4.1.2, RFC 9207 §2): its redirect URI with the parameters added to its query. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.href;
}
