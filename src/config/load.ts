// YAML file → environment substituted → validated against the schema → checked across sections
// → a new, frozen `Config` with every default filled in. Every problem names the YAML path and line.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import { policies, type PolicyName } from '../policies/index.ts';
import { operationSite } from '../policies/operation.ts';
import { parseEntry } from '../http/ip.ts';
import { checkCertificate, type TlsFiles } from '../http/listener.ts';
import type { PolicySite } from '../policies/policy.ts';
import type { QuotaSettings } from '../policies/quota.ts';
import type { StoreSettings } from '../store/open.ts';
import { serverOptions, type RedisSettings } from '../store/redis/db.ts';
import {
  type PolicyEntry,
  type AuthServerConfig,
  type ConfigFile,
  type DurationValue,
  type GrantTypeName,
  type MailConfig,
  type StoreConfig,
  type UpstreamConfig,
} from './schema.ts';
import { configValidator } from './validator.ts';
import { DocumentError, pathShape, type ApiDocument, type Operation } from '../openapi/document.ts';
import { describe, operationRoutes, type PolicyList } from '../openapi/routes.ts';
import { Documents } from '../openapi/validators.ts';

export interface ConfigIssue {
  path: string;
  message: string;
  line: number | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  constructor(file: string, issues: ConfigIssue[]) {
    const where = path.basename(file);
    super(
      issues
        .map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}${i.line === undefined ? '' : ` (${where}:${i.line})`}`)
        .join('\n'),
    );
    this.issues = issues;
  }
}

export interface AuthServerSettings {
  name: string;
  url: URL;
  allowInsecureHttp: boolean;
  timeoutMs: number;
  clientId: string | undefined;
  clientSecret: string | undefined;
  subjectField: string;
  ca: string | undefined;
}

export type UpstreamSettings =
  | {
      kind: 'http';
      name: string;
      targets: readonly { origin: string; basePath: string }[];
      retries: number;
      failureThreshold: number;
      cooldownMs: number;
      connectTimeoutMs: number;
      timeoutMs: number;
      connections: number;
      ca: string | undefined;
      servername: string | undefined;
    }
  | { kind: 'mock'; name: string; status: number; headers: Readonly<Record<string, string>>; body: unknown }
  | { kind: 'echo'; name: string };

export interface RouteSettings {
  name: string;
  method: string;
  path: string;
  upstream: string;
  scopes: readonly string[];
  /** Only tokens with a subject (a user's) may call it. */
  requireSubject: boolean;
  /** Products whose tokens may call this route. */
  products: ReadonlySet<string>;
  policies: readonly PolicyEntry[];
  /** The OpenAPI operation the route is (`api`: its document's name under `openapi`); undefined for a route written out. */
  operation: { api: string; operation: Operation } | undefined;
}

/** A route as declared, before the products that offer it are known; `at` is where problems with it are reported. */
interface DeclaredRoute extends Omit<RouteSettings, 'products' | 'policies'> {
  policies: readonly PolicyList<PolicyEntry>[];
  at: (string | number)[];
}

/** How a message names a declared route: a route by its name, an operation by its document's file and line. */
const named = (route: DeclaredRoute) => (route.operation === undefined ? `route "${route.name}"` : `operation ${describe(route.operation.operation)} of openapi.${route.operation.api}`);

export interface ProductSettings {
  name: string;
  displayName: string;
  description: string;
  routes: readonly string[];
  scopes: readonly string[];
  grants: ReadonlySet<GrantTypeName>;
  authServer: string | undefined;
  accessTokenLifetime: number;
  refreshTokenLifetime: number;
  refreshReuseGraceMs: number;
  quota: QuotaSettings | undefined;
  /** Shown in the developer portal. */
  visible: boolean;
  /** manual: apps registered in the portal start pending until an operator approves them. */
  approval: 'auto' | 'manual';
}

export interface PortalSettings {
  host: string;
  port: number;
  tls: { cert: string; key: string } | undefined;
  title: string;
  /** As configured; undefined: http(s)://localhost:<the port the portal listens on>. */
  publicUrl: string | undefined;
  gatewayUrl: string;
  signup: 'open' | 'invited';
  sessionLifetimeMs: number;
  keyOverlapMs: number;
  maxAppsPerDeveloper: number;
}

export type MailSettings = { from: string } & (
  | { kind: 'smtp'; host: string; port: number; secure: boolean; allowPlaintext: boolean; auth: { user: string; pass: string } | undefined; ca: string | undefined }
  | { kind: 'log' }
);

export interface Config {
  file: string;
  listen: {
    host: string;
    port: number;
    trustedProxies: readonly string[];
    maxBodySize: number;
    dropHeaders: readonly string[];
    publicHost: string | undefined;
    /** How long a client may take to send its headers, and its whole request, and may stay idle between requests. */
    timeouts: { headersMs: number; requestMs: number; keepAliveMs: number };
    /** HTTPS with this certificate chain and key (absolute paths of PEM files). */
    tls: { cert: string; key: string } | undefined;
  };
  /** How long a stop waits for calls in flight. */
  shutdownTimeoutMs: number;
  /** The admin listener's address; undefined: none. */
  admin: { host: string; port: number } | undefined;
  store: StoreSettings;
  log: { level: string; access: boolean };
  workers: number;
  oauth: {
    realm: string;
    policies: readonly PolicyEntry[];
    issuer: string | undefined;
    introspectionClients: readonly { id: string; secret: string }[];
  };
  portal: PortalSettings | undefined;
  mail: MailSettings | undefined;
  authServers: ReadonlyMap<string, AuthServerSettings>;
  upstreams: ReadonlyMap<string, UpstreamSettings>;
  routes: ReadonlyMap<string, RouteSettings>;
  /** The OpenAPI documents under `openapi`, read and resolved. */
  openapi: ReadonlyMap<string, ApiDocument>;
  products: ReadonlyMap<string, ProductSettings>;
}

export interface LoadOptions {
  env?: Readonly<Record<string, string | undefined>>;
}

export function loadConfigFile(file: string, options: LoadOptions = {}): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '', message: `cannot read ${file}: ${readFailure(err)}`, line: undefined }]);
  }
  return parseConfig(text, file, options);
}

export function parseConfig(text: string, file: string, options: LoadOptions = {}): Config {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: { range?: [number, number, number] | null | undefined } | null | undefined) =>
    node?.range ? lines.linePos(node.range[0]).line : undefined;

  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0] ?? e.code, line: e.linePos?.[0].line ?? lines.linePos(e.pos[0]).line })),
    );
  }

  const issues: ConfigIssue[] = [];
  substituteEnv(doc, options.env ?? process.env, (yamlPath, message, node) =>
    issues.push({ path: yamlPath, message, line: lineOf(node) }),
  );
  if (issues.length > 0) throw new ConfigError(file, issues);

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias without its anchor, or aliases that expand too far (a "billion laughs" file).
    throw new ConfigError(file, [{ path: '', message: (err as Error).message.split('\n')[0] ?? 'unreadable YAML', line: undefined }]);
  }
  const validate = configValidator();
  if (!validate(raw)) {
    for (const e of pickUnionBranch(validate.errors ?? [])) {
      const segments = pointerSegments(e.instancePath);
      let message = e.message ?? 'is invalid';
      let target = segments;
      if (e.keyword === 'additionalProperties') {
        const key = (e.params as { additionalProperty: string }).additionalProperty;
        target = [...segments, key];
        // In a map of user-chosen names (routes, products, …) the key is a name, not a keyword.
        const parent = e.parentSchema as { patternProperties?: object; properties?: object; maxProperties?: number } | undefined;
        const names = Object.keys(parent?.patternProperties ?? {})[0];
        message =
          names !== undefined
            ? `"${key}" is not a valid name (must match /${names}/)`
            : parent?.maxProperties === 1 // a one-of-these-names entry, such as a policy
              ? `unknown key (expected one of: ${Object.keys(parent.properties ?? {}).join(', ')})`
              : 'unknown key';
      } else if (e.keyword === 'required') {
        const key = (e.params as { missingProperty: string }).missingProperty;
        message = `missing required key "${key}"`;
      } else if (e.keyword === 'pattern') {
        message = `must match /${(e.params as { pattern: string }).pattern}/`;
      } else if (e.keyword === 'enum') {
        message = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
      }
      issues.push({ path: formatPath(target), message, line: lineOf(nodeAt(doc, target)) ?? lineOf(nodeAt(doc, segments)) });
    }
    throw new ConfigError(file, dedupe(issues));
  }

  const at = (segments: (string | number)[], message: string) =>
    issues.push({ path: formatPath(segments), message, line: lineOf(nodeAt(doc, segments)) });
  const config = build(raw, file, at);
  // A document's policies are checked for each of its operations: a problem in them is said once.
  if (issues.length > 0) throw new ConfigError(file, dedupe(issues));
  return deepFreeze(config);
}

type Report = (segments: (string | number)[], message: string) => void;

function build(raw: ConfigFile, file: string, report: Report): Config {
  const dir = path.dirname(path.resolve(file));
  const duration = (value: DurationValue | undefined, fallbackSeconds: number, where: (string | number)[]) => {
    const ms = durationMs(value ?? fallbackSeconds);
    if (ms === undefined) report(where, 'is not a valid duration');
    return ms ?? fallbackSeconds * 1000;
  };

  const authServers = new Map<string, AuthServerSettings>();
  for (const [name, a] of Object.entries(raw.authServers ?? {})) {
    const url = new URL(a.url);
    if (url.protocol === 'http:' && a.allowInsecureHttp !== true) {
      report(['authServers', name, 'url'], 'must use https (set allowInsecureHttp: true to allow plain http)');
    }
    authServers.set(name, authServerSettings(name, a, url, dir, duration(a.timeout, 5, ['authServers', name, 'timeout'])));
  }

  const upstreams = new Map<string, UpstreamSettings>();
  for (const [name, u] of Object.entries(raw.upstreams)) {
    upstreams.set(name, upstreamSettings(name, u, dir, (v, d, key) => duration(v, d, ['upstreams', name, key])));
  }

  // Every route: each operation of each OpenAPI document, then those written out under `routes`.
  const read = new Documents();
  const documents = new Map<string, ApiDocument>();
  const declared = new Map<string, DeclaredRoute>();
  const seenPaths = new Map<string, string>();
  const declare = (route: DeclaredRoute) => {
    const other = declared.get(route.name);
    if (other !== undefined) {
      report(route.at, `has the name of ${named(other)}`);
      return;
    }
    const key = `${route.method} ${pathShape(route.path)}`;
    const clash = seenPaths.get(key);
    if (clash !== undefined) {
      report(route.operation === undefined ? [...route.at, 'path'] : route.at, `same method and path as ${named(declared.get(clash)!)}`);
      return;
    }
    seenPaths.set(key, route.name);
    declared.set(route.name, route);
  };
  for (const [api, o] of Object.entries(raw.openapi ?? {})) {
    if (!upstreams.has(o.upstream)) report(['openapi', api, 'upstream'], `unknown upstream "${o.upstream}"`);
    let doc: ApiDocument;
    try {
      doc = read.load(path.resolve(dir, o.file));
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
      for (const issue of err.issues) report(['openapi', api, 'file'], `${issue.message} (${path.relative(dir, issue.file) || issue.file}${issue.line === undefined ? '' : `:${issue.line}`})`);
      continue;
    }
    documents.set(api, doc);
    for (const op of operationRoutes(api, o, doc, report)) {
      declare({ ...op, upstream: o.upstream, requireSubject: o.requireSubject ?? false, at: ['openapi', api, 'operations', op.name], operation: { api, operation: op.operation } });
    }
  }
  for (const [name, r] of Object.entries(raw.routes ?? {})) {
    if (!upstreams.has(r.upstream)) report(['routes', name, 'upstream'], `unknown upstream "${r.upstream}"`);
    declare({ name, method: r.method, path: r.path, upstream: r.upstream, scopes: r.scopes ?? [], requireSubject: r.requireSubject ?? false, policies: [{ at: ['routes', name, 'policies'], entries: r.policies ?? [] }], at: ['routes', name], operation: undefined });
  }

  // What a document asks that the gateway cannot check (a style its parameter cannot have, a schema ajv refuses) is said here.
  for (const [api, doc] of documents) {
    const validators = read.validators(doc);
    for (const route of declared.values()) {
      if (route.operation?.api !== api) continue;
      try {
        validators.request(route.operation.operation, route.path, 0);
      } catch (err) {
        if (!(err instanceof TypeError)) throw err;
        report(['openapi', api, 'file'], `operation ${describe(route.operation.operation)}: ${err.message}`);
      }
    }
  }

  const routeProducts = new Map<string, Set<string>>([...declared.keys()].map((name) => [name, new Set<string>()]));
  const products = new Map<string, ProductSettings>();
  for (const [name, p] of Object.entries(raw.products)) {
    const grants = new Set<GrantTypeName>(p.grants ?? ['client_credentials']);
    const members: string[] = [];
    const scopes = new Set(p.scopes ?? []);
    if (p.routes === undefined && p.openapi === undefined) report(['products', name], 'needs "routes", "openapi" or both');
    (p.openapi ?? []).forEach((api, i) => {
      if (raw.openapi?.[api] === undefined) return report(['products', name, 'openapi', i], `unknown OpenAPI document "${api}" (not under openapi)`);
      for (const route of declared.values()) {
        if (route.operation?.api !== api || members.includes(route.name)) continue;
        members.push(route.name);
        // The document declares its operations' scopes: the product offers them.
        for (const s of route.scopes) scopes.add(s);
      }
    });
    (p.routes ?? []).forEach((routeName, i) => {
      const route = declared.get(routeName);
      if (route === undefined) return report(['products', name, 'routes', i], `unknown route "${routeName}"`);
      if (!members.includes(routeName)) members.push(routeName);
      if (route.operation !== undefined) for (const s of route.scopes) scopes.add(s);
      for (const s of route.scopes) {
        if (!scopes.has(s)) report(['routes', routeName, 'scopes'], `scope "${s}" is not declared by product "${name}"`);
      }
    });
    for (const routeName of members) routeProducts.get(routeName)?.add(name);
    if (grants.has('password') && p.authServer === undefined) {
      report(['products', name, 'grants'], 'the password grant needs "authServer"');
    }
    if (p.authServer !== undefined && !authServers.has(p.authServer)) {
      report(['products', name, 'authServer'], `unknown authorization server "${p.authServer}"`);
    }
    if (grants.has('refresh_token') && !grants.has('password')) {
      report(['products', name, 'grants'], 'refresh_token needs a grant that issues refresh tokens (password)');
    }
    products.set(name, {
      name,
      displayName: p.displayName ?? name,
      description: p.description ?? '',
      routes: members,
      scopes: [...scopes],
      grants,
      authServer: p.authServer,
      accessTokenLifetime: Math.ceil(duration(p.accessTokenLifetime, 3600, ['products', name, 'accessTokenLifetime']) / 1000),
      refreshTokenLifetime: Math.ceil(duration(p.refreshTokenLifetime, 86400, ['products', name, 'refreshTokenLifetime']) / 1000),
      refreshReuseGraceMs: duration(p.refreshReuseGrace, 0, ['products', name, 'refreshReuseGrace']),
      quota: p.quota,
      visible: p.portal ?? false,
      // RFC 9700 §2.4: the password grant hands users' passwords to the app; an operator vets the apps that ask for it.
      approval: p.approval ?? (grants.has('password') ? 'manual' : 'auto'),
    });
  }

  const routes = new Map<string, RouteSettings>();
  for (const r of declared.values()) {
    routes.set(r.name, {
      name: r.name,
      method: r.method,
      path: r.path,
      upstream: r.upstream,
      scopes: r.scopes,
      requireSubject: r.requireSubject,
      products: routeProducts.get(r.name) ?? new Set(),
      policies: r.policies.flatMap((list) => checkPolicies(list.entries, list.at, { configDir: dir, tokenEndpoint: false, method: r.method, path: r.path, operation: operationSite(r, documents, read), documents: read }, report)),
      operation: r.operation,
    });
  }

  const tokenPolicies = checkPolicies(raw.oauth?.policies ?? [], ['oauth', 'policies'], { configDir: dir, tokenEndpoint: true, method: undefined, path: undefined, operation: undefined, documents: read }, report);
  tokenPolicies.forEach((entry, i) => {
    const [name, options] = Object.entries(entry)[0] as [PolicyName, never];
    if (policies[name].tokenEndpoint?.(options) === true) return;
    report(['oauth', 'policies', i, name], 'the token endpoint takes ipAccess, spikeArrest keyed by ip or route, and cors only');
  });
  (raw.listen.trustedProxies ?? []).forEach((entry, i) => {
    if (parseEntry(entry) === undefined) report(['listen', 'trustedProxies', i], `"${entry}" is not an IP address or CIDR range`);
  });

  if (raw.listen.tls !== undefined) {
    const problem = certificateProblem(path.resolve(dir, raw.listen.tls.cert), path.resolve(dir, raw.listen.tls.key));
    if (problem !== undefined) report(['listen', 'tls', ...problem.at], problem.message);
  }

  // Open sign-up proves the address with a mailed link: without a way to mail it, nobody could.
  if (raw.portal?.signup === 'open' && raw.mail === undefined) {
    report(['portal', 'signup'], 'open sign-up mails a link to confirm the address: add a "mail" section (smtp, or log: true for development), or use signup: invited');
  }

  return {
    file: path.resolve(file),
    listen: {
      host: raw.listen.host ?? '0.0.0.0',
      port: raw.listen.port,
      trustedProxies: raw.listen.trustedProxies ?? [],
      maxBodySize: raw.listen.maxBodySize ?? 10 * 1024 * 1024,
      dropHeaders: raw.listen.dropHeaders ?? [],
      publicHost: raw.listen.publicHost,
      timeouts: senderTimeouts(raw.listen, duration, report),
      tls: raw.listen.tls && { cert: path.resolve(dir, raw.listen.tls.cert), key: path.resolve(dir, raw.listen.tls.key) },
    },
    shutdownTimeoutMs: duration(raw.shutdownTimeout, 30, ['shutdownTimeout']),
    admin: raw.admin === false ? undefined : { host: raw.admin?.host ?? '127.0.0.1', port: raw.admin?.port ?? 9901 },
    store: storeSettings(raw.store ?? {}, dir, duration, report),
    log: { level: raw.log?.level ?? 'info', access: raw.log?.access ?? true },
    workers: raw.workers === 'auto' ? availableParallelism() : (raw.workers ?? 1),
    oauth: {
      realm: raw.oauth?.realm ?? 'gateway',
      policies: tokenPolicies,
      issuer: raw.oauth?.issuer,
      introspectionClients: raw.oauth?.introspection?.clients ?? [],
    },
    portal: raw.portal && {
      host: raw.portal.listen.host ?? '127.0.0.1',
      port: raw.portal.listen.port,
      tls: raw.portal.listen.tls && { cert: path.resolve(dir, raw.portal.listen.tls.cert), key: path.resolve(dir, raw.portal.listen.tls.key) },
      title: raw.portal.title ?? 'Developer portal',
      publicUrl: raw.portal.publicUrl === undefined ? undefined : new URL(raw.portal.publicUrl).origin,
      gatewayUrl: raw.portal.gatewayUrl ?? `http://localhost:${raw.listen.port}`,
      signup: raw.portal.signup ?? (raw.mail === undefined ? 'invited' : 'open'),
      sessionLifetimeMs: duration(raw.portal.sessionLifetime, 8 * 3600, ['portal', 'sessionLifetime']),
      keyOverlapMs: duration(raw.portal.keyOverlap, 86400, ['portal', 'keyOverlap']),
      maxAppsPerDeveloper: raw.portal.maxAppsPerDeveloper ?? 10,
    },
    mail: raw.mail && mailSettings(raw.mail, dir),
    authServers,
    upstreams,
    routes,
    openapi: documents,
    products,
  };
}

