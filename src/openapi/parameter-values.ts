// The pieces every parameter reader is built from: the compiled parameter a reader closes over,
// and how a raw value becomes a list or an object and is percent-decoded. Empty values (the Style
// Values table's "empty" column is the empty string): a primitive reads as ''. A list written in one
// value (simple, label, form explode false, matrix explode false, the delimited styles) reads '' as
// [] or {}: RFC 6570 §2.3 leaves the empty list undefined, and reading [''] would make [] impossible
// to send. Exploded lists are one value per occurrence, so '?color=' is [''].
import { percentDecode } from '../http/query.ts';
import { trimOws } from '../http/request.ts';
import type { ParameterShape, RawRequest, Read } from './parameters.ts';

/** A parameter as its reader needs it, worked out once by compileParameter. */
export interface Compiled {
  name: string;
  /** "query parameter color", to begin error messages. */
  where: string;
  shape: ParameterShape;
  explode: boolean;
}

export type Reader = (request: RawRequest) => Read;

export const ABSENT: Read = Object.freeze({ absent: true });

/** simple (path and header): 'blue', 'blue,black', 'R,100,G,200' or (explode) 'R=100,G=200'. */
export function simpleValue(p: Compiled, raw: string, trimItems: boolean): Read {
  if (p.shape === 'primitive') return decoded(p, raw, false);
  const items = raw === '' ? [] : raw.split(',');
  if (trimItems) for (let i = 0; i < items.length; i++) items[i] = trimOws(items[i] as string);
  if (p.shape === 'array') return decodedAll(p, items, false);
  if (p.explode) return pairs(p, items, false, false);
  const decodedItems = decodeAll(items, false);
  return decodedItems === undefined ? malformed(p) : keyValues(p, decodedItems);
}

/** A list in one value: '' is [], otherwise split on the separator, then each item decoded. */
export function list(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  return decodedAll(p, raw === '' ? [] : raw.split(separator), plus);
}

/** An object as a key,value list in one value: 'R,100,G,200'. */
export function keyValueList(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  const items = decodeAll(raw === '' ? [] : raw.split(separator), plus);
  return items === undefined ? malformed(p) : keyValues(p, items);
}

/** An object as key=value pairs in one value: 'R=100.G=200' (label, explode). */
export function pairList(p: Compiled, raw: string, separator: string, plus: boolean): Read {
  return pairs(p, raw === '' ? [] : raw.split(separator), plus, false);
}

/** Decoded items taken two by two as key and value. */
export function keyValues(p: Compiled, items: readonly string[]): Read {
  if (items.length % 2 !== 0) return { error: `${p.where} has a key without a value` };
  const entries: [string, string][] = [];
  for (let i = 0; i < items.length; i += 2) entries.push([items[i] as string, items[i + 1] as string]);
  return objectOf(p, entries);
}

/** Raw 'key=value' items, split on the first '=' then decoded; a bare 'key' is the empty value only where the style says so (matrix). */
export function pairs(p: Compiled, items: readonly string[], plus: boolean, bareKeyIsEmpty: boolean): Read {
  const entries: [string, string][] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq === -1 && !bareKeyIsEmpty) return { error: `${p.where} has a property without '='` };
    const key = percentDecode(eq === -1 ? item : item.slice(0, eq), plus);
    const value = eq === -1 ? '' : percentDecode(item.slice(eq + 1), plus);
    if (key === undefined || value === undefined) return malformed(p);
    entries.push([key, value]);
  }
  return objectOf(p, entries);
}

/** An object from its entries; a repeated key is ambiguous. Object.fromEntries defines '__proto__' as an own property. */
function objectOf(p: Compiled, entries: readonly [string, string][]): Read {
  const value = Object.fromEntries(entries) as Record<string, string>;
  if (Object.keys(value).length !== entries.length) return { error: `${p.where} has a property given more than once` };
  return { value };
}

export function decoded(p: Compiled, raw: string, plus: boolean): Read {
  const value = percentDecode(raw, plus);
  return value === undefined ? malformed(p) : { value };
}

export function decodedAll(p: Compiled, raw: readonly string[], plus: boolean): Read {
  const value = decodeAll(raw, plus);
  return value === undefined ? malformed(p) : { value };
}

function decodeAll(raw: readonly string[], plus: boolean): string[] | undefined {
  const out: string[] = [];
  for (const item of raw) {
    const value = percentDecode(item, plus);
    if (value === undefined) return undefined;
    out.push(value);
  }
  return out;
}

export function malformed(p: Compiled): Read {
  return { error: `${p.where} has a malformed percent-encoding` };
}

export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
