// GET /.well-known/jwks.json (RFC 7517 §5): the public halves of the keys that sign, will sign, or
// signed tokens that may not have expired yet. Verifiers may cache it for less than publishAhead,
// so a key is always in their copy before it signs.
import { GatewayError } from '../../errors.ts';
import { NOSNIFF } from '../../http/problem.ts';
import type { SigningSettings } from '../../config/types.ts';
import type { Step } from '../../pipeline/context.ts';
import type { KeyRing } from './key-ring.ts';

/** The longest a verifier caches the set: half of publishAhead, and never more than five minutes. */
export function jwksMaxAge(signing: Pick<SigningSettings, 'publishAheadMs'>): number {
  return Math.max(1, Math.min(300, Math.floor(signing.publishAheadMs / 2000)));
}

export function createJwksEndpoint(keys: KeyRing, signing: SigningSettings, clock: () => number): Step {
  const notAllowed = new GatewayError(405, 'method_not_allowed', 'the JWKS answers GET and HEAD only', { headers: { allow: 'GET, HEAD' } });
  const cacheControl = `public, max-age=${jwksMaxAge(signing)}`;
  return function jwksEndpoint({ req, res }): void {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') throw notAllowed;
    const body = Buffer.from(JSON.stringify({ keys: keys.published(clock(), signing.retireAfterMs) }));
    res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': cacheControl, ...NOSNIFF, 'content-length': String(body.length) }).end(method === 'HEAD' ? undefined : body);
  };
}
