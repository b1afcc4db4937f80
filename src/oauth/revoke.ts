// POST /oauth2/revoke (RFC 7009): a client revokes one of its own tokens. A refresh token takes
// its whole grant with it, access tokens included (§2.1); an access token takes its grant too,
// as §2.1 allows, so that a leaked one cannot be refreshed past its revocation.
import { PREFIX, tokenDigest } from '../crypto.ts';
import { clientAuth, createFormEndpoint, parseBody, rejectQueryCredentials, requirePost, type FormEndpoint, type OAuthEnv } from './endpoint.ts';
import { invalidRequest, NO_STORE_NOSNIFF, temporarilyUnavailable } from './errors.ts';
import { looksLikeJwt, type JwtVerifier } from './signing/jwt.ts';

/** The route runs the token endpoint's policies (an IP list, a spike arrest) before it. */
export function createRevocationEndpoint(env: OAuthEnv & { verifyJwt: JwtVerifier }): FormEndpoint {
  return createFormEndpoint(env, {
    name: 'revocation endpoint',
    steps: [requirePost('revocation endpoint'), rejectQueryCredentials, parseBody, clientAuth(env)],
    context: (base) => base,
    async answer(ctx, res) {
      const token = ctx.form.get('token');
      if (token === undefined) throw invalidRequest("parameter 'token' is required");
      let revoked = false;
      try {
        // token_type_hint only speeds a search up (§2.1); the prefix says what the token is, and
        // a JWT is the gateway's only once its signature says so.
        const digest = looksLikeJwt(token) ? (await env.verifyJwt(token, ctx.now))?.digest : (tokenDigest(PREFIX.access, token) ?? tokenDigest(PREFIX.refresh, token));
        if (digest !== undefined) {
          revoked = await env.store.tokens.revokeToken(digest, ctx.client!.app.id, ctx.now);
        }
      } catch (err) {
        // Never a 200 while the token may still work (§2.2.1).
        throw temporarilyUnavailable('the store failed to revoke', err);
      }
      // §2.2: 200 for an unknown token too, and for another client's (which stays untouched):
      // the answer tells nobody whether a token exists.
      res.writeHead(200, { ...NO_STORE_NOSNIFF, 'content-length': '0' }).end();
      return { app: ctx.client!.app.name, revoked: String(revoked) };
    },
  });
}
