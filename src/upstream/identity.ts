// upstreamIdentity: how an upstream learns who calls. `headers` (the default) leaves it to the
// X-Gateway-* headers; `jwt` sends a short-lived token signed with the gateway's keys, which the
// upstream verifies with the JWKS; `token` forwards the caller's own JWT access token. Either of
// the last two replaces the X-Gateway-* headers (src/upstream/headers.ts).
import type { ProductSettings, RouteSettings, SigningSettings, UpstreamIdentity } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import type { BearerErrors } from '../oauth/bearer.ts';
import type { KeyRing } from '../oauth/signing/key-ring.ts';
import { signIdentityToken } from '../oauth/signing/jwt.ts';
import type { RequestContext, Step } from '../pipeline/context.ts';

/** Identity tokens kept for reuse, at most. */
const IDENTITY_CACHE_SIZE = 10_000;

export interface IdentityEnv {
  keys: KeyRing;
  issuer: string | undefined;
  signing: SigningSettings;
  clock: () => number;
  errors: BearerErrors;
}

const noSigningKey = new GatewayError(503, 'temporarily_unavailable', 'no signing key is ready yet; try again shortly', { headers: { 'retry-after': '1' } });

/**
 * Signs identity tokens, each kept and sent again for the first half of its lifetime: a call
 * costs no signature while the same token calls the same upstream (the upstream sees one jti
 * for that time; the token is not a nonce).
 */
export function createIdentities(env: IdentityEnv) {
  const { lifetime } = env.signing.identity;
  const kept = new Map<string, { value: string; kid: string; renewAt: number }>();
  return function identityFor(ctx: RequestContext, audience: string): string {
    const token = ctx.token!;
    const now = env.clock();
    const id = `${audience}\u0000${token.hash.toString('latin1')}`;
    const known = kept.get(id);
    // An identity signed by a key that stops verifying (revoked) is not sent again.
    if (known !== undefined && known.renewAt > now && env.keys.verifier(known.kid) !== undefined) return known.value;
    const key = env.keys.signer(now);
    if (key === undefined || env.issuer === undefined) throw noSigningKey;
    const value = signIdentityToken(key, env.issuer, token, audience, now, lifetime);
    kept.delete(id);
    if (kept.size >= IDENTITY_CACHE_SIZE) kept.delete(kept.keys().next().value!);
    kept.set(id, { value, kid: key.kid, renewAt: now + (lifetime * 1000) / 2 });
    return value;
  };
}

export type Identities = ReturnType<typeof createIdentities>;

/** The step that sets the route's identity header, by the route's setting or else its caller's product's; undefined when every caller gets headers. */
export function createIdentityStep(
  route: RouteSettings,
  products: ReadonlyMap<string, ProductSettings>,
  audience: string,
  header: string,
  identities: Identities,
  errors: BearerErrors,
): Step | undefined {
  const modeOf = new Map<string, UpstreamIdentity>([...route.products].map((p) => [p, route.upstreamIdentity ?? products.get(p)?.upstreamIdentity ?? 'headers']));
  if ([...modeOf.values()].every((m) => m === 'headers')) return undefined;
  return function upstreamIdentity(ctx: RequestContext): void {
    const mode = modeOf.get(ctx.token!.product) ?? 'headers';
    if (mode === 'headers') return;
    if (mode === 'token') {
      // An opaque token issued before its product turned to JWTs: the client asks for a new one.
      if (ctx.accessJwt === undefined) throw errors.invalidToken();
      ctx.identity = ['authorization', `Bearer ${ctx.accessJwt}`];
      return;
    }
    ctx.identity = [header, identities(ctx, audience)];
  };
}
