// How an app authenticates with a client certificate (RFC 8705 §2): what an operator (`gateway
// admin apps certificate`, the management API) or the app's developer (the portal) registers, read
// and checked here once, so that the token endpoint only compares.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { pemCertificates, thumbprintOf } from '../http/client-certificate.ts';
import { parseDn } from '../oauth/mtls.ts';
import type { App, CertificateAuth, RegisteredCertificate } from '../store/port/index.ts';
import { findApp, requireChangeable, type AppDetails, type AppRef } from './apps.ts';
import { audit } from './audit.ts';
import { asCaller, isDeveloper, ofApp, type CallerDeps } from './deps.ts';
import { AdminError } from './errors.ts';

/** What a caller registers: a CA-signed certificate's subject (§2.1), the certificates themselves (§2.2), or none. */
export type CertificateAuthInput =
  | { method: 'tls_client_auth'; subjectDn: string }
  | { method: 'tls_client_auth'; san: 'dns' | 'uri' | 'ip' | 'email'; value: string }
  /** Each a PEM certificate, or its SHA-256 thumbprint (base64url, or hex as `openssl x509 -fingerprint -sha256` prints it). */
  | { method: 'self_signed_tls_client_auth'; certificates: readonly string[] }
  | { method: 'none' };

/** How many certificates an app may register at once: enough for a rotation's overlap. */
export const MAX_CERTIFICATES = 4;
const MAX_SUBJECT_LENGTH = 1024;
const BASE64URL_SHA256 = /^[A-Za-z0-9_-]{43}$/;
const HEX_SHA256 = /^(?:[0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$/;

const invalid = (message: string) => new AdminError('invalid_certificate', message);

/** The registration `input` asks for, checked; undefined for none. */
export function certificateAuthOf(input: CertificateAuthInput): CertificateAuth | undefined {
  switch (input.method) {
    case 'none':
      return undefined;
    case 'self_signed_tls_client_auth': {
      if (input.certificates.length === 0) throw invalid('give at least one certificate (PEM) or thumbprint');
      const certificates = input.certificates.flatMap(registered);
      if (certificates.length > MAX_CERTIFICATES) throw invalid(`at most ${MAX_CERTIFICATES} certificates per app`);
      const unique = new Map(certificates.map((c) => [c.thumbprint, c]));
      return { method: input.method, certificates: [...unique.values()] };
    }
    case 'tls_client_auth': {
      if ('subjectDn' in input) {
        const dn = input.subjectDn.trim();
        if (dn === '' || dn.length > MAX_SUBJECT_LENGTH || parseDn(dn, ',') === undefined)
          throw invalid(`"${dn.slice(0, 80)}" is not a distinguished name such as CN=orders-client,O=Example,C=US (RFC 4514)`);
        return { method: input.method, subject: { dn } };
      }
      const value = input.value.trim();
      if (value === '' || value.length > MAX_SUBJECT_LENGTH) throw invalid(`a subjectAltName ${input.san} value is required`);
      if (input.san === 'ip' && isIP(value) === 0) throw invalid(`"${value}" is not an IP address`);
      return { method: input.method, subject: { san: input.san, value } };
    }
  }
}

/** A PEM private key, of any kind: pasted by mistake, it is no longer private. */
export const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** A PEM text's certificates (a file may hold several), or one thumbprint; never a text holding a private key. */
function registered(text: string): RegisteredCertificate[] {
  const trimmed = text.trim();
  if (PRIVATE_KEY.test(trimmed)) throw invalid('this holds a private key: register the certificate alone, and since the key has left its place, make a new key and certificate');
  if (BASE64URL_SHA256.test(trimmed)) return [{ thumbprint: trimmed, subject: '', expiresAt: null }];
  if (HEX_SHA256.test(trimmed)) return [{ thumbprint: Buffer.from(trimmed.replaceAll(':', ''), 'hex').toString('base64url'), subject: '', expiresAt: null }];
  const pems = pemCertificates(trimmed);
  if (pems.length === 0) throw invalid('not a PEM certificate (-----BEGIN CERTIFICATE-----) nor a SHA-256 thumbprint');
  return pems.map((pem) => {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(pem);
    } catch {
      throw invalid('a PEM certificate that cannot be read');
    }
    return { thumbprint: thumbprintOf(x509), subject: x509.subject.replaceAll('\n', ', '), expiresAt: x509.validToDate.getTime() };
  });
}

/**
 * Replaces how the app authenticates with a certificate. Once it does, its secret no longer
 * authenticates it (RFC 8705 §2: one method per client); `none` gives the secret back. A public app
 * has no credentials to replace: its tokens are bound to whatever certificate it presents.
 */
export async function setCertificateAuth(deps: CallerDeps, ref: AppRef, input: CertificateAuthInput): Promise<AppDetails> {
  const app = await findApp(deps, ref);
  if (isDeveloper(deps)) await requireChangeable(deps, app);
  const auth = checkCertificateAuth(deps, app, input);
  const updated = await deps.store.apps.setCertificateAuth(app.id, auth, deps.clock());
  // Deleted since it was read (a DELETE racing this change).
  if (updated === undefined) throw new AdminError('unknown_app', `the app "${app.name}" no longer exists`);
  audit(deps.logger, 'app.certificate', { actor: asCaller(deps), ...ofApp(updated), method: auth?.method ?? 'none', ...thumbprints(auth) });
  return { ...updated, credentials: app.credentials };
}

/**
 * The registration `input` asks of `app` as it is now, checked; throws why it may not have it,
 * before anything is written (the management API checks every change of a PATCH first).
 */
export function checkCertificateAuth(deps: CallerDeps, app: App, input: CertificateAuthInput): CertificateAuth | undefined {
  // What the API team registered (a CA-signed certificate's subject), the API team changes.
  if (isDeveloper(deps) && app.certificateAuth?.method === 'tls_client_auth') {
    throw new AdminError('certificate_by_operator', 'The API team registered the certificate this app authenticates with: ask them to change it.');
  }
  const auth = keepDetails(certificateAuthOf(input), app.certificateAuth);
  if (auth !== undefined && app.type === 'public') throw invalid('a public app does not authenticate; its tokens are bound to the certificate it presents without registering one');
  return auth;
}

/**
 * A certificate given again by its thumbprint alone keeps what its PEM said when it was registered
 * (subject and expiry): adding or removing one names the others by thumbprint.
 */
function keepDetails(auth: CertificateAuth | undefined, before: CertificateAuth | undefined): CertificateAuth | undefined {
  if (auth?.method !== 'self_signed_tls_client_auth' || before?.method !== 'self_signed_tls_client_auth') return auth;
  const known = new Map(before.certificates.map((c) => [c.thumbprint, c]));
  return { method: auth.method, certificates: auth.certificates.map((c) => (c.expiresAt === null ? (known.get(c.thumbprint) ?? c) : c)) };
}

function thumbprints(auth: CertificateAuth | undefined): { thumbprints?: string[] } {
  return auth?.method === 'self_signed_tls_client_auth' ? { thumbprints: auth.certificates.map((c) => c.thumbprint) } : {};
}
