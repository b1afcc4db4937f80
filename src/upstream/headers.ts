// Which headers cross the gateway, in each direction. RFC 9110 §7.6.1: hop-by-hop headers, and
// every header the Connection header names, end at the gateway.
import type { IncomingHttpHeaders } from 'node:http';
import { createPublicOrigin } from '../http/origin.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { bindingOf } from '../store/port/index.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

// Stripped from requests as well: the caller's credentials (and its DPoP proof, RFC 9449); the Host (the upstream's own is
// sent); Expect (the gateway answers 100-continue itself); and the overrides some frameworks
// honour, which would make the upstream act on a path or method other than the one authorised
// (X-Original-URL and its kin go with the X-Original-* family below).
const REQUEST_DROP = new Set([...HOP_BY_HOP, 'host', 'authorization', 'dpop', 'expect', 'x-rewrite-url', 'x-http-method', 'x-http-method-override', 'x-method-override']);

/**
 * Headers by which a proxy in front tells an upstream who the client is or which user it
 * authenticated; from a client they are forgeries, and an upstream that reads any of them would
 * believe it. Dropped always (`listen.dropHeaders` adds to them), with the families below.
 */
export const IDENTITY_HEADERS: readonly string[] = [
  'forwarded',
  'true-client-ip',
  'client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-cluster-client-ip',
  'x-originating-ip',
  'x-user',
  'x-userinfo',
  'x-host',
  'x-proxyuser-ip',
  'fly-client-ip',
  'x-scheme',
  'x-url-scheme',
  'front-end-https',
  'x-request-uri',
  'x-script-name',
  'x-method',
  'x-http-host-override',
  'proxy-client-ip',
  'do-connecting-ip',
  'incap-client-ip',
  'x-sucuri-clientip',
  'x-nf-client-connection-ip',
  'x-email',
  'x-username',
  'x-groups',
  'x-jwt-payload',
  'smuser',
  'eppn',
];

/**
 * Whole families of them, by prefix: those of auth proxies (Authelia's Remote-*, oauth2-proxy's
 * X-Auth-Request-*, Kong's X-Consumer-* and X-Authenticated-*, Grafana's X-WEBAUTH-*, Pomerium,
 * authentik, Cloudflare Access, Google IAP, Azure App Service, AWS ALB, IBM WebSEAL's iv-*,
 * WebLogic's WL-Proxy-*, Shibboleth, Tailscale, Vouch, Teleport, Kubernetes impersonation), of
 * TLS terminators (client certificates, RFC 9440 Client-Cert), and of load balancers, CDNs and
 * meshes (Envoy, CloudFront, App Engine, Azure, Vercel),
 * besides the gateway's own X-Forwarded* and X-Gateway-*.
 */
export const IDENTITY_PREFIXES: readonly string[] = [
  'x-forwarded',
  'forwarded-',
  'x-gateway-',
  'remote-',
  'x-remote-',
  'x-auth',
  'x-consumer-',
  'x-credential-',
  'x-anonymous-',
  'x-user-',
  'x-webauth-',
  'x-pomerium-',
  'x-authentik-',
  'cf-access-',
  'cf-connecting-ip',
  'iv-',
  'wl-proxy-',
  'client-cert',
  'tailscale-',
  'x-vouch-',
  'impersonate-',
  'x-ms-token-',
  'shib-',
  'teleport-jwt-',
  'x-goog-iap-',
  'x-vercel-',
  'x-goog-authenticated-',
  'x-ms-client-principal',
  'x-amzn-oidc-',
  'ssl-client-',
  'x-ssl-',
  'x-client-ip',
  'x-client-cert',
  'x-client-dn',
  'x-client-verify',
  'x-client-s-dn',
  'x-client-i-dn',
  'x-arr-',
  'x-envoy-',
  'x-original-',
  'x-real-',
  'cloudfront-viewer-',
  'x-appengine-',
  'x-azure-',
];
const IDENTITY_PREFIX = new RegExp(`^(?:${IDENTITY_PREFIXES.join('|')})`);

