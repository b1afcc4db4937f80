// The schema of the OAuth endpoints: the signing keys, DPoP proofs, introspection callers and the
// token endpoint's policies; part of the one schema in ./schema.ts.
import { Type } from '@sinclair/typebox';
import { policySchema } from '../policies/index.ts';
import { about, Duration, HeaderName, Strict } from '../fragments.ts';

const SigningAlgorithm = Type.Unsafe<'ES256' | 'EdDSA' | 'RS256'>({ type: 'string', enum: ['ES256', 'EdDSA', 'RS256'] });

const Signing = Type.Object(
  {
    algorithm: Type.Optional(about(SigningAlgorithm, 'The algorithm of new keys: ES256 (P-256), EdDSA (Ed25519) or RS256 (RSA 2048). Keys made before a change keep theirs.', { default: 'ES256' })),
    rotateEvery: Type.Optional(about(Duration, 'How long a key signs before the next one takes over.', { default: '30d' })),
    publishAhead: Type.Optional(about(Duration, 'How long a new key is in the JWKS before it signs its first token: longer than verifiers cache the JWKS.', { default: '1h' })),
    retireAfter: Type.Optional(
      about(Duration, 'How long a key stays in the JWKS after it signed its last token; at least the longest JWT lifetime (the default: that lifetime and a minute of clock skew).'),
    ),
    identity: Type.Optional(
      about(
        Type.Object(
          {
            header: Type.Optional(about(HeaderName, 'The request header that carries the identity token to the upstream.', { default: 'X-Gateway-Identity' })),
            lifetime: Type.Optional(about(Duration, 'How long an identity token works.', { default: '60s' })),
          },
          Strict,
        ),
        'The identity token of `upstreamIdentity: jwt`.',
        { default: {} },
      ),
    ),
  },
  Strict,
);

export const UpstreamIdentity = Type.Unsafe<'headers' | 'jwt' | 'token'>({ type: 'string', enum: ['headers', 'jwt', 'token'] });
export const UPSTREAM_IDENTITY =
  "How the upstream learns who calls: headers (X-Gateway-App, X-Gateway-Subject…), jwt (a short-lived token signed with the gateway's keys, in oauth.signing.identity.header) or token (the caller's JWT access token, as Authorization: Bearer).";

const Dpop = Type.Object(
  {
    maxAge: Type.Optional(
      about(Duration, "How old a proof's iat may be (a proof is single-use within it, on every instance sharing the store); 5 seconds ahead are allowed for clocks.", { default: '60s' }),
    ),
    nonce: Type.Optional(
      about(Type.Boolean(), 'RFC 9449 §8 and §9: proofs must carry a nonce the gateway gave (DPoP-Nonce, answered with use_dpop_nonce), so that none can be made ahead of time.', {
        default: false,
      }),
    ),
  },
  Strict,
);

export const OAuth = Type.Object(
  {
    realm: Type.Optional(
      about(Type.String({ minLength: 1, pattern: '^[^"\\\\]*$', title: 'realm without quotes or backslashes', examples: ['gateway'] }), 'The realm of WWW-Authenticate challenges.', {
        default: 'gateway',
      }),
    ),
    issuer: Type.Optional(
      about(
        Type.String({ pattern: '^https://[^/?#]+$|^http://(localhost|127\\.0\\.0\\.1|\\[::1\\])(:[0-9]+)?$', title: 'issuer URL', examples: ['https://api.example.com', 'http://localhost:8080'] }),
        "RFC 8414: the gateway's address as clients reach it; the metadata document is served only when it is set.",
      ),
    ),
    introspection: Type.Optional(
      about(
        Type.Object(
          {
            clients: about(
              Type.Array(
                Type.Object(
                  { id: about(Type.String({ minLength: 1 }), 'The client id (HTTP Basic user).'), secret: about(Type.String({ minLength: 16 }), 'Its secret, 16 characters or more.') },
                  Strict,
                ),
                { minItems: 1 },
              ),
              'Who may call the endpoint.',
            ),
          },
          Strict,
        ),
        'RFC 7662: who may call POST /oauth2/introspect (your backends); absent: the endpoint is not served.',
      ),
    ),
    policies: Type.Optional(about(Type.Array(policySchema), 'Policies of the token endpoint (and revocation and introspection): ipAccess, spikeArrest keyed by ip or route, cors.', { default: [] })),
    signing: Type.Optional(about(Signing, 'The keys JWT access tokens and upstream identities are signed with: generated, stored and rotated by the gateway.', { default: {} })),
    dpop: Type.Optional(about(Dpop, 'How DPoP proofs (RFC 9449) are checked, at the token endpoint and on routes.', { default: {} })),
  },
  Strict,
);
