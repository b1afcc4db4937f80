// The one source of truth for the configuration file: ajv validates against `configSchema`, the
// TypeScript type is derived from it, the loader fills in its defaults (./defaults.ts), and
// `gateway config schema` and docs/configuration.md print its descriptions and defaults.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { policySchema, QuotaOptions } from '../policies/index.ts';
import { about, Duration, HeaderName, Name, Scope, Strict } from '../fragments.ts';
import { AuthServer, AuthorizationCodeKeys, IdentityProvider } from './schema-logins.ts';
import { OAuth, UPSTREAM_IDENTITY, UpstreamIdentity } from './schema-oauth.ts';
import { Telemetry } from './schema-telemetry.ts';

export { Duration };

const Method = Type.Union(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => Type.Literal(m)));
const GrantType = Type.Union([Type.Literal('client_credentials'), Type.Literal('password'), Type.Literal('refresh_token'), Type.Literal('authorization_code')]);
const PemFile = (what: string) => Type.String({ minLength: 1, description: `${what}: a PEM file, relative to the config file's folder.` });
const TlsPair = Type.Object({ cert: PemFile('The certificate chain'), key: PemFile('The private key') }, Strict);
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const ListenerTls = Type.Object(
  {
    cert: PemFile('The certificate chain'),
    key: PemFile('The private key'),
    clientCa: Type.Optional(
      PemFile(
        'RFC 8705: ask every client for a certificate (optional per connection) for tls_client_auth and certificate-bound tokens; tls_client_auth takes only one this CA (or these CAs) signed, self_signed_tls_client_auth any the app registered',
      ),
    ),
  },
  Strict,
);
const ClientCertificateHeader = Type.Object(
  {
    name: about(HeaderName, 'The header a proxy in front puts the client certificate of its TLS connection in, such as X-Forwarded-Client-Cert or X-SSL-Client-Cert.'),
    format: about(
      Type.Unsafe<'envoy' | 'nginx'>({ type: 'string', enum: ['envoy', 'nginx'] }),
      'envoy: an X-Forwarded-Client-Cert element with Cert="…" (forward_client_cert_details: SANITIZE_SET, set_current_client_cert_details: cert); nginx: $ssl_client_escaped_cert (URL-encoded PEM).',
    ),
  },
  Strict,
);

const Listener = Type.Object(
  {
    host: Type.Optional(about(Type.String({ minLength: 1 }), 'The address the gateway listens on.', { default: '0.0.0.0' })),
    port: about(Port, 'The port the gateway listens on; 0: any free port.'),
    trustedProxies: Type.Optional(about(Type.Array(Type.String({ minLength: 1 })), 'Peers whose X-Forwarded-For is believed: addresses or CIDR ranges of your load balancers.', { default: [] })),
    maxBodySize: Type.Optional(about(Type.Integer({ minimum: 0 }), 'Largest request body a route forwards, in bytes; a larger Content-Length gets 413 at once.', { default: 10 * 1024 * 1024 })),
    dropHeaders: Type.Optional(
      about(Type.Array(HeaderName, { uniqueItems: true }), 'Request headers never forwarded, besides the built-in list of client-identity headers (True-Client-IP, X-Remote-User…).', { default: [] }),
    ),
    publicHost: Type.Optional(
      about(
        Type.String({ pattern: '^([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?$', title: 'host[:port]', examples: ['api.example.com', 'api.example.com:8443'] }),
        'The host[:port] clients reach the gateway by, sent upstream as X-Forwarded-Host unless a trusted proxy says otherwise; absent: none is sent.',
      ),
    ),
    headersTimeout: Type.Optional(about(Duration, 'A client that has not sent its headers within this time gets 408.', { default: '10s' })),
    requestTimeout: Type.Optional(about(Duration, 'A client that has not sent its whole request within this time gets 408.', { default: '60s' })),
    lingeringTime: Type.Optional(
      about(
        Duration,
        "After an answer given before the request's body was read (a 401, a 413), how long the gateway goes on reading and throwing away what the client still sends before it closes: long enough for a client that streams its body to read the answer (nginx's lingering_time).",
        { default: '30s' },
      ),
    ),
    lingeringTimeout: Type.Optional(about(Duration, "Within listen.lingeringTime, how long the client may send nothing before the connection closes (nginx's lingering_timeout).", { default: '5s' })),
    lingeringBytes: Type.Optional(
      about(Type.Integer({ minimum: 0 }), 'Within listen.lingeringTime, how many bytes the gateway reads and throws away at most before the connection closes.', { default: 64 * 1024 * 1024 }),
    ),
    keepAliveTimeout: Type.Optional(
      about(Duration, "How long an idle keep-alive connection stays open: longer than a load balancer's idle timeout (commonly 60s), so that it is the balancer that closes it.", { default: '65s' }),
    ),
    tls: Type.Optional(about(ListenerTls, 'Serve HTTPS (TLS 1.2 or later) with this certificate chain and key; a reload reads them again. Absent: plain HTTP.')),
    clientCertificateHeader: Type.Optional(
      about(
        ClientCertificateHeader,
        'Behind a proxy that ends TLS: where it says which certificate the client presented. Read only on connections from listen.trustedProxies (the proxy must check the certificate against your CA), and never forwarded.',
      ),
    ),
  },
  Strict,
);

