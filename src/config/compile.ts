// Config → route table. Each route's steps are built here, once; a request only walks them.
import path from 'node:path';
import type { Deps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { decodeSubDelims, SUB_DELIM_ESCAPE } from '../http/request.ts';
import { createAuthorizeRoute, createBearerErrors, createVerifyToken } from '../oauth/bearer.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';
import { policies, type PolicyName } from '../policies/index.ts';
import type { PolicyEnv, ResponseHandler } from '../policies/policy.ts';
import { createQuotaStep } from '../policies/quota.ts';
import { createRequestHeaders } from '../upstream/headers.ts';
import { createResponder, createTarget, type Target } from '../upstream/targets.ts';
import type { PolicyEntry } from './schema.ts';

export interface PathEntry {
  /** Steps per method. */
  methods: ReadonlyMap<string, readonly Step[]>;
  /** Steps for any other method: authenticate, then 405. */
  otherMethod: readonly Step[];
}

export interface RouteTable {
  /** Steps for the path and method; unknown paths authenticate, then 404, so paths cannot be probed. */
  lookup(method: string, path: string): readonly Step[];
  close(): Promise<void>;
}

export function compileRoutes(deps: Deps): RouteTable {
  const { config } = deps;
  const errors = createBearerErrors(config.oauth.realm);
  const verifyToken = createVerifyToken(deps, errors);

  const targets = new Map<string, Target>();
  const requestHeaders = createRequestHeaders(config.listen);
  for (const [name, settings] of config.upstreams) targets.set(name, createTarget(settings, requestHeaders, config.listen.maxBodySize, deps.clock));

  // A product's quota counts an app's calls across all of the product's routes.
  const productQuotas = new Map<string, Step>();
  for (const product of config.products.values()) {
    if (product.quota !== undefined) productQuotas.set(product.name, createQuotaStep(product.quota, 'product', deps.counters, deps.clock));
  }
  const productQuota: Step = function productQuota(ctx: RequestContext) {
    return productQuotas.get(ctx.token!.product)?.(ctx);
  };

  const byPath = new Map<string, Map<string, readonly Step[]>>();
  for (const route of config.routes.values()) {
    const env: PolicyEnv = { deps, route: route.name, configDir: path.dirname(config.file), method: route.method, path: route.path };
    const steps: Step[] = [
      verifyToken,
      createAuthorizeRoute(route.products, route.scopes, errors, route.requireSubject),
      ...compilePolicies(route.policies, 'access', env),
      // After the route's own access policies, so the calls they refuse do not use it up.
      ...([...route.products].some((p) => productQuotas.has(p)) ? [productQuota] : []),
      ...compilePolicies(route.policies, 'request', env),
      createResponder(targets.get(route.upstream)!, responseHandlers(route.policies, env)),
    ];
    const methods = byPath.get(route.path) ?? new Map<string, readonly Step[]>();
    methods.set(route.method, steps);
    byPath.set(route.path, methods);
  }

  const exact = new Map<string, PathEntry>();
  const patterns: { regex: RegExp; entry: PathEntry }[] = [];
  for (const [path, methods] of byPath) {
    const allow = [...methods.keys()].join(', ');
    const entry: PathEntry = {
      methods,
      otherMethod: [
        verifyToken,
        function methodNotAllowed() {
          throw new GatewayError(405, 'method_not_allowed', 'method not allowed on this path', { headers: { allow } });
        },
      ],
    };
    if (path.includes('{')) {
      const source = path.split('/').map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      patterns.push({ regex: new RegExp(`^${source}$`), entry });
    } else {
      exact.set(path, entry);
    }
  }

  const notFound: readonly Step[] = [
    verifyToken,
    function notFound() {
      throw new GatewayError(404, 'not_found', 'no route matches this path');
    },
  ];

  const find = (path: string) => exact.get(path) ?? patterns.find((p) => p.regex.test(path))?.entry;
  const ambiguous = new GatewayError(400, 'invalid_path', 'request path rejected: an escaped character names another route than the path as written; send it as itself');

  return {
    lookup(method, path) {
      const entry = find(path);
      // A router that decodes before it routes reads /v1/files/%24export as the route
      // /v1/files/$export: both spellings must name the route that is authorised.
      if (path.includes('%') && SUB_DELIM_ESCAPE.test(path) && find(decodeSubDelims(path)) !== entry) throw ambiguous;
      if (entry === undefined) return notFound;
      return entry.methods.get(method) ?? entry.otherMethod;
    },
    async close() {
      await Promise.all([...targets.values()].map((t) => t.close()));
    },
  };
}

/** The steps of the request-side policies of one phase, in the order the YAML lists them. */
export function compilePolicies(entries: readonly PolicyEntry[], phase: 'access' | 'request', env: PolicyEnv): Step[] {
  const steps: Step[] = [];
  for (const entry of entries) {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    const policy = policies[name];
    if (policy.phase === phase) steps.push(policy.create(options, env));
  }
  return steps;
}

/** The handlers of the response policies, in the order the YAML lists them. */
function responseHandlers(entries: readonly PolicyEntry[], env: PolicyEnv): ResponseHandler[] {
  const handlers: ResponseHandler[] = [];
  for (const entry of entries) {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    const policy = policies[name];
    if (policy.phase === 'response') handlers.push(policy.create(options, env));
  }
  return handlers;
}
