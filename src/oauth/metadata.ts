// GET /.well-known/oauth-authorization-server (RFC 8414): what a standard OAuth client needs to
// find its way, computed once from the YAML.
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/load.ts';

const GRANT_ORDER = ['client_credentials', 'password', 'refresh_token'] as const;
// What presentedCredentials accepts (src/oauth/client-auth.ts), and nothing else.
const CLIENT_AUTH = ['client_secret_basic', 'client_secret_post'];

export function metadataDocument(config: Config): Record<string, unknown> | undefined {
  const issuer = config.oauth.issuer;
  if (issuer === undefined) return undefined;
  const products = [...config.products.values()];
  const enabled = new Set(products.flatMap((p) => [...p.grants]));
  return {
    issuer,
    token_endpoint: `${issuer}/oauth2/token`,
    token_endpoint_auth_methods_supported: CLIENT_AUTH,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH,
    ...(config.oauth.introspectionClients.length === 0
      ? {}
      : { introspection_endpoint: `${issuer}/oauth2/introspect`, introspection_endpoint_auth_methods_supported: CLIENT_AUTH }),
    grant_types_supported: GRANT_ORDER.filter((g) => enabled.has(g)),
    scopes_supported: [...new Set(products.flatMap((p) => p.scopes))],
    // Required by §2; there is no authorization endpoint, so no response type.
    response_types_supported: [],
  };
}

export function createMetadataEndpoint(config: Config) {
  const document = metadataDocument(config);
  const body = document === undefined ? undefined : Buffer.from(JSON.stringify(document));
  return function metadataEndpoint(method: string, res: ServerResponse): boolean {
    if (body === undefined) return false;
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-length': '0' }).end();
      return true;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300', 'content-length': String(body.length) }).end(method === 'HEAD' ? undefined : body);
    return true;
  };
}
