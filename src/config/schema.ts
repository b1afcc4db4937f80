// The one source of truth for the configuration file: ajv validates against `configSchema`,
// the TypeScript type is derived from it, and `gateway config schema` prints it for editors.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { policySchema, QuotaOptions } from '../policies/index.ts';
import { Duration, Name, Strict } from '../fragments.ts';

export { Duration };

const Scope = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' }); // RFC 6749 §3.3 scope-token
const Method = Type.Union(
  ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => Type.Literal(m)),
);
const GrantType = Type.Union([
  Type.Literal('client_credentials'),
  Type.Literal('password'),
  Type.Literal('refresh_token'),
]);

const Listener = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1 })),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    /** Peers whose X-Forwarded-For is believed: addresses or CIDR ranges of your load balancers. */
    trustedProxies: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Largest request body a route forwards, in bytes (default 10 MiB); a larger Content-Length gets 413 at once. */
    maxBodySize: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Request headers never forwarded, besides the built-in list of client-identity headers (True-Client-IP, X-Remote-User…). */
    dropHeaders: Type.Optional(Type.Array(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$' }), { uniqueItems: true })),
    /** The host[:port] clients reach the gateway by, sent upstream as X-Forwarded-Host unless a trusted proxy says otherwise; absent: none is sent. */
    publicHost: Type.Optional(Type.String({ pattern: '^([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$' })),
    /** A client that has not sent its headers within this time gets 408 (default 10s). */
    headersTimeout: Type.Optional(Duration),
    /** A client that has not sent its whole request within this time gets 408 (default 60s). */
    requestTimeout: Type.Optional(Duration),
    /** How long an idle keep-alive connection stays open (default 65s: longer than a load balancer's idle timeout, commonly 60s, so it is the balancer that closes it). */
    keepAliveTimeout: Type.Optional(Duration),
    /** Serve HTTPS (TLS 1.2 or later) with this certificate chain and key, PEM files; a reload reads them again. */
    tls: Type.Optional(Type.Object({ cert: Type.String({ minLength: 1 }), key: Type.String({ minLength: 1 }) }, Strict)),
  },
  Strict,
);

/** The operators' listener: /healthz, /readyz, /metrics and POST /reload, unauthenticated, so loopback unless you say otherwise. */
const Admin = Type.Union([
  Type.Object(
    {
      host: Type.Optional(Type.String({ minLength: 1 })),
      port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    },
    Strict,
  ),
  Type.Literal(false),
]);

/** scheme://host[:port], the host a DNS name, an IPv4 address or a bracketed IPv6 address, the port 1 to 65535: nothing a CSP source or a Host check reads otherwise. */
const HOST_NAME = '[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?';
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?';
const ORIGIN = `^https?://(?:${HOST_NAME}|\\[[0-9A-Fa-f:.]+\\])${PORT}$`;
/** An origin a CSP source can name: a CSP host-source has no bracketed IPv6 address. */
const CSP_ORIGIN = `^https?://${HOST_NAME}${PORT}$`;

const Portal = Type.Object(
  {
    /** The portal's own listener; over TLS when `tls` names a certificate and its key (PEM files). */
    listen: Type.Object(
      {
        host: Type.Optional(Type.String({ minLength: 1 })),
        port: Type.Integer({ minimum: 0, maximum: 65535 }),
        tls: Type.Optional(Type.Object({ cert: Type.String({ minLength: 1 }), key: Type.String({ minLength: 1 }) }, Strict)),
      },
      Strict,
    ),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    /**
     * The portal's own address as browsers reach it (default http(s)://localhost:<listen.port>): the
     * links it mails, and the one Host (besides the loopback names, when it binds loopback) it answers.
     */
    publicUrl: Type.Optional(Type.String({ pattern: ORIGIN })),
    /**
     * The gateway's address as developers reach it, for the portal's examples (default
     * http://localhost:<listen.port>); its origin is the pages' CSP connect-src, so a host name or
     * IPv4 address only: `http://*` would let the pages reach any host, `http://a;b` would end the
     * directive, and a CSP source cannot name an IPv6 address.
     */
    gatewayUrl: Type.Optional(Type.String({ pattern: CSP_ORIGIN })),
    /**
     * open: anyone may sign up, and confirms the address through a mailed link (needs `mail`);
     * invited: only developers an operator created (`gateway admin developers create`).
     * Default: open when `mail` is set, else invited.
     */
    signup: Type.Optional(Type.Unsafe<'open' | 'invited'>({ type: 'string', enum: ['open', 'invited'] })),
    sessionLifetime: Type.Optional(Duration),
    /** After a secret is rotated, the old key and secret keep working this long (default 24h). */
    keyOverlap: Type.Optional(Duration),
    /** How many apps a developer can hold through the portal (default 10); operators are not bound by it. */
    maxAppsPerDeveloper: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  },
  Strict,
);

