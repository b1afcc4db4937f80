// The OAuth endpoints (token, revocation, introspection, the RFC 8414 metadata) as routes of the
// route table: each takes its path whatever the method (the endpoint itself refuses the methods
// it does not take), runs oauth.policies first, and writes its failures in RFC 6749 §5.2 terms.
import type { AuthServerClient } from '../authserver/client.ts';
import { flowFailure, type FlowEnv } from '../oauth/authorize/flow.ts';
import { createIdentityProviderClient } from '../oauth/authorize/identity-provider.ts';
import { createParEndpoint } from '../oauth/authorize/par.ts';
import { createPushedRequests, type PushedRequests } from '../oauth/authorize/pushed.ts';
import { authorizeStep, callbackStep, consentStep, loginStep, stylesheetStep } from '../oauth/authorize/routes.ts';
import { createTransactions } from '../oauth/authorize/transaction.ts';
import { checkPassword } from '../oauth/password-check.ts';
import { PORTAL_CSS } from '../portal/browser/generated.ts';
import type { Config } from '../config/load.ts';
import type { Metrics } from '../metrics.ts';
import { OAUTH_PATHS, type FormEndpoint } from '../oauth/endpoint.ts';
import { createIntrospectionEndpoint } from '../oauth/introspect.ts';
import { createMetadataEndpoint, introspectionServed } from '../oauth/metadata.ts';
import { createRevocationEndpoint } from '../oauth/revoke.ts';
import { createJwksEndpoint } from '../oauth/signing/jwks.ts';
import { createJwtVerifier } from '../oauth/signing/jwt.ts';
import { createTokenEndpoint } from '../oauth/token.ts';
import { mutualTls } from '../http/client-certificate.ts';
import type { SenderChecks } from '../oauth/senders.ts';
import type { Documents } from '../openapi/validators.ts';
import type { Failure, RequestContext, Step } from '../pipeline/context.ts';
import { rateLimitSite, type CompileCache, type PolicyEnv } from '../policies/policy.ts';
import type { Services } from '../services.ts';
import { compileOriginPolicy, compilePolicies, type OwnPath } from './routes.ts';

/** The services the OAuth endpoints use. */
export type OAuthRouteServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'metrics' | 'keys' | 'tracing'> & { senders: SenderChecks };

/** The compilation the endpoints' policies belong to: where the config is, and its documents. */
export interface OAuthRouteSite {
  configDir: string;
  documents: Documents;
  compiled: CompileCache;
}

/** These answers are written by the endpoints' own code, which knows nothing of request ids. */
export function requestIdHeader(ctx: RequestContext): void {
  ctx.res.setHeader('x-request-id', ctx.requestId);
}

