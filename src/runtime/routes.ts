// Config → route table. Each route's steps are built here, once; a request only walks them.
import type { Config, RouteSettings } from '../config/load.ts';
import type { SigningSettings } from '../config/types.ts';
import type { SenderChecks } from '../oauth/senders.ts';
import type { PolicyEntry } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import { tooLarge } from '../http/body.ts';
import { decodeSubDelims, SUB_DELIM_ESCAPE } from '../http/request.ts';
import { createAuthorizeRoute, createBearerErrors, createVerifyToken, type BearerErrors } from '../oauth/bearer.ts';
import type { Failure, RequestContext, Step } from '../pipeline/context.ts';
import { traced, type Tracing } from '../pipeline/trace.ts';
import { policies, type PolicyName } from '../policies/index.ts';
import { operationSite } from '../policies/operation.ts';
import { joinCounts, rateLimitSite, type CountStep, type CompileCache, type OriginHandlers, type OriginMark, type PolicyEnv, type ResponseHandler } from '../policies/policy.ts';
import { createQuotaStep } from '../policies/quota.ts';
import { createRequestHeaders } from '../upstream/headers.ts';
import { createIdentities, createIdentityStep, type Identities } from '../upstream/identity.ts';
import type { KeyRing } from '../oauth/signing/key-ring.ts';
import { createJwtVerifier } from '../oauth/signing/jwt.ts';
import type { Store } from '../store/port/index.ts';
import { createResponder, createTarget, type Target } from '../upstream/targets.ts';
import type { Documents } from '../openapi/validators.ts';

/** What a request is handed to: a route's name (for metrics and the access log), its upstream, its steps. */
export interface CompiledRoute {
  /** UNMATCHED for a path no route has, or a method none of its routes takes. */
  name: string;
  upstream: string | undefined;
  /** First its CORS headers when it has any, so that every answer carries them; then the refusal of a declared length over listen.maxBodySize. */
  steps: readonly Step[];
  /** Where its failures count in the metrics (gateway_store_errors_total's surface); absent: 'request'. */
  surface?: 'request' | 'token';
  /** The one writer of its failures, in its protocol (RFC 6749 §5.2 on the OAuth endpoints); absent: problem+json. */
  fail?: Failure | undefined;
  /** Runs once its steps have answered without a failure: the token endpoint counts the token it issued. */
  answered?: Step | undefined;
}

/** A path the gateway serves itself (an OAuth endpoint): its route, whatever the method, and its CORS preflight when oauth.policies has a CORS policy. */
export interface OwnPath {
  route: CompiledRoute;
  preflight: CompiledRoute | undefined;
}

/** The route label of requests no route took. */
export const UNMATCHED = '(unmatched)';

interface PathEntry {
  /** The route of each method. */
  methods: ReadonlyMap<string, CompiledRoute>;
  /** The CORS headers of an answer no one of its routes gives (a method none takes, a refused path). */
  cors: OriginMark | undefined;
  /** Fetch §3.2.2: the preflight of each method whose route has a CORS policy, found by the method it asks for. */
  preflights: ReadonlyMap<string, CompiledRoute>;
  /** Any other method: authenticate, then 405. */
  otherMethod: CompiledRoute;
  /** A preflight about a method no CORS policy of the path covers: any other method, without Access-Control-Allow-* (Fetch §3.2.3). */
  otherPreflight: CompiledRoute;
}

export interface RouteTable {
  /**
   * The route for the path and method: an OAuth endpoint's whatever the method, else the config's;
   * unknown paths authenticate, then 404, so paths cannot be probed. `preflightFor`: the method a
   * CORS preflight asks about, answered by that route's CORS policy when it has one.
   */
  lookup(method: string, path: string, preflightFor?: string): CompiledRoute;
  /**
   * The CORS headers of an answer given before any route took the call (its path refused, or its
   * transfer coding): those of the routes at `path` as it was sent, when they have a CORS policy.
   */
  corsAt(path: string): OriginMark | undefined;
  /** Closes the upstream pools once their calls are done; `force`: at once. */
  close(force?: boolean): Promise<void>;
}

/** The sections of the config a route table is compiled from. */
export type RouteTableSettings = Pick<Config, 'routes' | 'products' | 'upstreams' | 'listen' | 'openapi'> & {
  realm: string;
  /** oauth.issuer: what the gateway's JWTs name as their issuer. */
  issuer: string | undefined;
  signing: SigningSettings;
  configDir: string;
  /** The compilation's documents: each compiled once for all its routes, and each file a policy names read once. */
  documents: Documents;
  /** What the load made of the policies' options. */
  compiled: CompileCache;
  /** The step that answers a route in process instead of its upstream (the management API's operations); absent: every route has an upstream. */
  respond?: (route: RouteSettings) => Step;
};