const Address = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\r\\n]*@[^\\r\\n]*$' });

/** How the portal mails its links: an SMTP server, or (development) the gateway's own log. */
const Mail = Type.Union([
  Type.Object(
    {
      /** The sender: an address, or `Name <address>`. */
      from: Address,
      smtp: Type.Object(
        {
          host: Type.String({ minLength: 1 }),
          port: Type.Integer({ minimum: 1, maximum: 65535 }),
          /** true: TLS from the first byte (port 465); false (default): STARTTLS when the server offers it. */
          secure: Type.Optional(Type.Boolean()),
          /** false (default): refuse to send unless the connection is TLS (secure, or STARTTLS). */
          allowPlaintext: Type.Optional(Type.Boolean()),
          auth: Type.Optional(Type.Object({ user: Type.String({ minLength: 1 }), pass: Type.String({ minLength: 1 }) }, Strict)),
          /** PEM file of the CA that signed the server's certificate, when not a public one. */
          ca: Type.Optional(Type.String({ minLength: 1 })),
        },
        Strict,
      ),
    },
    Strict,
  ),
  /** Each message, link included, goes to the log at info level (development; the example uses it). */
  Type.Object({ from: Address, log: Type.Literal(true) }, Strict),
]);

/** A Redis URL: redis://[user:password@]host[:port][/db], or rediss:// for TLS. */
const RedisUrl = Type.String({ minLength: 1 });

/**
 * Where the gateway keeps developers, apps, tokens and counts. driver: sqlite (default) is one
 * file, for one machine; driver: redis is shared by every gateway that names the same Redis and
 * keyPrefix. Keys of one driver are refused with the other.
 */
const Store = Type.Object(
  {
    driver: Type.Optional(Type.Unsafe<'sqlite' | 'redis'>({ type: 'string', enum: ['sqlite', 'redis'] })),
    /** sqlite: the database file (default data/gateway.db). */
    path: Type.Optional(Type.String({ minLength: 1 })),
    /** sqlite: how long a write waits for a lock another process holds before the call is answered 503 (default 2s). */
    busyTimeout: Type.Optional(Duration),
    /** redis: one server. */
    url: Type.Optional(RedisUrl),
    /** redis: seed URLs of a Redis Cluster; the login and TLS of the first apply to every node. */
    cluster: Type.Optional(Type.Array(RedisUrl, { minItems: 1 })),
    /** redis: the Sentinels that name the primary `name`, and the login of the primary. */
    sentinel: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          nodes: Type.Array(Type.String({ pattern: '^([A-Za-z0-9._-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}$' }), { minItems: 1 }),
          username: Type.Optional(Type.String({ minLength: 1 })),
          password: Type.Optional(Type.String({ minLength: 1 })),
          db: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        Strict,
      ),
    ),
    /** redis: starts every key and the changes channel (default "gateway:"); no braces, which would change the keys' hash tags. */
    keyPrefix: Type.Optional(Type.String({ pattern: '^[^{}]*$' })),
    /** redis: how long one command may take before the call is answered 503 (default 1s). */
    timeout: Type.Optional(Duration),
    /** File holding the key for the keyed hash of app secrets; created (mode 0600) when missing. Every gateway of one store needs the same. */
    secretKeyFile: Type.Optional(Type.String({ minLength: 1 })),
    tokenCacheSize: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  Strict,
);

const Log = Type.Object(
  {
    level: Type.Optional(
      Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    ),
    access: Type.Optional(Type.Boolean()),
  },
  Strict,
);

