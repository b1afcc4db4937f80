// An OpenID provider under the attacker's control, for the attacks on the gateway as a relying
// party: real HTTP, real discovery, JWKS and token endpoint, and ID tokens signed with a real key,
// but every claim, every answer and every check of its own can be bent by the test.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { closeServer, listenOn } from '../helpers.ts';

export const PROVIDER_CLIENT = { id: 'token-gateway', secret: 'provider-secret-of-the-gateway' };

/** What the gateway asked the provider's authorization endpoint for. */
export interface ProviderLogin {
  redirectUri: string;
  state: string;
  nonce: string;
  challenge: string;
}

export interface StubProvider {
  issuer: string;
  /** The `identityProviders` entry naming it. */
  yaml(name: string): string;
  /** The login a gateway redirect to the provider asks for. */
  loginOf(location: string): ProviderLogin;
  /** A code the token endpoint will exchange for an ID token of `claims` (sub, or others over the defaults). */
  issue(login: ProviderLogin, claims: Record<string, unknown>): string;
  /** Signs ID tokens with a key the JWKS does not publish. */
  rogueKey: boolean;
  /** Checks the PKCE verifier at the token endpoint (a provider that does not leaves only the nonce). */
  checksPkce: boolean;
  /** Token endpoint requests, with the redirect_uri each named. */
  tokenRequests: { redirectUri: string | null }[];
  /** Answers every request with this status (a provider in trouble), when set. */
  failWith: number | undefined;
  close(): Promise<void>;
}

export async function startStubProvider(): Promise<StubProvider> {
  const server = createServer();
  const issuer = await listenOn(server);
  const key = await generateKeyPair('RS256');
  const rogue = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { login: ProviderLogin; claims: Record<string, unknown> }>();
  let counter = 0;
  const stub: StubProvider = {
    issuer,
    yaml: (name) => `  ${name}:\n    issuer: ${issuer}\n    clientId: ${PROVIDER_CLIENT.id}\n    clientSecret: ${PROVIDER_CLIENT.secret}\n    allowInsecureHttp: true\n    timeout: 2s\n`,
    loginOf(location) {
      const url = new URL(location);
      const get = (name: string) => url.searchParams.get(name) ?? '';
      return { redirectUri: get('redirect_uri'), state: get('state'), nonce: get('nonce'), challenge: get('code_challenge') };
    },
    issue(login, claims) {
      const code = `provider-code-${++counter}`;
      codes.set(code, { login, claims });
      return code;
    },
    rogueKey: false,
    checksPkce: true,
    tokenRequests: [],
    failWith: undefined,
    close: () => closeServer(server),
  };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  server.on('request', async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (stub.failWith !== undefined) return void res.writeHead(stub.failWith, { 'content-type': 'text/html' }).end('<h1>down</h1>');
    const path = new URL(req.url!, issuer).pathname;
    if (path === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (path === '/jwks') return json(res, 200, { keys: [jwk] });
    if (path !== '/token' || req.method !== 'POST') return json(res, 404, { error: 'not_found' });
    const form = new URLSearchParams(text);
    stub.tokenRequests.push({ redirectUri: form.get('redirect_uri') });
    if (!authenticated(req.headers.authorization)) return json(res, 401, { error: 'invalid_client' });
    const found = codes.get(form.get('code') ?? '');
    codes.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    if (found === undefined || form.get('redirect_uri') !== found.login.redirectUri) return json(res, 400, { error: 'invalid_grant' });
    if (stub.checksPkce && createHash('sha256').update(verifier).digest('base64url') !== found.login.challenge) return json(res, 400, { error: 'invalid_grant' });
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: PROVIDER_CLIENT.id, nonce: found.login.nonce, iat: now, exp: now + 300, ...found.claims };
    const signing: CryptoKey = stub.rogueKey ? rogue.privateKey : key.privateKey;
    const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(signing);
    return json(res, 200, { access_token: 'provider-access', token_type: 'Bearer', expires_in: 300, id_token: idToken });
  });
  return stub;
}

/** RFC 6749 §2.3.1: Basic of the form-encoded id and secret (openid-client encodes even "-"). */
function authenticated(header: string | undefined): boolean {
  if (header?.startsWith('Basic ') !== true) return false;
  const [id, secret] = Buffer.from(header.slice(6), 'base64')
    .toString('utf8')
    .split(':')
    .map((part) => decodeURIComponent(part.replaceAll('+', ' ')));
  return id === PROVIDER_CLIENT.id && secret === PROVIDER_CLIENT.secret;
}