function mailSettings(m: MailConfig, dir: string): MailSettings {
  if ('log' in m) return { from: m.from, kind: 'log' };
  const { smtp } = m;
  return {
    from: m.from,
    kind: 'smtp',
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure ?? false,
    allowPlaintext: smtp.allowPlaintext ?? false,
    auth: smtp.auth,
    ca: smtp.ca === undefined ? undefined : path.resolve(dir, smtp.ca),
  };
}

const SQLITE_ONLY = ['path', 'busyTimeout'] as const;
const REDIS_ONLY = ['url', 'cluster', 'sentinel', 'keyPrefix', 'timeout'] as const;
const REDIS_CONNECTIONS = ['url', 'cluster', 'sentinel'] as const;

function storeSettings(s: StoreConfig, dir: string, duration: (v: DurationValue | undefined, fallbackSeconds: number, where: (string | number)[]) => number, report: Report): StoreSettings {
  const driver = s.driver ?? 'sqlite';
  const tokenCacheSize = s.tokenCacheSize ?? 100_000;
  for (const key of driver === 'sqlite' ? REDIS_ONLY : SQLITE_ONLY) {
    if (s[key] !== undefined) report(['store', key], `only with driver: ${driver === 'sqlite' ? 'redis' : 'sqlite'}`);
  }
  if (driver === 'sqlite') {
    const file = path.resolve(dir, s.path ?? 'data/gateway.db');
    return {
      driver,
      path: file,
      busyTimeoutMs: duration(s.busyTimeout, 2, ['store', 'busyTimeout']),
      secretKeyFile: path.resolve(dir, s.secretKeyFile ?? `${file}.key`),
      tokenCacheSize,
    };
  }
  const connection = redisConnection(s, report);
  const timeoutMs = duration(s.timeout, 1, ['store', 'timeout']);
  // 0 would be ioredis's "no timeout": a Redis that stopped answering would hold every call.
  if (timeoutMs === 0) report(['store', 'timeout'], 'must be longer than 0');
  return {
    driver,
    connection,
    keyPrefix: s.keyPrefix ?? 'gateway:',
    timeoutMs,
    // With no database file to sit beside, the key sits in the config's data folder.
    secretKeyFile: path.resolve(dir, s.secretKeyFile ?? 'data/gateway.key'),
    tokenCacheSize,
  };
}

