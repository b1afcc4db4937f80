// oauth.signing, checked against what signs: the products that issue JWTs and the routes whose
// upstreams get an identity token. A key stays published until the last token it signed expires,
// and the next one is published before it signs: the durations must allow both.
import { defaulted as d } from './defaults.ts';
import type { ConfigFile } from './schema.ts';
import type { Site } from './sections.ts';
import type { Config, SigningSettings } from './types.ts';

/** The clock skew a verifier allows (and a key stays published for, past its last token's expiry). */
export const CLOCK_SKEW_MS = 60_000;

export function signingSettings(c: ConfigFile, site: Site, { products, routes }: Pick<Config, 'products' | 'routes'>): SigningSettings {
  const { report, duration } = site;
  const oauth = d(c.oauth);
  const signing = d(oauth.signing);
  const at = (...keys: string[]) => ['oauth', 'signing', ...keys];
  const identity = d(signing.identity);
  const identityLifetimeMs = duration(identity.lifetime, at('identity', 'lifetime'));
  if (identityLifetimeMs < 1000) report(at('identity', 'lifetime'), 'must be at least 1s');

  // What signs, and where the file says so.
  const signers: (string | number)[][] = [];
  let longestMs = 0;
  for (const p of products.values()) {
    if (p.accessTokenFormat === 'jwt') {
      signers.push(['products', p.name, 'accessTokenFormat']);
      longestMs = Math.max(longestMs, p.accessTokenLifetime * 1000);
    }
    if (p.upstreamIdentity === 'jwt') signers.push(['products', p.name, 'upstreamIdentity']);
  }
  for (const r of routes.values()) {
    if (r.upstreamIdentity === 'jwt') signers.push(r.operation === undefined ? ['routes', r.name, 'upstreamIdentity'] : ['openapi', r.operation.api, 'upstreamIdentity']);
  }
  const identities = signers.some((where) => where.at(-1) === 'upstreamIdentity');
  if (identities) longestMs = Math.max(longestMs, identityLifetimeMs);
  if (oauth.issuer === undefined) {
    for (const where of signers) report(where, "a signed token names its issuer: set oauth.issuer (the gateway's address as clients reach it)");
  }

  const rotateEveryMs = duration(signing.rotateEvery, at('rotateEvery'));
  const publishAheadMs = duration(signing.publishAhead, at('publishAhead'));
  if (publishAheadMs < 1000) report(at('publishAhead'), 'must be at least 1s');
  if (rotateEveryMs <= publishAheadMs) report(at('rotateEvery'), 'must be longer than publishAhead: the next key is published publishAhead before it signs');
  const neededMs = longestMs + CLOCK_SKEW_MS;
  const retireAfterMs = signing.retireAfter === undefined ? neededMs : duration(signing.retireAfter, at('retireAfter'));
  if (retireAfterMs < neededMs) {
    report(at('retireAfter'), `must be at least ${Math.ceil(neededMs / 1000)}s: the longest JWT lifetime and a minute of clock skew, so that no token outlives its key in the JWKS`);
  }
  return {
    algorithm: d(signing.algorithm),
    rotateEveryMs,
    publishAheadMs,
    retireAfterMs,
    identity: { header: d(identity.header).toLowerCase(), lifetime: Math.ceil(identityLifetimeMs / 1000) },
    used: signers.length > 0,
  };
}
