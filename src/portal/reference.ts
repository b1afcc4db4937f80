// A product's API reference, from the OpenAPI documents its operations come from: operations by
// tag, their parameters, bodies and responses as tables (schema-reader.ts), their examples and
// scopes, and a try-it panel each (try-it.ts). The document is the operator's, but nothing in it
// is trusted as markup: every text is escaped, and a description is shown as plain paragraphs.
import type { RouteSettings } from '../config/load.ts';
import type { ApiDocument, MediaType, Operation, Parameter } from '../openapi/document.ts';
import { isDefaultStyle, serialization } from '../openapi/parameters.ts';
import { html, type Html } from '../html.ts';
import { SchemaReader } from './schema-reader.ts';
import { exampleText, tryPanel, type TrySettings } from './try-it.ts';

/** An operation of the product: the route the gateway serves it at, and what the document says of it. */
export interface ReferenceOperation {
  route: RouteSettings;
  operation: Operation;
}

/** Text as plain paragraphs, split at blank lines: no markup of the document's is ever rendered. */
function prose(text: string | undefined): Html {
  if (text === undefined) return html``;
  return html`${text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => html`<p>${p}</p>`)}`;
}

/** The serialization a parameter declares where it is not the default for its location. */
function declaredSerialization(p: Parameter): Html[] {
  if (p.contentType !== undefined) return [html`serialized as <code>${p.contentType}</code>`];
  const { style, explode } = serialization(p);
  const out: Html[] = [];
  if (!isDefaultStyle(p.in, style)) out.push(html`style <code>${style}</code>`);
  if (explode !== serialization({ in: p.in, style }).explode) out.push(html`explode <code>${String(explode)}</code>`);
  return out;
}

/** Operations grouped by tag: the document's tags in its order, then tags it uses without declaring, then the untagged. */
function byTag(doc: ApiDocument, operations: readonly ReferenceOperation[]): { tag: string | undefined; description: string | undefined; operations: ReferenceOperation[] }[] {
  const declared = doc.tags.map((t) => t.name);
  const used = operations.flatMap((o) => o.operation.tags.slice(0, 1)).filter((t) => !declared.includes(t));
  const groups = [...new Set([...declared, ...used])].map((tag) => ({
    tag: tag as string | undefined,
    description: doc.tags.find((t) => t.name === tag)?.description,
    // An operation with several tags is shown under its first, once: its try-it panel has one place.
    operations: operations.filter((o) => o.operation.tags[0] === tag),
  }));
  groups.push({ tag: undefined, description: undefined, operations: operations.filter((o) => o.operation.tags.length === 0) });
  return groups.filter((g) => g.operations.length > 0);
}

/** The id of an operation's section: its route's name (an operationId, so a valid fragment). */
export const operationId = (route: RouteSettings) => `op-${route.name}`;

/** One document's part of the reference: its title and description, then its operations by tag. */
export function documentSection(doc: ApiDocument, operations: readonly ReferenceOperation[], settings: TrySettings): Html {
  const reader = new SchemaReader(doc);
  return html`<section class="api" aria-labelledby="api-${slug(doc.title)}">
<h2 id="api-${slug(doc.title)}">${doc.title}${doc.apiVersion === '' ? '' : html` <span class="hint">version ${doc.apiVersion}</span>`}</h2>
${prose(doc.description)}
${byTag(doc, operations).map(
  (group) => html`<section class="tag">
<h3 id="tag-${slug(group.tag ?? 'other')}">${group.tag ?? 'Other operations'}</h3>
${prose(group.description)}
${group.operations.map((o) => operationSection(doc, reader, o, settings))}
</section>`,
)}
</section>`;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'api';

/** The list of operations at the top of the page, by document and tag. */
export function contents(docs: readonly { doc: ApiDocument; operations: readonly ReferenceOperation[] }[]): Html {
  return html`<nav class="toc" aria-label="Operations">
${docs.map(
  ({ doc, operations }) => html`<p><strong>${doc.title}</strong></p>
<ul>
${byTag(doc, operations).map(
  (group) => html`<li>${group.tag ?? 'Other operations'}
<ul>${group.operations.map((o) => html`<li><a href="#${operationId(o.route)}"><span class="method method-${o.route.method.toLowerCase()}">${o.route.method}</span> <code>${o.route.path}</code></a>${o.operation.summary === undefined ? '' : html` <span class="hint">${o.operation.summary}</span>`}</li>`)}</ul>
</li>`,
)}
</ul>`,
)}
</nav>`;
}

function operationSection(doc: ApiDocument, reader: SchemaReader, { route, operation: op }: ReferenceOperation, settings: TrySettings): Html {
  const id = operationId(route);
  return html`<section class="operation${op.deprecated ? ' deprecated' : ''}" id="${id}" aria-labelledby="${id}-title">
<h4 id="${id}-title"><span class="method method-${route.method.toLowerCase()}">${route.method}</span> <code>${route.path}</code>${op.deprecated ? html` <span class="badge">deprecated</span>` : ''}</h4>
${op.summary === undefined ? '' : html`<p class="summary">${op.summary}</p>`}
${prose(op.description)}
<dl class="facts">
  <dt>Scopes</dt><dd>${
    route.scopes.length === 0 ? 'none: any token of the product' : route.scopes.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>${doc.scopes.get(s) ? html` (${doc.scopes.get(s)})` : ''}`)
  }</dd>
  ${op.operationId === undefined ? '' : html`<dt>Operation</dt><dd><code>${op.operationId}</code></dd>`}
  ${op.tags.length > 1 ? html`<dt>Tags</dt><dd>${op.tags.join(', ')}</dd>` : ''}
