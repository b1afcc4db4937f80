// The sections that stand on their own: listeners, store, portal, mail, authorization servers,
// upstreams, and the certificates they name. Values come from the file with the schema's defaults
// filled in (./defaults.ts); these add what depends on other options and check what the schema cannot.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { pemCertificates } from '../http/client-certificate.ts';
import { parseEntry } from '../http/ip.ts';
import { checkCertificate, type TlsFiles } from '../http/listener.ts';
import type { StoreSettings } from '../store/open.ts';
import { serverOptions, type RedisSettings } from '../store/redis/settings.ts';
import { defaulted as d } from './defaults.ts';
import { readFailure, type Report, type Segments } from './errors.ts';
import { Portal, type AuthServerConfig, type ConfigFile, type DurationValue, type MailConfig, type StoreConfig, type UpstreamConfig } from './schema.ts';
import type { AuthServerSettings, Config, MailSettings, TraceSettings, UpstreamSettings, UsageStreamSettings } from './types.ts';

/** What a section is read with: the config file's folder, and where to report a problem. */
export interface Site {
  dir: string;
  report: Report;
  /** A duration in milliseconds; one too long to count is reported. */
  duration(value: DurationValue | undefined, where: Segments): number;
}

export function createSite(dir: string, report: Report): Site {
  return {
    dir,
    report,
    duration(value, where) {
      const ms = durationMs(d(value));
      if (ms === undefined) report(where, 'is not a valid duration');
      return ms ?? 0;
    },
  };
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function durationMs(value: DurationValue): number | undefined {
  if (typeof value === 'number') return value * 1000;
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(value);
  if (!m) return undefined;
  const n = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(n) ? n : undefined;
}

export function listenSettings(c: ConfigFile, site: Site): Config['listen'] {
  const { listen } = c;
  d(listen.trustedProxies).forEach((entry, i) => {
    if (parseEntry(entry) === undefined) site.report(['listen', 'trustedProxies', i], `"${entry}" is not an IP address or CIDR range`);
  });
  const tls = listen.tls && {
    cert: path.resolve(site.dir, listen.tls.cert),
    key: path.resolve(site.dir, listen.tls.key),
    clientCa: listen.tls.clientCa === undefined ? undefined : path.resolve(site.dir, listen.tls.clientCa),
  };
  if (tls !== undefined) {
    const problem = certificateProblem(tls.cert, tls.key);
    if (problem !== undefined) site.report(['listen', 'tls', ...problem.at], problem.message);
    const caProblem = tls.clientCa === undefined ? undefined : authoritiesProblem(tls.clientCa);
    if (caProblem !== undefined) site.report(['listen', 'tls', 'clientCa'], caProblem);
  }
  const header = listen.clientCertificateHeader;
  if (header !== undefined && d(listen.trustedProxies).length === 0) {
    site.report(['listen', 'clientCertificateHeader'], 'is read only from listen.trustedProxies, and there are none: name the proxies that set it');
  }
  return {
    host: d(listen.host),
    port: listen.port,
    trustedProxies: d(listen.trustedProxies),
    maxBodySize: d(listen.maxBodySize),
    dropHeaders: d(listen.dropHeaders),
    publicHost: listen.publicHost,
    timeouts: senderTimeouts(listen, site),
    tls,
    clientCertificateHeader: header && { name: header.name.toLowerCase(), format: header.format },
  };
}

/** Why a file of certificate authorities cannot be one (unreadable, or no PEM certificate in it); undefined when it can. */
function authoritiesProblem(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return `cannot read ${file}: ${readFailure(err)}`;
  }
  const certificates = pemCertificates(text);
  if (certificates.length === 0) return `${file} holds no PEM certificate`;
  try {
    for (const pem of certificates) new X509Certificate(pem);
  } catch (err) {
    return `${file} holds a certificate that cannot be read: ${(err as Error).message}`;
  }
  return undefined;
}

