// POST /oauth2/introspect (RFC 7662), for backends: whether an access token is active, and what
// it stands for. Callers authenticate with the credentials the YAML declares under
// oauth.introspection; an inactive token gets {"active":false} and nothing else (§2.2).
import { PREFIX, safeEqual, sha256, tokenDigest } from '../crypto.ts';
import { bindingOf, type ActiveToken } from '../store/port/index.ts';
import { presentedCredentials } from './client-auth.ts';
import { createFormEndpoint, parseBody, rejectQueryCredentials, requirePost, type FormContext, type FormEndpoint, type OAuthEnv } from './endpoint.ts';
import { invalidClient, invalidRequest, NO_STORE_NOSNIFF, temporarilyUnavailable } from './errors.ts';
import type { ProductSettings } from '../config/types.ts';
import { jwtMatches, looksLikeJwt, type JwtVerifier, type VerifiedJwt } from './signing/jwt.ts';

const INACTIVE = JSON.stringify({ active: false });

/** Apps do not introspect: the caller is one the YAML declares, not a client. */
interface IntrospectionContext extends FormContext {
  caller: string | undefined;
}

/**
 * `callers`: who may introspect (oauth.introspection); the route runs the token endpoint's
 * policies (an IP list, a spike arrest) before it.
 */
export function createIntrospectionEndpoint(
  env: Omit<OAuthEnv, 'secretKey'> & { verifyJwt: JwtVerifier; products: ReadonlyMap<string, ProductSettings> },
  introspectionCallers: readonly { id: string; secret: string }[],
): FormEndpoint {
  // Compared as SHA-256 digests: equal lengths, constant time, for a known id and an unknown one alike.
  const callers = new Map(introspectionCallers.map((c) => [c.id, sha256(c.secret)]));
  const unknown = sha256('');

  function callerAuth(ctx: IntrospectionContext): void {
    const presented = presentedCredentials(ctx.req, ctx.form);
    if (presented.method === 'none') throw invalidClient('no client credentials');
    const { id, secret } = presented;
    const matches = safeEqual(sha256(secret), callers.get(id) ?? unknown);
    if (!callers.has(id) || !matches) throw invalidClient(callers.has(id) ? 'wrong introspection secret' : 'unknown introspection caller');
    ctx.caller = id;
  }

  return createFormEndpoint<IntrospectionContext>(env, {
    name: 'introspection endpoint',
    steps: [requirePost('introspection endpoint'), rejectQueryCredentials, parseBody, callerAuth],
    context: (base) => ({ ...base, caller: undefined }),
    async answer(ctx, res) {
      const token = ctx.form.get('token');
      if (token === undefined) throw invalidRequest("parameter 'token' is required");
      let active: ActiveToken | undefined;
      let jwt: VerifiedJwt | undefined;
      try {
        if (looksLikeJwt(token)) jwt = await env.verifyJwt(token, ctx.now);
        const digest = jwt?.digest ?? tokenDigest(PREFIX.access, token);
        active = digest === undefined ? undefined : await env.store.cache.findAccessToken(digest, ctx.now);
        // A JWT is active as the gateway takes it on a route: its claims those of its record, its audience its product's.
        if (jwt !== undefined && active !== undefined && !jwtMatches(jwt, active, env.products)) active = undefined;
      } catch (err) {
        throw temporarilyUnavailable('the store failed to answer', err);
      }
      const payload =
        active === undefined
          ? INACTIVE
          : JSON.stringify({
              active: true,
              scope: active.scope,
              client_id: active.key,
              // RFC 9449 §6.2: a DPoP-bound token is of type DPoP; RFC 7800 cnf says to what it is bound.
              token_type: bindingOf(active.cnf) === 'dpop' ? 'DPoP' : 'Bearer',
              exp: Math.floor(active.expiresAt / 1000),
              iat: Math.floor(active.issuedAt / 1000),
              ...(active.subject === null ? {} : { sub: active.subject }),
              app: active.appName,
              product: active.product,
              ...(active.cnf === undefined ? {} : { cnf: active.cnf }),
              // RFC 7662 §2.2's JWT claims, for a JWT.
              ...(jwt === undefined ? {} : { aud: env.products.get(active.product)!.audience, iss: jwt.issuer, jti: jwt.jti }),
            });
      res.writeHead(200, { ...NO_STORE_NOSNIFF, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }).end(payload);
      return { caller: ctx.caller!, active: String(active !== undefined) };
    },
  });
}
