// A product's API reference, from the OpenAPI documents its operations come from: operations by
// tag, their parameters, bodies and responses as tables, their examples and scopes, and a try-it
// panel each. The document is the operator's, but nothing in it is trusted as markup: every text
// is escaped, and a description is shown as plain paragraphs.
import type { RouteSettings } from '../config/load.ts';
import { isJsonType } from '../http/request.ts';
import { isObject, resolveSchema, type ApiDocument, type MediaType, type ObjectMap, type Operation, type Parameter } from '../openapi/document.ts';
import { isDefaultStyle, serialization } from '../openapi/parameters.ts';
import { html, type Html } from './html.ts';

/** An operation of the product: the route the gateway serves it at, and what the document says of it. */
export interface ReferenceOperation {
  route: RouteSettings;
  operation: Operation;
}

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

/** One line of a schema table. */
export interface SchemaRow {
  /** Dotted, with [] for an array's items: customer.address.city, lines[].sku; "(root)" for the value itself. */
  path: string;
  type: string;
  required: boolean;
  description: string | undefined;
  details: readonly Html[];
}

const MAX_DEPTH = 8;

/** A schema with its $refs followed: the object, the file it is in, and the last $ref that led to it. */
/** A schema read for showing: allOf merged, its properties, items and alternatives, each with the file it is in. */
interface View {
  schema: ObjectMap;
  /** The name of the component it is (components/schemas/Order: Order), if it is one. */
  name: string | undefined;
  ref: string | undefined;
  properties: { name: string; raw: unknown; base: string }[];
  required: Set<string>;
  additional: { raw: unknown; base: string } | undefined;
  items: { raw: unknown; base: string } | undefined;
  variants: { kind: 'one of' | 'any of'; list: { raw: unknown; base: string }[] } | undefined;
}


/**
 * Reads a document's schemas across its files. document.ts follows the $refs of OpenAPI's own
 * objects and leaves a schema's to ajv; a table needs the nested ones followed too, and each is
 * resolved against the file it is written in.
 */
export class SchemaReader {
  readonly #files: ReadonlyMap<string, unknown>;

  constructor(doc: Pick<ApiDocument, 'files'>) {
    this.#files = doc.files;
  }

  #view(raw: unknown, base: string, depth = 0): View | undefined {
    const found = resolveSchema(this.#files, raw, base);
    if (found === undefined) return undefined;
    const s = found.value;
    const view: View = {
      schema: s,
      name: found.ref === undefined ? undefined : /\/(?:components\/schemas|\$defs|definitions)\/([^/]+)$/.exec(decodeURIComponent(new URL(found.ref).hash))?.[1]?.replace(/~1/g, '/').replace(/~0/g, '~'),
      ref: found.ref,
      properties: isObject(s.properties) ? Object.entries(s.properties).map(([name, p]) => ({ name, raw: p, base: found.base })) : [],
      required: new Set(Array.isArray(s.required) ? s.required.map(String) : []),
      additional: isObject(s.additionalProperties) ? { raw: s.additionalProperties, base: found.base } : undefined,
      items: s.items !== undefined && !Array.isArray(s.items) ? { raw: s.items, base: found.base } : undefined,
      variants: undefined,
    };
    const choice = Array.isArray(s.oneOf) ? (['one of', s.oneOf] as const) : Array.isArray(s.anyOf) ? (['any of', s.anyOf] as const) : undefined;
    if (choice !== undefined) view.variants = { kind: choice[0], list: choice[1].map((raw) => ({ raw, base: found.base })) };
    // allOf: every part applies, so their properties (in the parts' order, then its own) and requirements add up.
    if (Array.isArray(s.allOf) && depth < MAX_DEPTH) {
      const own = view.properties;
      view.properties = [];
      for (const part of s.allOf) {
        const v = this.#view(part, found.base, depth + 1);
        if (v === undefined) continue;
        for (const p of v.properties) if (!view.properties.some((q) => q.name === p.name) && !own.some((q) => q.name === p.name)) view.properties.push(p);
        for (const r of v.required) view.required.add(r);
        view.additional ??= v.additional;
        view.items ??= v.items;
        view.variants ??= v.variants;
        view.schema = { ...v.schema, ...view.schema, allOf: undefined };
      }
      view.properties.push(...own);
    }
    return view;
  }

  /** The type of a schema, as a reader says it: "string (date-time)", "array of object (Line)", "integer or null". */
  type(raw: unknown, base = ''): string {
    const view = this.#view(raw, base);
    return view === undefined ? 'any' : this.#type(view, 0);
  }

