// Config → route table. Each route's steps are built here, once; a request only walks them.
import type { Deps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { createAuthorizeRoute, createBearerErrors, createVerifyToken } from '../oauth/bearer.ts';
import type { Step } from '../pipeline/context.ts';
import { createTarget, type Target } from '../upstream/targets.ts';

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
  for (const [name, settings] of config.upstreams) targets.set(name, createTarget(settings));

  const byPath = new Map<string, Map<string, readonly Step[]>>();
  for (const route of config.routes.values()) {
    const steps: Step[] = [verifyToken, createAuthorizeRoute(route.products, route.scopes, errors), targets.get(route.upstream)!.step];
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

  return {
    lookup(method, path) {
      const entry = exact.get(path) ?? patterns.find((p) => p.regex.test(path))?.entry;
      if (entry === undefined) return notFound;
      return entry.methods.get(method) ?? entry.otherMethod;
    },
    async close() {
      await Promise.all([...targets.values()].map((t) => t.close()));
    },
  };
}
