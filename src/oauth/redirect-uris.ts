// Redirect URIs: which an app may register (OAuth 2.1 §2.3, RFC 8252 §7 and §8.3), and whether
// one presented at the authorization endpoint is one of them: the exact string, except that a
// loopback redirect of a native app may name any port (RFC 8252 §7.3).

/** At most this many per app, each at most this long. */
export const MAX_REDIRECT_URIS = 10;
const MAX_LENGTH = 2000;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** RFC 8252 §7.1: a private-use scheme is a reverse domain name (com.example.app), so it holds a dot. */
const PRIVATE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/** Why `uri` cannot be registered as a redirect URI; undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  // RFC 6749 §3.1.2: no fragment, not even an empty one.
  if (uri.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password';
  if (url.protocol === 'https:') {
    if (url.hostname === '') return 'must name a host';
  } else if (url.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) return 'must be https, or http on a loopback address (127.0.0.1, [::1], localhost)';
  } else if (!PRIVATE_SCHEME.test(url.protocol)) {
    return 'must be https, http on a loopback address, or a private-use scheme in reverse domain order (com.example.app:/callback)';
  }
  // One spelling only, so that matching is comparing strings.
  if (url.href !== uri) return `must be written as ${JSON.stringify(url.href)}`;
  return undefined;
}

/** Whether `presented` is one of the app's redirect URIs (RFC 8252 §7.3: a loopback one on any port). */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const loopback = withoutLoopbackPort(presented);
  return loopback !== undefined && registered.some((r) => withoutLoopbackPort(r) === loopback);
}

/** An http loopback URI with its port taken out; undefined for any other. */
function withoutLoopbackPort(uri: string): string | undefined {
  if (!uri.startsWith('http://') || uri.length > MAX_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  // Only a URI written as the URL parser writes it: no second spelling of the same place.
  if (url.href !== uri || !LOOPBACK_HOSTS.has(url.hostname) || url.username !== '' || url.password !== '' || uri.includes('#')) return undefined;
  url.port = '';
  return url.href;
}
