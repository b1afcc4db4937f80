// What the authorization flow's tests share: a user agent that keeps cookies and follows nothing
// by itself (each redirect is asserted), PKCE pairs, and a gateway whose products sign users in.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { freePort } from '../../src/http/listener.ts';
import { startTestGateway, type ConfigParts, type TestGateway } from '../helpers.ts';

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Visit {
  status: number;
  headers: Headers;
  text: string;
  /** The Location of a redirect, resolved against the URL visited. */
  location: string | undefined;
}

/** A browser without script: cookies by name (path and expiry kept simple: the tests use one origin), no redirect followed. */
export class UserAgent {
  readonly cookies = new Map<string, string>();

  async visit(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Visit> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    if (init.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, {
      method: init.method ?? (init.form === undefined ? 'GET' : 'POST'),
      headers,
      redirect: 'manual',
      ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form).toString() }),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      if (/Max-Age=0(;|$)/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(eq + 1));
    }
    const location = res.headers.get('location');
    return { status: res.status, headers: res.headers, text: await res.text(), location: location === null ? undefined : new URL(location, url).href };
  }
}

/** The hidden CSRF field of a page's form. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  if (match === null) throw new Error(`no CSRF field in the page:\n${page.slice(0, 500)}`);
  return match[1]!;
}

export const REDIRECT_URI = 'http://127.0.0.1:7777/callback';

/**
 * A gateway whose product `people` signs users in with the authorization code grant (login:
 * `login`, default the authorization server `users`), its route /v1/me needing a user; on `port`
 * when the test must name the gateway's address before it starts (an OpenID provider's redirect URI).
 */
export async function startFlowGateway(parts: ConfigParts & { login?: string; people?: string; port?: number } = {}): Promise<TestGateway & { issuer: string }> {
  const port = parts.port ?? (await freePort('127.0.0.1'));
  const issuer = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway(
    {
      ...parts,
      oauth: `  issuer: ${issuer}\n${parts.oauth ?? ''}`,
      routes: `  me:
    method: GET
    path: /v1/me
    upstream: backend
    requireSubject: true
    scopes: [profile]
${parts.routes ?? ''}`,
      products: `  people:
    routes: [me]
    scopes: [profile, email]
    grants: [authorization_code, refresh_token]
    login: ${parts.login ?? 'users'}
    accessTokenLifetime: 600
${parts.people ?? ''}${parts.products ?? ''}`,
    },
    { port },
  );
  return { ...gw, issuer };
}

/** A confidential app of `people` with the test's redirect URI (and others), through the store. */
export async function flowApp(gw: TestGateway, redirectUris: readonly string[] = [REDIRECT_URI]): Promise<{ key: string; secret: string; id: string }> {
  const app = await gw.client('people');
  const { store } = gw.gateway.services;
  const found = await store.apps.findAppByKey(app.key);
  await store.apps.setRedirectUris(found!.id, redirectUris, Date.now());
  return { ...app, id: found!.id };
}

/** A page of the flow that refuses: no redirect anywhere, never framed, the message shown. */
export function assertRefusalPage(res: Visit, status: number, message: string, what = ''): void {
  assert.equal(res.status, status, `${what}: ${res.text.slice(0, 300)}`);
  assert.equal(res.location, undefined, what);
  assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', what);
  assert.equal(res.headers.get('x-frame-options'), 'DENY', what);
  assert.match(res.headers.get('content-security-policy')!, /frame-ancestors 'none'/, what);
  assert.ok(res.text.includes(message), `${what}: ${message} not in ${res.text}`);
}