/** The one connection a Redis store names; every URL is checked as the driver will read it. */
function redisConnection(s: StoreConfig, report: Report): RedisSettings['connection'] {
  const given = REDIS_CONNECTIONS.filter((key) => s[key] !== undefined);
  if (given.length === 0) report(['store', 'driver'], 'redis needs one of url, cluster or sentinel');
  for (const key of given.slice(1)) report(['store', key], `only one of url, cluster or sentinel (${given[0]} is set)`);
  const checkUrl = (url: string, where: (string | number)[], cluster = false) => {
    try {
      // A Cluster has one database: a URL that names another would fail every command.
      if ((serverOptions(url).db ?? 0) !== 0 && cluster) report(where, 'a Cluster has only database 0: drop the path from the URL');
    } catch (err) {
      // serverOptions' messages never quote the URL, which may hold a password.
      report(where, (err as Error).message);
    }
  };
  if (s.sentinel !== undefined) {
    const { name, nodes, ...login } = s.sentinel;
    nodes.forEach((node, i) => {
      const port = Number(node.slice(node.lastIndexOf(':') + 1));
      if (port < 1 || port > 65535) report(['store', 'sentinel', 'nodes', i], 'the port must be 1 to 65535');
    });
    return { kind: 'sentinel', name, nodes, login };
  }
  if (s.cluster !== undefined) {
    s.cluster.forEach((url, i) => checkUrl(url, ['store', 'cluster', i], true));
    return { kind: 'cluster', urls: s.cluster };
  }
  const url = s.url ?? '';
  if (s.url !== undefined) checkUrl(url, ['store', 'url']);
  return { kind: 'server', url };
}

