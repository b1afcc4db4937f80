// The authorization code grant's part of the file: the OpenID providers under
// `identityProviders`, and each product's login, consent and codes, checked against the other
// sections (who logs in, the issuer the redirects name).
import { defaulted as d } from './defaults.ts';
import type { ConfigFile, GrantTypeName } from './schema.ts';
import type { Site } from './sections.ts';
import type { AuthorizationSettings, AuthServerSettings, IdentityProviderSettings } from './types.ts';

export function identityProviderSettings(c: ConfigFile, site: Site): Map<string, IdentityProviderSettings> {
  const providers = new Map<string, IdentityProviderSettings>();
  for (const [name, p] of Object.entries(d(c.identityProviders))) {
    const at = (key: string) => ['identityProviders', name, key];
    if (p.issuer.startsWith('http:') && p.allowInsecureHttp !== true) site.report(at('issuer'), 'must use https (set allowInsecureHttp: true to allow plain http)');
    if (d(c.authServers)[name] !== undefined) site.report(['identityProviders', name], 'has the name of an authorization server: `login` could not tell them apart');
    const timeoutMs = site.duration(p.timeout, at('timeout'));
    if (timeoutMs < 100) site.report(at('timeout'), 'must be at least 100ms');
    providers.set(name, {
      name,
      issuer: p.issuer,
      clientId: p.clientId,
      clientSecret: p.clientSecret,
      scopes: ['openid', ...d(p.scopes).filter((s) => s !== 'openid')],
      subjectClaim: d(p.subjectClaim),
      allowInsecureHttp: d(p.allowInsecureHttp),
      timeoutMs,
    });
  }
  return providers;
}

/** Who may log users in, by name: the two sections share the names `login` takes. */
export interface Logins {
  identityProviders: ReadonlyMap<string, IdentityProviderSettings>;
  authServers: ReadonlyMap<string, AuthServerSettings>;
}

/** A product's authorization code settings: undefined unless its grants hold authorization_code, which needs `login` and `oauth.issuer`. */
export function authorizationSettings(
  name: string,
  p: ConfigFile['products'][string],
  c: ConfigFile,
  grants: ReadonlySet<GrantTypeName>,
  logins: Logins,
  site: Site,
): AuthorizationSettings | undefined {
  const at = (key: string) => ['products', name, key];
  const offered = grants.has('authorization_code');
  if (!offered) {
    if (p.login !== undefined) site.report(at('login'), 'applies to the authorization_code grant, which "grants" does not hold');
    return undefined;
  }
  // RFC 9207: the redirect names the issuer; and the provider's redirect URI is under it.
  if (d(c.oauth).issuer === undefined) site.report(['products', name, 'grants'], 'the authorization_code grant needs "oauth.issuer" (the address users and apps reach the gateway at)');
  const login = loginOf(p.login, logins);
  if (login === undefined) {
    const known = [...logins.identityProviders.keys(), ...logins.authServers.keys()];
    if (p.login === undefined) site.report(['products', name, 'grants'], 'the authorization_code grant needs "login": a name under identityProviders or authServers');
    else site.report(at('login'), `unknown login "${p.login}" (${known.length === 0 ? 'no identityProviders or authServers are declared' : `known: ${known.join(', ')}`})`);
  }
  const codeLifetimeMs = site.duration(p.authorizationCodeLifetime, at('authorizationCodeLifetime'));
  // OAuth 2.1 §4.1.2: a code lives briefly; ten minutes is the most it recommends.
  if (codeLifetimeMs < 1000 || codeLifetimeMs > 600_000) site.report(at('authorizationCodeLifetime'), 'must be between 1s and 10m');
  return {
    login: login ?? { kind: 'authServer', name: '' },
    consent: d(p.consent),
    consentLifetimeMs: site.duration(p.consentLifetime, at('consentLifetime')),
    requirePar: d(p.requirePushedAuthorizationRequests),
    codeLifetimeMs,
  };
}

function loginOf(name: string | undefined, logins: Logins): AuthorizationSettings['login'] | undefined {
  if (name === undefined) return undefined;
  if (logins.identityProviders.has(name)) return { kind: 'identityProvider', name };
  if (logins.authServers.has(name)) return { kind: 'authServer', name };
  return undefined;
}
