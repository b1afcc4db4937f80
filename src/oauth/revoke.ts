// POST /oauth2/revoke (RFC 7009): a client revokes one of its own tokens. A refresh token takes
// its whole grant with it, access tokens included (§2.1); an access token takes its grant too,
// as §2.1 allows, so that a leaked one cannot be refreshed past its revocation.
import { PREFIX, tokenDigest } from '../crypto.ts';
import type { Deps } from '../deps.ts';
import { clientAuth, parseBody, rejectQueryCredentials, requirePost, type FormContext, type FormStep } from './endpoint.ts';
import { invalidRequest, NO_STORE, sendOAuthError, temporarilyUnavailable } from './errors.ts';
import { runSteps, type RequestContext, type Step } from '../pipeline/context.ts';

const steps: readonly FormStep<FormContext>[] = [requirePost('revocation endpoint'), rejectQueryCredentials, parseBody, clientAuth];

/** `policies`: the token endpoint's (an IP list, a spike arrest), run first. */
export function createRevocationEndpoint(deps: Deps, policies: readonly Step[] = []) {
  const challenge = `Basic realm="${deps.config.oauth.realm}", charset="UTF-8"`;

  return async function revocationEndpoint(request: RequestContext): Promise<Record<string, string>> {
    const { req, res } = request;
    const ctx: FormContext = { req, query: request.query, now: deps.clock(), form: new Map(), client: undefined };
    try {
      if (policies.length > 0) await runSteps(policies, request);
      for (const step of steps) await step(ctx, deps);
      const token = ctx.form.get('token');
      if (token === undefined) throw invalidRequest("parameter 'token' is required");
      // token_type_hint only speeds a search up (§2.1); the prefix says what the token is.
      const digest = tokenDigest(PREFIX.access, token) ?? tokenDigest(PREFIX.refresh, token);
      let revoked = false;
      if (digest !== undefined) {
        try {
          revoked = await deps.store.revokeToken(digest, ctx.client!.app.id, ctx.now);
        } catch (err) {
          // Never a 200 while the token may still work (§2.2.1).
          throw Object.assign(temporarilyUnavailable('the store failed to revoke'), { cause: err });
        }
      }
      // §2.2: 200 for an unknown token too, and for another client's (which stays untouched):
      // the answer tells nobody whether a token exists.
      res.writeHead(200, { ...NO_STORE, 'content-length': '0' }).end();
      return { app: ctx.client!.app.name, revoked: String(revoked) };
    } catch (thrown) {
      const err = sendOAuthError(res, thrown, challenge);
      if (!err.expose || err.status >= 500) deps.logger.error({ err: err.cause ?? err }, 'revocation endpoint failed');
      return { error: err.code };
    }
  };
}