const Admin = Type.Union([
  Type.Object(
    {
      host: Type.Optional(about(Type.String({ minLength: 1 }), 'The address the admin listener binds.', { default: '127.0.0.1' })),
      port: Type.Optional(about(Port, 'The port of the admin listener.', { default: 9901 })),
    },
    Strict,
  ),
  Type.Literal(false),
]);

const Management = Type.Object(
  {
    host: Type.Optional(about(Type.String({ minLength: 1 }), 'The address the management API binds; another than loopback puts it on the network, so give it `tls` there.', { default: '127.0.0.1' })),
    port: Type.Optional(about(Port, 'The port of the management API.', { default: 9902 })),
    tls: Type.Optional(about(TlsPair, 'Serve the management API over HTTPS (TLS 1.2 or later) with this certificate chain and key. Absent: plain HTTP.')),
    accessTokenLifetime: Type.Optional(about(Duration, "How long a management client's access token works.", { default: '15m' })),
  },
  Strict,
);

/** scheme://host[:port], the host a DNS name, an IPv4 address or a bracketed IPv6 address, the port 1 to 65535: nothing a CSP source or a Host check reads otherwise. */
const HOST_NAME = '[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?';
const PORT = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?';
const ORIGIN = `^https?://(?:${HOST_NAME}|\\[[0-9A-Fa-f:.]+\\])${PORT}$`;
/** An origin a CSP source can name: a CSP host-source has no bracketed IPv6 address. */
const CSP_ORIGIN = `^https?://${HOST_NAME}${PORT}$`;

export const Portal = Type.Object(
  {
    listen: about(
      Type.Object(
        {
          host: Type.Optional(about(Type.String({ minLength: 1 }), 'The address the portal listens on.', { default: '127.0.0.1' })),
          port: about(Port, 'The port the portal listens on; 0: any free port.'),
          tls: Type.Optional(about(TlsPair, 'Serve the portal over HTTPS with this certificate chain and key.')),
        },
        Strict,
      ),
      "The portal's own listener.",
    ),
    title: Type.Optional(about(Type.String({ minLength: 1, maxLength: 100 }), "The portal's title, on every page.", { default: 'Developer portal' })),
    publicUrl: Type.Optional(
      about(
        Type.String({ pattern: ORIGIN, title: 'origin', examples: ['https://developers.example.com'] }),
        "The portal's own address as browsers reach it (default http(s)://localhost:<listen.port>): the links it mails, and the one Host (besides the loopback names, when it binds loopback) it answers.",
      ),
    ),
    gatewayUrl: Type.Optional(
      about(
        Type.String({ pattern: CSP_ORIGIN, title: 'origin', examples: ['https://api.example.com'] }),
        "The gateway's address as developers reach it, for the portal's examples (default http://localhost:<the gateway's listen.port>); its origin is the pages' CSP connect-src, so a host name or IPv4 address only: `http://*` would let the pages reach any host, `http://a;b` would end the directive, and a CSP source cannot name an IPv6 address.",
      ),
    ),
    signup: Type.Optional(
      about(
        Type.Unsafe<'open' | 'invited'>({ type: 'string', enum: ['open', 'invited'] }),
        'open: anyone may sign up, and confirms the address through a mailed link (needs `mail`); invited: only developers an operator created (`gateway admin developers create`). Default: open when `mail` is set, else invited.',
      ),
    ),
    sessionLifetime: Type.Optional(about(Duration, 'How long a portal sign-in lasts.', { default: '8h' })),
    keyOverlap: Type.Optional(about(Duration, 'After a secret is rotated, the old key and secret keep working this long.', { default: '24h' })),
    maxAppsPerDeveloper: Type.Optional(about(Type.Integer({ minimum: 1, maximum: 10000 }), 'How many apps a developer can hold through the portal; operators are not bound by it.', { default: 10 })),
  },
  Strict,
);