/** The services the route table's steps use. */
export interface RouteServices {
  store: Store;
  /** What the routes' tokens may be bound to (DPoP proofs, client certificates), checked as the token endpoint checks them. */
  senders: SenderChecks;
  keys: KeyRing;
  clock: () => number;
  logger: PolicyEnv['logger'];
  /** Where the calls' spans go; undefined: no traces, and no step is wrapped. */
  tracing: Tracing | undefined;
}

/**
 * The route table of the config's routes and of `ownPaths`, the paths the gateway serves itself
 * (the OAuth endpoints), which take their path before any route of the config.
 */
export function compileRoutes(config: RouteTableSettings, services: RouteServices, ownPaths: ReadonlyMap<string, OwnPath> = new Map()): RouteTable {
  const targets = new Map<string, Target>();
  try {
    return compileTable(config, services, targets, ownPaths);
  } catch (err) {
    // A route that cannot compile leaves no upstream pool open.
    for (const target of targets.values()) void target.close(true);
    throw err;
  }
}

/** What every route's steps share, built once per table. */
interface Shared {
  verifyToken: Step;
  errors: BearerErrors;
  /** Refuses a declared length over listen.maxBodySize before anything reads the body. */
  declaredLength: Step;
  /** The first steps of every call: its CORS headers before anything else, so that every answer carries them, a refusal of its length included. */
  start: (cors: OriginMark | undefined) => Step[];
  /** The products with a quota; the step that counts a call against its token's product's, on routes whose answers carry RateLimit headers and on the others. */
  productQuotas: ReadonlySet<string>;
  productQuota: { shown: Step; quiet: Step };
  /** The products with `rateLimitHeaders: false`. */
  quietProducts: ReadonlySet<string>;
  targets: ReadonlyMap<string, Target>;
  identities: Identities;
}

/** The route table; `targets` receives each upstream as it is made. */
function compileTable(config: RouteTableSettings, services: RouteServices, targets: Map<string, Target>, ownPaths: ReadonlyMap<string, OwnPath>): RouteTable {
  // The identity header is the gateway's to set: a client's is dropped, whatever its name.
  const requestHeaders = createRequestHeaders({ ...config.listen, dropHeaders: [...config.listen.dropHeaders, config.signing.identity.header] });
  for (const [name, settings] of config.upstreams) targets.set(name, createTarget(settings, requestHeaders, config.listen.maxBodySize, services.clock));
  const shared = sharedSteps(config, services, targets);
  const paths = new Map<string, RoutesAtPath>();
  for (const route of config.routes.values()) {
    const at = paths.get(route.path) ?? { methods: new Map(), preflights: new Map(), cors: [] };
    compileRoute(route, config, services, shared, at);
    paths.set(route.path, at);
  }
  const exact = new Map<string, PathEntry>();
  const patterns: { regex: RegExp; entry: PathEntry }[] = [];
  for (const [path, at] of paths) {
    const entry = pathEntry(at, shared);
    if (path.includes('{')) {
      const source = path
        .split('/')
        .map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      patterns.push({ regex: new RegExp(`^${source}$`), entry });
    } else {
      exact.set(path, entry);
    }
  }
  return createTable(exact, patterns, ownPaths, shared);
}

function sharedSteps(config: RouteTableSettings, services: RouteServices, targets: ReadonlyMap<string, Target>): Shared {
  const { clock } = services;
  const { maxBodySize } = config.listen;
  const errors = createBearerErrors(
    config.realm,
    [...config.products.values()].some((p) => p.senderConstraint === 'dpop'),
  );
  const verifyJwt = createJwtVerifier(services.keys, config.issuer);
  const verifying = createVerifyToken({ store: services.store, clock, maxBodySize, verifyJwt, products: config.products, ...services.senders }, errors);
  // With traces on, a span when the check waits on the store (a token not in the cache); one answered from memory takes microseconds, and a span would cost more.
  const verifyToken = services.tracing === undefined ? verifying : traced(verifying, 'verify token', true);
  // A declared length is refused before anything reads the body; a chunked one is counted as it
  // streams (upstreamBody). The same answer either way, and the connection closes rather than drain.
  const bodyTooLarge = tooLarge(maxBodySize);
  const declaredLength: Step = function declaredLength(ctx: RequestContext) {
    const length = ctx.req.headers['content-length'];
    if (length !== undefined && Number(length) > maxBodySize) throw bodyTooLarge;
  };
  // A product's quota counts an app's calls across all of the product's routes. Only one
  // product's applies to a call: its name in the RateLimit headers need not say which.
  const quietProducts = new Set([...config.products.values()].filter((p) => !p.rateLimitHeaders).map((p) => p.name));
  const productQuota = (shown: boolean): Step => {
    const site = rateLimitSite({ off: !shown, quietProducts });
    const steps = new Map<string, Step>();
    for (const { name, quota } of config.products.values()) {
      if (quota === undefined) continue;
      const step = createQuotaStep(quota, 'product', services.store.counters, clock, site, `product-quota-${quota.interval}`);
      steps.set(name, services.tracing === undefined ? step : tracedCount(step));
    }
    return function productQuota(ctx: RequestContext) {
      return steps.get(ctx.token!.product)?.(ctx);
    };
  };
  return {
    verifyToken,
    errors,
    declaredLength,
    start: (cors) => (cors === undefined ? [declaredLength] : [cors, declaredLength]),
    productQuotas: new Set([...config.products.values()].filter((p) => p.quota !== undefined).map((p) => p.name)),
    productQuota: { shown: productQuota(true), quiet: productQuota(false) },
    quietProducts,
    targets,
    identities: createIdentities({ keys: services.keys, issuer: config.issuer, signing: config.signing, clock, errors }),
  };
}

