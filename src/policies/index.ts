// The policy registry: one explicit entry per policy. A route lists policies as one-key objects,
// `- quota: {…}`, and the config schema accepts exactly these.
import { Type, type TSchema } from '@sinclair/typebox';
import { Strict } from '../fragments.ts';
import { cors } from './cors.ts';
import { ipAccess } from './ip-access.ts';
import type { Policy } from './policy.ts';
import { quota } from './quota.ts';
import { spikeArrest } from './spike-arrest.ts';
import { transformResponse } from './transform-response.ts';
import { validateRequest } from './validate-request.ts';
import { validateResponse } from './validate-response.ts';

export { QuotaOptions } from './quota.ts';

export const policies = { quota, spikeArrest, ipAccess, validateRequest, validateResponse, transformResponse, cors } as const satisfies Record<string, Policy<TSchema>>;

export type PolicyName = keyof typeof policies;

/** One entry of a route's `policies` list: an object with exactly one key, the policy's name. */
export const policySchema = Type.Object(
  {
    quota: Type.Optional(quota.schema),
    spikeArrest: Type.Optional(spikeArrest.schema),
    ipAccess: Type.Optional(ipAccess.schema),
    validateRequest: Type.Optional(validateRequest.schema),
    validateResponse: Type.Optional(validateResponse.schema),
    transformResponse: Type.Optional(transformResponse.schema),
    cors: Type.Optional(cors.schema),
  },
  { ...Strict, minProperties: 1, maxProperties: 1 },
);