const Address = about(
  Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\r\\n]*@[^\\r\\n]*$', title: 'mail address', examples: ['portal@example.com', 'Developers <portal@example.com>'] }),
  'The sender: an address, or `Name <address>`.',
);

const Mail = Type.Union([
  Type.Object(
    {
      from: Address,
      smtp: about(
        Type.Object(
          {
            host: about(Type.String({ minLength: 1 }), 'The SMTP server.'),
            port: about(Type.Integer({ minimum: 1, maximum: 65535 }), "The SMTP server's port (587 for STARTTLS, 465 for TLS)."),
            secure: Type.Optional(about(Type.Boolean(), 'true: TLS from the first byte (port 465); false: STARTTLS when the server offers it.', { default: false })),
            allowPlaintext: Type.Optional(about(Type.Boolean(), 'false: refuse to send unless the connection is TLS (secure, or STARTTLS).', { default: false })),
            auth: Type.Optional(
              about(
                Type.Object({ user: about(Type.String({ minLength: 1 }), 'The SMTP user.'), pass: about(Type.String({ minLength: 1 }), 'Its password.') }, Strict),
                'The login to the SMTP server; absent: none.',
              ),
            ),
            ca: Type.Optional(about(Type.String({ minLength: 1 }), "PEM file of the CA that signed the server's certificate, when not a public one.")),
          },
          Strict,
        ),
        'Send through this SMTP server.',
      ),
    },
    Strict,
  ),
  Type.Object({ from: Address, log: about(Type.Literal(true), 'Each message, link included, goes to the log at info level (development; the example uses it).') }, Strict),
]);

const RedisUrl = Type.String({ minLength: 1 });

const Store = Type.Object(
  {
    driver: Type.Optional(
      about(
        Type.Unsafe<'sqlite' | 'redis'>({ type: 'string', enum: ['sqlite', 'redis'] }),
        'sqlite is one file, for one machine; redis is shared by every gateway that names the same Redis and keyPrefix. Keys of one driver are refused with the other.',
        { default: 'sqlite' },
      ),
    ),
    path: Type.Optional(about(Type.String({ minLength: 1 }), 'sqlite: the database file.', { default: 'data/gateway.db' })),
    busyTimeout: Type.Optional(about(Duration, 'sqlite: how long a write waits for a lock another process holds before the call is answered 503.', { default: '2s' })),
    url: Type.Optional(about(RedisUrl, 'redis: one server, redis://[user:password@]host[:port][/db], or rediss:// for TLS.')),
    cluster: Type.Optional(about(Type.Array(RedisUrl, { minItems: 1 }), 'redis: seed URLs of a Redis Cluster; the login and TLS of the first apply to every node.')),
    sentinel: Type.Optional(
      about(
        Type.Object(
          {
            name: about(Type.String({ minLength: 1 }), 'The name of the primary the Sentinels watch.'),
            nodes: about(
              Type.Array(Type.String({ pattern: '^([A-Za-z0-9._-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}$', title: 'host:port', examples: ['sentinel-1:26379', '[::1]:26379'] }), { minItems: 1 }),
              'The Sentinels, each host:port.',
            ),
            username: Type.Optional(about(Type.String({ minLength: 1 }), 'The user of the primary.')),
            password: Type.Optional(about(Type.String({ minLength: 1 }), 'The password of the primary.')),
            db: Type.Optional(about(Type.Integer({ minimum: 0 }), "The database number on the primary; absent: ioredis's default, 0.")),
          },
          Strict,
        ),
        'redis: the Sentinels that name the primary `name`, and the login of the primary.',
      ),
    ),
    keyPrefix: Type.Optional(
      about(
        Type.String({ pattern: '^[^{}]*$', title: 'prefix without braces', examples: ['gateway:', 'staging:'] }),
        "redis: starts every key and the changes channel; no braces, which would change the keys' hash tags.",
        { default: 'gateway:' },
      ),
    ),
    timeout: Type.Optional(about(Duration, 'redis: how long one command may take before the call is answered 503.', { default: '1s' })),
    secretKeyFile: Type.Optional(
      about(
        Type.String({ minLength: 1 }),
        'File holding the key for the keyed hash of app secrets; created (mode 0600) when missing. Every gateway of one store needs the same. Default: beside the sqlite file (<path>.key), or data/gateway.key with redis.',
      ),
    ),
    tokenCacheSize: Type.Optional(about(Type.Integer({ minimum: 0 }), 'How many verified tokens each gateway keeps in memory; 0: none.', { default: 100_000 })),
  },
  Strict,
);

