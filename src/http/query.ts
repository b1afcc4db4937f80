// A query string (or a form body, written the same way) as the upstream will read it: what a
// validated one must not leave open to another reading (a ';' separator, bracketed names, numbers
// written other than as plain decimals).
import { escapeToken } from '../json/pointer.ts';
import { MAX_FAILURES, type Failure } from '../json/schema.ts';

/**
 * What the schema checked must be what the upstream reads. Rack and some Java servers also split
 * a query on ';', and PHP, Rack and qs read `limit[]=1000` (or `limit%5B%5D`) as `limit`: so
 * `?q=x;limit=1000` and `?limit[]=1000` would pass a schema that caps `limit` at 100 and reach
 * such an upstream as limit=1000. A ';' separator, and a bracketed name the schema does not
 * declare, are refused.
 */
export function ambiguousQuery(query: string, raw: Record<string, string | string[]>, declared: ReadonlySet<string>, found: Failure[], prefix = '/query'): void {
  if (query.includes(';')) found.push({ pointer: prefix, message: "must separate parameters with '&' only, not ';'" });
  for (const name in raw) {
    if (found.length >= MAX_FAILURES) return;
    if ((name.includes('[') || name.includes(']')) && !declared.has(name)) {
      found.push({ pointer: `${prefix}/${escapeToken(name)}`, message: 'is a bracketed name the schema does not declare' });
    }
  }
}

// ajv coerces "0x64", "1e2" and " 7" to numbers, which an upstream would read otherwise: a
// number in the query must be written as a plain decimal. And exactly: "0.99999999999999999" is
// the number 1 to ajv (a minimum of 1 passes) but 0 to parseInt and PHP's intval.
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function exactDecimal(given: string, value: number): boolean {
  if (!DECIMAL.test(given)) return false;
  return String(value) === (given.includes('.') ? withoutTrailingZeros(given) : given);
}

/** '1.500' as '1.5', '2.0' as '2'. A loop: /0+$/ retries at every zero of '1.000…0001', time quadratic in its length. */
function withoutTrailingZeros(decimal: string): string {
  let end = decimal.length;
  while (decimal[end - 1] === '0') end--;
  if (decimal[end - 1] === '.') end--;
  return decimal.slice(0, end);
}

// "100.0" is 100 to the schema, and an error to int(), Atoi and parseInt's careful callers (Flask
// then falls back to no limit at all): an integer is written without a fraction.
const INTEGER = /^-?(0|[1-9][0-9]*)$/;

export function exactNumber(given: string, value: number, integer: boolean): boolean {
  return exactDecimal(given, value) && (!integer || INTEGER.test(given));
}

/** What a number that exactNumber refuses is told. */
export const notPlainNumber = (integer: boolean) => (integer ? 'must be a plain decimal integer, without a fraction' : 'must be a plain decimal number, exactly representable');

/** A form body's fields by name, each with its values in order. */
export const formFields = (text: string): Map<string, string[]> => byName(new URLSearchParams(text));

/** Name-value pairs grouped by name, values in order (a repeated name appends: never a copy of the list so far). */
export function byName(pairs: Iterable<[string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const list = out.get(name);
    if (list === undefined) out.set(name, [value]);
    else list.push(value);
  }
  return out;
}

/** Percent-decodes (UTF-8), reading '+' as a space first when `plus` (a form or a query); undefined when an escape is malformed or not UTF-8. */
export function percentDecode(raw: string, plus: boolean): string | undefined {
  const text = plus && raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
