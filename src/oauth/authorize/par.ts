// POST /oauth2/par (RFC 9126): an app pushes its authorization request, authenticated as at the
// token endpoint (a public app by its client_id), and gets a request_uri to send the browser with.
// The request is checked now, as the authorization endpoint would check it; its failures are
// RFC 6749 §5.2 answers, never redirects.
import type { ProductSettings } from '../../config/load.ts';
import { clientAuth, createFormEndpoint, parseBody, rejectQueryCredentials, requirePost, type FormContext, type FormEndpoint, type OAuthEnv } from '../endpoint.ts';
import { invalidRequest, NO_STORE_NOSNIFF } from '../errors.ts';
import { PUSHED_LIFETIME_S, type PushedRequests } from './pushed.ts';
import { readAuthorizationRequest } from './request.ts';

/** The longest request_uri handed out: with client_id, well within the request line the listener takes. */
const MAX_REQUEST_URI = 4096;

export function createParEndpoint(env: OAuthEnv & { products: ReadonlyMap<string, ProductSettings>; pushed: PushedRequests }): FormEndpoint {
  const name = 'pushed authorization request endpoint';
  return createFormEndpoint<FormContext>(env, {
    name,
    steps: [requirePost(name), rejectQueryCredentials, parseBody, clientAuth(env)],
    context: (base) => base,
    async answer(ctx, res) {
      const client = ctx.client!;
      const params = new Map(ctx.form);
      params.delete('client_secret');
      if (params.has('request_uri')) throw invalidRequest('request_uri cannot be pushed (RFC 9126 section 2.1)');
      // The app authenticated (with Basic, maybe without client_id in the form): the request is its.
      params.set('client_id', client.credential.key);
      await readAuthorizationRequest(params, { store: env.store, products: env.products, now: ctx.now, via: 'pushed' });
      const requestUri = env.pushed.push(params, client.credential.key, ctx.now);
      // The browser carries it in the authorization endpoint's URL, which the listener keeps short.
      if (requestUri.length > MAX_REQUEST_URI) throw invalidRequest('the pushed request is too large: send only the authorization parameters');
      const payload = JSON.stringify({ request_uri: requestUri, expires_in: PUSHED_LIFETIME_S });
      res.writeHead(201, { ...NO_STORE_NOSNIFF, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
      return { app: client.app.name };
    },
  });
}
