// GET /.well-known/oauth-authorization-server (RFC 8414): what a standard OAuth client needs to
// find its way, computed once from the YAML.
import type { Config, ProductSettings } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import { NOSNIFF } from '../http/problem.ts';
import type { GrantTypeName } from '../config/schema.ts';
import { CLIENT_AUTH_METHODS } from './client-auth.ts';
import { DPOP_ALGORITHMS } from './dpop.ts';
import { CERTIFICATE_AUTH_METHODS } from './mtls.ts';
import { OAUTH_PATHS } from './endpoint.ts';
import { grants } from './grants/index.ts';
import type { Step } from '../pipeline/context.ts';

/** Introspection is served only when someone may call it. */
export function introspectionServed(oauth: Config['oauth']): boolean {
  return oauth.introspectionClients.length > 0;
}

function metadataDocument(oauth: Config['oauth'], served: Iterable<ProductSettings>, certificates: boolean): Record<string, unknown> | undefined {
  const { issuer } = oauth;
  if (issuer === undefined) return undefined;
  const products = [...served];
  const enabled = new Set(products.flatMap((p) => [...p.grants]));
  // Public apps (client_id alone) exist only for the authorization code grant.
  const bySecret = enabled.has('authorization_code') ? CLIENT_AUTH_METHODS : CLIENT_AUTH_METHODS.filter((m) => m !== 'none');
  const clientAuth = certificates ? [...bySecret, ...CERTIFICATE_AUTH_METHODS] : bySecret;
  return {
    issuer,
    token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
    token_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint: `${issuer}${OAUTH_PATHS.revocation}`,
    revocation_endpoint_auth_methods_supported: clientAuth,
    // The introspection callers of oauth.introspection always have a secret.
    ...(introspectionServed(oauth)
      ? { introspection_endpoint: `${issuer}${OAUTH_PATHS.introspection}`, introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.filter((m) => m !== 'none') }
      : {}),
    grant_types_supported: [...grants.keys()].filter((g) => enabled.has(g as GrantTypeName)),
    scopes_supported: [...new Set(products.flatMap((p) => p.scopes))],
    ...(oauth.signing.used ? { jwks_uri: `${issuer}${OAUTH_PATHS.jwks}` } : {}),
    // RFC 9449 §5.1: every product takes DPoP proofs at the token endpoint.
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
    // RFC 8705 §3.3: a token requested with a client certificate is bound to it.
    ...(certificates ? { tls_client_certificate_bound_access_tokens: true } : {}),
    // Required by §2: none without an authorization endpoint.
    response_types_supported: enabled.has('authorization_code') ? ['code'] : [],
    ...(enabled.has('authorization_code') ? authorizationMetadata(issuer, products) : {}),
  };
}

/** The authorization endpoint's part, when a product offers the authorization code grant. */
function authorizationMetadata(issuer: string, products: readonly ProductSettings[]): Record<string, unknown> {
  const offering = products.filter((p) => p.authorization !== undefined);
  return {
    authorization_endpoint: `${issuer}${OAUTH_PATHS.authorization}`,
    // RFC 9126 §5.
    pushed_authorization_request_endpoint: `${issuer}${OAUTH_PATHS.par}`,
    // True only when every product says so: the field is the server's, not a product's.
    require_pushed_authorization_requests: offering.every((p) => p.authorization!.requirePar),
    response_modes_supported: ['query'],
    // OAuth 2.1 §4.1.1: S256 only; plain would let a stolen challenge redeem the code.
    code_challenge_methods_supported: ['S256'],
    // RFC 9207.
    authorization_response_iss_parameter_supported: true,
  };
}

/** The metadata answer, serialised once, as a route's last step; undefined (not served) without an issuer. */
export function createMetadataEndpoint(oauth: Config['oauth'], products: Iterable<ProductSettings>, certificates: boolean): Step | undefined {
  const document = metadataDocument(oauth, products, certificates);
  if (document === undefined) return undefined;
  const body = Buffer.from(JSON.stringify(document));
  const notAllowed = new GatewayError(405, 'method_not_allowed', 'the metadata document answers GET and HEAD only', { headers: { allow: 'GET, HEAD' } });
  return function metadataEndpoint({ req, res }): void {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') throw notAllowed;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', ...NOSNIFF, 'content-length': String(body.length) }).end(method === 'HEAD' ? undefined : body);
  };
}
