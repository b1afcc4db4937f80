// Server-rendered HTML: every interpolated value is escaped unless it is already Html, so what a
// user typed can only ever appear as text.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

function part(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** A template whose values are escaped; arrays are joined, and undefined, null and false print nothing. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new Html(out);
}
