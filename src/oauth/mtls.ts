// RFC 8705: which certificate an app that authenticates with one must present (§2), read from
// what it registered; the one place a certificate is compared with a registration.
import { isIP } from 'node:net';
import type { X509Certificate } from 'node:crypto';
import type { ClientCertificate } from '../http/client-certificate.ts';
import type { CertificateAuth, CertificateSubject } from '../store/port/index.ts';

/** §2.1 and §2.2, as RFC 8414 names them. */
export const CERTIFICATE_AUTH_METHODS = ['tls_client_auth', 'self_signed_tls_client_auth'] as const;

/**
 * Whether `cert` authenticates the app registered with `auth`, now: in its validity period, and
 * either signed by a trusted CA and naming the registered subject (§2.1), or one of the
 * certificates the app registered (§2.2).
 */
export function certificateMatches(auth: CertificateAuth, cert: ClientCertificate, now: number): boolean {
  if (now < cert.x509.validFromDate.getTime() || now > cert.x509.validToDate.getTime()) return false;
  if (auth.method === 'self_signed_tls_client_auth') return auth.certificates.some((c) => c.thumbprint === cert.thumbprint);
  return cert.chained && subjectMatches(auth.subject, cert.x509);
}

/** §2.1.2: the subject DN (distinguishedNameMatch), or the one subjectAltName entry, registered. */
function subjectMatches(subject: CertificateSubject, x509: X509Certificate): boolean {
  if ('dn' in subject) {
    const registered = parseDn(subject.dn, ',');
    // Node prints the subject one RDN a line, in the certificate's order; RFC 4514 strings start from the other end.
    const presented = parseDn(x509.subject, '\n')?.reverse();
    return registered !== undefined && presented !== undefined && registered.join(',') === presented.join(',');
  }
  switch (subject.san) {
    case 'dns':
      return x509.checkHost(subject.value, { subject: 'never', wildcards: false }) !== undefined;
    case 'ip':
      return isIP(subject.value) !== 0 && x509.checkIP(subject.value) !== undefined;
    case 'email':
      return x509.checkEmail(subject.value, { subject: 'never' }) !== undefined;
    case 'uri':
      return subjectAltNames(x509).includes(`URI:${subject.value}`);
  }
}

/**
 * A DN as canonical RDNs, each its attributes sorted, each TYPE=value with the type upper-cased
 * and the value unescaped, its spaces collapsed and lower-cased (caseIgnoreMatch, RFC 4517 §4.2.11);
 * undefined when it does not parse.
 */
export function parseDn(text: string, separator: ',' | '\n'): string[] | undefined {
  const rdns: string[] = [];
  let attributes: string[] = [];
  let current = '';
  const endAttribute = (): boolean => {
    const eq = current.indexOf('=');
    if (eq < 1) return false;
    const type = current.slice(0, eq).trim().toUpperCase();
    const value = unescapeValue(current.slice(eq + 1).trim());
    if (value === undefined) return false;
    attributes.push(`${type}=${value.replace(/\s+/g, ' ').toLowerCase()}`);
    current = '';
    return true;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      current += text.slice(i, i + 2);
      i++;
    } else if (c === '+') {
      if (!endAttribute()) return undefined;
    } else if (c === separator) {
      if (!endAttribute()) return undefined;
      rdns.push(attributes.sort().join('+'));
      attributes = [];
    } else current += c;
  }
  if (!endAttribute()) return undefined;
  rdns.push(attributes.sort().join('+'));
  return rdns;
}

/** RFC 4514 §3: `\` before a special character, or two hex digits of a UTF-8 byte. */
function unescapeValue(value: string): string | undefined {
  if (!value.includes('\\')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const hex = value.slice(i + 1, i + 3);
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (i + 1 < value.length) {
      bytes.push(...Buffer.from(value[i + 1]!, 'utf8'));
      i++;
    } else return undefined;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The subjectAltName entries as Node prints them ("URI:…"), a value with a comma or quote quoted as JSON. */
function subjectAltNames(x509: X509Certificate): string[] {
  const text = x509.subjectAltName;
  if (text === undefined) return [];
  const names: string[] = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon === -1) break;
    const kind = text.slice(i, colon);
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      // JSON string: find its closing quote.
      let j = colon + 2;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      try {
        value = JSON.parse(text.slice(colon + 1, j + 1)) as string;
      } catch {
        return names;
      }
      end = j + 1;
    } else {
      end = text.indexOf(', ', colon);
      if (end === -1) end = text.length;
      value = text.slice(colon + 1, end);
    }
    names.push(`${kind}:${value}`);
    i = text.startsWith(', ', end) ? end + 2 : end + 1;
  }
  return names;
}
