// Routes (written out, and the operations of OpenAPI documents), the products that offer them,
// and the policies of both and of the token endpoint, checked across sections.
import { pathShape } from '../openapi/document.ts';
import { describe, type PolicyList } from '../openapi/routes.ts';
import { policies, type PolicyName } from '../policies/index.ts';
import { operationSite } from '../policies/operation.ts';
import type { PolicySite } from '../policies/policy.ts';
import type { Compiled } from './compiled.ts';
import { defaulted as d } from './defaults.ts';
import type { Report, Segments } from './errors.ts';
import { compileOperations, readDocuments } from './openapi.ts';
import type { ConfigFile, GrantTypeName, PolicyEntry } from './schema.ts';
import type { Site } from './sections.ts';
import type { Config, ProductSettings, RouteSettings } from './types.ts';
import { authorizationSettings, type Logins } from './authorization.ts';

/** A route as declared, before the products that offer it are known; `at` is where problems with it are reported. */
export interface DeclaredRoute extends Omit<RouteSettings, 'products' | 'policies'> {
  policies: readonly PolicyList<PolicyEntry>[];
  at: Segments;
}

/** How a message names a declared route: a route by its name, an operation by its document's file and line. */
const named = (route: DeclaredRoute) => (route.operation === undefined ? `route "${route.name}"` : `operation ${describe(route.operation.operation)} of openapi.${route.operation.api}`);

/** Every route: each operation of each OpenAPI document, then those written out under `routes`; with the products that offer them. */
export function routeSections(c: ConfigFile, site: Site, upstreams: ReadonlySet<string>, logins: Logins, compiled: Compiled): Pick<Config, 'routes' | 'openapi' | 'products'> {
  const { report, dir } = site;
  const declared = new Map<string, DeclaredRoute>();
  const seenPaths = new Map<string, string>();
  const declare = (route: DeclaredRoute) => {
    const other = declared.get(route.name);
    if (other !== undefined) return report(route.at, `has the name of ${named(other)}`);
    const key = `${route.method} ${pathShape(route.path)}`;
    const clash = seenPaths.get(key);
    if (clash !== undefined) return report(route.operation === undefined ? [...route.at, 'path'] : route.at, `same method and path as ${named(declared.get(clash)!)}`);
    seenPaths.set(key, route.name);
    declared.set(route.name, route);
  };
  const documents = readDocuments(c, dir, compiled.documents, declare, upstreams, report);
  for (const [name, r] of Object.entries(d(c.routes))) {
    if (!upstreams.has(r.upstream)) report(['routes', name, 'upstream'], `unknown upstream "${r.upstream}"`);
    declare({
      name,
      method: r.method,
      path: r.path,
      upstream: r.upstream,
      scopes: d(r.scopes),
      requireSubject: d(r.requireSubject),
      upstreamIdentity: r.upstreamIdentity,
      rateLimitHeaders: d(r.rateLimitHeaders),
      policies: [{ at: ['routes', name, 'policies'], entries: d(r.policies) }],
      at: ['routes', name],
      operation: undefined,
    });
  }
  compileOperations(documents, declared.values(), compiled.documents, report);

  const routeProducts = new Map<string, Set<string>>([...declared.keys()].map((name) => [name, new Set<string>()]));
  const products = new Map<string, ProductSettings>();
  for (const [name, p] of Object.entries(c.products)) {
    const product = productSettings(name, p, c, declared, site, logins);
    for (const routeName of product.routes) routeProducts.get(routeName)?.add(name);
    // The management API's clients are apps of a product of this name (src/management/clients.ts).
    if (name === 'gateway-management') report(['products', name], "this product name is the management API's own: choose another");
    if (p.authServer !== undefined && !logins.authServers.has(p.authServer)) report(['products', name, 'authServer'], `unknown authorization server "${p.authServer}"`);
    products.set(name, product);
  }

  const routes = new Map<string, RouteSettings>();
  for (const r of declared.values()) {
    const policySite: PolicySite = {
      configDir: dir,
      tokenEndpoint: false,
      method: r.method,
      path: r.path,
      operation: operationSite(r, documents, compiled.documents),
      documents: compiled.documents,
      compiled: compiled.policies,
    };
    if (r.upstreamIdentity === 'token') {
      const opaque = [...(routeProducts.get(r.name) ?? [])].filter((name) => products.get(name)?.accessTokenFormat !== 'jwt');
      const where = r.operation === undefined ? [...r.at, 'upstreamIdentity'] : ['openapi', r.operation.api, 'upstreamIdentity'];
      if (opaque.length > 0) report(where, `token forwards the caller's JWT access token, and product "${opaque[0]}" issues opaque ones: set its accessTokenFormat: jwt`);
    }
    const { at: _, policies: lists, ...route } = r;
    routes.set(r.name, { ...route, products: routeProducts.get(r.name) ?? new Set(), policies: lists.flatMap((list) => checkPolicies(list.entries, list.at, policySite, report)) });
  }
  return { routes, openapi: documents, products };
}

