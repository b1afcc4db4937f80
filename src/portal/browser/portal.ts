// The portal's script (served as /assets/portal.js, compiled by scripts/portal-assets.ts). The
// pages work without it: it adds the copy buttons, the API reference's filter box, and the try-it
// panels' forms (their curl lines are on the page without it). A classic script, not a module: no
// imports, no exports.

for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  const source = document.getElementById(button.dataset.copy!);
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(source.textContent!);
    button.textContent = 'Copied';
  });
}

/** A call of a try-it panel, as its fields make it. */
interface Call {
  method: string;
  url: string;
  headers: [string, string][];
  body: { text: string; type: string | undefined };
}

// The try-it panels of the API reference. The curl line is built as src/portal/reference.ts
// builds it (curlLine): keep the two in step. The secret and the token stay in this page: they go
// to the gateway only, never to the portal.
const reference = document.querySelector<HTMLElement>('.reference');
if (reference) {
  const gateway = reference.dataset.gateway!;
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  // RFC 6749 §2.3.1: the key and secret are form-encoded before they are joined for Basic.
  const formEncode = (s: string) => new URLSearchParams([['', s]]).toString().slice(1);

  const request = (panel: HTMLElement): Call => {
    let path = panel.dataset.path!;
    const query = new URLSearchParams();
    const headers: [string, string][] = [];
    for (const input of panel.querySelectorAll<HTMLInputElement>('input[data-in]')) {
      const where = input.dataset.in;
      const name = input.dataset.name!;
      const value = input.value;
      if (where === 'path') {
        if (value !== '') path = path.replace(`{${name}}`, encodeURIComponent(value));
      } else if (value === '') {
      } else if (where === 'query') {
        for (const v of input.hasAttribute('data-repeat') ? value.split(',').map((x) => x.trim()) : [value]) query.append(name, v);
      } else if (where === 'header') {
        headers.push([name, value]);
      }
    }
    const search = query.toString();
    const textarea = panel.querySelector<HTMLTextAreaElement>('textarea[data-body]');
    const body = textarea ? { text: textarea.value, type: textarea.dataset.type } : { text: '', type: undefined };
    return { method: panel.dataset.method!, url: gateway + path + (search === '' ? '' : `?${search}`), headers, body };
  };

  const curl = (call: Call) => {
    const parts = [`curl${call.method === 'GET' ? '' : ` -X ${call.method}`} ${quote(call.url)}`, '-H "Authorization: Bearer $TOKEN"'];
    for (const [name, value] of call.headers) parts.push(`-H ${quote(`${name}: ${value}`)}`);
    if (call.body.text !== '' && call.body.type !== undefined) parts.push(`-H ${quote(`Content-Type: ${call.body.type}`)}`, `--data-binary ${quote(call.body.text)}`);
    return parts.join(' \\\n  ');
  };

  const element = (tag: string, text: string, className?: string) => {
    const e = document.createElement(tag);
    e.textContent = text;
    if (className) e.className = className;
    return e;
  };

  /** A message of its text and elements (a URL). */
  const problem = (result: HTMLElement, ...message: (string | Node)[]) => {
    const p = element('p', '', 'error');
    p.append(...message);
    p.setAttribute('role', 'alert');
    result.replaceChildren(p);
    result.hidden = false;
  };

  /** A URL in a message: it may wrap after each slash, as a path does, and nowhere inside a word. */
  const link = (url: string) => {
    const code = document.createElement('code');
    url.split(/(?<=\/)/).forEach((part, i) => {
      if (i > 0) code.append(document.createElement('wbr'));
      code.append(part);
    });
    return code;
  };

  /** `note`: what the call was made with, its parts text or elements (a key in a box of its own). */
  const showAnswer = (result: HTMLElement, res: Response, text: string, note: (string | Node)[]) => {
    const type = res.headers.get('content-type') || '';
    let body = text;
    if (/[/+]json\b/.test(type)) {
      try {
        body = JSON.stringify(JSON.parse(text), null, 2);
      } catch {}
    }
    const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
    const hint = element('p', '', 'hint');
    hint.append(...note);
    result.replaceChildren(
      element('p', res.status + (res.statusText ? ` ${res.statusText}` : ''), `try-status ${res.ok ? 'ok' : 'failed'}`),
      hint,
      element('h6', 'Response headers'),
      element('pre', headers || '(none this page may read)', 'try-headers'),
      element('h6', 'Response body'),
      element('pre', body === '' ? '(empty)' : body, 'try-body'),
    );
    result.hidden = false;
  };

  const field = (form: HTMLFormElement, name: string) => form.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-field="${name}"]`);

  /** What the token endpoint answers, as far as this page reads it. */
  interface TokenAnswer {
    access_token?: unknown;
    scope?: string;
    error?: string;
    error_description?: string;
  }

  async function send(panel: HTMLElement, form: HTMLFormElement, result: HTMLElement) {
    const app = field(form, 'app');
    const secret = field(form, 'secret');
    if (!app || !secret) return;
    const missing = [...form.querySelectorAll<HTMLInputElement>('input[data-in][required]')].filter((i) => i.value === '').map((i) => i.dataset.name);
    if (missing.length > 0) return problem(result, `Fill in ${missing.join(', ')} first.`);
    if (secret.value === '') return problem(result, "Type your app's secret first: the portal does not have it.");
    const grant = panel.dataset.grant!;
    const params = new URLSearchParams({ grant_type: grant });
    if (grant === 'password') {
      params.set('username', field(form, 'username')!.value);
      params.set('password', field(form, 'password')!.value);
    }
    if (panel.dataset.scopes) params.set('scope', panel.dataset.scopes);
    const tokenUrl = `${gateway}/oauth2/token`;
    let res: Response;
    try {
      res = await fetch(tokenUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa(`${formEncode(app.value)}:${formEncode(secret.value)}`)}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: params.toString(),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      // Said to the developer: what they can do now, and whom to ask; the operator's part (a cors policy) is theirs to find.
      return problem(
        result,
        'Your browser could not get a token from ',
        link(tokenUrl),
        `: the gateway does not let pages of this portal (${location.origin}) ask for tokens, or it cannot be reached from your browser. You can still get a token with the curl line above, in a terminal. To send calls from this page, ask the API's operator to allow this portal.`,
      );
    }
    const answer: TokenAnswer = (await res.json().catch(() => null)) ?? {};
    if (!res.ok || typeof answer.access_token !== 'string') {
      return problem(result, `The token endpoint refused: ${res.status}${answer.error ? ` ${answer.error}` : ''}${answer.error_description ? `: ${answer.error_description}` : ''}.`);
    }
    const call = request(panel);
    const headers: Record<string, string> = { authorization: `Bearer ${answer.access_token}` };
    for (const [name, value] of call.headers) headers[name] = value;
    const init: RequestInit = { method: call.method, headers, credentials: 'omit', cache: 'no-store' };
    if (call.body.text !== '' && call.method !== 'GET' && call.method !== 'HEAD') {
      headers['content-type'] = call.body.type!;
      init.body = call.body.text;
    }
    try {
      new Headers(headers);
    } catch (err) {
      // A value typed into a header field that HTTP cannot carry: not the gateway's doing.
      return problem(result, `A header of this call cannot be sent: ${(err as Error).message}`);
    }
    try {
      res = await fetch(call.url, init);
    } catch {
      return problem(
        result,
        `Your browser did not let this page read the answer of ${call.method} `,
        link(call.url),
        `: the API does not accept calls from pages of this portal (${location.origin}) with the headers this one sends (${Object.keys(headers).join(', ')}), or it cannot be reached from your browser. You can still make the call with the curl lines above, in a terminal. To send it from this page, ask the API's operator to allow this portal and these headers for the operation.`,
      );
    }
    const text = await res.text();
    showAnswer(result, res, text, [
      'With a token of ',
      element('code', app.value, 'token'),
      `${answer.scope ? ` for ${answer.scope}` : ''}. Only the headers the API lets this portal read are shown here.`,
    ]);
  }

  /** Each panel's lines, made again from its fields: after an input in the panel, or in the app field any panel shares. */
  const updates: (() => void)[] = [];
  for (const panel of reference.querySelectorAll<HTMLElement>('.try')) {
    const form = panel.querySelector<HTMLFormElement>('form.try-form')!;
    const line = panel.querySelector<HTMLElement>('code.curl')!;
    const result = panel.querySelector<HTMLElement>('.try-result')!;
    // The token line as src/portal/try-it.ts wrote it, with $KEY: the chosen app's key goes in its
    // place. The secret never does: the line keeps $SECRET, whatever is typed in the secret field.
    const tokenLine = panel.querySelector<HTMLElement>('code.curl-token');
    const tokenTemplate = tokenLine?.textContent ?? '';
    const update = () => {
      line.textContent = curl(request(panel));
      const app = field(form, 'app');
      if (tokenLine && app && app.value !== '') tokenLine.textContent = tokenTemplate.replace('"$KEY:', `"${app.value}:`);
    };
    updates.push(update);
    update();
    form.hidden = false;
    form.addEventListener('input', update);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = form.querySelector<HTMLButtonElement>('button[type=submit]');
      if (!button || button.disabled) return;
      button.disabled = true;
      try {
        await send(panel, form, result);
      } catch (err) {
        problem(result, `The call could not be made: ${(err as Error).message}`);
      } finally {
        button.disabled = false;
      }
    });
  }

  // One app, secret and user for every panel of the page: typed once, kept in the page only.
  for (const input of reference.querySelectorAll<HTMLInputElement>('[data-field]')) {
    input.addEventListener('input', () => {
      for (const other of reference.querySelectorAll<HTMLInputElement>(`[data-field="${input.dataset.field}"]`)) if (other !== input) other.value = input.value;
      if (input.dataset.field === 'app') for (const update of updates) update();
    });
  }

  // The filter box over the operations: each operation whose method, path, summary or tag holds
  // every word typed stays, in the contents and on the page; the others, and a tag left empty, are hidden.
  const filter = reference.querySelector<HTMLInputElement>('#operation-filter');
  const none = reference.querySelector<HTMLElement>('#filter-none');
  if (filter && none) {
    const entries = [...reference.querySelectorAll<HTMLAnchorElement>('.toc a[href^="#op-"]')].flatMap((link) => {
      const section = document.getElementById(link.hash.slice(1));
      const item = link.closest('li');
      if (!section || !item) return [];
      const tag = section.closest('section.tag')?.querySelector('h3')?.textContent ?? '';
      const summary = section.querySelector('.summary')?.textContent ?? '';
      const text = `${section.querySelector('h4')?.textContent ?? ''} ${summary} ${section.id.slice(3)} ${tag}`.toLowerCase();
      return [{ section, item, text }];
    });
    filter.closest<HTMLElement>('.filter')!.hidden = false;
    filter.addEventListener('input', () => {
      const words = filter.value
        .toLowerCase()
        .split(/\s+/)
        .filter((w) => w !== '');
      for (const e of entries) {
        const shown = words.every((w) => e.text.includes(w));
        e.section.hidden = !shown;
        e.item.hidden = !shown;
      }
      for (const group of reference.querySelectorAll<HTMLElement>('section.tag, .toc li.toc-tag')) {
        const operations = group.querySelectorAll<HTMLElement>(group.matches('section') ? 'section.operation' : 'li');
        if (operations.length > 0) group.hidden = [...operations].every((o) => o.hidden);
      }
      none.hidden = entries.some((e) => !e.section.hidden);
    });
  }
}
