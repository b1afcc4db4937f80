// The portal's only assets, served by the gateway itself (nothing is fetched from elsewhere, and
// the single executable carries them). The pages work without the script: it adds the copy
// buttons, and the try-it panels' forms (their curl lines are on the page without it).

export const CSS = `:root { color-scheme: light dark; --accent: #2457c5; --danger: #b42318; --muted: #667085; --line: #d0d5dd; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; justify-content: space-between; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); }
header nav { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
a { color: var(--accent); }
h1 { font-size: 1.6rem; margin: 1rem 0; }
h2 { font-size: 1.2rem; margin: 1.75rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
/* Keys, secrets and paths are one long word: they break anywhere rather than widen the page. */
code { overflow-wrap: anywhere; }
pre { padding: .75rem; border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
form.stack { display: grid; gap: .9rem; max-width: 26rem; }
form.stack > label { display: grid; gap: .25rem; }
form.stack > button { justify-self: start; }
form.inline { display: inline; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin: 1rem 0; }
input[type=email], input[type=text], input[type=password] { font: inherit; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 6px; width: 100%; }
/* A fieldset is as wide as its widest content by default: on a phone that can be wider than the screen. */
fieldset { border: 1px solid var(--line); border-radius: 6px; display: grid; gap: .75rem; min-width: 0; margin: 0; }
/* A radio button or checkbox sits left of its text, on its first line. */
label.choice { display: flex; gap: .6rem; align-items: flex-start; }
label.choice input { flex: none; margin: .3rem 0 0; }
label.choice .hint { display: block; }
button, .button { font: inherit; display: inline-block; padding: .45rem .9rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
button.link { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
.danger, button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
.copy { margin-left: .5rem; padding: .1rem .5rem; font-size: .85rem; }
.error { color: var(--danger); font-weight: 600; }
.notice { color: #067647; font-weight: 600; }
.warning { border-left: 4px solid var(--danger); padding: .5rem .75rem; }
.hint, figcaption { color: var(--muted); font-size: .9rem; }
dl.facts, dl.secrets { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .3rem 1rem; }
dl dd { margin: 0; word-break: break-all; }
ul.cards { list-style: none; padding: 0; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); }
ul.cards li { border: 1px solid var(--line); border-radius: 8px; padding: 0 1rem; }
.chart { margin: 1rem 0; }
.chart svg { max-width: 40rem; }
.chart .bar { fill: var(--accent); }
.chart .axis { stroke: var(--line); }
.chart .label { font-size: 10px; fill: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
/* The API reference: operations as cards, their tables, and the try-it panels. */
.toc { border: 1px solid var(--line); border-radius: 8px; padding: .25rem 1rem .75rem; }
.toc ul { margin: .25rem 0; padding-left: 1.25rem; }
.toc li { margin: .2rem 0; }
.method { display: inline-block; min-width: 4rem; padding: 0 .4rem; border-radius: 4px; background: var(--muted); color: #fff; font: 600 .8rem/1.6 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; text-align: center; }
/* A name in a schema breaks after its dots (<wbr>), not anywhere: the column is as wide as its longest part. */
table.schema td:first-child code, table.params td:first-child code { overflow-wrap: break-word; }
.method-get { background: #067647; }
.method-post { background: var(--accent); }
.method-put, .method-patch { background: #93370d; }
.method-delete { background: var(--danger); }
section.api > h2 { font-size: 1.4rem; margin-top: 2.5rem; }
section.tag > h3 { font-size: 1.25rem; margin: 2rem 0 .5rem; padding-bottom: .25rem; border-bottom: 2px solid var(--line); }
section.operation { border: 1px solid var(--line); border-radius: 8px; padding: 0 1rem 1rem; margin: 1.25rem 0; scroll-margin-top: 1rem; }
section.operation h4 { display: flex; flex-wrap: wrap; gap: .25rem .6rem; align-items: baseline; font-size: 1.05rem; margin: 1rem 0 .25rem; }
section.operation.deprecated h4 code { text-decoration: line-through; }
.summary { font-weight: 600; margin: .25rem 0; }
.badge { font-size: .8rem; padding: 0 .4rem; border: 1px solid var(--danger); border-radius: 4px; color: var(--danger); }
h5 { font-size: 1rem; margin: 1.25rem 0 .4rem; }
h6 { font-size: .9rem; margin: .75rem 0 .25rem; }
td p { margin: 0 0 .25rem; }
td p:last-child { margin-bottom: 0; }
ul.details { margin: 0; padding-left: 1rem; }
.media, .response { margin: .5rem 0 1rem; }
.media > p, .response > p { margin: .25rem 0; }
.try { border-top: 1px dashed var(--line); margin-top: 1.25rem; }
form.try-form { display: grid; gap: .9rem; max-width: 40rem; }
form.try-form label { display: grid; gap: .25rem; }
form.try-form fieldset { grid-template-columns: minmax(0, 1fr); }
textarea, select { font: inherit; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 6px; width: 100%; max-width: 100%; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; resize: vertical; }
.try-result { border: 1px solid var(--line); border-radius: 8px; padding: 0 1rem .5rem; margin-top: 1rem; overflow-wrap: anywhere; }
.try-status { font-weight: 700; }
.try-status.ok { color: #067647; }
.try-status.failed { color: var(--danger); }
/* At phone width a table of several columns becomes one card per row, each cell under its column's name. */
@media (max-width: 40rem) {
  table.reflow thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.reflow, table.reflow tbody, table.reflow tr, table.reflow td { display: block; }
  table.reflow tr { border: 1px solid var(--line); border-radius: 6px; padding: .25rem .75rem; margin-bottom: .75rem; }
  table.reflow td { border: none; padding: .25rem 0; }
  table.reflow td[data-label] { display: grid; grid-template-columns: 7rem minmax(0, 1fr); gap: .75rem; }
  table.reflow td[data-label]::before { content: attr(data-label); font-weight: 600; }
  /* A card leaves out what the row does not have (no description, no details). */
  table.reflow td:empty { display: none; }
}
`;

