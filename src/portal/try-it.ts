// The try-it panel of each operation of the API reference: the token request and the curl line
// of the call, with the document's examples filled in, and the form the portal's script shows to
// send the call from the page with one of the developer's apps. The curl line is built here and
// again in the browser (src/portal/assets.ts) as the fields change: keep the two in step.
import type { RouteSettings } from '../config/load.ts';
import { isJsonType } from '../http/request.ts';
import { isObject, type MediaType, type Operation, type Parameter } from '../openapi/document.ts';
import { serialization } from '../openapi/parameters.ts';
import { html, type Html } from '../html.ts';

/** The developer's apps of the product that can get a token now, each with its newest live key. */
interface TryApp {
  name: string;
  key: string;
}

/** What the try-it panels need to know besides the operation. */
export interface TrySettings {
  gatewayUrl: string;
  /** The product's grants: each panel asks its token with the one its operation takes (panelGrant). */
  grants: ReadonlySet<string>;
  /** undefined: no one is logged in. */
  apps: readonly TryApp[] | undefined;
  productName: string;
}

/** An example as the page shows it and the try-it panel prefills it: a string as is, anything else as JSON. */
export function exampleText(example: unknown, type = 'application/json'): string {
  if (typeof example === 'string') return example;
  if (type === 'application/x-www-form-urlencoded' && isObject(example))
    return new URLSearchParams(Object.entries(example).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
  return JSON.stringify(example, null, 2);
}

const isArrayParameter = (p: Parameter) => p.resolvedSchema?.type === 'array' || (Array.isArray(p.resolvedSchema?.type) && p.resolvedSchema.type.includes('array'));

/** How the try-it panel takes a parameter's value; form + explode (the default for a query) repeats the parameter. */
function repeats(p: Parameter): boolean {
  const { style, explode } = serialization(p);
  return p.in === 'query' && isArrayParameter(p) && style === 'form' && explode;
}

/** A parameter's example as the try-it panel's field holds it: an array's items joined by its style's separator. */
function parameterValue(p: Parameter): string {
  const example = p.example ?? p.resolvedSchema?.example;
  if (example === undefined || example === null) return '';
  if (Array.isArray(example)) {
    const separator = p.style === 'spaceDelimited' ? ' ' : p.style === 'pipeDelimited' ? '|' : ',';
    return example.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join(separator);
  }
  return typeof example === 'string' ? example : JSON.stringify(example);
}

function parameterHint(p: Parameter): string {
  if (!isArrayParameter(p)) return '';
  if (repeats(p)) return 'comma-separated; each value is sent as its own parameter';
  return p.style === 'spaceDelimited' ? 'values separated by spaces' : p.style === 'pipeDelimited' ? 'values separated by |' : 'comma-separated';
}

/** The media type the try-it panel sends: the first JSON one, else the first. */
function bodyMedia(op: Operation): MediaType | undefined {
  const content = op.body?.content ?? [];
  return content.find((m) => isJsonType(m.type)) ?? content[0];
}

/** A word for the shell: single-quoted, a quote inside closed, escaped and reopened. */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The curl line of a call. src/portal/assets.ts builds the same line in the browser as the fields
 * change (a browser test checks the two agree): keep them in step.
 */
export function curlLine(input: {
  gatewayUrl: string;
  method: string;
  path: string;
  values: readonly { in: string; name: string; value: string; repeat: boolean }[];
  contentType: string | undefined;
  body: string;
}): string {
  let path = input.path;
  const query = new URLSearchParams();
  const headers: string[] = [];
  for (const { in: where, name, value, repeat } of input.values) {
    if (where === 'path') {
      if (value !== '') path = path.replace(`{${name}}`, encodeURIComponent(value));
    } else if (value === '') {
    } else if (where === 'query') {
      for (const v of repeat ? value.split(',').map((x) => x.trim()) : [value]) query.append(name, v);
    } else if (where === 'header') {
      headers.push(`${name}: ${value}`);
    }
  }
  const search = query.toString();
  const parts = [`curl${input.method === 'GET' ? '' : ` -X ${input.method}`} ${quote(`${input.gatewayUrl}${path}${search === '' ? '' : `?${search}`}`)}`, `-H "Authorization: Bearer $TOKEN"`];
  for (const h of headers) parts.push(`-H ${quote(h)}`);
  if (input.body !== '' && input.contentType !== undefined) parts.push(`-H ${quote(`Content-Type: ${input.contentType}`)}`, `--data-binary ${quote(input.body)}`);
  return parts.join(' \\\n  ');
}

type PanelGrant = 'client_credentials' | 'password' | undefined;

/**
 * The grant a panel asks its token with: a route that requires a user (requireSubject) takes a
 * user's token, so the password grant; another, the app's own (client_credentials) where the
 * product has it. Undefined: the product has no grant the panel can use for it.
 */
export function panelGrant(grants: ReadonlySet<string>, route: Pick<RouteSettings, 'requireSubject'>): PanelGrant {
  if (grants.has('client_credentials') && !route.requireSubject) return 'client_credentials';
  return grants.has('password') ? 'password' : undefined;
}

/** The token request for an operation's scopes, with its grant. */
export function tokenLine(gatewayUrl: string, grant: PanelGrant, scopes: readonly string[]): string {
  const scope = scopes.length > 0 ? ` -d scope="${scopes.join(' ')}"` : '';
  const endpoint = `${gatewayUrl}/oauth2/token`;
  return grant === 'password'
    ? `curl -u "$KEY:$SECRET" -d grant_type=password -d username="$USERNAME" --data-urlencode password="$PASSWORD"${scope} ${endpoint}`
    : `curl -u "$KEY:$SECRET" -d grant_type=client_credentials${scope} ${endpoint}`;
}

// OpenAPI 3.x §4.8.12.1: header parameters named Accept, Content-Type or Authorization are ignored; a page cannot set cookies.
const sendable = (p: Parameter) => p.in !== 'cookie' && !(p.in === 'header' && ['accept', 'content-type', 'authorization'].includes(p.name.toLowerCase()));

/**
 * The try-it panel. Without JavaScript it is the token and curl lines, with the examples filled
 * in; the script shows the form, rebuilds the curl line as fields change and sends the call. The
 * fields have no name: the form is never submitted, so nothing typed in it (a secret) can leave
 * the page except in the script's own requests to the gateway. `id` is the operation's section's.
 */
export function tryPanel(id: string, op: Operation, route: RouteSettings, settings: TrySettings): Html {
  const grant = panelGrant(settings.grants, route);
  const parameters = op.parameters.filter(sendable);
  const media = bodyMedia(op);
  const body = media?.example === undefined ? '' : exampleText(media.example, media.type);
  const curl = curlLine({
    gatewayUrl: settings.gatewayUrl,
    method: route.method,
    path: route.path,
    values: parameters.map((p) => ({ in: p.in, name: p.name, value: parameterValue(p), repeat: repeats(p) })),
    contentType: media?.type,
    body,
  });
  const field = (p: Parameter) => {
    const hint = [p.in, p.required ? 'required' : '', parameterHint(p)].filter((t) => t !== '').join(', ');
    return html`<label>${p.name} <span class="hint">${hint}</span> <input type="text" data-in="${p.in}" data-name="${p.name}"${repeats(p) ? html` data-repeat` : ''}${p.required ? html` required` : ''} value="${parameterValue(p)}" autocomplete="off" spellcheck="false"></label>`;
  };
  return html`<div class="try" data-try="${id}" data-method="${route.method}" data-path="${route.path}" data-scopes="${route.scopes.join(' ')}" data-grant="${grant ?? ''}">
<h5>Try it</h5>
<p>Get a token${route.scopes.length > 0 ? ' with its scopes' : ''}:</p>
<pre><code class="curl-token">${grant === undefined ? '' : tokenLine(settings.gatewayUrl, grant, route.scopes)}</code></pre>
<p>Call the operation with the token's <code>access_token</code> as <code>$TOKEN</code>:</p>
<pre><code class="curl" id="${id}-curl">${curl}</code></pre>
<form class="try-form" hidden>
${parameters.length === 0 ? '' : html`<fieldset><legend>Parameters</legend>${parameters.map(field)}</fieldset>`}
${op.parameters.some((p) => p.in === 'cookie') ? html`<p class="hint">Cookie parameters cannot be sent from this page: a browser sends only its own cookies.</p>` : ''}
${media === undefined ? '' : html`<label>Body <span class="hint">${media.type}</span> <textarea data-body data-type="${media.type}" rows="${Math.min(16, Math.max(4, body.split('\n').length + 1))}" spellcheck="false">${body}</textarea></label>`}
${credentials(settings, grant)}
</form>
<div class="try-result" aria-live="polite" hidden></div>
</div>`;
}

function credentials(settings: TrySettings, grant: PanelGrant): Html {
  if (grant === undefined)
    return html`<p class="hint">This product issues tokens with no grant this operation can use${settings.grants.has('client_credentials') ? " (it needs a user's token: the password grant)" : ''}.</p>`;
  if (settings.apps === undefined) return html`<p class="hint"><a href="/login">Log in</a> to send the call with one of your apps.</p>`;
  if (settings.apps.length === 0) {
    return html`<p class="hint">To send the call from here, <a href="/apps/new?product=${encodeURIComponent(settings.productName)}">register an app</a> for this product (an app waiting for approval cannot get tokens yet).</p>`;
  }
  return html`<fieldset><legend>Your app</legend>
<label>App <select data-field="app">${settings.apps.map((a) => html`<option value="${a.key}">${a.name} (${a.key})</option>`)}</select></label>
<label>Secret <span class="hint">stays in this page: sent only to the gateway's token endpoint</span> <input type="password" data-field="secret" autocomplete="off" spellcheck="false"></label>
${
  grant === 'password'
    ? html`<label>Username <input type="text" data-field="username" autocomplete="off" spellcheck="false"></label>
<label>Password <span class="hint">of that user, sent only to the gateway's token endpoint</span> <input type="password" data-field="password" autocomplete="off"></label>`
    : ''
}
</fieldset>
<p><button type="submit">Send</button></p>`;
}
