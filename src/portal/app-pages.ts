// The pages of a developer's apps: the list, registering one, the one-time page of a new key (and
// secret), an app's own page with its redirect URIs and usage (its analytics have ./analytics-pages.ts),
// and deleting it.
import type { ProductSettings } from '../config/load.ts';
import { MAX_REDIRECT_URIS } from '../oauth/redirect-uris.ts';
import type { QuotaSettings } from '../policies/quota.ts';
import type { UsageSummary } from '../admin/usage.ts';
import { isLive, type App, type Credential } from '../store/port/index.ts';
import { html, type Html } from '../html.ts';
import { percent } from './analytics-pages.ts';
import { certificatesSection } from './certificate-pages.ts';
import { csrfField, date, dateTime, layout, notice, plural, problem, quotaText, span, type Frame } from './pages.ts';

/** An app's state as its developer reads it: active only while it can get tokens, with a key that works. */
const appState = (app: App, workingKey: boolean) =>
  app.status === 'disabled' ? 'disabled by the API team' : app.approval === 'pending' ? 'waiting for approval' : workingKey ? 'active' : 'no working key';

/** Neither a success nor an error: the app waits, and the developer can do nothing but wait. */
const pendingNotice = () =>
  html`<p class="notice pending" role="status" id="pending-notice"><strong>Waiting for an operator's approval.</strong> The API team approves apps for this product before they work: until then the app's key gets 401 invalid_client at the token endpoint. Nothing else is needed from you.</p>`;

const noWorkingKeyNotice = (app: App) =>
  html`<p class="notice pending" role="status" id="no-working-key"><strong>This app has no working key:</strong> it cannot get tokens. ${app.type === 'public' ? 'Get a new key' : 'Get a new key and secret'} with the button under its keys.</p>`;

const DISABLED_NOTE = 'The API team disabled this app: it cannot be deleted or replaced here. Ask the API team about it.';

/** Whether the product signs users in (the authorization code grant), so that its apps have redirect URIs. */
const signsUsersIn = (product: ProductSettings | undefined) => product?.grants.has('authorization_code') === true;

const TYPES = {
  confidential: { name: 'Confidential', gets: 'a key and a secret', hint: 'A server, which keeps a secret where no user can read it: it gets a key and a secret.' },
  public: {
    name: 'Public',
    gets: 'a key, no secret',
    hint: 'A single-page, mobile or command-line app, which cannot keep a secret: it gets a key only, and signs users in (for products that sign users in).',
  },
} as const;

/** What a redirect URI may be, in a sentence (src/oauth/redirect-uris.ts decides). */
const URI_RULES = html`One per line, at most ${MAX_REDIRECT_URIS}: <code>https://</code>, <code>http://</code> on 127.0.0.1, [::1] or localhost (any port), or your app's own scheme (<code>com.example.app:/callback</code>); no <code>#</code> fragment.`;

/** The textarea's lines as redirect URIs: each trimmed, blank ones left out. */
export const redirectUrisOf = (text: string): string[] =>
  text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

export function appsPage(frame: Frame, apps: readonly { app: App; key: string | undefined; product: ProductSettings | undefined }[], message?: string): Html {
  return layout(
    frame,
    'My apps',
    html`<h1>My apps</h1>
${notice(message)}
<p><a class="button" href="/apps/new">Register a new app</a></p>
${
  apps.length === 0
    ? html`<p>You have no apps yet.</p>`
    : html`<table class="reflow">
<thead><tr><th>App</th><th>API product</th><th>Type</th><th>Status</th><th>Key</th><th>Created</th></tr></thead>
<tbody>
${apps.map(
  ({ app, key, product }) =>
    html`<tr><td data-label="App"><a href="/apps/${app.id}">${app.name}</a></td><td data-label="API product">${product?.displayName ?? app.product}</td><td data-label="Type">${app.type}</td><td data-label="Status">${appState(app, key !== undefined)}</td><td data-label="Key"><code>${key ?? 'none'}</code></td><td data-label="Created">${date(app.createdAt)}</td></tr>`,
)}
</tbody>
</table>`
}`,
  );
}

/** What the registration form holds: as typed, when it comes back with an error. */
export interface NewAppForm {
  name?: string;
  product?: string;
  type?: string;
  redirectUris?: string;
  error?: string;
}

/**
 * The type and redirect URI fields are always there (the form works without a script); each
 * product that signs users in says so, and that its apps need redirect URIs.
 */