const OAuth = Type.Object(
  {
    realm: Type.Optional(Type.String({ minLength: 1, pattern: '^[^"\\\\]*$' })),
    /** RFC 8414: the gateway's address as clients reach it (https, or http on localhost); the metadata document is served only when it is set. */
    issuer: Type.Optional(Type.String({ pattern: '^https://[^/?#]+$|^http://(localhost|127\\.0\\.0\\.1|\\[::1\\])(:[0-9]+)?$' })),
    /** RFC 7662: who may call POST /oauth2/introspect (your backends); absent: the endpoint is not served. */
    introspection: Type.Optional(
      Type.Object({ clients: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), secret: Type.String({ minLength: 16 }) }, Strict), { minItems: 1 }) }, Strict),
    ),
    /** Policies of the token endpoint (and revocation and introspection): ipAccess, spikeArrest keyed by ip or route, cors. */
    policies: Type.Optional(Type.Array(policySchema)),
  },
  Strict,
);

const AuthServer = Type.Object(
  {
    url: Type.String({ pattern: '^https?://' }),
    /** Plain HTTP is refused unless this is set (loopback demos and tests). */
    allowInsecureHttp: Type.Optional(Type.Boolean()),
    timeout: Type.Optional(Duration),
    clientId: Type.Optional(Type.String()),
    clientSecret: Type.Optional(Type.String()),
    /** Field of the authorization server's JSON answer that names the subject; the username when absent. */
    subjectField: Type.Optional(Type.String({ minLength: 1 })),
    ca: Type.Optional(Type.String({ minLength: 1 })),
  },
  Strict,
);

const Tls = Type.Object(
  {
    ca: Type.Optional(Type.String({ minLength: 1 })),
    servername: Type.Optional(Type.String({ minLength: 1 })),
  },
  Strict,
);

const TargetUrl = Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$' });

const HttpUpstream = Type.Object(
  {
    /** One target, or several taken in turn (round-robin). */
    url: Type.Union([TargetUrl, Type.Array(TargetUrl, { minItems: 1, uniqueItems: true })]),
    connectTimeout: Type.Optional(Duration),
    timeout: Type.Optional(Duration),
    connections: Type.Optional(Type.Integer({ minimum: 1 })),
    tls: Type.Optional(Tls),
    /** Further targets tried when one cannot be reached; idempotent methods only, before any answer. */
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    /** Passive health check: after `failures` failures in a row a target is skipped for `cooldown`. */
    healthCheck: Type.Optional(Type.Object({ failures: Type.Integer({ minimum: 1 }), cooldown: Duration }, Strict)),
  },
  Strict,
);

const MockUpstream = Type.Object(
  {
    mock: Type.Object(
      {
        status: Type.Optional(Type.Integer({ minimum: 200, maximum: 599 })),
        headers: Type.Optional(Type.Record(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$' }), Type.String(), Strict)),
        body: Type.Optional(Type.Unknown()),
      },
      Strict,
    ),
  },
  Strict,
);

const EchoUpstream = Type.Object({ echo: Type.Literal(true) }, Strict);

const Upstream = Type.Union([HttpUpstream, MockUpstream, EchoUpstream]);

const Route = Type.Object(
  {
    method: Method,
    /** Exact path, or segments of the form {name}. */
    path: Type.String({ pattern: '^(/([A-Za-z0-9._~!$&\'()*+,=:@-]+|\\{[A-Za-z_][A-Za-z0-9_]*\\}))+$|^/$' }),
    upstream: Name,
    scopes: Type.Optional(Type.Array(Scope, { uniqueItems: true })),
    /** Only tokens issued for a user (password grant, and refresh_token after it) may call the route; others get 403. */
    requireSubject: Type.Optional(Type.Boolean()),
    /** Run in the seed's order: access policies (YAML order), request validation, the upstream, response policies. */
    policies: Type.Optional(Type.Array(policySchema)),
  },
  Strict,
);

const Policies = Type.Object({ policies: Type.Array(policySchema) }, Strict);

/** An OpenAPI 3.0 or 3.1 document whose every operation is a route, named by its operationId. */
const OpenApi = Type.Object(
  {
    /** The document (YAML or JSON); its $refs to files beside it are followed. */
    file: Type.String({ minLength: 1 }),
    upstream: Name,
    /** Put before every path of the document (default: the path of its first server's URL, such as /v1). */
    basePath: Type.Optional(Type.String({ pattern: '^(/[A-Za-z0-9._~!$&\'()*+,=:@-]+)*$' })),
    /** Policies of every operation; then those of each of its tags, then its own (`operations`). */
    policies: Type.Optional(Type.Array(policySchema)),
    tags: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Policies, Strict)),
    operations: Type.Optional(Type.Record(Name, Policies, Strict)),
    /** Only tokens issued for a user may call its operations. */
    requireSubject: Type.Optional(Type.Boolean()),
  },
  Strict,
);