/** Runs each policy's own check (what its schema cannot say) and reports with the YAML path. */
function checkPolicies(entries: readonly PolicyEntry[], at: (string | number)[], site: PolicySite, report: Report): readonly PolicyEntry[] {
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

function authServerSettings(name: string, a: AuthServerConfig, url: URL, dir: string, timeoutMs: number): AuthServerSettings {
  return {
    name,
    url,
    allowInsecureHttp: a.allowInsecureHttp ?? false,
    timeoutMs,
    clientId: a.clientId,
    clientSecret: a.clientSecret,
    subjectField: a.subjectField ?? 'sub',
    ca: a.ca === undefined ? undefined : path.resolve(dir, a.ca),
  };
}

function upstreamSettings(
  name: string,
  u: UpstreamConfig,
  dir: string,
  duration: (v: DurationValue | undefined, fallbackSeconds: number, key: string) => number,
): UpstreamSettings {
  if ('echo' in u) return { kind: 'echo', name };
  if ('mock' in u) {
    return { kind: 'mock', name, status: u.mock.status ?? 200, headers: u.mock.headers ?? {}, body: u.mock.body ?? null };
  }
  const targets = (Array.isArray(u.url) ? u.url : [u.url]).map((href) => {
    const url = new URL(href);
    return { origin: url.origin, basePath: url.pathname.replace(/\/$/, '') };
  });
  return {
    kind: 'http',
    name,
    targets,
    retries: u.retries ?? (targets.length > 1 ? 1 : 0),
    failureThreshold: u.healthCheck?.failures ?? 3,
    cooldownMs: duration(u.healthCheck?.cooldown, 10, 'healthCheck'),
    connectTimeoutMs: duration(u.connectTimeout, 5, 'connectTimeout'),
    timeoutMs: duration(u.timeout, 30, 'timeout'),
    connections: u.connections ?? 128,
    ca: u.tls?.ca === undefined ? undefined : path.resolve(dir, u.tls.ca),
    servername: u.tls?.servername,
  };
}

/** Why a certificate chain and key cannot serve TLS (a file unreadable, not PEM, not a pair), or undefined. */
/** Why a file could not be read, in words. */
function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  return { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'a folder, not a file' }[code] ?? code;
}

