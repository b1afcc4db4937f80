// A real OpenID provider for the gateway to log users in with: panva's oidc-provider (v9) over
// real HTTP on a loopback port, one confidential client (the gateway), accounts with a custom
// claim for `subjectClaim`, and its development login page (any password; "[ Cancel ]" aborts
// with access_denied; the page's URL followed by /unavailable ends it with temporarily_unavailable),
// which a browser can fill in. Its own consent is skipped: the gateway is its
// first-party client, and the user consents to the app at the gateway.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Account, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { closeServer, listenOn } from '../helpers.ts';

/** The gateway's client at the provider. */
export const GATEWAY_CLIENT = { id: 'token-gateway', secret: 'provider-secret-of-the-gateway' };

/** Who can log in (the login is the subject), and the claim the `employee_id` subjectClaim reads. */
export const ACCOUNTS: Readonly<Record<string, { employee_id: string }>> = { alice: { employee_id: 'E-1001' }, bob: { employee_id: 'E-2002' } };

export interface OidcProvider {
  /** The issuer: http://127.0.0.1:<port>. */
  issuer: string;
  /** The YAML of an `identityProviders` entry pointing at it, indented for the section's entries. */
  yaml(name: string, more?: string): string;
  /** Stops it: afterwards it cannot be reached (connections refused), as a provider that is down. */
  close(): Promise<void>;
}

/** Starts a provider whose one client is the gateway, with these redirect URIs (`<gateway issuer>/oauth2/callback`). */
export async function startOidcProvider(redirectUris: readonly string[]): Promise<OidcProvider> {
  const server = createServer();
  // The issuer names the port, so the provider is made once the server listens.
  const issuer = await listenOn(server);
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, configuration({ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' }, redirectUris));
  const handle = provider.callback();
  server.on('request', (req, res) => {
    // A provider under maintenance ends the login it is showing with temporarily_unavailable
    // (RFC 6749 §4.1.2.1), sent to the gateway's redirect URI: GET <interaction page>/unavailable.
    if (req.method === 'GET' && /^\/interaction\/[^/]+\/unavailable$/.test(req.url ?? '')) {
      const result = { error: 'temporarily_unavailable', error_description: 'down for maintenance' };
      provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false }).catch((err: unknown) => res.destroy(err as Error));
      return;
    }
    void handle(req, res);
  });
  return {
    issuer,
    yaml: (name, more = '') =>
      `  ${name}:\n    issuer: ${issuer}\n    clientId: ${GATEWAY_CLIENT.id}\n    clientSecret: ${GATEWAY_CLIENT.secret}\n    allowInsecureHttp: true\n    timeout: 2s\n${more}`,
    close: () => closeServer(server),
  };
}

function configuration(jwk: Record<string, unknown>, redirectUris: readonly string[]): Configuration {
  return {
    clients: [
      {
        client_id: GATEWAY_CLIENT.id,
        client_secret: GATEWAY_CLIENT.secret,
        redirect_uris: [...redirectUris],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['cookie-key-of-the-test-provider'] },
    claims: { openid: ['sub', 'employee_id'] },
    // The ID token carries the claims of its scopes (not only the userinfo endpoint), as most
    // providers' do: the gateway reads `subjectClaim` from the ID token alone.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    // Set, so that it does not print a notice for each default it falls back to.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    findAccount: (_ctx, sub) => account(sub),
    loadExistingGrant,
  };
}

function account(sub: string): Account | undefined {
  const known = ACCOUNTS[sub];
  if (known === undefined) return undefined;
  return { accountId: sub, claims: () => ({ sub, employee_id: known.employee_id }) };
}

/** oidc-provider's recipe for a first-party client: the grant of an earlier consent, or one made now without asking. */
async function loadExistingGrant(ctx: KoaContextWithOIDC) {
  const { oidc } = ctx;
  const grantId = oidc.result?.consent?.grantId ?? oidc.session!.grantIdFor(oidc.client!.clientId);
  if (grantId !== undefined) return oidc.provider.Grant.find(grantId);
  const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
  grant.addOIDCScope('openid');
  await grant.save();
  return grant;
}