</dl>
${parametersTable(reader, op)}
${requestBody(reader, op)}
${responses(reader, op)}
${tryPanel(id, op, route, settings)}
</section>`;
}

function parametersTable(reader: SchemaReader, op: Operation): Html {
  if (op.parameters.length === 0) return html``;
  return html`<h5>Parameters</h5>
<table class="reflow params">
<thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Description</th><th>Details</th></tr></thead>
<tbody>
${op.parameters.map((p) => {
  const details = [
    ...(p.deprecated ? [html`deprecated`] : []),
    ...declaredSerialization(p),
    ...(p.schema === undefined ? [] : reader.details(p.schema)),
    ...(p.example === undefined ? [] : [html`example <code>${exampleText(p.example)}</code>`]),
  ];
  return html`<tr><td data-label="Name"><code>${p.name}</code></td><td data-label="In">${p.in}</td><td data-label="Type">${p.schema === undefined ? 'any' : reader.type(p.schema)}</td><td data-label="Required">${p.required ? 'yes' : 'no'}</td><td data-label="Description">${described(p.description)}</td><td data-label="Details">${list(details)}</td></tr>`;
})}
</tbody>
</table>`;
}

/** A description in a table cell: one block (a reflowed cell is a grid of its label and one item), or nothing, so that an empty cell can be hidden. */
const described = (text: string | undefined) => (text === undefined || text.trim() === '' ? '' : html`<div>${prose(text)}</div>`);

/** A dotted name that may wrap after each dot, and nowhere else. */
const breakable = (path: string) => html`${path.split(/(?<=\.)/).map((part, i) => html`${i > 0 ? html`<wbr>` : ''}${part}`)}`;

const list = (items: readonly Html[]) => (items.length === 0 ? '' : html`<ul class="details">${items.map((d) => html`<li>${d}</li>`)}</ul>`);

function schemaTable(reader: SchemaReader, schema: object | undefined): Html {
  if (schema === undefined) return html`<p class="hint">No schema: any content.</p>`;
  const rows = reader.rows(schema);
  const name = reader.name(schema);
  return html`${name === undefined ? '' : html`<p class="hint">Schema <code>${name}</code></p>`}
${prose(reader.description(schema))}
${
  rows.length === 0
    ? html`<p class="hint">Any value.</p>`
    : html`<table class="reflow schema">
<thead><tr><th>Name</th><th>Type</th><th>Required</th><th>Description</th><th>Details</th></tr></thead>
<tbody>
${rows.map(
  (r) =>
    html`<tr><td data-label="Name"><code>${breakable(r.path)}</code></td><td data-label="Type">${r.type}</td><td data-label="Required">${r.path === '(root)' ? '' : r.required ? 'yes' : 'no'}</td><td data-label="Description">${described(r.description)}</td><td data-label="Details">${list(r.details)}</td></tr>`,
)}
</tbody>
</table>`
}`;
}

function mediaBlock(reader: SchemaReader, media: MediaType): Html {
  return html`<div class="media">
<p><code>${media.type}</code></p>
${schemaTable(reader, media.schema)}
${media.example === undefined ? '' : html`<p class="hint">Example</p><pre class="example"><code>${exampleText(media.example, media.type)}</code></pre>`}
</div>`;
}

function requestBody(reader: SchemaReader, op: Operation): Html {
  if (op.body === undefined) return html``;
  return html`<h5>Request body${op.body.required ? '' : html` <span class="hint">(optional)</span>`}</h5>
${prose(op.body.description)}
${op.body.content.map((m) => mediaBlock(reader, m))}`;
}

function responses(reader: SchemaReader, op: Operation): Html {
  if (op.responses.length === 0) return html``;
  return html`<h5>Responses</h5>
${op.responses.map(
  (r) => html`<div class="response">
<p><strong class="status">${r.status === 'DEFAULT' ? 'default' : r.status}</strong> ${r.description}</p>
${
  r.headers.size === 0
    ? ''
    : html`<table class="reflow headers">
<thead><tr><th>Header</th><th>Type</th><th>Required</th><th>Description</th></tr></thead>
<tbody>${[...r.headers].map(([name, h]) => html`<tr><td data-label="Header"><code>${name}</code></td><td data-label="Type">${h.schema === undefined ? 'any' : reader.type(h.schema)}</td><td data-label="Required">${h.required ? 'yes' : 'no'}</td><td data-label="Description">${described(h.description)}</td></tr>`)}</tbody>
</table>`
}
${r.content.map((m) => mediaBlock(reader, m))}
</div>`,
)}`;
}
