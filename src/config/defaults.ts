// The schema's defaults filled into a new copy of a validated file: the one place the loader reads
// them from. The input is never changed; policy options are left as written (each policy reads its
// own, and some tell an option given from one left out).
import type { TSchema } from '@sinclair/typebox';

interface Node {
  default?: unknown;
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
  required?: string[];
  type?: string;
}

/** `value` (valid against `schema`) with every absent option that has a default set to it; `leave`: schemas whose values are kept as they are. */
export function withDefaults<T>(schema: TSchema, value: T, leave: ReadonlySet<TSchema>): T {
  return fill(schema as Node, value, leave as ReadonlySet<unknown>) as T;
}

function fill(schema: Node, value: unknown, leave: ReadonlySet<unknown>): unknown {
  if (leave.has(schema) || value === null || typeof value !== 'object') return value;
  if (schema.anyOf !== undefined) {
    const branch = schema.anyOf.find((b) => fits(b, value));
    return branch === undefined ? value : fill(branch, value, leave);
  }
  if (Array.isArray(value)) return schema.items === undefined ? value : value.map((v) => fill(schema.items!, v, leave));
  const given = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(given)) {
    const property = schema.properties?.[key] ?? Object.values(schema.patternProperties ?? {})[0];
    out[key] = property === undefined ? v : fill(property, v, leave);
  }
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (given[key] === undefined && 'default' in property) out[key] = fill(property, structuredClone(property.default), leave);
  }
  return out;
}

/** Whether a valid value is of this branch of a union: a list of a list, a mapping of the mapping whose keys it has. */
function fits(branch: Node, value: object): boolean {
  if (Array.isArray(value)) return branch.type === 'array';
  if (branch.type !== 'object') return false;
  const keys = Object.keys(value);
  return keys.every((k) => branch.properties?.[k] !== undefined || branch.patternProperties !== undefined) && (branch.required ?? []).every((k) => keys.includes(k));
}

/** An option the schema gives a default, read from the filled-in copy. */
export function defaulted<T>(value: T | undefined): T {
  if (value === undefined) throw new TypeError('an option without a default in the schema');
  return value;
}
