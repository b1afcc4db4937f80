// A JSON request body as the upstream will read it. The schema checks what JSON.parse made of the
// bytes; an upstream parser must make the same of them, or the check was of another value. So the
// bytes must be UTF-8 (RFC 8259 §8.1; a replacement character hides what was sent), an object may
// not name a member twice (§4: JSON.parse keeps the last, RapidJSON, buger/jsonparser and others
// the first), a number must be the number JSON.parse read (`100.00000000000000001` is 100 to the
// schema and more than 100 to a decimal parser; 1e400 is Infinity), and nesting is bounded (ajv
// validates a recursive schema by recursion: a deep enough body overflows the stack).
import { utf8Text } from '../text.ts';
import { escapeToken } from './pointer.ts';
import { schemaFailures, type Failure, type SchemaCheck } from './schema.ts';

/** Levels of objects and arrays a body may nest; ajv's recursion stays far from the stack's end. */
const MAX_JSON_DEPTH = 64;

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** What a number JSON.parse accepted is written with. */
const NUMBER_CHARS = new Set('0123456789eE.+-');

/** The body's value, or why the upstream could read it otherwise; failures point below `prefix`. */
export function parseJsonBody(body: Buffer, prefix: string): { value: unknown } | Failure {
  const text = utf8Text(body);
  if (text === undefined) return { pointer: prefix, message: 'is not valid UTF-8' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { pointer: prefix, message: 'is not valid JSON' };
  }
  return ambiguity(text, prefix) ?? { value };
}

/**
 * A JSON body (of a request or an answer) read as parseJsonBody reads it, then checked by
 * `check`: its failures below `prefix`. Nesting is bounded first, so ajv's recursion through a
 * recursive schema never nears the stack's end.
 */
export function jsonBodyFailures(body: Buffer, check: SchemaCheck, prefix: string): Failure[] {
  const parsed = parseJsonBody(body, prefix);
  return 'value' in parsed ? schemaFailures(check, parsed.value, prefix, body.length) : [parsed];
}

interface Level {
  /** The member names of an object so far; undefined for an array. */
  names: Set<string> | undefined;
  /** The current member's name or item's index, for the pointer. */
  at: string | number;
}

/** Scans text that JSON.parse accepted: every token is well formed, so only its kind matters here. */
function ambiguity(text: string, prefix: string): Failure | undefined {
  const stack: Level[] = [];
  // Where the scan is; `levels`: the pointer of an enclosing value (an object, for a member's name).
  const pointer = (levels = stack.length) =>
    prefix +
    stack
      .slice(0, levels)
      .map((l) => `/${typeof l.at === 'number' ? l.at : escapeToken(l.at)}`)
      .join('');
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '{' || c === '[') {
      if (stack.length >= MAX_JSON_DEPTH) return { pointer: pointer(), message: `is nested more than ${MAX_JSON_DEPTH} levels deep` };
      stack.push(c === '{' ? { names: new Set(), at: '' } : { names: undefined, at: 0 });
      expectName = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const level = stack.at(-1)!;
      if (level.names === undefined) level.at = (level.at as number) + 1;
      expectName = level.names !== undefined;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      // "\ud800" is a string to JSON.parse, and U+FFFD or an error to Go and serde: two names could be one upstream.
      if (SURROGATE_ESCAPE.test(text.slice(i, end + 1)) && !(JSON.parse(text.slice(i, end + 1)) as string).isWellFormed()) {
        return { pointer: pointer(expectName ? stack.length - 1 : stack.length), message: 'must not hold a lone UTF-16 surrogate (\\ud800 to \\udfff unpaired)' };
      }
      if (expectName) {
        const level = stack.at(-1)!;
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        level.at = name;
        if (level.names!.has(name)) return { pointer: pointer(), message: 'is given more than once' };
        level.names!.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let end = i + 1;
      while (end < text.length && NUMBER_CHARS.has(text[end]!)) end++;
      const written = text.slice(i, end);
      if (!exactly(written)) return { pointer: pointer(), message: 'must be a number a double holds exactly (no more digits than it keeps, within its range)' };
      i = end - 1;
    }
  }
  return undefined;
}

/** Whether the number written is the double JSON.parse makes of it, digit for digit. */
function exactly(written: string): boolean {
  const value = Number(written);
  if (!Number.isFinite(value)) return false;
  const a = decimal(written);
  const b = decimal(String(value));
  return a.digits === b.digits && (a.digits === '' || (a.negative === b.negative && a.exponent === b.exponent));
}

/**
 * A decimal as sign, significant digits and the power of ten of the last of them ('' digits: zero).
 * One pass over the text, whatever its zeros: a regular expression such as /0+$/ retries at every
 * zero of `1.000…0001`, time quadratic in its length.
 */
function decimal(text: string): { negative: boolean; digits: string; exponent: number } {
  const negative = text.startsWith('-');
  let e = text.indexOf('e');
  if (e === -1) e = text.indexOf('E');
  const end = e === -1 ? text.length : e;
  let first = -1;
  let last = -1;
  let dot = -1;
  for (let i = negative ? 1 : 0; i < end; i++) {
    const c = text[i];
    if (c === '.') dot = i;
    else if (c !== '0') {
      if (first === -1) first = i;
      last = i;
    }
  }
  if (first === -1) return { negative, digits: '', exponent: 0 };
  const point = dot === -1 ? end : dot;
  // The place of the last significant digit: 10^0 just before the point, 10^-1 just after it.
  const place = last < point ? point - last - 1 : point - last;
  const written = text.slice(first, last + 1);
  const digits = first < point && point < last ? written.replace('.', '') : written;
  return { negative, digits, exponent: (e === -1 ? 0 : Number(text.slice(e + 1))) + place };
}