const Log = Type.Object(
  {
    level: Type.Optional(about(Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))), 'The least severe level logged.', { default: 'info' })),
    access: Type.Optional(about(Type.Boolean(), 'One line per call (at info level).', { default: true })),
  },
  Strict,
);

const Tls = Type.Object(
  {
    ca: Type.Optional(about(Type.String({ minLength: 1 }), "PEM file of the CA that signed the upstream's certificate, when not a public one.")),
    servername: Type.Optional(about(Type.String({ minLength: 1 }), "The name sent in SNI and checked in the upstream's certificate, when not the URL's host.")),
  },
  Strict,
);

const TargetUrl = Type.String({ pattern: '^https?://[^/?#]+(/[^?#]*)?$', title: 'target URL', examples: ['http://127.0.0.1:3000', 'https://orders.internal/v1'] });

const HttpUpstream = Type.Object(
  {
    url: about(Type.Union([TargetUrl, Type.Array(TargetUrl, { minItems: 1, uniqueItems: true })]), 'One target, or several taken in turn (round-robin).'),
    connectTimeout: Type.Optional(about(Duration, 'How long connecting to a target may take.', { default: '5s' })),
    timeout: Type.Optional(about(Duration, "How long the upstream's answer may take before the call gets 504.", { default: '30s' })),
    connections: Type.Optional(about(Type.Integer({ minimum: 1 }), 'Most connections open to each target.', { default: 128 })),
    tls: Type.Optional(about(Tls, 'How the targets of https URLs are checked.')),
    audience: Type.Optional(about(Type.String({ minLength: 1 }), "The `aud` of the identity tokens it gets (upstreamIdentity: jwt); default: the upstream's name.")),
    retries: Type.Optional(
      about(Type.Integer({ minimum: 0, maximum: 10 }), 'Further targets tried when one cannot be reached; idempotent methods only, before any answer. Default: 1 with several targets, else 0.'),
    ),
    healthCheck: Type.Optional(
      about(
        Type.Object({ failures: about(Type.Integer({ minimum: 1 }), 'Failures in a row that take a target out.'), cooldown: about(Duration, 'How long it stays out.') }, Strict),
        'Passive health check: after `failures` failures in a row a target is skipped for `cooldown`.',
        { default: { failures: 3, cooldown: '10s' } },
      ),
    ),
  },
  Strict,
);

const MockUpstream = Type.Object(
  {
    mock: about(
      Type.Object(
        {
          status: Type.Optional(about(Type.Integer({ minimum: 200, maximum: 599 }), 'The status of every answer.', { default: 200 })),
          headers: Type.Optional(about(Type.Record(HeaderName, Type.String(), Strict), 'Headers of every answer.', { default: {} })),
          body: Type.Optional(about(Type.Unknown(), 'The body of every answer, sent as JSON.', { default: null })),
        },
        Strict,
      ),
      'Answer every call with this, without calling anything (demos and tests).',
    ),
  },
  Strict,
);

const EchoUpstream = Type.Object({ echo: about(Type.Literal(true), 'Answer every call with a JSON description of the request as the upstream would get it (demos and tests).') }, Strict);

const Upstream = Type.Union([HttpUpstream, MockUpstream, EchoUpstream]);

const Route = Type.Object(
  {
    method: about(Method, 'The HTTP method.'),
    path: about(
      Type.String({ pattern: "^(/([A-Za-z0-9._~!$&'()*+,=:@-]+|\\{[A-Za-z_][A-Za-z0-9_]*\\}))+$|^/$", title: 'path', examples: ['/v1/orders', '/v1/orders/{id}'] }),
      'Exact path, or segments of the form {name}.',
    ),
    upstream: about(Name, 'The upstream (a name under `upstreams`) the calls go to.'),
    scopes: Type.Optional(about(Type.Array(Scope, { uniqueItems: true }), "Scopes a token needs, all of them; each must be one of its product's.", { default: [] })),
    requireSubject: Type.Optional(about(Type.Boolean(), 'Only tokens issued for a user (password grant, and refresh_token after it) may call the route; others get 403.', { default: false })),
    upstreamIdentity: Type.Optional(about(UpstreamIdentity, `${UPSTREAM_IDENTITY} Default: the product's.`)),
    rateLimitHeaders: Type.Optional(
      about(Type.Boolean(), 'Answers carry RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers) for each quota and spike arrest that counted the call; false: none.', {
        default: true,
      }),
    ),
    policies: Type.Optional(about(Type.Array(policySchema), "Run in the seed's order: access policies (YAML order), request validation, the upstream, response policies.", { default: [] })),
  },
  Strict,
);

