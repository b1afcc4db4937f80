// A config compiled against the long-lived services: one object holding the route table, the
// OAuth endpoints, the policies, the upstream pools, the authorization server clients and the
// client-IP rules. The listener asks the current runtime to handle each request; a reload
// compiles a new one and swaps it in, and the old one closes once its calls have finished.
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { createAuthServerClient } from '../authserver/client.ts';
import type { Config } from '../config/load.ts';
import { createClientIp } from '../http/ip.ts';
import { OAUTH_PATHS } from '../oauth/endpoint.ts';
import { createIntrospectionEndpoint } from '../oauth/introspect.ts';
import { createMetadataEndpoint, introspectionServed } from '../oauth/metadata.ts';
import { createRevocationEndpoint } from '../oauth/revoke.ts';
import { createTokenEndpoint } from '../oauth/token.ts';
import type { PolicyEnv } from '../policies/policy.ts';
import type { Services } from '../services.ts';
import { createHandler, type OAuthEndpoint } from './handler.ts';
import { compilePolicies, compileRoutes } from './routes.ts';

export interface Runtime {
  /** The config it was compiled from. */
  readonly config: Config;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Resolves once every call it took has finished, then closes its upstream pools and authorization server clients. */
  close(): Promise<void>;
}

/** The services a runtime's parts use. */
export type RuntimeServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'counters' | 'usage' | 'metrics'>;

export function compileRuntime(config: Config, services: RuntimeServices): Runtime {
  const { store, secretKey, clock, logger, counters, usage, metrics } = services;
  const configDir = path.dirname(config.file);
  const { maxBodySize } = config.listen;
  const authServers = new Map([...config.authServers].map(([name, s]) => [name, createAuthServerClient(s)]));
  const routes = compileRoutes({ routes: config.routes, products: config.products, upstreams: config.upstreams, listen: config.listen, realm: config.oauth.realm, configDir }, services);

  const tokenSite: PolicyEnv = { route: 'oauth2/token', configDir, tokenEndpoint: true, method: undefined, path: undefined, clock, counters, logger, maxBodySize };
  const tokenPolicies = compilePolicies(config.oauth.policies, 'access', tokenSite);
  const oauth = { store, secretKey, clock, logger, realm: config.oauth.realm };
  // The OAuth endpoints, each answering in RFC 6749 §5.2 terms; introspection only when someone may call it.
  const oauthEndpoints = new Map<string, OAuthEndpoint>([
    [OAUTH_PATHS.token, createTokenEndpoint({ ...oauth, products: config.products, authServers }, tokenPolicies)],
    [OAUTH_PATHS.revocation, createRevocationEndpoint(oauth, tokenPolicies)],
  ]);
  if (introspectionServed(config.oauth)) oauthEndpoints.set(OAUTH_PATHS.introspection, createIntrospectionEndpoint(oauth, config.oauth.introspectionClients, tokenPolicies));

  const handle = createHandler({
    routes,
    oauthEndpoints,
    metadata: createMetadataEndpoint(config.oauth, config.products.values()),
    clientIp: createClientIp(config.listen.trustedProxies),
    maxBodySize,
    accessLog: config.log.access,
    logger,
    usage,
    clock,
    metrics,
    protocol: config.listen.tls === undefined ? 'http' : 'https',
  });

  // Calls this runtime has taken and not finished; close() waits for them.
  let running = 0;
  let idle: (() => void) | undefined;
  return {
    config,
    async handle(req, res) {
      running++;
      try {
        await handle(req, res);
      } finally {
        if (--running === 0) idle?.();
      }
    },
    async close() {
      if (running > 0) await new Promise<void>((resolve) => (idle = resolve));
      await routes.close();
      await Promise.all([...authServers.values()].map((a) => a.close()));
    },
  };
}
