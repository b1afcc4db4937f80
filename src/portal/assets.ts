// The portal's only assets, served by the gateway itself (nothing is fetched from elsewhere, and
// the single executable carries them). The pages work without the script: it only adds the copy buttons.

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
pre { padding: .75rem; border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
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
/* At phone width a table of several columns becomes one card per row, each cell under its column's name. */
@media (max-width: 40rem) {
  table.reflow thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.reflow, table.reflow tbody, table.reflow tr, table.reflow td { display: block; }
  table.reflow tr { border: 1px solid var(--line); border-radius: 6px; padding: .25rem .75rem; margin-bottom: .75rem; }
  table.reflow td { border: none; padding: .25rem 0; }
  table.reflow td[data-label] { display: grid; grid-template-columns: 7rem minmax(0, 1fr); gap: .75rem; }
  table.reflow td[data-label]::before { content: attr(data-label); font-weight: 600; }
}
`;

export const JS = `for (const button of document.querySelectorAll('button[data-copy]')) {
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = 'Copied';
  });
}
`;
