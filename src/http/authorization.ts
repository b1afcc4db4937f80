/** RFC 9110 §11.4: `Authorization: <scheme> <credentials>`; the scheme is case-insensitive. */
export function parseAuthorization(header: string): { scheme: string; credentials: string } {
  const space = header.indexOf(' ');
  if (space === -1) return { scheme: header.toLowerCase(), credentials: '' };
  return { scheme: header.slice(0, space).toLowerCase(), credentials: header.slice(space + 1).trim() };
}