export function newAppPage(frame: Frame, products: readonly ProductSettings[], form: NewAppForm): Html {
  const type = form.type ?? 'confidential';
  return layout(
    frame,
    'Register an app',
    html`<h1>Register an app</h1>
${problem(form.error)}
<form method="post" action="/apps" class="stack">
  ${csrfField(frame)}
  <label>App name <input type="text" name="name" required maxlength="100" value="${form.name ?? ''}"></label>
  <fieldset>
    <legend>API product</legend>
    ${products.map(
      (p, i) =>
        html`<label class="choice"><input type="radio" name="product" value="${p.name}" required ${form.product === p.name || (form.product === undefined && i === 0) ? html`checked` : ''}> <span><strong>${p.displayName}</strong> <span class="hint">${p.description}${signsUsersIn(p) ? html` Signs users in: an app that does (a public app always) needs redirect URIs.` : ''}</span></span></label>`,
    )}
  </fieldset>
  <fieldset>
    <legend>Type of app</legend>
    ${(['confidential', 'public'] as const).map(
      (t) =>
        html`<label class="choice"><input type="radio" name="type" value="${t}" ${type === t ? html`checked` : ''}> <span><strong>${TYPES[t].name}</strong> <span class="hint">${TYPES[t].hint}</span></span></label>`,
    )}
  </fieldset>
  <label>Redirect URIs <span class="hint">Only for products that sign users in: where users are sent back after signing in. ${URI_RULES}</span>
    <textarea name="redirect_uris" rows="3" spellcheck="false" autocapitalize="off">${form.redirectUris ?? ''}</textarea></label>
  <button type="submit">Register app</button>
</form>`,
  );
}

/**
 * The key and secret (a public app: the key only), shown once: after a registration or a rotation.
 * `previousWorks`: after a rotation, whether the app had another working key, which the overlap keeps.
 */
