// The schema of who logs users in (the authorization servers of the password grant and of the
// login page, the OpenID providers) and of a product's authorization code grant: part of the one
// schema in ./schema.ts.
import { Type } from '@sinclair/typebox';
import { about, Duration, Name, Scope, Strict } from '../fragments.ts';

export const AuthServer = Type.Object(
  {
    url: about(
      Type.String({ pattern: '^https?://', title: 'URL', examples: ['https://login.example.com/authenticate'] }),
      'Where the password grant and the login page send the username and password.',
    ),
    allowInsecureHttp: Type.Optional(about(Type.Boolean(), 'Plain HTTP is refused unless this is set (loopback demos and tests).', { default: false })),
    timeout: Type.Optional(about(Duration, 'How long an answer may take before the token request gets 503.', { default: '5s' })),
    clientId: Type.Optional(about(Type.String(), "The gateway's own client id at the server (HTTP Basic); absent: none is sent.")),
    clientSecret: Type.Optional(about(Type.String(), 'Its secret.')),
    subjectField: Type.Optional(about(Type.String({ minLength: 1 }), "Field of the server's JSON answer that names the subject; the username when the answer has none.", { default: 'sub' })),
    ca: Type.Optional(about(Type.String({ minLength: 1 }), "PEM file of the CA that signed the server's certificate, when not a public one.")),
  },
  Strict,
);

export const IdentityProvider = Type.Object(
  {
    issuer: about(
      Type.String({ pattern: '^https?://[^?#]+$', title: 'issuer URL', examples: ['https://login.example.com/realms/staff'] }),
      "The OpenID provider's issuer: its metadata is read from /.well-known/openid-configuration under it.",
    ),
    clientId: about(Type.String({ minLength: 1 }), "The gateway's client id at the provider; its redirect URI there is the issuer of the gateway followed by /oauth2/callback."),
    clientSecret: Type.Optional(about(Type.String({ minLength: 1 }), 'Its secret (client_secret_basic); absent: the gateway is a public client of the provider.')),
    scopes: Type.Optional(about(Type.Array(Scope, { uniqueItems: true }), 'Scopes asked of the provider; openid is always asked.', { default: ['openid'] })),
    subjectClaim: Type.Optional(about(Type.String({ minLength: 1 }), "The ID token's claim that names the user: the subject of the gateway's tokens.", { default: 'sub' })),
    allowInsecureHttp: Type.Optional(about(Type.Boolean(), 'Plain HTTP is refused unless this is set (loopback demos and tests).', { default: false })),
    timeout: Type.Optional(about(Duration, 'How long an answer of the provider may take before the login fails with a page saying so.', { default: '5s' })),
  },
  Strict,
);

/** A product's keys for the authorization code grant. */
export const AuthorizationCodeKeys = {
  login: Type.Optional(about(Name, 'Who logs users in for the authorization code grant: a name under `identityProviders` (OpenID Connect), or under `authServers` (a login page on the gateway).')),
  consent: Type.Optional(
    about(Type.Unsafe<'required' | 'skip'>({ type: 'string', enum: ['required', 'skip'] }), "required: users approve each app's scopes on a consent page; skip: first-party apps, no page.", {
      default: 'required',
    }),
  ),
  consentLifetime: Type.Optional(about(Duration, 'How long a consent is remembered for the same user, app and scopes.', { default: '30d' })),
  requirePushedAuthorizationRequests: Type.Optional(about(Type.Boolean(), 'RFC 9126: the authorization endpoint takes only requests pushed to /oauth2/par first.', { default: false })),
  authorizationCodeLifetime: Type.Optional(about(Duration, 'How long an authorization code can be exchanged.', { default: '60s' })),
};
