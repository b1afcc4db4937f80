// RFC 8705: the certificate a client presented, on the TLS connection itself (listen.tls.clientCa)
// or, behind a proxy that ends TLS, in the header that proxy sets (listen.clientCertificateHeader),
// which is believed only from listen.trustedProxies. The one place a certificate is read off a request.
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { repeatedHeader } from './authorization.ts';
import { createTrustedPeer } from './ip.ts';

export interface ClientCertificate {
  x509: X509Certificate;
  /** RFC 8705 §3.1: the base64url SHA-256 of the DER certificate, a bound token's cnf["x5t#S256"]. */
  thumbprint: string;
  /** Whether a CA the gateway trusts (or the trusted proxy in front checked) signed it: tls_client_auth needs that, self_signed_tls_client_auth does not. */
  chained: boolean;
}

/** The request's client certificate, if it presented one the gateway may believe. */
export type ReadClientCertificate = (req: IncomingMessage) => ClientCertificate | undefined;

export interface ClientCertificateSettings {
  trustedProxies: readonly string[];
  clientCertificateHeader: { name: string; format: 'envoy' | 'nginx' } | undefined;
  tls: { clientCa: string | undefined } | undefined;
}

/** Whether clients may present certificates: the listener asks for them, or a trusted proxy in front says which they presented. */
export function mutualTls(settings: Pick<ClientCertificateSettings, 'clientCertificateHeader' | 'tls'>): boolean {
  return settings.tls?.clientCa !== undefined || settings.clientCertificateHeader !== undefined;
}

/** A header of PEM text is a few kilobytes; a chain, a few times that. */
const MAX_HEADER_LENGTH = 16_384;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const FIRST_PEM_BODY = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/;

/** The PEM certificates in `text`, in order. */
export function pemCertificates(text: string): string[] {
  return text.match(PEM_CERTIFICATE) ?? [];
}

/** x5t#S256 of a certificate. */
export function thumbprintOf(x509: X509Certificate): string {
  return createHash('sha256').update(x509.raw).digest('base64url');
}

export function createReadClientCertificate(settings: ClientCertificateSettings): ReadClientCertificate {
  if (!mutualTls(settings)) return () => undefined;
  const header = settings.clientCertificateHeader;
  const fromTrustedProxy = createTrustedPeer(settings.trustedProxies);
  // A connection's certificate does not change: read once per connection.
  const ofConnection = new WeakMap<Socket, ClientCertificate | null>();
  function connectionCertificate(socket: Socket): ClientCertificate | undefined {
    let known = ofConnection.get(socket);
    if (known === undefined) {
      const tls = socket as TLSSocket;
      const x509 = typeof tls.getPeerX509Certificate === 'function' ? tls.getPeerX509Certificate() : undefined;
      known = x509 === undefined ? null : { x509, thumbprint: thumbprintOf(x509), chained: tls.authorized === true };
      ofConnection.set(socket, known);
    }
    return known ?? undefined;
  }
  // A proxy sends one client's calls over a connection, or many clients': the last header read on
  // each connection, and what it said, spare reading the same certificate call after call.
  const lastForwarded = new WeakMap<Socket, { value: string; certificate: ClientCertificate | undefined }>();
  function forwardedCertificate(req: IncomingMessage, name: string, format: 'envoy' | 'nginx'): ClientCertificate | undefined {
    // Sent twice, Node joins the values with a comma, and which one is the client's is anyone's guess.
    const value = req.headers[name];
    if (typeof value !== 'string' || repeatedHeader(req.rawHeaders, name)) return undefined;
    const last = lastForwarded.get(req.socket);
    if (last?.value === value) return last.certificate;
    const certificate = forwarded(value, format);
    lastForwarded.set(req.socket, { value, certificate });
    return certificate;
  }
  return function clientCertificate(req) {
    // Behind the proxy, the connection is the proxy's: its client's certificate is what the header says.
    if (header !== undefined && fromTrustedProxy(req)) return forwardedCertificate(req, header.name, header.format);
    return connectionCertificate(req.socket);
  };
}

/** What a trusted proxy says; undefined when it says nothing, or nothing that reads as one certificate. */
function forwarded(value: string, format: 'envoy' | 'nginx'): ClientCertificate | undefined {
  if (value === '' || value.length > MAX_HEADER_LENGTH) return undefined;
  const encoded = format === 'envoy' ? envoyCert(value) : value;
  if (encoded === undefined) return undefined;
  let pem: string;
  try {
    pem = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  // The client's own certificate comes first, alone or followed by its chain. Its base64 read
  // whatever the whitespace: nginx's older $ssl_client_cert folds its lines with tabs.
  const body = FIRST_PEM_BODY.exec(pem)?.[1];
  if (body === undefined) return undefined;
  try {
    const x509 = new X509Certificate(Buffer.from(body.replace(/\s+/g, ''), 'base64'));
    // The proxy checked it against the CA it was given (listen.clientCertificateHeader says it must).
    return { x509, thumbprint: thumbprintOf(x509), chained: true };
  } catch {
    return undefined;
  }
}

/**
 * Envoy's X-Forwarded-Client-Cert: elements separated by commas, each of key=value pairs separated
 * by semicolons, values optionally quoted. Only one element: a header that several proxies
 * appended to does not say which certificate the client itself presented.
 */
function envoyCert(value: string): string | undefined {
  const elements = splitOutsideQuotes(value, ',');
  if (elements.length !== 1) return undefined;
  let cert: string | undefined;
  for (const pair of splitOutsideQuotes(elements[0]!, ';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) return undefined;
    if (pair.slice(0, eq).trim().toLowerCase() !== 'cert') continue;
    if (cert !== undefined) return undefined;
    cert = unquote(pair.slice(eq + 1).trim());
  }
  return cert;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}