/** Node refuses a header timeout longer than the request's, which includes the headers. */
function senderTimeouts(listen: ConfigFile['listen'], { duration, report }: Site): Config['listen']['timeouts'] {
  const headersMs = duration(listen.headersTimeout, ['listen', 'headersTimeout']);
  const requestMs = duration(listen.requestTimeout, ['listen', 'requestTimeout']);
  // 0 is Node's "no limit": a client could hold a connection without ever finishing its request,
  // and the listener would look for expired requests every millisecond.
  if (headersMs === 0) report(['listen', 'headersTimeout'], 'must be longer than 0');
  if (requestMs === 0) report(['listen', 'requestTimeout'], 'must be longer than 0');
  else if (headersMs > requestMs) report(['listen', 'headersTimeout'], 'must not be longer than listen.requestTimeout');
  return {
    headersMs,
    requestMs,
    keepAliveMs: duration(listen.keepAliveTimeout, ['listen', 'keepAliveTimeout']),
    lingering: { ms: duration(listen.lingeringTime, ['listen', 'lingeringTime']), idleMs: duration(listen.lingeringTimeout, ['listen', 'lingeringTimeout']), bytes: d(listen.lingeringBytes) },
  };
}

/** The sections that need no checks beyond the schema's. */
export function plainSections(c: ConfigFile, site: Site): Pick<Config, 'shutdownTimeoutMs' | 'admin' | 'log' | 'workers' | 'telemetry'> {
  const admin = d(c.admin);
  const log = d(c.log);
  return {
    shutdownTimeoutMs: site.duration(c.shutdownTimeout, ['shutdownTimeout']),
    admin: admin === false ? undefined : { host: d(admin.host), port: d(admin.port) },
    log: { level: d(log.level), access: d(log.access) },
    workers: c.workers === 'auto' ? availableParallelism() : d(c.workers),
    telemetry: { traces: traceSettings(d(c.telemetry).traces, site), usage: usageStreamSettings(c, site) },
  };
}

function usageStreamSettings(c: ConfigFile, site: Site): UsageStreamSettings | undefined {
  const usage = d(c.telemetry).usage;
  if (usage === undefined) return undefined;
  const at = ['telemetry', 'usage'];
  if ((usage.file === undefined) === (usage.url === undefined)) {
    site.report(at, 'give one of file and url');
    return undefined;
  }
  // Each worker thread has its own stream: one file written and rotated by several would mix and lose lines.
  if (usage.file !== undefined && d(c.workers) !== 1) site.report([...at, 'file'], 'with several workers, send the events to a url (each worker would write and rotate the same file)');
  const kept = { batchSize: d(usage.batchSize), flushIntervalMs: site.duration(usage.flushInterval, [...at, 'flushInterval']), bufferSize: d(usage.bufferSize) };
  if (usage.file !== undefined) return { sink: { kind: 'file', path: path.resolve(site.dir, usage.file), maxFileSize: d(usage.maxFileSize), keepFiles: d(usage.keepFiles) }, ...kept };
  if (exportUrl(usage.url!, [...at, 'url'], site) === undefined) return undefined;
  return { sink: { kind: 'url', url: usage.url!, headers: d(usage.headers) }, ...kept };
}

/** Where telemetry goes: a URL without a user and password, which the log would show (a key goes in `headers`). */
function exportUrl(value: string, at: Segments, site: Site): URL | undefined {
  const url = URL.parse(value);
  if (url === null) site.report(at, `not a URL: ${value}`);
  else if (url.username !== '' || url.password !== '') site.report(at, 'give credentials in headers, not in the URL');
  else return url;
  return undefined;
}

function traceSettings(traces: NonNullable<ConfigFile['telemetry']>['traces'], site: Site): TraceSettings | undefined {
  if (traces === undefined) return undefined;
  const url = exportUrl(traces.endpoint, ['telemetry', 'traces', 'endpoint'], site);
  if (url === undefined) return undefined;
  // OTLP/HTTP's path for traces, after a collector's address given without one.
  if (url.pathname === '/') url.pathname = '/v1/traces';
  return { endpoint: url.href, headers: d(traces.headers), sampleRatio: d(traces.sampleRatio) };
}

