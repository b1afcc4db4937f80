// A cookie-keeping HTTP client for the portal's HTTP-level tests: what a browser would send,
// without the browser. No `.test` suffix: the runner must not run it on its own.
import { Agent, fetch as undiciFetch } from 'undici';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The CSRF token of the page's first form. */
  csrf: string | undefined;
}

// The test certificate is for localhost, and self-signed.
const trusting = new Agent({ connect: { ca: readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'localhost.crt')) } });

export class Visitor {
  /** Its cookies by name, as the portal set them; an expired Set-Cookie removes one. */
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  /** The Cookie header it sends (undefined: none); setting it replaces every cookie. */
  get cookie(): string | undefined {
    return this.cookies.size === 0 ? undefined : [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  set cookie(header: string | undefined) {
    this.cookies.clear();
    for (const pair of header?.split('; ') ?? []) {
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }

  async get(pathname: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.#send(pathname, { method: 'GET', headers });
  }

  /** POSTs a form, with the CSRF token given (or none). */
  async post(pathname: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return this.#send(pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** GETs the Location of a redirect, as a browser does after a 303. */
  async follow(redirect: Page): Promise<Page> {
    const location = redirect.headers.get('location');
    if (redirect.status !== 303 || location === null) throw new Error(`not a 303 with a Location (${redirect.status})`);
    return this.get(location);
  }

  /** GETs `pageWithForm`, then POSTs `form` with that page's CSRF token, as a browser submitting it would. */
  async submit(pageWithForm: string, action: string, form: Record<string, string>): Promise<Page> {
    const page = await this.get(pageWithForm);
    if (page.csrf === undefined) throw new Error(`${pageWithForm} has no form with a CSRF token (${page.status})`);
    return this.post(action, { csrf: page.csrf, ...form });
  }

  async #send(pathname: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Page> {
    const res = await undiciFetch(new URL(pathname, this.base), {
      ...init,
      headers: { ...init.headers, ...(this.cookie === undefined ? {} : { cookie: this.cookie }) },
      redirect: 'manual',
      dispatcher: trusting,
    });
    for (const set of res.headers.getSetCookie()) this.#keep(set);
    const text = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
    return { status: res.status, headers: res.headers as unknown as Headers, text, csrf };
  }

  /** Paths are not matched: the tests ask for the pages the cookies are meant for. */
  #keep(setCookie: string): void {
    const [pair = '', ...attributes] = setCookie.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    if (attributes.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name);
    else this.cookies.set(name, pair.slice(eq + 1).trim());
  }
}
