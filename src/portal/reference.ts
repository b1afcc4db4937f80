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

/** A document with operations of the product: its name under `openapi`, and where the portal serves it for download. */
export interface ReferenceDocument {
  api: string;
  doc: ApiDocument;
  operations: readonly ReferenceOperation[];
  download: string;
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

interface TagGroup {
  tag: string | undefined;
  description: string | undefined;
  operations: ReferenceOperation[];
  /** The group is the document's first and has its title (Orders, tagged orders): it is shown under the document's heading, not under one of its own saying the same. */
  underTitle: boolean;
}

/**
 * Operations grouped by tag: the document's tags in its order, then tags it uses without
 * declaring, then the untagged. Tags that differ only in case are one group, named as the
 * document first writes it: "Orders" and "orders" are one tag to a reader.
 */
function byTag(doc: ApiDocument, operations: readonly ReferenceOperation[]): TagGroup[] {
  const names = new Map<string, string>();
  for (const tag of [...doc.tags.map((t) => t.name), ...operations.flatMap((o) => o.operation.tags.slice(0, 1))]) {
    if (!names.has(tag.toLowerCase())) names.set(tag.toLowerCase(), tag);
  }
  const groups: TagGroup[] = [...names].map(([key, tag]) => ({
    tag,
    description: doc.tags.find((t) => t.name.toLowerCase() === key && t.description !== undefined)?.description,
    // An operation with several tags is shown under its first, once: its try-it panel has one place.
    operations: operations.filter((o) => o.operation.tags[0]?.toLowerCase() === key),
    underTitle: false,
  }));
  groups.push({ tag: undefined, description: undefined, operations: operations.filter((o) => o.operation.tags.length === 0), underTitle: false });
  const shown = groups.filter((g) => g.operations.length > 0);
  if (shown[0]?.tag?.toLowerCase() === doc.title.toLowerCase()) shown[0].underTitle = true;
  return shown;
}

/** The id of an operation's section: its route's name (an operationId, so a valid fragment). */
export const operationId = (route: RouteSettings) => `op-${route.name}`;

/**
 * The named schemas of a document's error responses (Problem under every 401, 403 and 415): each
 * shown once, at the end of the document's part of the page, and linked from every response
 * that has it. Success bodies and request bodies keep their tables where they are: they are
 * what an operation is about.
 */
class SharedSchemas {
  readonly #byRef = new Map<string, { id: string; name: string; schema: object }>();
  constructor(
    readonly reader: SchemaReader,
    readonly prefix: string,
  ) {}