const Policies = Type.Object({ policies: about(Type.Array(policySchema), 'The policies, as on a route.') }, Strict);

const OpenApi = Type.Object(
  {
    file: about(Type.String({ minLength: 1 }), 'The document (YAML or JSON); its $refs to files beside it are followed.'),
    upstream: about(Name, "The upstream (a name under `upstreams`) the operations' calls go to."),
    basePath: Type.Optional(
      about(
        Type.String({ pattern: "^(/[A-Za-z0-9._~!$&'()*+,=:@-]+)*$", title: 'path', examples: ['/v1'] }),
        "Put before every path of the document (default: the path of its first server's URL, such as /v1).",
      ),
    ),
    policies: Type.Optional(about(Type.Array(policySchema), 'Policies of every operation; then those of each of its tags, then its own (`operations`).', { default: [] })),
    tags: Type.Optional(about(Type.Record(Type.String({ minLength: 1 }), Policies, Strict), "Policies of the operations with a tag, by the tag's name.")),
    operations: Type.Optional(about(Type.Record(Name, Policies, Strict), 'Policies of one operation, by its operationId.')),
    requireSubject: Type.Optional(about(Type.Boolean(), 'Only tokens issued for a user may call its operations.', { default: false })),
    upstreamIdentity: Type.Optional(about(UpstreamIdentity, `${UPSTREAM_IDENTITY} Default: the product's.`)),
    rateLimitHeaders: Type.Optional(about(Type.Boolean(), 'Answers of its operations carry RateLimit-Policy and RateLimit; false: none.', { default: true })),
  },
  Strict,
);

const Product = Type.Object(
  {
    displayName: Type.Optional(about(Type.String(), 'Its name in the portal (default: its key under `products`).')),
    description: Type.Optional(about(Type.String(), 'What it offers, in the portal.', { default: '' })),
    routes: Type.Optional(about(Type.Array(Name, { minItems: 1, uniqueItems: true }), "Routes by name; an OpenAPI document's operations are routes named by their operationId.")),
    openapi: Type.Optional(about(Type.Array(Name, { minItems: 1, uniqueItems: true }), 'Every operation of these documents (names under `openapi`).')),
    scopes: Type.Optional(about(Type.Array(Scope, { uniqueItems: true }), 'Scopes an app may ask for, besides those of its OpenAPI operations.', { default: [] })),
    grants: Type.Optional(about(Type.Array(GrantType, { minItems: 1, uniqueItems: true }), 'Grant types its apps may use at the token endpoint.', { default: ['client_credentials'] })),
    authServer: Type.Optional(about(Name, 'The authorization server (a name under `authServers`) that checks passwords for the password grant.')),
    accessTokenLifetime: Type.Optional(about(Duration, 'How long an access token works.', { default: '1h' })),
    accessTokenFormat: Type.Optional(
      about(Type.Unsafe<'opaque' | 'jwt'>({ type: 'string', enum: ['opaque', 'jwt'] }), 'opaque: a random string the gateway looks up; jwt: a signed JWT (RFC 9068) anyone can verify with the JWKS.', {
        default: 'opaque',
      }),
    ),
    audience: Type.Optional(about(Type.String({ minLength: 1 }), "The `aud` of its JWT access tokens (default: the product's name).")),
    senderConstraint: Type.Optional(
      about(
        Type.Unsafe<'none' | 'dpop' | 'mtls'>({ type: 'string', enum: ['none', 'dpop', 'mtls'] }),
        'dpop: every token is bound to the key of a DPoP proof (RFC 9449), and a token request without one is refused; mtls: to the client certificate of the token request (RFC 8705), and a token request without one is refused; none: bearer tokens, but a token request with a proof or a client certificate still gets a bound token.',
        { default: 'none' },
      ),
    ),
    upstreamIdentity: Type.Optional(about(UpstreamIdentity, UPSTREAM_IDENTITY, { default: 'headers' })),
    refreshTokenLifetime: Type.Optional(about(Duration, 'How long a refresh token works.', { default: '1d' })),
    refreshReuseGrace: Type.Optional(about(Duration, 'A spent refresh token presented again within this time gets 401 without revoking its family.', { default: 0 })),
    quota: Type.Optional(about(QuotaOptions, "Calls per app across the product's routes; a route's own quota can tighten it.")),
    rateLimitHeaders: Type.Optional(about(Type.Boolean(), 'Answers to its tokens carry RateLimit-Policy and RateLimit, on every route; false: none, whatever the route says.', { default: true })),
    ...AuthorizationCodeKeys,
    portal: Type.Optional(about(Type.Boolean(), 'Shown in the developer portal, where developers register apps for it.', { default: false })),
    approval: Type.Optional(
      about(
        Type.Unsafe<'auto' | 'manual'>({ type: 'string', enum: ['auto', 'manual'] }),
        'manual: apps registered in the portal wait for `gateway admin apps approve`; auto: they work at once. Default: manual with the password grant, else auto.',
      ),
    ),
  },
  Strict,
);

