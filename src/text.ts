// Characters that change how a terminal or a page shows the text around them: C0 and C1 controls
// (ESC starts a terminal escape sequence, CSI is one in a single byte), DEL, the Unicode
// bidirectional marks and overrides (Unicode TR9 §2; CVE-2021-42574 "Trojan Source"), and the
// invisible ones (zero-width space and joiners, word joiner, byte order mark), which make two
// names look alike. Names are refused with them; what the CLI prints has them escaped.
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

export function hasUnsafeCharacters(text: string): boolean {
  return UNSAFE.test(text);
}

/** The text with each unsafe character written as a \u escape, as JSON would: safe to print to a terminal. */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8 text; undefined when they are not UTF-8 (a replacement character would hide what was sent). */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