  /** The schema's place on the page, when it is a named one (a $ref to a component). */
  place(schema: object): { id: string; name: string } | undefined {
    const ref = this.reader.ref(schema);
    const name = this.reader.name(schema);
    if (ref === undefined || name === undefined) return undefined;
    let entry = this.#byRef.get(ref);
    if (entry === undefined) {
      const taken = new Set([...this.#byRef.values()].map((e) => e.id));
      let id = `${this.prefix}-${slug(name)}`;
      for (let i = 2; taken.has(id); i++) id = `${this.prefix}-${slug(name)}-${i}`;
      entry = { id, name, schema };
      this.#byRef.set(ref, entry);
    }
    return entry;
  }

  get all(): readonly { id: string; name: string; schema: object }[] {
    return [...this.#byRef.values()];
  }
}

/** One document's part of the reference: its title and description, its operations by tag, then the schemas its errors share. */
export function documentSection({ doc, operations, download }: ReferenceDocument, settings: TrySettings): Html {
  const reader = new SchemaReader(doc);
  const id = `api-${slug(doc.title)}`;
  const shared = new SharedSchemas(reader, `schema-${slug(doc.title)}`);
  // The operations first: they name the shared schemas, shown after them.
  const groups = byTag(doc, operations).map((group) => {
    const ops = group.operations.map((o) => operationSection(doc, reader, o, settings, shared));
    return group.underTitle
      ? html`<section class="tag">
${prose(group.description)}
${ops}
</section>`
      : html`<section class="tag">
<h3 id="tag-${slug(group.tag ?? 'other')}">${group.tag ?? 'Other operations'}</h3>
${prose(group.description)}
${ops}
</section>`;
  });
  return html`<section class="api" aria-labelledby="${id}">
<h2 id="${id}">${doc.title}${doc.apiVersion === '' ? '' : html` <span class="hint">version ${doc.apiVersion}</span>`}</h2>
${prose(doc.description)}
<p class="download"><a href="${download}" download>Download the OpenAPI document</a> <span class="hint">(YAML: these operations, with the gateway as their server)</span></p>
${groups}
${sharedSection(id, reader, shared)}
</section>`;
}

function sharedSection(api: string, reader: SchemaReader, shared: SharedSchemas): Html {
  if (shared.all.length === 0) return html``;
  return html`<section class="tag shared-schemas" id="${api}-errors">
<h3>Error schemas</h3>
<p>The bodies of the error responses above, each shown once.</p>
${shared.all.map((s) => html`<section class="schema" id="${s.id}" aria-labelledby="${s.id}-title"><h4 id="${s.id}-title"><code>${s.name}</code></h4>${schemaTable(reader, s.schema, { named: false })}</section>`)}
</section>`;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'api';

/**
 * The operations by document and tag: a sidebar beside them on a wide screen, a box that opens
 * above them on a phone (a <details>, which needs no script). The script adds the filter box.
 */
export function contents(docs: readonly ReferenceDocument[]): Html {
  const item = (o: ReferenceOperation) =>
    html`<li><a href="#${operationId(o.route)}"><span class="method method-${o.route.method.toLowerCase()}">${o.route.method}</span> <code>${o.route.path}</code></a>${o.operation.summary === undefined ? '' : html` <span class="hint">${o.operation.summary}</span>`}</li>`;
  return html`<details class="toc" id="contents">
<summary>Contents</summary>
<nav aria-label="Operations">
<p class="filter" hidden><label for="operation-filter">Filter operations</label> <input type="search" id="operation-filter" placeholder="method, path or words" autocomplete="off" spellcheck="false"></p>
<p class="hint" id="filter-none" role="status" hidden>No operation matches.</p>
${docs.map(({ doc, operations }) => {
  const groups = byTag(doc, operations);
  return html`<p class="toc-api"><a href="#api-${slug(doc.title)}">${doc.title}</a></p>
<ul>
${groups.map((group) => (group.underTitle ? group.operations.map(item) : html`<li class="toc-tag">${group.tag ?? 'Other operations'}<ul>${group.operations.map(item)}</ul></li>`))}
</ul>`;
})}
</nav>
</details>`;
}

function operationSection(doc: ApiDocument, reader: SchemaReader, { route, operation: op }: ReferenceOperation, settings: TrySettings, shared: SharedSchemas): Html {
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
${responses(reader, op, shared)}
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

/** `named`: whether to say the schema's name above it (not under a heading that says it already). */
function schemaTable(reader: SchemaReader, schema: object | undefined, options = { named: true }): Html {
  if (schema === undefined) return html`<p class="hint">No schema: any content.</p>`;
  const rows = reader.rows(schema);
  const name = options.named ? reader.name(schema) : undefined;
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

/** A body of a request or response; `shared`: an error response's, whose named schema is shown once for the document and linked here. */
function mediaBlock(reader: SchemaReader, media: MediaType, shared?: SharedSchemas): Html {
  const place = media.schema === undefined ? undefined : shared?.place(media.schema);
  return html`<div class="media">
<p><code>${media.type}</code>${place === undefined ? '' : html` <span class="hint">Schema</span> <a class="schema-link" href="#${place.id}"><code>${place.name}</code></a>`}</p>
${place === undefined ? schemaTable(reader, media.schema) : ''}
${media.example === undefined ? '' : html`<p class="hint">Example</p><pre class="example"><code>${exampleText(media.example, media.type)}</code></pre>`}
</div>`;
}

function requestBody(reader: SchemaReader, op: Operation): Html {
  if (op.body === undefined) return html``;
  return html`<h5>Request body${op.body.required ? '' : html` <span class="hint">(optional)</span>`}</h5>
${prose(op.body.description)}
${op.body.content.map((m) => mediaBlock(reader, m))}`;
}

/** An error response: 4xx, 5xx, or the default (which OpenAPI uses for the errors it does not list). */
const isError = (status: string) => /^[45]/.test(status) || status === 'DEFAULT';

function responses(reader: SchemaReader, op: Operation, shared: SharedSchemas): Html {
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
${r.content.map((m) => mediaBlock(reader, m, isError(r.status) ? shared : undefined))}
</div>`,
)}`;
}