export const configSchema = Type.Object(
  {
    listen: about(Listener, 'Where the gateway serves the routes and the OAuth endpoints.'),
    store: Type.Optional(about(Store, 'Where the gateway keeps developers, apps, tokens and counts.', { default: {} })),
    log: Type.Optional(about(Log, 'What the gateway logs (JSON lines on standard output).', { default: {} })),
    workers: Type.Optional(
      about(Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 1, maximum: 256 })]), 'Worker threads sharing the listening port (SO_REUSEPORT), quotas and spike arrests; auto: one per core.', {
        default: 1,
      }),
    ),
    oauth: Type.Optional(about(OAuth, 'The token, revocation and introspection endpoints.', { default: {} })),
    shutdownTimeout: Type.Optional(about(Duration, 'How long a stop (SIGTERM, SIGINT) waits for calls in flight before it cuts them.', { default: '30s' })),
    admin: Type.Optional(about(Admin, "The operators' listener: /healthz, /readyz, /metrics and POST /reload, unauthenticated, so loopback unless you say otherwise; false: none.", { default: {} })),
    portal: Type.Optional(about(Portal, 'The developer portal; absent: none.')),
    management: Type.Optional(about(Management, 'The management API (developers, apps, keys, tokens, products and usage over HTTP, for automation), on a listener of its own; absent: none.')),
    telemetry: Type.Optional(about(Telemetry, 'What the gateway exports besides its logs and /metrics.', { default: {} })),
    mail: Type.Optional(about(Mail, "How mail is sent (the portal's confirmation and password-reset links): an SMTP server, or (development) the gateway's own log; absent: none is.")),
    authServers: Type.Optional(
      about(
        Type.Record(Name, AuthServer, Strict),
        "Authorization servers that check usernames and passwords (the password grant, and the gateway's login page of the authorization code grant), by name.",
        {
          default: {},
        },
      ),
    ),
    identityProviders: Type.Optional(
      about(Type.Record(Name, IdentityProvider, Strict), 'OpenID Connect providers that log users in for the authorization code grant (`products.<p>.login`), by name.', { default: {} }),
    ),
    upstreams: about(Type.Record(Name, Upstream, Strict), 'Where routes send their calls, by name: an HTTP service, a mock answer or an echo.'),
    routes: Type.Optional(about(Type.Record(Name, Route, Strict), 'Routes written out, by name.', { default: {} })),
    openapi: Type.Optional(about(Type.Record(Name, OpenApi, Strict), 'OpenAPI 3.0 or 3.1 documents, by name, each operation of which is a route named by its operationId.', { default: {} })),
    products: about(Type.Record(Name, Product, Strict), 'API products, by name: routes apps get tokens for, with grants, scopes, lifetimes and quota.'),
  },
  { ...Strict, title: 'token gateway configuration' },
);

export type ConfigFile = Static<typeof configSchema>;
export type DurationValue = Static<typeof Duration>;
export type UpstreamConfig = Static<typeof Upstream>;
export type AuthServerConfig = Static<typeof AuthServer>;
export type IdentityProviderConfig = Static<typeof IdentityProvider>;
export type MailConfig = Static<typeof Mail>;
export type StoreConfig = Static<typeof Store>;
export type GrantTypeName = Static<typeof GrantType>;
export type PolicyEntry = Static<typeof policySchema>;

/** The schema as plain JSON, for editors (TypeBox adds symbol keys that JSON drops). */
export function editorSchema(): TSchema {
  return JSON.parse(JSON.stringify(configSchema)) as TSchema;
}