function productSettings(name: string, p: ConfigFile['products'][string], c: ConfigFile, declared: ReadonlyMap<string, DeclaredRoute>, site: Site, logins: Logins): ProductSettings {
  const { report, duration } = site;
  const grants = new Set<GrantTypeName>(d(p.grants));
  const members: string[] = [];
  const scopes = new Set(d(p.scopes));
  if (p.routes === undefined && p.openapi === undefined) report(['products', name], 'needs "routes", "openapi" or both');
  (p.openapi ?? []).forEach((api, i) => {
    if (c.openapi?.[api] === undefined) {
      report(['products', name, 'openapi', i], `unknown OpenAPI document "${api}" (not under openapi)`);
      return;
    }
    for (const route of declared.values()) {
      if (route.operation?.api !== api || members.includes(route.name)) continue;
      members.push(route.name);
      // The document declares its operations' scopes: the product offers them.
      for (const s of route.scopes) scopes.add(s);
    }
  });
  (p.routes ?? []).forEach((routeName, i) => {
    const route = declared.get(routeName);
    if (route === undefined) {
      report(['products', name, 'routes', i], `unknown route "${routeName}"`);
      return;
    }
    if (!members.includes(routeName)) members.push(routeName);
    if (route.operation !== undefined) for (const s of route.scopes) scopes.add(s);
    for (const s of route.scopes) {
      if (!scopes.has(s)) report(['routes', routeName, 'scopes'], `scope "${s}" is not declared by product "${name}"`);
    }
  });
  if (grants.has('password') && p.authServer === undefined) report(['products', name, 'grants'], 'the password grant needs "authServer"');
  if (grants.has('refresh_token') && !grants.has('password') && !grants.has('authorization_code')) {
    report(['products', name, 'grants'], 'refresh_token needs a grant that issues refresh tokens (password or authorization_code)');
  }
  const at = (key: string) => ['products', name, key];
  if (p.upstreamIdentity === 'token' && p.accessTokenFormat !== 'jwt') report(at('upstreamIdentity'), "token forwards the caller's JWT access token: set accessTokenFormat: jwt");
  return {
    name,
    displayName: p.displayName ?? name,
    description: d(p.description),
    routes: members,
    scopes: [...scopes],
    grants,
    authServer: p.authServer,
    accessTokenLifetime: Math.ceil(duration(p.accessTokenLifetime, at('accessTokenLifetime')) / 1000),
    accessTokenFormat: d(p.accessTokenFormat),
    audience: p.audience ?? name,
    senderConstraint: d(p.senderConstraint),
    upstreamIdentity: d(p.upstreamIdentity),
    refreshTokenLifetime: Math.ceil(duration(p.refreshTokenLifetime, at('refreshTokenLifetime')) / 1000),
    refreshReuseGraceMs: duration(p.refreshReuseGrace, at('refreshReuseGrace')),
    quota: p.quota,
    rateLimitHeaders: d(p.rateLimitHeaders),
    visible: d(p.portal),
    // RFC 9700 §2.4: the password grant hands users' passwords to the app; an operator vets the apps that ask for it.
    approval: p.approval ?? (grants.has('password') ? 'manual' : 'auto'),
    authorization: authorizationSettings(name, p, c, grants, logins, site),
  };
}

/** The token endpoint's policies, checked as a route's are and against what the endpoint takes. */
export function tokenPolicies(c: ConfigFile, dir: string, compiled: Compiled, report: Report): readonly PolicyEntry[] {
  const site: PolicySite = { configDir: dir, tokenEndpoint: true, method: undefined, path: undefined, operation: undefined, documents: compiled.documents, compiled: compiled.policies };
  const entries = checkPolicies(d(d(c.oauth).policies), ['oauth', 'policies'], site, report);
  entries.forEach((entry, i) => {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    if (policies[name].tokenEndpoint?.(options) !== true) report(['oauth', 'policies', i, name], 'the token endpoint takes ipAccess, spikeArrest keyed by ip or route, and cors only');
  });
  return entries;
}

/** Runs each policy's own check (what its schema cannot say) and reports with the YAML path. */
function checkPolicies(entries: readonly PolicyEntry[], at: Segments, site: PolicySite, report: Report): readonly PolicyEntry[] {
  let origin: string | undefined;
  entries.forEach((entry, i) => {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    const policy = policies[name];
    for (const issue of policy.check?.(options, site) ?? []) report([...at, i, name, ...issue.path], issue.message);
    // Only one of them can decide the answers' CORS headers.
    if (policy.phase === 'origin' && origin !== undefined) report([...at, i, name], `a second ${name} policy: list one`);
    if (policy.phase === 'origin') origin ??= name;
  });
  return entries;
}