/** The OAuth endpoints' routes, by path; introspection only when someone may call it, the metadata only with an issuer. */
export function compileOAuthRoutes(config: Config, services: OAuthRouteServices, authServers: ReadonlyMap<string, AuthServerClient>, site: OAuthRouteSite): Map<string, OwnPath> {
  const { store, secretKey, clock, logger, metrics, keys } = services;
  const tokenSite: PolicyEnv = {
    route: 'oauth2/token',
    configDir: site.configDir,
    tokenEndpoint: true,
    method: undefined,
    path: undefined,
    operation: undefined,
    documents: site.documents,
    compiled: site.compiled,
    clock,
    counters: store.counters,
    logger,
    maxBodySize: config.listen.maxBodySize,
    // The endpoints write their answers themselves, through setHeader.
    rateLimits: rateLimitSite({ off: false, quietProducts: new Set(), setHeaders: true }),
  };
  const cors = compileOriginPolicy(config.oauth.policies, tokenSite);
  // The CORS headers first, so that every refusal carries them.
  const policies: Step[] = [requestIdHeader, ...(cors === undefined ? [] : [cors.mark]), ...compilePolicies(config.oauth.policies, 'access', tokenSite, services.tracing)];
  const paths = new Map<string, OwnPath>();
  function serve(path: string, endpoint: FormEndpoint, surface: 'request' | 'token' = 'request', answered?: Step): void {
    paths.set(path, {
      route: { name: path, upstream: undefined, steps: [...policies, endpoint.step], surface, fail: endpoint.fail, answered },
      // The browser asking, not the client calling: no policy but CORS, and a refusal as problem+json.
      preflight: cors === undefined ? undefined : { name: path, upstream: undefined, steps: [requestIdHeader, cors.preflight], surface },
    });
  }
  const { dpop, clientCertificate } = services.senders;
  const oauth = { store, secretKey, clock, logger, realm: config.oauth.realm, clientCertificate };
  // Revocation and introspection take the gateway's JWT access tokens as well as its opaque ones.
  const verifyJwt = createJwtVerifier(keys, config.oauth.issuer);
  serve(OAUTH_PATHS.token, createTokenEndpoint({ ...oauth, products: config.products, authServers, signing: { keys, issuer: config.oauth.issuer }, dpop }), 'token', countToken(metrics));
  serve(OAUTH_PATHS.revocation, createRevocationEndpoint({ ...oauth, verifyJwt }));
  if (introspectionServed(config.oauth)) serve(OAUTH_PATHS.introspection, createIntrospectionEndpoint({ ...oauth, verifyJwt, products: config.products }, config.oauth.introspectionClients));
  if (config.oauth.signing.used) {
    paths.set(OAUTH_PATHS.jwks, { route: { name: OAUTH_PATHS.jwks, upstream: undefined, steps: [requestIdHeader, createJwksEndpoint(keys, config.oauth.signing, clock)] }, preflight: undefined });
  }
  if ([...config.products.values()].some((p) => p.authorization !== undefined)) {
    const pushed = createPushedRequests(secretKey);
    // Pages a user's browser opens: none of oauth.policies, which are the token endpoint's (its
    // CORS, its spike arrest's budget, its IP list of app servers).
    for (const [path, step] of authorizationFlow(config, services, authServers, pushed)) {
      paths.set(path, { route: { name: path, upstream: undefined, steps: [requestIdHeader, step.step], fail: step.fail }, preflight: undefined });
    }
    serve(OAUTH_PATHS.par, createParEndpoint({ ...oauth, products: config.products, pushed }));
  }
  const metadata = createMetadataEndpoint(config.oauth, config.products.values(), mutualTls(config.listen));
  if (metadata !== undefined) paths.set(OAUTH_PATHS.metadata, { route: { name: OAUTH_PATHS.metadata, upstream: undefined, steps: [requestIdHeader, metadata] }, preflight: undefined });
  return paths;
}

/**
 * The authorization code flow's pages (src/oauth/authorize/): compiled when a product offers the
 * grant, which the config allows only with oauth.issuer.
 */
function authorizationFlow(config: Config, services: OAuthRouteServices, authServers: ReadonlyMap<string, AuthServerClient>, pushed: PushedRequests): Map<string, { step: Step; fail: Failure }> {
  const { store, secretKey, clock, logger } = services;
  const issuer = config.oauth.issuer!;
  const callbackUrl = `${issuer}${OAUTH_PATHS.callback}`;
  const env: FlowEnv = {
    store,
    secretKey,
    clock,
    logger,
    issuer,
    issuerOrigin: new URL(issuer).origin,
    callbackUrl,
    products: config.products,
    identityProviders: new Map([...config.identityProviders].map(([name, settings]) => [name, createIdentityProviderClient(settings, callbackUrl)])),
    checkPassword: (attempt) => checkPassword({ store, secretKey, authServers }, attempt),
    transactions: createTransactions({ store, secretKey, secure: issuer.startsWith('https:') }),
  };
  const fail = flowFailure(env);
  return new Map([
    [OAUTH_PATHS.authorization, { step: authorizeStep(env, pushed), fail }],
    [OAUTH_PATHS.login, { step: loginStep(env), fail }],
    [OAUTH_PATHS.callback, { step: callbackStep(env), fail }],
    [OAUTH_PATHS.consent, { step: consentStep(env), fail }],
    [OAUTH_PATHS.stylesheet, { step: stylesheetStep(PORTAL_CSS), fail }],
  ]);
}

/** gateway_tokens_issued_total, by the grant the token endpoint's access line names. */
function countToken(metrics: Metrics): Step {
  return function countToken(ctx: RequestContext): void {
    metrics.tokensIssued.labels(ctx.log?.grant ?? '').inc();
  };
}
