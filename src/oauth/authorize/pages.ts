// The pages of the authorization flow: the login form (an authorization server's), the consent,
// and the page of a request that cannot go back to its app. Server-rendered with the portal's
// stylesheet, no script, readable at phone width; every value escaped (src/html.ts).
import { html, type Html } from '../../html.ts';
import { OAUTH_PATHS } from '../endpoint.ts';

function layout(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${OAUTH_PATHS.stylesheet}">
</head>
<body>
<header><span class="brand">${title}</span></header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** A duration in its largest whole unit: "30 days", "12 hours", "90 minutes". */
export function duration(ms: number): string {
  const [n, unit] = ms % 86_400_000 === 0 ? [ms / 86_400_000, 'day'] : ms % 3_600_000 === 0 ? [ms / 3_600_000, 'hour'] : [Math.max(1, Math.round(ms / 60_000)), 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

const problem = (message: string | undefined) => (message === undefined ? '' : html`<p class="error" role="alert">${message}</p>`);

/** A request that cannot be answered at the app (its app or redirect URI in doubt), or a flow that cannot go on. */
export function messagePage(title: string, message: string): Html {
  return layout(title, html`<h1>${title}</h1><p>${message}</p><p>Go back to the app you came from and start again.</p>`);
}

export interface LoginView {
  txId: string;
  csrf: string;
  appName: string;
  username?: string;
  error?: string;
}

export function loginPage(view: LoginView): Html {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
<p>Sign in to continue to <strong>${view.appName}</strong>.</p>
${problem(view.error)}
<form method="post" action="${OAUTH_PATHS.login}?tx=${view.txId}" class="stack">
  <input type="hidden" name="csrf" value="${view.csrf}">
  <label>Username <input type="text" name="username" required autocomplete="username" autocapitalize="none" spellcheck="false" value="${view.username ?? ''}"></label>
  <label>Password <input type="password" name="password" required autocomplete="current-password"></label>
  <button type="submit">Sign in</button>
</form>
<p class="hint">Your password goes to your organisation's sign-in service; neither this page nor the app keeps it.</p>`,
  );
}

export interface ConsentView {
  txId: string;
  csrf: string;
  appName: string;
  developer: { name: string; email: string };
  product: string;
  scopes: readonly string[];
  subject: string;
  /** How long the answer is remembered: "30 days". */
  remembered: string;
}

export function consentPage(view: ConsentView): Html {
  return layout(
    'Allow access',
    html`<h1>Allow <q>${view.appName}</q> to use your account?</h1>
<p>You are signed in as <strong>${view.subject}</strong>.</p>
<dl class="facts">
  <dt>App</dt><dd>${view.appName}</dd>
  <dt>Made by</dt><dd>${view.developer.name === '' ? view.developer.email : html`${view.developer.name} (${view.developer.email})`}</dd>
  <dt>API</dt><dd>${view.product}</dd>
</dl>
<h2>It asks to</h2>
${view.scopes.length === 0 ? html`<p>Call the API as you, with no particular scope.</p>` : html`<ul class="scopes">${view.scopes.map((s) => html`<li><code>${s}</code></li>`)}</ul>`}
<form method="post" action="${OAUTH_PATHS.consent}?tx=${view.txId}" class="actions">
  <input type="hidden" name="csrf" value="${view.csrf}">
  <button type="submit" name="decision" value="approve">Allow</button>
  <button type="submit" name="decision" value="deny" class="danger">Deny</button>
</form>
<p class="hint">Allowing lets the app call the API as you. You will not be asked again about these scopes for this app for ${view.remembered}.</p>`,
  );
}
