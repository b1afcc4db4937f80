// The portal's pages. Each takes what it shows and returns Html; the layout wraps them. A
// developer's apps have theirs in ./app-pages.ts.
import type { PortalSettings, ProductSettings, RouteSettings } from '../config/load.ts';
import type { QuotaSettings } from '../policies/quota.ts';
import type { Developer } from '../store/port/index.ts';
import { html, type Html } from '../html.ts';
import { FAVICON_PATH } from './assets.ts';
import { contents, documentSection, operationId, type ReferenceDocument } from './reference.ts';
import { panelGrant, tokenLine, type TrySettings } from './try-it.ts';

export interface Frame {
  portal: PortalSettings;
  /** Whether the portal can mail (confirmation and password-reset links). */
  mail: boolean;
  developer: Developer | undefined;
  csrf: string;
}

export const plural = (n: number, unit: string) => `${n.toLocaleString('en')} ${unit}${n === 1 ? '' : 's'}`;
/** A duration in the largest whole unit: "24 hours", "90 minutes". */
export const span = (ms: number) =>
  ms % 86_400_000 === 0 && ms > 86_400_000 ? plural(ms / 86_400_000, 'day') : ms % 3_600_000 === 0 ? plural(ms / 3_600_000, 'hour') : plural(Math.round(ms / 60_000), 'minute');
export const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const dateTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** `wide`: a page with a sidebar beside its text (the API reference), given the room of a desktop screen. */
export function layout(frame: Frame, title: string, body: Html, options: { wide?: boolean } = {}): Html {
  const { portal, developer } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${portal.title}</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="/assets/portal.css">
<script src="/assets/portal.js" defer></script>
</head>
<body>
<header>
  <a class="brand" href="/">${portal.title}</a>
  <nav>
    <a href="/">API products</a>
    ${
      developer === undefined
        ? html`<a href="/login">Log in</a> <a href="/signup">Sign up</a>`
        : html`<a href="/apps">My apps</a> <a href="/account">Account</a>
    <span class="session"><span class="signed-in" id="signed-in" title="${developer.email}">Logged in as <strong>${developer.email}</strong></span>
    <form method="post" action="/logout" class="inline">${csrfField(frame)}<button type="submit" class="link">Log out</button></form></span>`
    }
  </nav>
</header>
<main${options.wide === true ? html` class="wide"` : ''}>
${body}
</main>
</body>
</html>
`;
}

export const csrfField = (frame: Frame) => html`<input type="hidden" name="csrf" value="${frame.csrf}">`;
export const problem = (message: string | undefined) => (message === undefined ? '' : html`<p class="error" role="alert">${message}</p>`);
export const notice = (message: string | undefined) => (message === undefined ? '' : html`<p class="notice" role="status">${message}</p>`);

export function quotaText(q: QuotaSettings): string {
  return `${q.limit.toLocaleString('en')} calls per ${q.interval}${q.window === 'rolling' ? ' (rolling)' : ''}`;
}

export function productsPage(frame: Frame, products: readonly ProductSettings[]): Html {
  return layout(
    frame,
    'API products',
    html`<h1>API products</h1>
<p>Register an app for one of these products to get a key and secret for its token endpoint.</p>
<ul class="cards">
${products.map((p) => html`<li><h2><a href="/products/${encodeURIComponent(p.name)}">${p.displayName}</a></h2><p>${p.description}</p></li>`)}
</ul>
${products.length === 0 ? html`<p>No API products are published yet.</p>` : ''}`,
  );
}

export function productPage(frame: Frame, product: ProductSettings, routes: readonly RouteSettings[]): Html {
  const base = frame.portal.gatewayUrl;
  const grants = [...product.grants];
  // The token for the product's routes: a user's (the password grant) when every one requires a user.
  const grant = panelGrant(product.grants, { requireSubject: routes.length > 0 && routes.every((r) => r.requireSubject) });
  const tokenCall = tokenLine(base, grant ?? 'client_credentials', product.scopes);
  const first = routes.find((r) => r.method === 'GET') ?? routes[0];
  const apiCall = first === undefined ? '' : `curl${first.method === 'GET' ? '' : ` -X ${first.method}`} -H "Authorization: Bearer $TOKEN" ${base}${first.path.replace(/\{[^}]+\}/g, '1')}`;
  const reference = `/products/${encodeURIComponent(product.name)}/reference`;
  const routeQuota = (r: RouteSettings) => {
    const q = r.policies.find((p) => 'quota' in p) as { quota: QuotaSettings } | undefined;
    return q === undefined ? '' : quotaText(q.quota);
  };
  return layout(
    frame,
    product.displayName,
    html`<h1>${product.displayName}</h1>
