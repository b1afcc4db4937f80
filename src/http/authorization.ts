/** RFC 9110 §11.4: `Authorization: <scheme> <credentials>`; the scheme is case-insensitive. */
export function parseAuthorization(header: string): { scheme: string; credentials: string } {
  const space = header.indexOf(' ');
  if (space === -1) return { scheme: header.toLowerCase(), credentials: '' };
  return { scheme: header.slice(0, space).toLowerCase(), credentials: header.slice(space + 1).trim() };
}

/**
 * Whether the request carried the header `lowerName` more than once: Node keeps only the first
 * Authorization, where another parser may keep the last, and joins others with a comma.
 */
export function repeatedHeader(rawHeaders: readonly string[], lowerName: string): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName && ++seen > 1) return true;
  }
  return false;
}

export const repeatedAuthorization = (rawHeaders: readonly string[]): boolean => repeatedHeader(rawHeaders, 'authorization');