/** The routes of one path, as they are compiled. */
interface RoutesAtPath {
  methods: Map<string, CompiledRoute>;
  preflights: Map<string, CompiledRoute>;
  /** The CORS policies of its routes, in the order the YAML lists them. */
  cors: OriginHandlers[];
}

/** Compiles `route` into the routes of its path: its steps, and its preflight when it has a CORS policy. */
function compileRoute(route: RouteSettings, config: RouteTableSettings, services: RouteServices, shared: Shared, at: RoutesAtPath): void {
  const { clock, logger } = services;
  const { counters } = services.store;
  const { maxBodySize } = config.listen;
  const operation = operationSite(route, config.openapi, config.documents);
  const env: PolicyEnv = {
    route: route.name,
    configDir: config.configDir,
    tokenEndpoint: false,
    method: route.method,
    path: route.path,
    operation,
    documents: config.documents,
    compiled: config.compiled,
    clock,
    counters,
    logger,
    maxBodySize,
    rateLimits: rateLimitSite({ off: !route.rateLimitHeaders, quietProducts: shared.quietProducts }),
  };
  const cors = compileOriginPolicy(route.policies, env);
  if (cors !== undefined) {
    // No token, no quota, no upstream: the preflight is the browser asking, not the app calling.
    // A refused preflight carries no Access-Control-Allow-* (Fetch §3.2.3): no CORS headers of its own.
    at.preflights.set(route.method, { name: route.name, upstream: undefined, steps: [shared.declaredLength, cors.preflight] });
    at.cors.push(cors);
  }
  const steps: Step[] = [
    ...shared.start(cors?.mark),
    shared.verifyToken,
    createAuthorizeRoute(route.products, route.scopes, shared.errors, route.requireSubject),
    ...compilePolicies(route.policies, 'access', env, services.tracing),
    // After the route's own access policies, so the calls they refuse do not use it up.
    ...([...route.products].some((p) => shared.productQuotas.has(p)) ? [route.rateLimitHeaders ? shared.productQuota.shown : shared.productQuota.quiet] : []),
    // A route from an OpenAPI document validates its requests against it first.
    ...(operation === undefined ? [] : [operation.validators.request(operation.operation, operation.routePath, maxBodySize)]),
    ...compilePolicies(route.policies, 'request', env, services.tracing),
    ...identityStep(route, config, shared),
    config.respond?.(route) ?? createResponder(shared.targets.get(route.upstream)!, responseHandlers(route.policies, env)),
  ];
  at.methods.set(route.method, { name: route.name, upstream: config.respond === undefined ? route.upstream : undefined, steps });
}

/** The route's upstreamIdentity step, when any caller of it gets more than headers. */
function identityStep(route: RouteSettings, config: RouteTableSettings, shared: Shared): Step[] {
  const upstream = config.upstreams.get(route.upstream);
  if (upstream === undefined) return [];
  const step = createIdentityStep(route, config.products, upstream.audience, config.signing.identity.header, shared.identities, shared.errors);
  return step === undefined ? [] : [step];
}