<p>${product.description}</p>
<dl class="facts">
  <dt>Grant types</dt><dd>${grants.join(', ')}</dd>
  <dt>Scopes</dt><dd>${product.scopes.length > 0 ? product.scopes.join(' ') : 'none'}</dd>
  <dt>Quota</dt><dd>${product.quota === undefined ? 'none for the product' : `${quotaText(product.quota)} per ${product.quota.per ?? 'app'}`}</dd>
  <dt>New apps</dt><dd>${product.approval === 'manual' ? 'approved by the API team before they work' : 'work at once'}</dd>
  <dt>Access tokens</dt><dd>valid ${Math.round(product.accessTokenLifetime / 60)} minutes</dd>
  <dt>Token format</dt><dd>${
    product.accessTokenFormat === 'jwt'
      ? html`signed JWTs (RFC 9068) for the audience <code>${product.audience}</code>, verifiable with the gateway's <a id="jwks" href="${base}/.well-known/jwks.json">JWKS</a>`
      : 'opaque: only the gateway can read them'
  }</dd>
</dl>
<h2>Routes</h2>
<table class="reflow">
<thead><tr><th>Method</th><th>Path</th><th>Scopes</th><th>Quota</th></tr></thead>
<tbody>
${routes.map((r) => html`<tr><td data-label="Method"><code>${r.method}</code></td><td data-label="Path">${r.operation === undefined ? html`<code>${r.path}</code>` : html`<a href="${reference}#${operationId(r)}"><code>${r.path}</code></a>`}</td><td data-label="Scopes">${r.scopes.join(' ')}</td><td data-label="Quota">${routeQuota(r)}</td></tr>`)}
</tbody>
</table>
${routes.some((r) => r.operation !== undefined) ? html`<p><a class="button" href="${reference}">API reference and try-it</a></p>` : ''}
<h2>Try it</h2>
<p>Get a token with your app's key and secret:</p>
<pre><code id="example-token">${tokenCall}</code></pre>
<p>Call a route with it (the token is the <code>access_token</code> of the answer):</p>
<pre><code id="example-call">${apiCall}</code></pre>
<p>${frame.developer === undefined ? html`<a href="/signup">Sign up</a> or <a href="/login">log in</a> to register an app.` : html`<a class="button" href="/apps/new?product=${encodeURIComponent(product.name)}">Register an app for ${product.displayName}</a>`}</p>`,
  );
}

/** The reference of a product's operations from OpenAPI documents, each document with its operations, and a try-it panel each. */
export function referencePage(frame: Frame, product: ProductSettings, docs: readonly ReferenceDocument[], settings: TrySettings): Html {
  return layout(
    frame,
    `${product.displayName}: API reference`,
    html`<h1>${product.displayName}: API reference</h1>
<p><a href="/products/${encodeURIComponent(product.name)}">About the product</a>: grant types, quota, how to register an app.</p>
<div class="reference" data-gateway="${settings.gatewayUrl}">
${contents(docs)}
<div class="reference-body">
${docs.map((d) => documentSection(d, settings))}
</div>
</div>`,
    { wide: true },
  );
}

export function signupPage(frame: Frame, form: { email?: string; name?: string; invitation?: string; error?: string }): Html {
  const invited = frame.portal.signup === 'invited';
  return layout(
    frame,
    'Sign up',
    html`<h1>Sign up</h1>
${invited ? html`<p>Sign-up is by invitation: use the email address and the invitation code the API team gave you.</p>` : html`<p>We will mail you a link to confirm your address; once it is confirmed you can register apps.</p>`}
${problem(form.error)}
<form method="post" action="/signup" class="stack">
  ${csrfField(frame)}
  <label>Email <input type="email" name="email" required autocomplete="email" value="${form.email ?? ''}"></label>
  ${invited ? '' : html`<label>Name <input type="text" name="name" maxlength="100" autocomplete="name" value="${form.name ?? ''}"></label>`}
  <label><span>Invitation code${invited ? '' : html` <span class="hint">(if the API team gave you one)</span>`}</span> <input type="text" name="invitation" ${invited ? html`required` : ''} autocomplete="off" value="${form.invitation ?? ''}"></label>
  <label>Password <input type="password" name="password" required minlength="10" autocomplete="new-password"></label>
  <button type="submit">Sign up</button>
</form>
<p>Already signed up? <a href="/login">Log in</a>.</p>`,
  );
}

export function loginPage(frame: Frame, form: { email?: string; error?: string; notice?: string }): Html {
  return layout(
    frame,
    'Log in',
    html`<h1>Log in</h1>
${notice(form.notice)}
${problem(form.error)}
<form method="post" action="/login" class="stack">
  ${csrfField(frame)}
  <label>Email <input type="email" name="email" required autocomplete="username" value="${form.email ?? ''}"></label>
  <label>Password <input type="password" name="password" required autocomplete="current-password"></label>
  <button type="submit">Log in</button>
</form>
<p>New here? <a href="/signup">Sign up</a>.</p>
${frame.mail ? html`<p>Forgot your password? <a href="/forgot">Set a new one</a>.</p>` : ''}`,
  );
}

/**
 * The answer to a sign-up, a new confirmation link or a reset request: the same whatever the
 * address, so it tells nothing about accounts. It neither repeats the address nor holds a form
 * (whose CSRF token is the browser's): asking again is a link to a form.
 */
export function checkEmailPage(frame: Frame, kind: 'signup' | 'resend' | 'reset'): Html {
  return layout(
    frame,
    'Check your email',
    html`<h1>Check your email</h1>
