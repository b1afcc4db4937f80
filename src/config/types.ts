// The loaded configuration: every section checked, every default filled in, paths absolute.
import type { PolicyEntry, GrantTypeName } from './schema.ts';
import type { ApiDocument, Operation } from '../openapi/document.ts';
import type { QuotaSettings } from '../policies/quota.ts';
import type { StoreSettings } from '../store/open.ts';
import type { SigningAlgorithm } from '../store/port/index.ts';

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

export interface IdentityProviderSettings {
  name: string;
  /** The issuer as written (no trailing slash added or taken away: the ID token's iss must equal it). */
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** openid first, then the others asked. */
  scopes: readonly string[];
  subjectClaim: string;
  allowInsecureHttp: boolean;
  timeoutMs: number;
}

/** Who logs a product's users in: an OpenID provider, or an authorization server behind the gateway's login page. */
export type LoginSettings = { kind: 'identityProvider'; name: string } | { kind: 'authServer'; name: string };

/** A product's authorization code grant. */
export interface AuthorizationSettings {
  login: LoginSettings;
  /** skip: first-party apps, no consent page. */
  consent: 'required' | 'skip';
  consentLifetimeMs: number;
  /** RFC 9126: only pushed requests are taken. */
  requirePar: boolean;
  codeLifetimeMs: number;
}

export type UpstreamSettings =
  | {
      kind: 'http';
      name: string;
      /** The `aud` of its identity tokens. */
      audience: string;
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
  | { kind: 'mock'; name: string; audience: string; status: number; headers: Readonly<Record<string, string>>; body: unknown }
  | { kind: 'echo'; name: string; audience: string };

export interface RouteSettings {
  name: string;
  method: string;
  path: string;
  upstream: string;
  scopes: readonly string[];
  /** Only tokens with a subject (a user's) may call it. */
  requireSubject: boolean;
  /** How its upstream learns who calls; undefined: as the token's product says. */
  upstreamIdentity: UpstreamIdentity | undefined;
  /** Its answers carry the RateLimit headers of its quotas and spike arrests (unless the token's product says otherwise). */
  rateLimitHeaders: boolean;
  /** Products whose tokens may call this route. */
  products: ReadonlySet<string>;
  policies: readonly PolicyEntry[];
  /** The OpenAPI operation the route is (`api`: its document's name under `openapi`); undefined for a route written out. */
  operation: { api: string; operation: Operation } | undefined;
}

export interface ProductSettings {
  name: string;
  displayName: string;
  description: string;
  routes: readonly string[];
  scopes: readonly string[];
  grants: ReadonlySet<GrantTypeName>;
  authServer: string | undefined;
  accessTokenLifetime: number;
  accessTokenFormat: 'opaque' | 'jwt';
  /** The `aud` of its JWT access tokens. */
  audience: string;
  /** dpop or mtls: every token of the product is bound to a DPoP key or a client certificate; none: bound only when the token request carries a proof or a certificate. */
  senderConstraint: 'none' | 'dpop' | 'mtls';
  upstreamIdentity: UpstreamIdentity;
  refreshTokenLifetime: number;
  refreshReuseGraceMs: number;
  quota: QuotaSettings | undefined;
  /** Answers to its tokens may carry RateLimit headers (false: never, whatever the route says). */
  rateLimitHeaders: boolean;
  /** Shown in the developer portal. */
  visible: boolean;
  /** manual: apps registered in the portal start pending until an operator approves them. */
  approval: 'auto' | 'manual';
  /** The authorization code grant's settings; undefined when the product does not offer it. */
  authorization: AuthorizationSettings | undefined;
}

/** Where OpenTelemetry traces go, and how many. */
export interface TraceSettings {
  /** The OTLP/HTTP traces URL, with its path. */
  endpoint: string;
  headers: Readonly<Record<string, string>>;
  sampleRatio: number;
}

/** Where the per-call usage events go, and how many wait at most. */
export interface UsageStreamSettings {
  sink: { kind: 'file'; path: string; maxFileSize: number; keepFiles: number } | { kind: 'url'; url: string; headers: Readonly<Record<string, string>> };
  batchSize: number;
  flushIntervalMs: number;
  bufferSize: number;
}

/** headers: X-Gateway-* headers; jwt: an identity token signed with the gateway's keys; token: the caller's JWT access token. */
export type UpstreamIdentity = 'headers' | 'jwt' | 'token';

export interface SigningSettings {
  algorithm: SigningAlgorithm;
  rotateEveryMs: number;
  publishAheadMs: number;
  /** How long a key stays published after its last signature. */
  retireAfterMs: number;
  identity: { header: string; lifetime: number };
  /** Whether anything signs: a product issues JWTs, or an upstream gets identity tokens. */
  used: boolean;
}

/** RFC 9449: how proofs are checked. */
export interface DpopSettings {
  /** How old a proof may be; its jti is remembered as long. */
  maxAgeMs: number;
  /** Proofs must carry a nonce of the gateway's. */
  nonce: boolean;
}

export interface ManagementSettings {
  host: string;
  port: number;
  /** HTTPS with this certificate chain and key (absolute paths of PEM files). */
  tls: { cert: string; key: string } | undefined;
  /** Seconds a management client's access token works. */
  accessTokenLifetime: number;
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
    timeouts: { headersMs: number; requestMs: number; keepAliveMs: number; lingering: { ms: number; idleMs: number; bytes: number } };
    /** HTTPS with this certificate chain and key (absolute paths of PEM files), asking clients for certificates of `clientCa`. */
    tls: { cert: string; key: string; clientCa: string | undefined } | undefined;
    /** Where a trusted proxy in front says which certificate its client presented; the name lower-cased. */
    clientCertificateHeader: { name: string; format: 'envoy' | 'nginx' } | undefined;
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
    signing: SigningSettings;
    dpop: DpopSettings;
  };
  portal: PortalSettings | undefined;
  /** The management API's listener; undefined: none. */
  management: ManagementSettings | undefined;
  /** How long a rotated key keeps working: portal.keyOverlap, or its default when the file has no portal (`gateway admin keys rotate` runs without one). */
  keyOverlapMs: number;
  mail: MailSettings | undefined;
  telemetry: { traces: TraceSettings | undefined; usage: UsageStreamSettings | undefined };
  authServers: ReadonlyMap<string, AuthServerSettings>;
  identityProviders: ReadonlyMap<string, IdentityProviderSettings>;
  upstreams: ReadonlyMap<string, UpstreamSettings>;
  routes: ReadonlyMap<string, RouteSettings>;
  /** The OpenAPI documents under `openapi`, read and resolved. */
  openapi: ReadonlyMap<string, ApiDocument>;
  products: ReadonlyMap<string, ProductSettings>;
}