/** What keeps the chain and key from serving TLS, and the key of `tls` it concerns (none: the pair); undefined when they can. */
function certificateProblem(certFile: string, keyFile: string): { at: ['cert'] | ['key'] | []; message: string } | undefined {
  const files: Partial<TlsFiles> = {};
  for (const [at, file] of [['cert', certFile], ['key', keyFile]] as const) {
    try {
      files[at] = readFileSync(file);
    } catch (err) {
      return { at: [at], message: `cannot read ${file}: ${readFailure(err)}` };
    }
  }
  try {
    checkCertificate(files as TlsFiles);
  } catch (err) {
    return { at: [], message: `the certificate and key cannot serve TLS: ${(err as Error).message}` };
  }
  return undefined;
}

/** Node refuses a header timeout longer than the request's, which includes the headers. */
function senderTimeouts(listen: ConfigFile['listen'], duration: (v: DurationValue | undefined, fallbackSeconds: number, where: (string | number)[]) => number, report: Report) {
  const headersMs = duration(listen.headersTimeout, 10, ['listen', 'headersTimeout']);
  const requestMs = duration(listen.requestTimeout, 60, ['listen', 'requestTimeout']);
  // 0 is Node's "no limit": a client could hold a connection without ever finishing its request,
  // and the listener would look for expired requests every millisecond.
  if (headersMs === 0) report(['listen', 'headersTimeout'], 'must be longer than 0');
  if (requestMs === 0) report(['listen', 'requestTimeout'], 'must be longer than 0');
  else if (headersMs > requestMs) report(['listen', 'headersTimeout'], 'must not be longer than listen.requestTimeout');
  return { headersMs, requestMs, keepAliveMs: duration(listen.keepAliveTimeout, 65, ['listen', 'keepAliveTimeout']) };
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function durationMs(value: DurationValue): number | undefined {
  if (typeof value === 'number') return value * 1000;
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(n) ? n : undefined;
}

// ${VAR} and ${VAR:-default} in any scalar value; $${ is a literal "${". A plain (unquoted) scalar
// that was wholly substituted is re-read as YAML, so `port: ${PORT:-8080}` stays a number.
const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function substituteEnv(
  doc: Document,
  env: Readonly<Record<string, string | undefined>>,
  report: (yamlPath: string, message: string, node: Node) => void,
): void {
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const original = node.value;
      let missing: string | undefined;
      const replaced = original.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
        if (name === undefined) return '${';
        const value = env[name];
        if (value !== undefined && value !== '') return value;
        if (fallback !== undefined) return fallback;
        missing ??= name;
        return match;
      });
      if (missing !== undefined) {
        report(yamlPathOf(ancestors, node), `environment variable ${missing} is not set and has no default`, node);
        return;
      }
      const whole = /^\$\{[^}]*\}$/.test(original);
      if (whole && node.type === 'PLAIN') {
        const reread = parseDocument(replaced).contents;
        if (isScalar(reread) && reread.value !== null) {
          node.value = reread.value;
          return;
        }
      }
      node.value = replaced;
    },
  });
}

