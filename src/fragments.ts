// Schema pieces shared by the config schema and the policies' option schemas.
import { Type } from '@sinclair/typebox';

export const Strict = { additionalProperties: false } as const;

export const Name = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' });

/** Seconds as an integer, or a string with a unit: 500ms, 30s, 5m, 1h, 1d. */
export const Duration = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+(ms|s|m|h|d)$' })]);
