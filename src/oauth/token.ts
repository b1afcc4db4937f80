// POST /oauth2/token: a fixed list of small steps, each of which may throw an OAuthError;
// sendOAuthError writes every failure.
import type { ProductSettings } from '../config/load.ts';
import type { Confirmation } from '../store/port/index.ts';
import { clientAuth, createFormEndpoint, OAUTH_PATHS, parseBody, rejectQueryCredentials, requirePost, type FormContext, type FormEndpoint, type FormStep, type OAuthEnv } from './endpoint.ts';
import { DpopRefusal, proofHeader, type DpopVerifier } from './dpop.ts';
import type { ReadClientCertificate } from '../http/client-certificate.ts';
import { dpopRefused, invalidRequest, invalidScope, NO_STORE_NOSNIFF, unauthorizedClient, unsupportedGrantType } from './errors.ts';
import type { Grant, GrantEnv } from './grants/grant.ts';
import { grants } from './grants/index.ts';

interface TokenContext extends FormContext {
  grant: Grant | undefined;
  product: ProductSettings | undefined;
  scope: readonly string[] | undefined;
  cnf: Confirmation | undefined;
}

type Step = FormStep<TokenContext>;

function supportedGrantType(ctx: TokenContext): void {
  const type = ctx.form.get('grant_type');
  if (type === undefined) throw invalidRequest("parameter 'grant_type' is required");
  ctx.grant = grants.get(type);
  if (ctx.grant === undefined) throw unsupportedGrantType(`grant type '${type.slice(0, 64)}' is not supported`);
}

const COMMON_PARAMETERS = new Set(['grant_type', 'scope', 'client_id', 'client_secret']);

/** The grant's handler sees only the parameters it declares. */
function stripGrantIrrelevantParameters(ctx: TokenContext): void {
  const { parameters } = ctx.grant!;
  for (const name of ctx.form.keys()) if (!COMMON_PARAMETERS.has(name) && !parameters.has(name)) ctx.form.delete(name);
}

/** OAuth 2.1 §2.1: a public client cannot keep a secret, so only grants that bind a user's consent to it (with PKCE) are its. */
const PUBLIC_CLIENT_GRANTS: ReadonlySet<string> = new Set(['authorization_code', 'refresh_token']);

function allowedGrantType(products: ReadonlyMap<string, ProductSettings>): Step {
  return function allowedGrantType(ctx) {
    if (ctx.client!.app.type === 'public' && !PUBLIC_CLIENT_GRANTS.has(ctx.grant!.grantType)) {
      throw unauthorizedClient(`a public client (no secret) cannot use grant type '${ctx.grant!.grantType}'`);
    }
    const product = products.get(ctx.client!.app.product);
    if (product === undefined) throw unauthorizedClient("the app's API product is not served by this gateway");
    if (!product.grants.has(ctx.grant!.grantType)) {
      throw unauthorizedClient(`grant type '${ctx.grant!.grantType}' is not enabled for API product '${product.name}'`);
    }
    ctx.product = product;
  };
}

/** RFC 6749 §3.3: a scope parameter's scopes, space-delimited; order and repetition carry no meaning. */
export function scopeList(text: string): string[] {
  return [...new Set(text.split(' ').filter((s) => s !== ''))];
}

/** RFC 6749 §3.3: the scopes asked for, each one the app may have: its own, when it is limited to some (a management client), else its product's. */
function validateScope(ctx: TokenContext): void {
  const requested = ctx.form.get('scope');
  if (requested === undefined) return;
  const scope = scopeList(requested);
  const available = ctx.client!.app.scopes ?? ctx.product!.scopes;
  const unknown = scope.filter((s) => !available.includes(s));
  if (unknown.length > 0) throw invalidScope(`scope '${unknown[0]!.slice(0, 64)}' is not available to this app`);
  ctx.scope = scope;
}

/**
 * What the tokens are bound to. RFC 9449 §5: a DPoP proof binds them to its key; RFC 8705 §3: a
 * request made with a client certificate, to the certificate; whatever the product, the proof
 * first. A product with senderConstraint dpop or mtls issues no token without its kind of binding.
 */
function senderBinding(dpop: DpopVerifier, clientCertificate: ReadClientCertificate): Step {
  return async function senderBinding(ctx) {
    const product = ctx.product!;
    if (product.senderConstraint === 'mtls') {
      const certificate = clientCertificate(ctx.req);
      if (certificate === undefined) throw invalidRequest(`API product '${product.name}' issues certificate-bound tokens only: present a client certificate`);
      ctx.cnf = { 'x5t#S256': certificate.thumbprint };
      return;
    }
    try {
      const proof = proofHeader(ctx.req);
      if (proof !== undefined) {
        ctx.cnf = { jkt: await dpop.verify(proof, { method: 'POST', htu: dpop.htu(ctx.req, ctx.request.protocol, OAUTH_PATHS.token), now: ctx.now }) };
        return;
      }
    } catch (err) {
      // The proof's refusals (src/oauth/dpop.ts) as this surface's error, with the nonce to use.
      throw err instanceof DpopRefusal ? dpopRefused(err.code, err.message, dpop.nonce(ctx.now)) : err;
    }
    if (product.senderConstraint === 'dpop') throw dpopRefused('invalid_dpop_proof', `API product '${product.name}' issues DPoP-bound tokens only: send a DPoP proof`, dpop.nonce(ctx.now));
    const certificate = clientCertificate(ctx.req);
    if (certificate !== undefined) ctx.cnf = { 'x5t#S256': certificate.thumbprint };
  };
}

/** What the token endpoint is compiled with: the products it issues for, and what the grants use. */
export interface TokenEndpointEnv extends OAuthEnv, GrantEnv {
  products: ReadonlyMap<string, ProductSettings>;
  dpop: DpopVerifier;
}

/** The token endpoint; the route runs the policies of oauth.policies (an IP list, a spike arrest) before it. */
export function createTokenEndpoint(env: TokenEndpointEnv): FormEndpoint {
  const steps: readonly Step[] = [
    requirePost('token endpoint'),
    rejectQueryCredentials,
    parseBody,
    clientAuth(env),
    supportedGrantType,
    stripGrantIrrelevantParameters,
    allowedGrantType(env.products),
    validateScope,
    senderBinding(env.dpop, env.clientCertificate),
  ];
  const grantEnv: GrantEnv = { store: env.store, secretKey: env.secretKey, authServers: env.authServers, signing: env.signing };
  return createFormEndpoint<TokenContext>(env, {
    name: 'token endpoint',
    steps,
    context: (base) => ({ ...base, grant: undefined, product: undefined, scope: undefined, cnf: undefined }),
    async answer(ctx, res) {
      const body = await ctx.grant!.handle(
        { req: ctx.req, form: ctx.form, client: ctx.client!, product: ctx.product!, scope: ctx.scope, now: ctx.now, cnf: ctx.cnf, span: ctx.request.span },
        grantEnv,
      );
      const payload = JSON.stringify(body);
      res.writeHead(200, { ...NO_STORE_NOSNIFF, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
      return { app: ctx.client!.app.name, grant: ctx.grant!.grantType };
    },
  });
}