const Product = Type.Object(
  {
    displayName: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    /** Routes by name; an OpenAPI document's operations are routes named by their operationId. */
    routes: Type.Optional(Type.Array(Name, { minItems: 1, uniqueItems: true })),
    /** Every operation of these documents (names under `openapi`). */
    openapi: Type.Optional(Type.Array(Name, { minItems: 1, uniqueItems: true })),
    scopes: Type.Optional(Type.Array(Scope, { uniqueItems: true })),
    grants: Type.Optional(Type.Array(GrantType, { minItems: 1, uniqueItems: true })),
    authServer: Type.Optional(Name),
    accessTokenLifetime: Type.Optional(Duration),
    refreshTokenLifetime: Type.Optional(Duration),
    /** A spent refresh token presented again within this time gets 401 without revoking its family. */
    refreshReuseGrace: Type.Optional(Duration),
    /** Calls per app across the product's routes; a route's own quota can tighten it. */
    quota: Type.Optional(QuotaOptions),
    /** Shown in the developer portal, where developers register apps for it. */
    portal: Type.Optional(Type.Boolean()),
    /** manual: apps registered in the portal wait for `gateway admin apps approve` (default with the password grant); auto: they work at once. */
    approval: Type.Optional(Type.Unsafe<'auto' | 'manual'>({ type: 'string', enum: ['auto', 'manual'] })),
  },
  Strict,
);

export const configSchema = Type.Object(
  {
    listen: Listener,
    store: Type.Optional(Store),
    log: Type.Optional(Log),
    /** Worker threads sharing the listening port (SO_REUSEPORT), quotas and spike arrests; auto: one per core. */
    workers: Type.Optional(Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 1, maximum: 256 })])),
    oauth: Type.Optional(OAuth),
    /** How long a stop (SIGTERM, SIGINT) waits for calls in flight before it cuts them (default 30s). */
    shutdownTimeout: Type.Optional(Duration),
    /** The admin listener (default 127.0.0.1:9901); false: none. */
    admin: Type.Optional(Admin),
    /** The developer portal; absent: none. */
    portal: Type.Optional(Portal),
    /** How mail is sent (the portal's confirmation and password-reset links); absent: none is. */
    mail: Type.Optional(Mail),
    authServers: Type.Optional(Type.Record(Name, AuthServer, Strict)),
    upstreams: Type.Record(Name, Upstream, Strict),
    routes: Type.Optional(Type.Record(Name, Route, Strict)),
    /** OpenAPI documents, each a set of routes. */
    openapi: Type.Optional(Type.Record(Name, OpenApi, Strict)),
    products: Type.Record(Name, Product, Strict),
  },
  { ...Strict, title: 'token gateway configuration' },
);

export type ConfigFile = Static<typeof configSchema>;
export type DurationValue = Static<typeof Duration>;
export type UpstreamConfig = Static<typeof Upstream>;
export type AuthServerConfig = Static<typeof AuthServer>;
export type MailConfig = Static<typeof Mail>;
export type StoreConfig = Static<typeof Store>;
export type GrantTypeName = Static<typeof GrantType>;
export type PolicyEntry = Static<typeof policySchema>;

/** The schema as plain JSON, for editors (TypeBox adds symbol keys that JSON drops). */
export function editorSchema(): TSchema {
  return JSON.parse(JSON.stringify(configSchema)) as TSchema;
}
