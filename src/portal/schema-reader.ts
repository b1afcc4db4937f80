// The schema tables of the API reference: a schema read across the document's files, its $refs
// followed (document.ts follows those of OpenAPI's own objects and leaves a schema's to ajv),
// allOf merged, and turned into rows (nested properties under dotted names, array items under [],
// alternatives noted), a type as a reader says it, and what it asks of a value besides its type.
import { isObject, resolveSchema, type ApiDocument, type ObjectMap } from '../openapi/document.ts';
import { html, type Html } from '../html.ts';

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
      name:
        found.ref === undefined
          ? undefined
          : /\/(?:components\/schemas|\$defs|definitions)\/([^/]+)$/
              .exec(decodeURIComponent(new URL(found.ref).hash))?.[1]
              ?.replace(/~1/g, '/')
              .replace(/~0/g, '~'),
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

  /** Where the schema is (the URL of the $ref last followed to it), when it is a $ref: the same for every use of one component. */
  ref(raw: unknown, base = ''): string | undefined {
    return this.#view(raw, base)?.ref;
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
      out.push(
        this.#row(
          childPath,
          child,
          required,
          depth + 1,
          again ? [...extra, html`recursive: ${child.name === undefined ? 'the same schema' : html`another <code>${child.name}</code>`} as above`] : extra,
        ),
      );
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
