// Client authentication at the token endpoint (RFC 6749 §2.3): HTTP Basic or client_id and
// client_secret in the form, never both; a public app (OAuth 2.1 §2.1) names itself with
// client_id alone, and has no secret to send; so does an app that authenticates with its client
// certificate (RFC 8705 §2), and only with it.
import type { IncomingMessage } from 'node:http';
import { CLIENT_KEY, safeEqual, secretHash } from '../crypto.ts';
import { parseAuthorization, repeatedAuthorization } from '../http/authorization.ts';
import type { KeyObject } from 'node:crypto';
import type { ClientCertificate } from '../http/client-certificate.ts';
import type { Client, Store } from '../store/port/index.ts';
import { invalidClient, invalidRequest } from './errors.ts';
import { formDecode } from './form.ts';
import { certificateMatches } from './mtls.ts';

/** The client authentication methods of a secret, or none (RFC 8414 names); CERTIFICATE_AUTH_METHODS where clients may present certificates. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

export type PresentedCredentials = { id: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' } | { id: string; method: 'none' };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads the credentials from the header or the form; throws when they are malformed or doubled. */
export function presentedCredentials(req: IncomingMessage, form: Map<string, string>): PresentedCredentials {
  const header = req.headers.authorization;
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  if (header !== undefined) {
    if (repeatedAuthorization(req.rawHeaders)) throw invalidRequest('the request has more than one Authorization header');
    const { scheme, credentials: encoded } = parseAuthorization(header);
    if (scheme !== 'basic') throw invalidClient('not a Basic authorization header');
    if (formSecret !== undefined) throw invalidRequest('use one client authentication method, not both Basic and client_secret');
    if (!BASE64.test(encoded) || encoded.length % 4 === 1) throw invalidClient('Basic credentials are not valid base64');
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    // RFC 6749 §2.3.1: split on the first colon, then form-decode each half.
    const colon = decoded.indexOf(':');
    if (colon === -1) throw invalidClient('Basic credentials have no colon');
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    if (id === undefined || secret === undefined || id === '') throw invalidClient('Basic credentials are not form-encoded');
    if (formId !== undefined && formId !== id) throw invalidRequest('client_id differs from the Basic credentials');
    return { id, secret, method: 'client_secret_basic' };
  }
  if (formId === undefined) throw invalidClient('no client credentials');
  if (formSecret === undefined) return { id: formId, method: 'none' };
  return { id: formId, secret: formSecret, method: 'client_secret_post' };
}

const MISSING_HASH = Buffer.alloc(32);

/**
 * The client if the key exists, it proved it is the app (its secret, or the certificate it
 * registered, presented on this request) and the credential, app and developer are enabled.
 */
export async function authenticateClient(store: Store, secretKey: KeyObject, presented: PresentedCredentials, certificate: ClientCertificate | undefined, now: number): Promise<Client> {
  // Only the shapes of key this gateway makes or imports are looked up; the secret is hashed either way.
  const client = CLIENT_KEY.test(presented.id) ? await store.cache.findClient(presented.id) : undefined;
  if (presented.method === 'none') {
    if (client === undefined) throw invalidClient('unknown client');
    const byCertificate = client.app.certificateAuth;
    if (byCertificate !== undefined) {
      if (certificate === undefined || !certificateMatches(byCertificate, certificate, now)) throw invalidClient('no client certificate, or not the one registered');
    } else if (client.app.type !== 'public') {
      // Only a public app goes without a secret; a confidential one must prove it is itself.
      throw invalidClient('a confidential client must authenticate');
    }
  } else {
    // Hash and compare even for an unknown key, so both failures cost the same.
    const matches = safeEqual(secretHash(secretKey, presented.secret), client?.secretHash ?? MISSING_HASH);
    if (client === undefined || !matches) throw invalidClient(client === undefined ? 'unknown client' : 'wrong secret');
    // RFC 8705 §2: an app registered for a certificate method authenticates by that method only.
    if (client.app.certificateAuth !== undefined) throw invalidClient('this app authenticates with its client certificate');
  }
  const unusable = unusableBecause(client, now);
  if (unusable !== undefined) throw invalidClient(unusable);
  return client;
}

/** Why a known client may not act now (for the log), or undefined when it may: its key, app and developer all in force. */
export function unusableBecause(client: Client, now: number): string | undefined {
  const { credential, app } = client;
  if (credential.status !== 'approved') return 'credential revoked';
  if (credential.expiresAt !== null && credential.expiresAt <= now) return 'credential expired';
  if (app.status !== 'active') return 'app disabled';
  if (app.approval !== 'approved') return 'app pending approval';
  if (client.developerStatus !== 'active') return 'developer disabled';
  return undefined;
}