// String.raw: the script's backslashes reach the browser as written. It has no template
// literals, so that nothing in it is read as this file's ${…}.
export const JS = String.raw`'use strict';
for (const button of document.querySelectorAll('button[data-copy]')) {
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = 'Copied';
  });
}

// The try-it panels of the API reference. The curl line is built as src/portal/reference.ts
// builds it (curlLine): keep the two in step. The secret and the token stay in this page: they go
// to the gateway only, never to the portal.
const reference = document.querySelector('.reference');
if (reference) {
  const gateway = reference.dataset.gateway;
  const quote = (s) => "'" + s.replace(/'/g, "'\\''") + "'";
  // RFC 6749 §2.3.1: the key and secret are form-encoded before they are joined for Basic.
  const formEncode = (s) => new URLSearchParams([['', s]]).toString().slice(1);

  const request = (panel) => {
    let path = panel.dataset.path;
    const query = new URLSearchParams();
    const headers = [];
    for (const input of panel.querySelectorAll('input[data-in]')) {
      const where = input.dataset.in;
      const name = input.dataset.name;
      const value = input.value;
      if (where === 'path') {
        if (value !== '') path = path.replace('{' + name + '}', encodeURIComponent(value));
      } else if (value === '') {
        continue;
      } else if (where === 'query') {
        for (const v of input.hasAttribute('data-repeat') ? value.split(',').map((x) => x.trim()) : [value]) query.append(name, v);
      } else if (where === 'header') {
        headers.push([name, value]);
      }
    }
    const search = query.toString();
    const textarea = panel.querySelector('textarea[data-body]');
    const body = textarea ? { text: textarea.value, type: textarea.dataset.type } : { text: '', type: undefined };
    return { method: panel.dataset.method, url: gateway + path + (search === '' ? '' : '?' + search), headers, body };
  };

  const curl = (call) => {
    const parts = ['curl' + (call.method === 'GET' ? '' : ' -X ' + call.method) + ' ' + quote(call.url), '-H "Authorization: Bearer $TOKEN"'];
    for (const [name, value] of call.headers) parts.push('-H ' + quote(name + ': ' + value));
    if (call.body.text !== '' && call.body.type !== undefined) parts.push('-H ' + quote('Content-Type: ' + call.body.type), '--data-binary ' + quote(call.body.text));
    return parts.join(' \\\n  ');
  };

  const element = (tag, text, className) => {
    const e = document.createElement(tag);
    e.textContent = text;
    if (className) e.className = className;
    return e;
  };

  const problem = (result, message) => {
    result.replaceChildren(element('p', message, 'error'));
    result.firstChild.setAttribute('role', 'alert');
    result.hidden = false;
  };

  const showAnswer = (result, res, text, note) => {
    const type = res.headers.get('content-type') || '';
    let body = text;
    if (/[/+]json\b/.test(type)) {
      try {
        body = JSON.stringify(JSON.parse(text), null, 2);
      } catch {}
    }
    const headers = [...res.headers].map(([name, value]) => name + ': ' + value).join('\n');
    result.replaceChildren(
      element('p', res.status + (res.statusText ? ' ' + res.statusText : ''), 'try-status ' + (res.ok ? 'ok' : 'failed')),
      element('p', note, 'hint'),
      element('h6', 'Response headers'),
      element('pre', headers || '(none this page may read)', 'try-headers'),
      element('h6', 'Response body'),
      element('pre', body === '' ? '(empty)' : body, 'try-body'),
    );
    result.hidden = false;
  };

  const field = (form, name) => form.querySelector('[data-field="' + name + '"]');

  async function send(panel, form, result) {
    const app = field(form, 'app');
    const secret = field(form, 'secret');
    if (!app || !secret) return;
    const missing = [...form.querySelectorAll('input[data-in][required]')].filter((i) => i.value === '').map((i) => i.dataset.name);
    if (missing.length > 0) return problem(result, 'Fill in ' + missing.join(', ') + ' first.');
    if (secret.value === '') return problem(result, "Type your app's secret first: the portal does not have it.");
    const grant = panel.dataset.grant;
    const params = new URLSearchParams({ grant_type: grant });
    if (grant === 'password') {
      params.set('username', field(form, 'username').value);
      params.set('password', field(form, 'password').value);
    }
    if (panel.dataset.scopes) params.set('scope', panel.dataset.scopes);
    const tokenUrl = gateway + '/oauth2/token';
    let res;
    try {
      res = await fetch(tokenUrl, {
        method: 'POST',
        headers: { authorization: 'Basic ' + btoa(formEncode(app.value) + ':' + formEncode(secret.value)), 'content-type': 'application/x-www-form-urlencoded' },
        body: params.toString(),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      return problem(result, 'This page could not reach the token endpoint ' + tokenUrl + ". The gateway must allow this portal's origin (" + location.origin + ') in a cors policy under oauth.policies; or else it is not reachable from this browser.');
    }
    const answer = (await res.json().catch(() => null)) ?? {};
    if (!res.ok || typeof answer.access_token !== 'string') {
      return problem(result, 'The token endpoint refused: ' + res.status + (answer.error ? ' ' + answer.error : '') + (answer.error_description ? ': ' + answer.error_description : '') + '.');
    }
    const call = request(panel);
    const headers = { authorization: 'Bearer ' + answer.access_token };
    for (const [name, value] of call.headers) headers[name] = value;
    const init = { method: call.method, headers, credentials: 'omit', cache: 'no-store' };
    if (call.body.text !== '' && call.method !== 'GET' && call.method !== 'HEAD') {
      headers['content-type'] = call.body.type;
      init.body = call.body.text;
    }
    try {
      new Headers(headers);
    } catch (err) {
      // A value typed into a header field that HTTP cannot carry: not the gateway's doing.
      return problem(result, 'A header of this call cannot be sent: ' + err.message);
    }
    try {
      res = await fetch(call.url, init);
    } catch {
      return problem(
        result,
        'This page could not read the answer of ' + call.method + ' ' + call.url + ". The route must allow this portal's origin (" + location.origin + ') in its cors policy, with every header this call sends (' + Object.keys(headers).join(', ') + '); or else the gateway is not reachable from this browser.',
      );
    }
    const text = await res.text();
    showAnswer(result, res, text, 'With a token of ' + app.value + (answer.scope ? ' for ' + answer.scope : '') + ". Only the headers the route's cors policy exposes can be read here.");
  }

  for (const panel of reference.querySelectorAll('.try')) {
    const form = panel.querySelector('form.try-form');
    const line = panel.querySelector('code.curl');
    const result = panel.querySelector('.try-result');
    const update = () => {
      line.textContent = curl(request(panel));
    };
    update();
    form.hidden = false;
    form.addEventListener('input', update);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = form.querySelector('button[type=submit]');
      if (!button || button.disabled) return;
      button.disabled = true;
      try {
        await send(panel, form, result);
      } catch (err) {
        problem(result, 'The call could not be made: ' + err.message);
      } finally {
        button.disabled = false;
      }
    });
  }

  // One app, secret and user for every panel of the page: typed once, kept in the page only.
  for (const input of reference.querySelectorAll('[data-field]')) {
    input.addEventListener('input', () => {
      for (const other of reference.querySelectorAll('[data-field="' + input.dataset.field + '"]')) if (other !== input) other.value = input.value;
    });
  }
}
`;
