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
  cookie: string | undefined;
  constructor(readonly base: string) {}

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
    const set = res.headers.get('set-cookie');
    if (set !== null) this.cookie = set.split(';')[0];
    const text = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
    return { status: res.status, headers: res.headers as unknown as Headers, text, csrf };
  }
}
