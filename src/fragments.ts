// Schema pieces shared by the config schema and the policies' option schemas.
import { Type, type TSchema } from '@sinclair/typebox';

export const Strict = { additionalProperties: false } as const;

/** What `gateway config schema`, docs/configuration.md and the config's error messages say of an option. */
export interface About {
  /** Stated only when it is one value; a default that depends on other options is said in the description. */
  default?: unknown;
  /** Values that match a pattern, for messages ("must be a rate such as 10ps or 600pm") and editors. */
  examples?: readonly unknown[];
  /** What a value of the pattern is, for messages: "rate", "duration". */
  title?: string;
}

/** `schema` with its description (and default, examples): the one place they are written. */
export function about<T extends TSchema>(schema: T, description: string, more: About = {}): T {
  return { ...schema, description, ...more };
}

export const Name = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$', title: 'name', examples: ['orders', 'hello-v2'] });

/** Seconds as an integer, or a string with a unit: 500ms, 30s, 5m, 1h, 1d. */
export const Duration = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+(ms|s|m|h|d)$', title: 'duration', examples: ['30s', '5m'] })]);

/** RFC 6749 §3.3: a scope-token. */
export const Scope = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$', title: 'scope', examples: ['orders:read', 'profile'] });

/** RFC 9110 §5.1: a field name (a token). */
export const HeaderName = Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", title: 'header name', examples: ['X-Request-Id'] });