${
  kind === 'reset'
    ? html`<p>If the address you gave has an account here, we mailed it a link to set a new password. It works once, within 1 hour.</p>
<p>Nothing arrived? Check the spam folder, wait a few minutes, then <a href="/forgot">ask again</a>.</p>`
    : html`<p>${kind === 'resend' ? 'We mailed a new link to the address you gave, if it is waiting for confirmation; the one before no longer works.' : 'We mailed a message to the address you gave.'} To confirm the address, open the link in it within 24 hours and log in with the password you chose.</p>
<p>Nothing arrived? Check the spam folder and wait a few minutes, then <a id="resend" href="${RESEND_PATH}">send the link again</a>. A typo in the address? <a href="/signup">Sign up again</a> with the right one.</p>`
}
<p><a href="/login">Log in</a></p>`,
  );
}

export const RESEND_PATH = '/signup/resend';

/** Asks for the address again: a new confirmation link goes to it, whatever the page that sent the visitor here knew. */
export function resendPage(frame: Frame, form: { email?: string; error?: string }): Html {
  return layout(
    frame,
    'Send the confirmation link again',
    html`<h1>Send the confirmation link again</h1>
<p>Type the address you signed up with: we mail it a new link, valid 24 hours, and the link mailed before stops working.</p>
${problem(form.error)}
<form method="post" action="${RESEND_PATH}" class="stack">
  ${csrfField(frame)}
  <label>Email <input type="email" name="email" required autocomplete="username" value="${form.email ?? ''}"></label>
  <button type="submit">Send the link again</button>
</form>
<p>Confirmed already? <a href="/login">Log in</a>.</p>`,
  );
}

/** Where a confirmation link leads: the account's password proves that whoever follows it also signed up. */
export function verifyPage(frame: Frame, form: { token: string; email?: string; error?: string }): Html {
  return layout(
    frame,
    'Confirm your email address',
    html`<h1>Confirm your email address</h1>
<p>Log in with the password you chose at sign-up to confirm the address.</p>
${problem(form.error)}
<form method="post" action="/verify" class="stack">
  ${csrfField(frame)}
  <input type="hidden" name="token" value="${form.token}">
  <label>Email <input type="email" name="email" required autocomplete="username" value="${form.email ?? ''}"></label>
  <label>Password <input type="password" name="password" required autocomplete="current-password"></label>
  <button type="submit">Confirm</button>
</form>
<p>Did not sign up? Then ignore the message: nothing happens without the password.</p>`,
  );
}

export function forgotPage(frame: Frame, form: { email?: string; error?: string }): Html {
  return layout(
    frame,
    'Forgot your password',
    html`<h1>Forgot your password</h1>
<p>We will mail a link to set a new one. Setting it logs you out everywhere.</p>
${problem(form.error)}
<form method="post" action="/forgot" class="stack">
  ${csrfField(frame)}
  <label>Email <input type="email" name="email" required autocomplete="username" value="${form.email ?? ''}"></label>
  <button type="submit">Mail me a link</button>
</form>
<p>Remembered it? <a id="back-to-login" href="/login">Back to log in</a>.</p>`,
  );
}

export function resetPage(frame: Frame, form: { token: string; error?: string }): Html {
  return layout(
    frame,
    'Set a new password',
    html`<h1>Set a new password</h1>
${problem(form.error)}
<form method="post" action="/reset" class="stack">
  ${csrfField(frame)}
  <input type="hidden" name="token" value="${form.token}">
  <label>New password <input type="password" name="password" required minlength="10" autocomplete="new-password"></label>
  <button type="submit">Set the password</button>
</form>
<p>Setting it logs you out everywhere. Link used or expired? <a href="/forgot">Ask for a new one</a>.</p>`,
  );
}

export function accountPage(frame: Frame, form: { error?: string; notice?: string }): Html {
  const dev = frame.developer!;
  return layout(
    frame,
    'Account',
    html`<h1>Account</h1>
<dl class="facts"><dt>Email</dt><dd>${dev.email}</dd><dt>Name</dt><dd>${dev.name}</dd><dt>Since</dt><dd>${date(dev.createdAt)}</dd></dl>
<h2>Change password</h2>
${notice(form.notice)}
${problem(form.error)}
<form method="post" action="/account/password" class="stack">
  ${csrfField(frame)}
  <label>Current password <input type="password" name="current" required autocomplete="current-password"></label>
  <label>New password <input type="password" name="next" required minlength="10" autocomplete="new-password"></label>
  <button type="submit">Change password</button>
</form>
<p>Changing the password logs you out everywhere else.</p>`,
  );
}

export function messagePage(frame: Frame, title: string, message: string): Html {
  return layout(frame, title, html`<h1>${title}</h1><p>${message}</p><p><a href="/">Back to the portal</a></p>`);
}
