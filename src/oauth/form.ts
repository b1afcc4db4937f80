// application/x-www-form-urlencoded bodies of the OAuth endpoints.
import { percentDecode } from '../http/query.ts';
import { mediaType } from '../http/request.ts';
import { invalidRequest } from './errors.ts';

/**
 * Parses a form body. RFC 6749 §3.2: parameters without a value are treated as omitted, and a
 * parameter must not be included more than once.
 */
export function parseForm(body: string): Map<string, string> {
  const form = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(body)) {
    if (seen.has(name)) throw invalidRequest(`parameter '${name}' is repeated`);
    seen.add(name);
    if (value !== '') form.set(name, value);
  }
  return form;
}

/** Accepts the form content type with optional parameters such as charset. */
export function isFormContentType(value: string | undefined): boolean {
  if (value === undefined || mediaType(value) !== 'application/x-www-form-urlencoded') return false;
  const charset = contentCharset(value);
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** The charset parameter of a Content-Type value, if it has one. */
export function contentCharset(value: string): string | undefined {
  const semi = value.indexOf(';');
  if (semi === -1) return undefined;
  return /(?:^|;)\s*charset\s*=\s*"?([^";]+)"?/i.exec(value.slice(semi))?.[1]?.trim();
}

/** Form-decoding of one value: '+' is a space, then percent-decoding (UTF-8). */
export const formDecode = (value: string): string | undefined => percentDecode(value, true);