function yamlPathOf(ancestors: readonly unknown[], node: unknown): string {
  const segments: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length; i++) {
    const here = chain[i];
    const next = chain[i + 1];
    if (isPair(here) && isScalar(here.key)) segments.push(String(here.key.value));
    else if (isSeq(here) && next !== undefined) segments.push(here.items.indexOf(next as never));
  }
  return formatPath(segments);
}

/** The node a path points at; for a mapping entry, its key (a block value starts on the next line). */
function nodeAt(doc: Document, segments: (string | number)[]): Node | undefined {
  let node: unknown = doc.contents;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return node as Node;
      if (i === segments.length - 1) return pair.key as Node;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
    } else {
      return node as Node | undefined;
    }
  }
  return node as Node | undefined;
}

export function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}

function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}

// For a failed anyOf, report only the errors of the branch that came closest, outermost union
// first: "upstreams.a.mock.status: must be <= 599" rather than the errors of every branch.
function pickUnionBranch(errors: readonly ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf').sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  let kept = errors.filter((e) => e.keyword !== 'anyOf');
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const inside = (e: ErrorObject) =>
      e.schemaPath.startsWith(prefix) && (e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`));
    const branches = new Map<string, ErrorObject[]>();
    for (const e of kept) {
      if (!inside(e)) continue;
      const branch = e.schemaPath.slice(prefix.length).split('/')[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    // A branch whose type does not even match the value is the least likely intent.
    const score = (list: ErrorObject[]) =>
      list.length + (list.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath) ? 100 : 0);
    const best = [...branches.values()].sort((a, b) => score(a) - score(b))[0];
    if (best !== undefined) kept = kept.filter((e) => !inside(e) || best.includes(e));
  }
  return kept;
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.path}|${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (value instanceof Map) for (const v of value.values()) deepFreeze(v);
    else if (value instanceof Set) return value;
    else for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