/** A path's entry: its routes, and the answers to a method none of them takes. */
function pathEntry(at: RoutesAtPath, shared: Shared): PathEntry {
  const { declaredLength, verifyToken } = shared;
  const allow = [...at.methods.keys()].join(', ');
  const cors = pathCors(at.cors);
  function methodNotAllowed(): never {
    throw new GatewayError(405, 'method_not_allowed', 'method not allowed on this path', { headers: { allow } });
  }
  return {
    methods: at.methods,
    cors,
    preflights: at.preflights,
    otherMethod: { name: UNMATCHED, upstream: undefined, steps: [...shared.start(cors), verifyToken, methodNotAllowed] },
    otherPreflight: { name: UNMATCHED, upstream: undefined, steps: [declaredLength, verifyToken, methodNotAllowed] },
  };
}

function createTable(exact: ReadonlyMap<string, PathEntry>, patterns: readonly { regex: RegExp; entry: PathEntry }[], ownPaths: ReadonlyMap<string, OwnPath>, shared: Shared): RouteTable {
  // A path no route has: no route's CORS policy can allow its caller's origin.
  const notFound: CompiledRoute = {
    name: UNMATCHED,
    upstream: undefined,
    steps: [
      shared.declaredLength,
      shared.verifyToken,
      function notFound() {
        throw new GatewayError(404, 'not_found', 'no route matches this path');
      },
    ],
  };
  const find = (path: string) => exact.get(path) ?? patterns.find((p) => p.regex.test(path))?.entry;
  const ambiguous = new GatewayError(400, 'invalid_path', 'request path rejected: an escaped character names another route than the path as written; send it as itself');
  return {
    lookup(method, path, preflightFor) {
      const own = ownPaths.get(path);
      if (own !== undefined) return preflightFor !== undefined && own.preflight !== undefined ? own.preflight : own.route;
      const entry = find(path);
      // A router that decodes before it routes reads /v1/files/%24export as the route
      // /v1/files/$export: both spellings must name the route that is authorised.
      if (path.includes('%') && SUB_DELIM_ESCAPE.test(path) && find(decodeSubDelims(path)) !== entry) throw ambiguous;
      if (entry === undefined) return notFound;
      if (preflightFor === undefined) return entry.methods.get(method) ?? entry.otherMethod;
      return entry.preflights.get(preflightFor) ?? entry.methods.get(method) ?? entry.otherPreflight;
    },
    corsAt(path) {
      return find(path)?.cors;
    },
    async close(force = false) {
      await Promise.all([...shared.targets.values()].map((t) => t.close(force)));
    },
  };
}

/** What each policy of `phase` in the list makes (a step, handlers), in the order the YAML lists them. */
function created<T>(entries: readonly PolicyEntry[], phase: 'access' | 'request' | 'response' | 'origin', env: PolicyEnv): T[] {
  const out: T[] = [];
  for (const entry of entries) {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    const policy = policies[name];
    if (policy.phase === phase) out.push(policy.create(options, env) as T);
  }
  return out;
}

/**
 * The steps of the request-side policies of one phase, in the order the YAML lists them; counts
 * listed one after another (a quota, then a spike arrest) are made by one step. With traces on,
 * a count that waits on the store's server (Redis) gets a span.
 */
export function compilePolicies(entries: readonly PolicyEntry[], phase: 'access' | 'request', env: PolicyEnv, tracing: Tracing | undefined): Step[] {
  const steps = joinCounts(created<Step>(entries, phase, env), env);
  return tracing === undefined ? steps : steps.map(tracedCount);
}

/** A count step with a span when it waits on the store's server; any other step as it is. */
function tracedCount(step: Step): Step {
  const { counts } = step as Partial<CountStep>;
  return counts === undefined ? step : traced(step, `policy ${counts.map((c) => c.policy).join(', ')}`, true);
}

/** The CORS policy's handlers, when the list has one (the config allows one at most). */
export function compileOriginPolicy(entries: readonly PolicyEntry[], env: PolicyEnv): OriginHandlers | undefined {
  return created<OriginHandlers>(entries, 'origin', env)[0];
}

/**
 * The CORS headers of an answer at a path that no one of its routes gives: those of the first of
 * its routes' CORS policies that allows the caller's origin, else the refusal of the first (Vary: Origin).
 */
function pathCors(policies: readonly OriginHandlers[]): OriginMark | undefined {
  if (policies.length <= 1) return policies[0]?.mark;
  return function pathCorsHeaders(ctx: RequestContext): void {
    const { origin } = ctx.req.headers;
    for (const policy of policies) {
      const allowed = policy.allowed(origin);
      if (allowed !== undefined) {
        ctx.cors = allowed;
        return;
      }
    }
    policies[0]!.mark(ctx);
  };
}

/** The handlers of the response policies, in the order the YAML lists them. */
function responseHandlers(entries: readonly PolicyEntry[], env: PolicyEnv): ResponseHandler[] {
  return created<ResponseHandler>(entries, 'response', env);
}
