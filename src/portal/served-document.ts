// The OpenAPI document a product's developers download from its reference: one file, whole, as
// they call the API. Its server is the gateway; its paths are the product's operations, with what
// they refer to in files beside the document put in their place; its components only those the
// operations use. Left out: the servers of paths and operations (the upstream's addresses), other
// products' operations and what only they use, and every extension (x-…): what the operator wrote
// for themselves stays theirs.
import { pathToFileURL } from 'node:url';
import { isObject, type ApiDocument } from '../openapi/document.ts';
import { getAt, parsePointer } from '../json/pointer.ts';
import type { ReferenceOperation } from './reference.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** How deep $refs to other files are followed into one another; deeper, what they name is left out. */
const MAX_DEPTH = 32;

export function servedDocument(doc: Pick<ApiDocument, 'file' | 'files'>, gatewayUrl: string, operations: readonly ReferenceOperation[]): unknown {
  const rootUrl = pathToFileURL(doc.file).href;
  const root = doc.files.get(rootUrl);
  if (!isObject(root)) return root;
  const own = isObject(root.components) ? root.components : {};
  // A component of another file is brought into the document's components (under its name, or
  // the next free one), so that a schema that names itself stays one schema.
  const brought: Record<string, Record<string, unknown>> = {};
  const broughtAs = new Map<string, string>();
  const taken = (kind: string, name: string) => (isObject(own[kind]) && own[kind][name] !== undefined) || brought[kind]?.[name] !== undefined;

  /** `value` (in the file at `base`) with every $ref to another file made one into this document. */
  function resolve(value: unknown, base: string, depth: number): unknown {
    if (Array.isArray(value)) return value.map((v) => resolve(v, base, depth));
    if (!isObject(value)) return value;
    if (typeof value.$ref !== 'string') return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, resolve(v, base, depth)]));
    const { $ref, ...siblings } = value;
    const url = URL.parse($ref, base);
    if (url === null) return siblings;
    const file = url.href.split('#')[0]!;
    if (file === rootUrl) return { ...siblings, $ref: url.hash === '' ? '#' : url.hash };
    const component = /^#\/components\/([^/]+)\/([^/]+)$/.exec(url.hash);
    const pointer = parsePointer(decodeURIComponent(url.hash.slice(1)));
    const target = pointer === undefined ? undefined : getAt(doc.files.get(file), pointer);
    if (target === undefined || depth >= MAX_DEPTH) return siblings;
    if (component === null) {
      const inlined = resolve(target, file, depth + 1);
      return isObject(inlined) ? { ...inlined, ...siblings } : inlined;
    }
    const [, kind, written] = component as unknown as [string, string, string];
    let ref = broughtAs.get(url.href);
    if (ref === undefined) {
      let name = decodeURIComponent(written);
      for (let i = 2; taken(kind, name); i++) name = `${decodeURIComponent(written)}${i}`;
      ref = `#/components/${kind}/${name}`;
      broughtAs.set(url.href, ref);
      brought[kind] ??= {};
      brought[kind][name] = {};
      brought[kind][name] = resolve(target, file, depth + 1);
    }
    return { ...siblings, $ref: ref };
  }

  const [first] = operations;
  const basePath = first === undefined ? '' : first.route.path.slice(0, first.route.path.length - first.operation.path.length);
  const paths: Record<string, unknown> = {};
  for (const [template, item] of Object.entries(isObject(root.paths) ? root.paths : {})) {
    const resolved = resolve(item, rootUrl, 0);
    if (!isObject(resolved)) continue;
    const kept = Object.entries(resolved).filter(
      ([key]) => key !== 'servers' && (!METHODS.includes(key) || operations.some((o) => o.operation.path === template && o.operation.method.toLowerCase() === key)),
    );
    if (kept.some(([key]) => METHODS.includes(key)))
      paths[template] = Object.fromEntries(kept.map(([key, value]) => [key, METHODS.includes(key) && isObject(value) ? withoutKey(value, 'servers') : value]));
  }
  const component = (kind: string, name: string): unknown => brought[kind]?.[name] ?? (isObject(own[kind]) ? resolve(own[kind][name], rootUrl, 0) : undefined);
  const used = usedComponents(component, paths, root.security);
  const tags = new Set(Object.values(paths).flatMap((item) => Object.values(item as object).flatMap((op) => (isObject(op) && Array.isArray(op.tags) ? op.tags : []))));
  return withoutExtensions({
    openapi: root.openapi,
    info: root.info,
    ...(root.jsonSchemaDialect === undefined ? {} : { jsonSchemaDialect: root.jsonSchemaDialect }),
    servers: [{ url: `${gatewayUrl}${basePath}`, description: 'the gateway' }],
    ...(root.security === undefined ? {} : { security: root.security }),
    ...(Array.isArray(root.tags) ? { tags: root.tags.filter((t) => isObject(t) && tags.has(t.name)) } : {}),
    paths,
    ...(Object.keys(used).length === 0 ? {} : { components: used }),
  });
}

/** The components (by `component`) that `paths` and the security requirements use, and those these use. */
function usedComponents(component: (kind: string, name: string) => unknown, paths: unknown, security: unknown): Record<string, Record<string, unknown>> {
  const used: Record<string, Record<string, unknown>> = {};
  const add = (kind: string, name: string) => {
    if (used[kind]?.[name] !== undefined) return;
    const value = component(kind, name);
    if (value === undefined) return;
    used[kind] ??= {};
    used[kind][name] = value;
    visit(value);
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) visit(v);
    else if (isObject(value)) {
      const match = typeof value.$ref === 'string' ? /^#\/components\/([^/]+)\/([^/]+)$/.exec(value.$ref) : null;
      if (match !== null) add(match[1]!, decodeURIComponent(match[2]!).replaceAll('~1', '/').replaceAll('~0', '~'));
      for (const [key, v] of Object.entries(value)) {
        // An operation's (or the root's) security requirements name schemes, not $refs.
        if (key === 'security' && Array.isArray(v)) for (const requirement of v) if (isObject(requirement)) for (const scheme of Object.keys(requirement)) add('securitySchemes', scheme);
        visit(v);
      }
    }
  };
  visit(paths);
  visit({ security });
  return used;
}

const withoutKey = (value: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

/** Members whose keys are names the document chose (a property, a header, a media type…), not fields where an extension could be. */
const MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'headers',
  'content',
  'encoding',
  'responses',
  'schemas',
  'parameters',
  'examples',
  'requestBodies',
  'securitySchemes',
  'links',
  'callbacks',
  'mapping',
  'variables',
  'scopes',
  'paths',
  'pathItems',
]);
/** Members that are the API's data (an example, a default, an enumeration), kept as written. */
const DATA = new Set(['example', 'value', 'default', 'enum', 'const']);

/** `value` without the keys that start with x- (extensions) wherever an extension can be. */
function withoutExtensions(value: unknown, keys: 'fields' | 'names' = 'fields'): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutExtensions(v));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => keys === 'names' || !key.startsWith('x-'))
      .map(([key, v]) => [key, keys === 'fields' && DATA.has(key) ? v : withoutExtensions(v, keys === 'fields' && MAPS.has(key) ? 'names' : 'fields')]),
  );
}
