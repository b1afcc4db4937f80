// The gateway as an OpenID Connect relying party (OpenID Connect Core §3.1, with PKCE and nonce)
// of one provider under `identityProviders`: openid-client does the protocol (discovery, the
// authorization URL, the code exchange, the ID token checked against the provider's JWKS, RFC 9207
// `iss` when the provider sends it); this file keeps what a login must match and turns every
// failure into one of three answers the flow knows how to show.
import * as oidc from 'openid-client';
import type { IdentityProviderSettings } from '../../config/load.ts';

/** What the provider's answer is checked against: kept in the transaction until it comes. */
export interface ProviderLoginState {
  state: string;
  nonce: string;
  verifier: string;
}

/**
 * Why a login at the provider did not give a user. unavailable: the provider could not be reached
 * or failed (a page; try again later). denied: the user or the provider refused (the app gets
 * access_denied). failed: its answer was wrong (a page; never trusted).
 */
export class ProviderLoginError extends Error {
  override readonly name = 'ProviderLoginError';
  readonly kind: 'unavailable' | 'denied' | 'failed';
  constructor(kind: 'unavailable' | 'denied' | 'failed', message: string, cause?: unknown) {
    super(message, { cause });
    this.kind = kind;
  }
}

export interface IdentityProviderClient {
  readonly name: string;
  /** Where to send the browser, and what the answer must match. `txId` leads the state, so the answer finds its transaction. */
  begin(txId: string): Promise<{ url: string; login: ProviderLoginState }>;
  /** The user's subject (the claim `subjectClaim` of the ID token) from the provider's answer at `callbackUrl`. */
  finish(callbackUrl: URL, login: ProviderLoginState): Promise<string>;
}

/** The transaction id in a state the gateway made: `<txId>.<random>`. */
export const transactionOfState = (state: string | undefined): string | undefined => state?.split('.', 1)[0];

export function createIdentityProviderClient(settings: IdentityProviderSettings, redirectUri: string): IdentityProviderClient {
  let discovered: Promise<oidc.Configuration> | undefined;
  // Discovered at the first login, not at start: a provider that is down then delays no start and
  // no reload. A failed discovery is tried again at the next login.
  function configuration(): Promise<oidc.Configuration> {
    if (discovered !== undefined) return discovered;
    const auth = settings.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(settings.clientSecret);
    const pending = oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, auth, {
      timeout: settings.timeoutMs / 1000,
      // The ID token's signature is checked with the provider's JWKS too, not only the TLS
      // connection it came over (OpenID Connect Core §3.1.3.7 would allow that alone).
      execute: [oidc.enableNonRepudiationChecks, ...(settings.allowInsecureHttp ? [oidc.allowInsecureRequests] : [])],
    });
    discovered = pending;
    pending.catch(() => {
      if (discovered === pending) discovered = undefined;
    });
    return pending;
  }

  return {
    name: settings.name,
    async begin(txId) {
      let config: oidc.Configuration;
      try {
        config = await configuration();
      } catch (err) {
        throw new ProviderLoginError('unavailable', `identity provider ${settings.name}: discovery failed`, err);
      }
      const login = { state: `${txId}.${oidc.randomState()}`, nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: settings.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(login.verifier),
        code_challenge_method: 'S256',
        state: login.state,
        nonce: login.nonce,
      });
      return { url: url.href, login };
    },
    async finish(callbackUrl, login) {
      let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
      try {
        const config = await configuration();
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: login.verifier, expectedState: login.state, expectedNonce: login.nonce, idTokenExpected: true });
      } catch (err) {
        throw classify(settings.name, err);
      }
      const subject = tokens.claims()?.[settings.subjectClaim];
      if ((typeof subject !== 'string' || subject === '') && typeof subject !== 'number') {
        throw new ProviderLoginError('failed', `identity provider ${settings.name}: the ID token has no claim "${settings.subjectClaim}" naming the user`);
      }
      return String(subject);
    },
  };
}

/**
 * The provider's error at the redirect URI (RFC 6749 §4.1.2.1): the user's refusal goes to the
 * app; the provider's own failure is one to try again later, like one it has at its token
 * endpoint; any other says the request or the provider is wrong, which no retry mends.
 */
// A Map, not an object literal: the provider names the error, and `constructor` or `__proto__`
// must not read as an entry.
const PROVIDER_ERRORS: ReadonlyMap<string, ProviderLoginError['kind']> = new Map([
  ['access_denied', 'denied'],
  ['server_error', 'unavailable'],
  ['temporarily_unavailable', 'unavailable'],
]);

/** A provider's failure as the flow answers it. */
function classify(provider: string, err: unknown): ProviderLoginError {
  if (err instanceof oidc.AuthorizationResponseError) {
    return new ProviderLoginError(PROVIDER_ERRORS.get(err.error) ?? 'failed', `identity provider ${provider} answered ${err.error}`, err);
  }
  if (err instanceof oidc.ResponseBodyError)
    return new ProviderLoginError(err.status >= 500 ? 'unavailable' : 'failed', `identity provider ${provider}: token endpoint answered ${err.status} ${err.error}`, err);
  // A deadline is a TimeoutError; a 5xx page is not a conforming answer.
  const code = (err as { code?: unknown }).code;
  const name = (err as { name?: unknown }).name;
  // fetch's own failure is a TypeError whose message says so; any other TypeError is a bug, not an outage.
  const fetchFailed = err instanceof TypeError && err.message === 'fetch failed';
  if (fetchFailed || name === 'TimeoutError' || name === 'AbortError' || code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') {
    return new ProviderLoginError('unavailable', `identity provider ${provider} could not be reached or failed`, err);
  }
  return new ProviderLoginError('failed', `identity provider ${provider}: its answer did not check out (${typeof code === 'string' ? code : String(name)})`, err);
}