export function managementSettings(c: ConfigFile, site: Site): Config['management'] {
  const { management } = c;
  if (management === undefined) return undefined;
  const tls = management.tls && { cert: path.resolve(site.dir, management.tls.cert), key: path.resolve(site.dir, management.tls.key) };
  if (tls !== undefined) {
    const problem = certificateProblem(tls.cert, tls.key);
    if (problem !== undefined) site.report(['management', 'tls', ...problem.at], problem.message);
  }
  const lifetimeMs = site.duration(management.accessTokenLifetime, ['management', 'accessTokenLifetime']);
  if (lifetimeMs < 1000) site.report(['management', 'accessTokenLifetime'], 'must be at least 1s');
  return { host: d(management.host), port: d(management.port), tls, accessTokenLifetime: Math.floor(lifetimeMs / 1000) };
}

/** portal.keyOverlap, or the schema's default for it: operators rotate keys whether or not the file has a portal. */
export function keyOverlapMs(c: ConfigFile, site: Site): number {
  return site.duration(c.portal?.keyOverlap ?? (Portal.properties.keyOverlap.default as DurationValue), ['portal', 'keyOverlap']);
}

export function portalSettings(c: ConfigFile, site: Site): Config['portal'] {
  const { portal } = c;
  if (portal === undefined) return undefined;
  // Open sign-up proves the address with a mailed link: without a way to mail it, nobody could.
  if (portal.signup === 'open' && c.mail === undefined) {
    site.report(['portal', 'signup'], 'open sign-up mails a link to confirm the address: add a "mail" section (smtp, or log: true for development), or use signup: invited');
  }
  return {
    host: d(portal.listen.host),
    port: portal.listen.port,
    tls: portal.listen.tls && { cert: path.resolve(site.dir, portal.listen.tls.cert), key: path.resolve(site.dir, portal.listen.tls.key) },
    title: d(portal.title),
    publicUrl: portal.publicUrl === undefined ? undefined : new URL(portal.publicUrl).origin,
    gatewayUrl: portal.gatewayUrl ?? `http://localhost:${c.listen.port}`,
    signup: portal.signup ?? (c.mail === undefined ? 'invited' : 'open'),
    sessionLifetimeMs: site.duration(portal.sessionLifetime, ['portal', 'sessionLifetime']),
    keyOverlapMs: site.duration(portal.keyOverlap, ['portal', 'keyOverlap']),
    maxAppsPerDeveloper: d(portal.maxAppsPerDeveloper),
  };
}

export function mailSettings(m: MailConfig | undefined, dir: string): MailSettings | undefined {
  if (m === undefined) return undefined;
  if ('log' in m) return { from: m.from, kind: 'log' };
  const { smtp } = m;
  return {
    from: m.from,
    kind: 'smtp',
    host: smtp.host,
    port: smtp.port,
    secure: d(smtp.secure),
    allowPlaintext: d(smtp.allowPlaintext),
    auth: smtp.auth,
    ca: smtp.ca === undefined ? undefined : path.resolve(dir, smtp.ca),
  };
}

const SQLITE_ONLY = ['path', 'busyTimeout'] as const;
const REDIS_ONLY = ['url', 'cluster', 'sentinel', 'keyPrefix', 'timeout'] as const;
const REDIS_CONNECTIONS = ['url', 'cluster', 'sentinel'] as const;