export function secretPage(frame: Frame, shown: { app: App; key: string; secret?: string; overlapUntil?: number; previousWorks?: boolean }): Html {
  const rotated = shown.overlapUntil !== undefined;
  const key = html`<dt>Key</dt><dd class="token-box">${tokenBox('app-key', shown.key)}</dd>`;
  return layout(
    frame,
    rotated ? (shown.secret === undefined ? 'New key' : 'New secret') : 'App registered',
    html`<h1>${rotated ? html`New key${shown.secret === undefined ? '' : ' and secret'} for <q>${shown.app.name}</q>` : html`App <q>${shown.app.name}</q> registered`}</h1>
${
  shown.secret === undefined
    ? html`<dl class="secrets">${key}<dt>Secret</dt><dd id="app-no-secret">none: a public app has no secret</dd></dl>
<p>The key is no secret: it names your app, which signs users in with it alone. It is on the app's page too.</p>`
    : html`<p class="warning" role="alert"><strong>Copy the secret now: it will not be shown again.</strong> The gateway keeps only a hash of it.</p>
<dl class="secrets">
  ${key}
  <dt>Secret</dt><dd class="token-box">${tokenBox('app-secret', shown.secret)}</dd>
</dl>`
}
${rotated && shown.previousWorks === true ? html`<p>The previous key${shown.secret === undefined ? '' : ' and secret'} keep${shown.secret === undefined ? 's' : ''} working until ${dateTime(shown.overlapUntil!)}.</p>` : ''}
${shown.app.approval === 'pending' ? pendingNotice() : ''}
<p><a href="/apps/${shown.app.id}">Go to the app</a></p>`,
  );
}

/**
 * A key or secret on one line, whole, scrolling in its box when it is wider, with its Copy button
 * beside it (shown by the script; without it, a click on the token selects all of it).
 */
const tokenBox = (id: string, token: string) => html`<code class="token" id="${id}">${token}</code><button type="button" class="copy" data-copy="${id}" hidden>Copy</button>`;

/** The reveal page once its secret was shown (or never reached this browser): the way to a new one. */
export function secretGonePage(frame: Frame, app: App): Html {
  if (app.type === 'public') {
    return layout(
      frame,
      'Already shown',
      html`<h1>Already shown</h1>
<p>This page was shown once. A public app has no secret: its keys are on its page.</p>
<p><a href="/apps/${app.id}">Go to the app <q>${app.name}</q></a></p>`,
    );
  }
  return layout(
    frame,
    'Secret no longer available',
    html`<h1>Secret no longer available</h1>
<p>This secret was shown once and is no longer available: the gateway keeps only a hash of it. If you did not copy it, rotate the key to get a new one.</p>
<p><a href="/apps/${app.id}">Go to the app <q>${app.name}</q></a></p>`,
  );
}

export interface AppView {
  app: App;
  product: ProductSettings | undefined;
  credentials: readonly Credential[];
  /** The app's calls over the last 24 hours. */
  usage: UsageSummary;
  /** The product's quota and how much of it the app used in the current window. */
  quota: { settings: QuotaSettings; used: number } | undefined;
  now: number;
  /** Whether token requests can present a client certificate (mutualTls of src/http/client-certificate.ts). */
  takesCertificates: boolean;
}

/** What an app's page says besides the app: a notice, an error of an action, or the redirect URI or certificate form as typed with its error. */
export interface AppNotes {
  notice?: string | undefined;
  error?: string;
  redirectUris?: { text: string; error: string };
  certificate?: { text: string; error: string };
}

export function appPage(frame: Frame, view: AppView, notes: AppNotes = {}): Html {
  const { app, product, credentials, now } = view;
  const workingKey = credentials.some((c) => isLive(c, now));
  const keyState = (c: Credential) => {
    if (c.status === 'revoked') return 'revoked';
    if (c.expiresAt !== null && c.expiresAt <= now) return 'expired';
    // A key that would work but for its app: not "active", which a developer would take at its word.
    if (app.status === 'disabled') return 'stopped: the app is disabled';
    if (app.approval === 'pending') return 'pending: usable once the app is approved';
    return c.expiresAt === null ? 'active' : `works until ${dateTime(c.expiresAt)}`;
  };
  const rotating = app.type === 'public' ? 'Rotating gives a new key; the current one keeps' : 'Rotating gives a new key and secret; the current ones keep';
  return layout(
    frame,
    app.name,
    html`<h1>${app.name}</h1>
${notice(notes.notice)}
${problem(notes.error)}
${app.status === 'active' && app.approval === 'pending' ? pendingNotice() : ''}
${app.status === 'active' && !workingKey ? noWorkingKeyNotice(app) : ''}
<dl class="facts">
  <dt>API product</dt><dd>${product === undefined ? app.product : html`<a href="/products/${encodeURIComponent(product.name)}">${product.displayName}</a>`}</dd>
  <dt>Type</dt><dd id="app-type">${app.type}: ${TYPES[app.type].gets}</dd>
  <dt>Status</dt><dd>${appState(app, workingKey)}</dd>
  <dt>Created</dt><dd>${date(app.createdAt)}</dd>
</dl>
<h2>Keys</h2>
<table class="reflow">
<thead><tr><th>Key</th><th>State</th><th>Created</th><th><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${credentials.map(
  (c) =>
    html`<tr><td data-label="Key"><code>${c.key}</code></td><td data-label="State">${keyState(c)}</td><td data-label="Created">${date(c.createdAt)}</td><td>${
      isLive(c, now) ? html`<a class="button danger" href="${revokePath(app, c)}">Revoke&hellip;</a>` : ''
    }</td></tr>`,
)}
</tbody>
</table>
<form method="post" action="/apps/${app.id}/rotate" class="actions">${csrfField(frame)}<button type="submit">${
      workingKey ? (app.type === 'public' ? 'Rotate key' : 'Rotate secret') : app.type === 'public' ? 'Get a new key' : 'Get a new key and secret'
    }</button></form>
<p class="hint">${rotating} working for ${span(frame.portal.keyOverlapMs)}, then stop${app.type === 'public' ? 's' : ''}.</p>
${certificatesSection({ app, now, takesCertificates: view.takesCertificates, typed: notes.certificate }, frame)}
${redirectUrisSection(frame, view, notes.redirectUris)}
<h2>Usage</h2>
${view.quota === undefined ? html`<p>No quota on this product.</p>` : html`<p>Quota used: <strong>${view.quota.used.toLocaleString('en')}</strong> of ${quotaText(view.quota.settings)}${view.quota.settings.per === 'developer' ? ', across all your apps' : ''}.</p>`}
<p id="usage-24h">${
      view.usage.calls === 0
        ? 'No calls with its tokens in the last 24 hours.'
        : html`In the last 24 hours: <strong>${plural(view.usage.calls, 'call')}</strong>, ${percent(view.usage.errorRate)} of them answered 4xx or 5xx.`
    }</p>
<p><a href="/apps/${app.id}/analytics" id="analytics-link">Analytics</a>: the app's calls over the last 24 hours and 30 days, by hour or day, status class and route, with the error rate and their durations (p50, p95).</p>
<h2>Delete</h2>
${app.status === 'disabled' ? html`<p>${DISABLED_NOTE}</p>` : html`<p><a class="button danger" href="/apps/${app.id}/delete">Delete this app&hellip;</a></p>`}`,
  );
}

/**
 * The app's redirect URIs, and the form that replaces them while the product signs users in and
 * the app is not disabled; the form comes back as typed, with its error, when they are refused.
 */
function redirectUrisSection(frame: Frame, view: AppView, typed: AppNotes['redirectUris']): Html {
  const { app, product } = view;
  const editable = signsUsersIn(product) && app.status === 'active';
  if (!signsUsersIn(product) && app.redirectUris.length === 0) {
    return html`<h2>Redirect URIs</h2>
<p>This product does not sign users in: the app needs no redirect URIs.</p>`;
  }
  return html`<h2>Redirect URIs</h2>
${app.redirectUris.length === 0 ? html`<p>None yet: users cannot sign in to this app until it has one.</p>` : html`<ul id="redirect-uris">${app.redirectUris.map((uri) => html`<li><code>${uri}</code></li>`)}</ul>`}
${
  editable
    ? html`<form method="post" action="/apps/${app.id}/redirect-uris" class="stack" id="redirect-uris-form">
  ${csrfField(frame)}
  ${problem(typed?.error)}
  <label>Redirect URIs <span class="hint">${URI_RULES} Saving replaces them all.</span>
    <textarea name="redirect_uris" rows="${Math.max(3, app.redirectUris.length + 1)}" spellcheck="false" autocapitalize="off">${typed?.text ?? app.redirectUris.join('\n')}</textarea></label>
  <button type="submit">Save redirect URIs</button>
</form>`
    : problem(typed?.error)
}`;
}

const revokePath = (app: App, c: Credential) => `/apps/${app.id}/keys/${c.key}/revoke`;

/**
 * Asks before a key is revoked, saying what the app is left with: revoking cannot be undone, and
 * revoking an app's only working key stops it until the developer gets a new one.
 */
export function revokeKeyPage(frame: Frame, app: App, credential: Credential, others: number): Html {
  const name = `Revoke a key of ${app.name}`;
  if (credential.status === 'revoked') {
    return layout(frame, name, html`<h1>Key already revoked</h1><p>This key of <q>${app.name}</q> is revoked already.</p><p><a href="/apps/${app.id}">Back to the app</a></p>`);
  }
  const fresh = app.type === 'public' ? 'a new key' : 'a new key and secret';
  return layout(
    frame,
    name,
    html`<h1>Revoke a key of <q>${app.name}</q>?</h1>
<dl class="facts">
  <dt>Key</dt><dd><code class="token">${credential.key}</code></dd>
  <dt>Created</dt><dd>${date(credential.createdAt)}</dd>
</dl>
<p id="revoke-effect">${
      others === 0
        ? `It is the app's only working key: once it is revoked, the app cannot get tokens until you get ${fresh} on its page. The tokens issued with it stop working at once.`
        : `The tokens issued with it stop working at once; the app's other ${others === 1 ? 'key keeps' : 'keys keep'} working.`
    } This cannot be undone.</p>
<form method="post" action="${revokePath(app, credential)}" class="actions">${csrfField(frame)}<button type="submit" class="danger">Revoke the key</button> <a href="/apps/${app.id}">Cancel</a></form>`,
  );
}

export function deletePage(frame: Frame, app: App): Html {
  if (app.status === 'disabled') return layout(frame, `Delete ${app.name}`, html`<h1>Delete <q>${app.name}</q></h1><p>${DISABLED_NOTE}</p><p><a href="/apps/${app.id}">Back to the app</a></p>`);
  return layout(
    frame,
    `Delete ${app.name}`,
    html`<h1>Delete <q>${app.name}</q>?</h1>
<p>Its keys stop working, and so do the tokens issued with them, at once. This cannot be undone.</p>
<form method="post" action="/apps/${app.id}/delete" class="actions">${csrfField(frame)}<button type="submit" class="danger">Delete the app</button> <a href="/apps/${app.id}">Cancel</a></form>`,
  );
}