/** Whether a client's request header is dropped. Names with '_' are dropped as well: servers
 * that map '_' to '-' (CGI, WSGI) would read X_Gateway_App as the gateway's own header. */
function dropped(name: string, drop: ReadonlySet<string>, named: ReadonlySet<string> | undefined): boolean {
  return drop.has(name) || named?.has(name) === true || name.includes('_') || IDENTITY_PREFIX.test(name);
}

// A header value carries visible ASCII only; anything else (a non-Latin user name) and '%' are
// percent-encoded as UTF-8, so the value is always valid and the upstream can decode it.
const UNSAFE = /[^\x20-\x24\x26-\x7e]/;
export function headerValue(text: string): string {
  return UNSAFE.test(text) ? text.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c)) : text;
}

const CLOSE = new Set(['close']);

function connectionNamed(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  // The usual values, without a Set per call: keep-alive is hop-by-hop anyway.
  if (value === 'keep-alive' || value === 'Keep-Alive') return undefined;
  if (value === 'close' || value === 'Close') return CLOSE;
  const names = (Array.isArray(value) ? value.join(',') : value).split(',').map((s) => s.trim().toLowerCase());
  return new Set(names.filter((n) => n !== ''));
}

export interface ForwardingSettings {
  trustedProxies: readonly string[];
  /** Added to the identity headers that are dropped. */
  dropHeaders: readonly string[];
  /** The host clients address the gateway by, sent as X-Forwarded-Host. */
  publicHost: string | undefined;
  /** A proxy's client certificate header: the gateway's to read, never an upstream's. */
  clientCertificateHeader: { name: string } | undefined;
}

export type RequestHeaders = (ctx: RequestContext) => Record<string, string | string[]>;

/** The headers the upstream receives: the client's, filtered, then the gateway's own. */
export function createRequestHeaders(settings: ForwardingSettings): RequestHeaders {
  const drop = new Set([
    ...REQUEST_DROP,
    ...IDENTITY_HEADERS,
    ...settings.dropHeaders.map((h) => h.toLowerCase()),
    ...(settings.clientCertificateHeader === undefined ? [] : [settings.clientCertificateHeader.name]),
  ]);
  // X-Forwarded-Host and -Proto: never the client's Host or its own forwarding headers.
  const origin = createPublicOrigin(settings);
  return function upstreamRequestHeaders(ctx) {
    const incoming = ctx.req.headers;
    const named = connectionNamed(incoming.connection);
    const out: Record<string, string | string[]> = {};
    for (const name in incoming) {
      if (dropped(name, drop, named)) continue;
      const value = incoming[name];
      if (value !== undefined) out[name] = value;
    }
    out['x-request-id'] = ctx.requestId;
    out['x-forwarded-for'] = ctx.clientIp;
    out['x-forwarded-proto'] = origin.proto(ctx.req, ctx.protocol);
    const host = origin.host(ctx.req);
    if (host !== undefined) out['x-forwarded-host'] = host;
    const token = ctx.token;
    if (ctx.identity !== undefined) {
      out[ctx.identity[0]] = ctx.identity[1];
    } else if (token !== undefined) {
      out['x-gateway-app'] = headerValue(token.appName);
      out['x-gateway-client-id'] = token.key;
      out['x-gateway-developer'] = headerValue(token.developerEmail);
      out['x-gateway-product'] = token.product;
      out['x-gateway-scope'] = token.scope;
      if (token.subject !== null) out['x-gateway-subject'] = headerValue(token.subject);
      // How the caller proved the token is its own: dpop (RFC 9449) or mtls (RFC 8705); absent for a bearer token.
      const binding = bindingOf(token.cnf);
      if (binding !== undefined) out['x-gateway-token-binding'] = binding;
    }
    return out;
  };
}

/** The upstream's response headers the client receives. */
export function clientResponseHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = connectionNamed(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || named?.has(name)) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