/** `given`: the store section as written, which tells the keys set from those the schema's defaults filled in. */
export function storeSettings(s: StoreConfig, given: StoreConfig, site: Site): StoreSettings {
  const { dir, report, duration } = site;
  const driver = d(s.driver);
  const tokenCacheSize = d(s.tokenCacheSize);
  for (const key of driver === 'sqlite' ? REDIS_ONLY : SQLITE_ONLY) {
    if (given[key] !== undefined) report(['store', key], `only with driver: ${driver === 'sqlite' ? 'redis' : 'sqlite'}`);
  }
  if (driver === 'sqlite') {
    const file = path.resolve(dir, d(s.path));
    return { driver, path: file, busyTimeoutMs: duration(s.busyTimeout, ['store', 'busyTimeout']), secretKeyFile: path.resolve(dir, s.secretKeyFile ?? `${file}.key`), tokenCacheSize };
  }
  const connection = redisConnection(s, report);
  const timeoutMs = duration(s.timeout, ['store', 'timeout']);
  // 0 would be ioredis's "no timeout": a Redis that stopped answering would hold every call.
  if (timeoutMs === 0) report(['store', 'timeout'], 'must be longer than 0');
  return {
    driver,
    connection,
    keyPrefix: d(s.keyPrefix),
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
    s.cluster.forEach((url, i) => {
      checkUrl(url, ['store', 'cluster', i], true);
    });
    return { kind: 'cluster', urls: s.cluster };
  }
  const url = s.url ?? '';
  if (s.url !== undefined) checkUrl(url, ['store', 'url']);
  return { kind: 'server', url };
}

export function authServerSettings(raw: ConfigFile['authServers'], site: Site): Map<string, AuthServerSettings> {
  const authServers = new Map<string, AuthServerSettings>();
  for (const [name, a] of Object.entries(d(raw))) {
    const url = new URL(a.url);
    if (url.protocol === 'http:' && a.allowInsecureHttp !== true) {
      site.report(['authServers', name, 'url'], 'must use https (set allowInsecureHttp: true to allow plain http)');
    }
    authServers.set(name, authServer(name, a, url, site));
  }
  return authServers;
}

function authServer(name: string, a: AuthServerConfig, url: URL, site: Site): AuthServerSettings {
  return {
    name,
    url,
    allowInsecureHttp: d(a.allowInsecureHttp),
    timeoutMs: site.duration(a.timeout, ['authServers', name, 'timeout']),
    clientId: a.clientId,
    clientSecret: a.clientSecret,
    subjectField: d(a.subjectField),
    ca: a.ca === undefined ? undefined : path.resolve(site.dir, a.ca),
  };
}

export function upstreamSettings(raw: ConfigFile['upstreams'], site: Site): Map<string, UpstreamSettings> {
  return new Map(Object.entries(raw).map(([name, u]) => [name, upstream(name, u, site)]));
}

function upstream(name: string, u: UpstreamConfig, site: Site): UpstreamSettings {
  if ('echo' in u) return { kind: 'echo', name, audience: name };
  if ('mock' in u) return { kind: 'mock', name, audience: name, status: d(u.mock.status), headers: d(u.mock.headers), body: u.mock.body ?? null };
  const targets = (Array.isArray(u.url) ? u.url : [u.url]).map((href) => {
    const url = new URL(href);
    return { origin: url.origin, basePath: url.pathname.replace(/\/$/, '') };
  });
  const at = (key: string) => ['upstreams', name, key];
  const healthCheck = d(u.healthCheck);
  return {
    kind: 'http',
    name,
    audience: u.audience ?? name,
    targets,
    retries: u.retries ?? (targets.length > 1 ? 1 : 0),
    failureThreshold: healthCheck.failures,
    cooldownMs: site.duration(healthCheck.cooldown, at('healthCheck')),
    connectTimeoutMs: site.duration(u.connectTimeout, at('connectTimeout')),
    timeoutMs: site.duration(u.timeout, at('timeout')),
    connections: d(u.connections),
    ca: u.tls?.ca === undefined ? undefined : path.resolve(site.dir, u.tls.ca),
    servername: u.tls?.servername,
  };
}

/** What keeps the chain and key from serving TLS, and the key of `tls` it concerns (none: the pair); undefined when they can. */
function certificateProblem(certFile: string, keyFile: string): { at: ['cert'] | ['key'] | []; message: string } | undefined {
  const files: Partial<TlsFiles> = {};
  for (const [at, file] of [
    ['cert', certFile],
    ['key', keyFile],
  ] as const) {
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