  #type(v: View, depth: number): string {
    const s = v.schema;
    let types = Array.isArray(s.type) ? s.type.map(String) : typeof s.type === 'string' ? [s.type] : [];
    // OpenAPI 3.0's nullable, 3.1's type arrays.
    const nullable = s.nullable === true || types.includes('null');
    types = types.filter((t) => t !== 'null');
    if (types.length === 0) {
      if (v.properties.length > 0 || v.additional !== undefined) types = ['object'];
      else if (v.items !== undefined) types = ['array'];
      else if (Array.isArray(s.enum) && s.enum.length > 0) types = [...new Set(s.enum.filter((e) => e !== null).map(jsonType))];
      else if (s.const !== undefined) types = [jsonType(s.const)];
    }
    const parts = types.map((t) => {
      if (t === 'array') {
        const items = v.items === undefined || depth >= MAX_DEPTH ? undefined : this.#view(v.items.raw, v.items.base, depth + 1);
        return `array of ${items === undefined ? 'any' : this.#type(items, depth + 1)}`;
      }
      if (t === 'object') return v.name === undefined ? 'object' : `object (${v.name})`;
      return typeof s.format === 'string' ? `${t} (${s.format})` : t;
    });
    if (v.variants !== undefined && depth < MAX_DEPTH) parts.push(`${v.variants.kind}: ${this.#labels(v, depth).join(', ')}`);
    if (parts.length === 0) parts.push('any');
    return `${parts.join(' or ')}${nullable ? ' or null' : ''}`;
  }

  #labels(v: View, depth: number): string[] {
    return (v.variants?.list ?? []).map((alt) => {
      const view = this.#view(alt.raw, alt.base, depth + 1);
      if (view === undefined) return 'any';
      return typeof view.schema.title === 'string' ? view.schema.title : (view.name ?? this.#type(view, depth + 1));
    });
  }

  /** What a schema asks of a value besides its type: enum, bounds, lengths, pattern, default, example. */
  details(raw: unknown, base = ''): Html[] {
    const view = this.#view(raw, base);
    return view === undefined ? [] : this.#details(view);
  }

  #details(v: View): Html[] {
    const s = v.schema;
    const out: Html[] = [];
    const value = (x: unknown) => html`<code>${JSON.stringify(x)}</code>`;
    if (s.deprecated === true) out.push(html`deprecated`);
    if (Array.isArray(s.enum)) out.push(html`one of ${s.enum.map((e, i) => html`${i > 0 ? ', ' : ''}${value(e)}`)}`);
    if (s.const !== undefined) out.push(html`always ${value(s.const)}`);
    // 3.0 says exclusiveMinimum: true beside minimum; 3.1 (JSON Schema 2020-12) gives the bound itself.
    if (typeof s.minimum === 'number') out.push(s.exclusiveMinimum === true ? html`greater than ${s.minimum}` : html`at least ${s.minimum}`);
    if (typeof s.exclusiveMinimum === 'number') out.push(html`greater than ${s.exclusiveMinimum}`);
    if (typeof s.maximum === 'number') out.push(s.exclusiveMaximum === true ? html`less than ${s.maximum}` : html`at most ${s.maximum}`);
    if (typeof s.exclusiveMaximum === 'number') out.push(html`less than ${s.exclusiveMaximum}`);
    if (typeof s.multipleOf === 'number') out.push(html`a multiple of ${s.multipleOf}`);
    const range = (min: unknown, max: unknown, one: string, many: string) => {
      const unit = (n: number) => (n === 1 ? one : many);
      if (typeof min === 'number' && typeof max === 'number') out.push(min === max ? html`exactly ${min} ${unit(min)}` : html`${min} to ${max} ${many}`);
      else if (typeof min === 'number') out.push(html`at least ${min} ${unit(min)}`);
      else if (typeof max === 'number') out.push(html`at most ${max} ${unit(max)}`);
    };
    range(s.minLength, s.maxLength, 'character', 'characters');
    range(s.minItems, s.maxItems, 'item', 'items');
    range(s.minProperties, s.maxProperties, 'property', 'properties');
    if (s.uniqueItems === true) out.push(html`items unique`);
    if (typeof s.pattern === 'string') out.push(html`matches <code>${s.pattern}</code>`);
    if (s.readOnly === true) out.push(html`read-only: only in answers`);
    if (s.writeOnly === true) out.push(html`write-only: only in requests`);
    if (s.default !== undefined) out.push(html`default ${value(s.default)}`);
    if (s.example !== undefined) out.push(html`example ${value(s.example)}`);
    // The items' own constraints, for an array of plain values (an array of objects has rows of its own).
    if (v.items !== undefined) {
      const items = this.#view(v.items.raw, v.items.base, 1);
      if (items !== undefined && !hasRows(items)) {
        const inner = this.#details(items);
        if (inner.length > 0) out.push(html`each item: ${inner.map((d, i) => html`${i > 0 ? '; ' : ''}${d}`)}`);
      }
    }
    return out;
  }

  /** The rows of a schema's table: its properties, nested ones under dotted names, array items under []. */
  rows(raw: unknown, base = ''): SchemaRow[] {
    const view = this.#view(raw, base);
    if (view === undefined) return [];
    const out: SchemaRow[] = [];
    const chain = new Set(view.ref === undefined ? [] : [view.ref]);
    // A plain object is its properties; anything else gets a row of its own first.
    const plainObject = view.properties.length > 0 && view.items === undefined && view.variants === undefined;
    if (!plainObject) out.push(this.#row('(root)', view, false, 0));
    this.#children(view, '', 0, chain, out, []);
    return out;
  }

  /** The schema's name (Order, for a $ref to components/schemas/Order), when it is a component. */
  name(raw: unknown, base = ''): string | undefined {
    return this.#view(raw, base)?.name;
  }

  /** The schema's own description. */
  description(raw: unknown, base = ''): string | undefined {
    const d = this.#view(raw, base)?.schema.description;
    return typeof d === 'string' ? d : undefined;
  }

  #row(path: string, v: View, required: boolean, depth: number, notes: readonly Html[] = []): SchemaRow {
    return { path, type: this.#type(v, depth), required, description: typeof v.schema.description === 'string' ? v.schema.description : undefined, details: [...notes, ...this.#details(v)] };
  }

  #children(v: View, path: string, depth: number, chain: ReadonlySet<string>, out: SchemaRow[], notes: readonly Html[]): void {
    if (depth >= MAX_DEPTH) return;
    const join = (name: string) => (path === '' ? name : `${path}.${name}`);
    const visit = (childPath: string, raw: unknown, base: string, required: boolean, extra: readonly Html[]) => {
      const child = this.#view(raw, base);
      if (child === undefined) return;
      // A schema that contains itself (a tree): one row that says so, not rows without end.
      const again = child.ref !== undefined && chain.has(child.ref);
      out.push(this.#row(childPath, child, required, depth + 1, again ? [...extra, html`recursive: ${child.name === undefined ? 'the same schema' : html`another <code>${child.name}</code>`} as above`] : extra));
      if (!again) this.#children(child, childPath, depth + 1, child.ref === undefined ? chain : new Set([...chain, child.ref]), out, notes);
    };
    for (const p of v.properties) visit(join(p.name), p.raw, p.base, v.required.has(p.name), notes);
    if (v.additional !== undefined) visit(join('*'), v.additional.raw, v.additional.base, false, [...notes, html`any other property name`]);
    if (v.items !== undefined) {
      const items = this.#view(v.items.raw, v.items.base);
      if (items !== undefined && hasRows(items) && !(items.ref !== undefined && chain.has(items.ref))) {
        this.#children(items, `${path}[]`, depth + 1, items.ref === undefined ? chain : new Set([...chain, items.ref]), out, notes);
      }
    }
    if (v.variants !== undefined) {
      const labels = this.#labels(v, depth);
      v.variants.list.forEach((alt, i) => {
        const variant = this.#view(alt.raw, alt.base);
        if (variant === undefined || !hasRows(variant) || (variant.ref !== undefined && chain.has(variant.ref))) return;
        this.#children(variant, path, depth, variant.ref === undefined ? chain : new Set([...chain, variant.ref]), out, [...notes, html`with ${labels[i]}`]);
      });
    }
  }
}

