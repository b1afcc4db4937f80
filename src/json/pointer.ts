// RFC 6901 JSON pointers: what the response transform changes, and where a validation failure was.
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function child(node: unknown, key: string): unknown {
  if (Array.isArray(node)) return /^(0|[1-9][0-9]*)$/.test(key) ? node[Number(key)] : undefined;
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
}

export function getAt(doc: unknown, path: readonly string[]): unknown {
  let node = doc;
  for (const key of path) node = child(node, key);
  return node;
}

/** Removes the value at `path`; false when there was none. */
export function removeAt(doc: unknown, path: readonly string[]): boolean {
  if (path.length === 0) return false;
  const parent = getAt(doc, path.slice(0, -1));
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= parent.length) return false;
    parent.splice(Number(key), 1);
    return true;
  }
  if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key)) return false;
  delete (parent as Record<string, unknown>)[key];
  return true;
}

/** Sets the value at `path`, creating objects on the way; false when a step is not a container. */
export function setAt(doc: unknown, path: readonly string[], value: unknown): boolean {
  if (path.length === 0) return false;
  let node = doc;
  for (const key of path.slice(0, -1)) {
    let next = child(node, key);
    if (next === undefined && node !== null && typeof node === 'object' && !Array.isArray(node)) {
      next = {};
      (node as Record<string, unknown>)[key] = next;
    }
    if (next === null || typeof next !== 'object') return false;
    node = next;
  }
  const key = path[path.length - 1]!;
  const container = node as Container;
  if (Array.isArray(container)) {
    if (key === '-') container.push(value);
    else if (/^(0|[1-9][0-9]*)$/.test(key) && Number(key) <= container.length) container[Number(key)] = value;
    else return false;
    return true;
  }
  if (node === null || typeof node !== 'object') return false;
  container[key] = value;
  return true;
}

/** RFC 6901 §3: one reference token, with '~' and '/' escaped. */
export function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