/** Whether a schema has rows under it (properties, object items, object alternatives). */
function hasRows(v: View): boolean {
  return v.properties.length > 0 || v.additional !== undefined || v.items !== undefined || v.variants !== undefined;
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
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

/** An example as the page shows it and the try-it panel prefills it: a string as is, anything else as JSON. */
function exampleText(example: unknown, type = 'application/json'): string {
  if (typeof example === 'string') return example;
  if (type === 'application/x-www-form-urlencoded' && isObject(example)) return new URLSearchParams(Object.entries(example).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
  return JSON.stringify(example, null, 2);
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
      continue;
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

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'api';

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
    route.scopes.length === 0
      ? 'none: any token of the product'
      : route.scopes.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>${doc.scopes.get(s) ? html` (${doc.scopes.get(s)})` : ''}`)
  }</dd>
  ${op.operationId === undefined ? '' : html`<dt>Operation</dt><dd><code>${op.operationId}</code></dd>`}
  ${op.tags.length > 1 ? html`<dt>Tags</dt><dd>${op.tags.join(', ')}</dd>` : ''}
</dl>
${parametersTable(reader, op)}
${requestBody(reader, op)}
${responses(reader, op)}
${tryPanel(op, route, settings)}
</section>`;
}

function parametersTable(reader: SchemaReader, op: Operation): Html {
  if (op.parameters.length === 0) return html``;
  return html`<h5>Parameters</h5>
<table class="reflow params">
<thead><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Description</th><th>Details</th></tr></thead>
<tbody>
${op.parameters.map((p) => {
  const details = [...(p.deprecated ? [html`deprecated`] : []), ...declaredSerialization(p), ...(p.schema === undefined ? [] : reader.details(p.schema)), ...(p.example === undefined ? [] : [html`example <code>${exampleText(p.example)}</code>`])];
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

/**
 * The try-it panel. Without JavaScript it is the token and curl lines, with the examples filled
 * in; the script shows the form, rebuilds the curl line as fields change and sends the call. The
 * fields have no name: the form is never submitted, so nothing typed in it (a secret) can leave
 * the page except in the script's own requests to the gateway.
 */
function tryPanel(op: Operation, route: RouteSettings, settings: TrySettings): Html {
  const id = operationId(route);
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
  if (grant === undefined) return html`<p class="hint">This product issues tokens with no grant this operation can use${settings.grants.has('client_credentials') ? ' (it needs a user\'s token: the password grant)' : ''}.</p>`;
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
