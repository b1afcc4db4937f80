// The policy registry: one explicit entry per policy. A route lists policies as one-key objects,
// `- quota: {…}`, and the config schema accepts exactly these.
import { Type, type TSchema } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
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
    quota: Type.Optional(about(quota.schema, 'Calls per app (or developer) per interval, counted across gateways; over it: 429.')),
    spikeArrest: Type.Optional(about(spikeArrest.schema, 'Smooths bursts: calls spread evenly at a rate; too soon: 429.')),
    ipAccess: Type.Optional(about(ipAccess.schema, 'Allows or denies calls by client address; denied: 403.')),
    validateRequest: Type.Optional(about(validateRequest.schema, 'Checks the query, the body or the whole request (OpenAPI) before the upstream sees it; invalid: 400.')),
    validateResponse: Type.Optional(about(validateResponse.schema, "Checks the upstream's answer against JSON Schemas or an OpenAPI document.")),
    transformResponse: Type.Optional(about(transformResponse.schema, "Changes the upstream's answer: headers, and members of a JSON body.")),
    cors: Type.Optional(about(cors.schema, 'CORS (Fetch §3.2): which browser pages on other origins may call the route; answers its preflights.')),
  },
  { ...Strict, minProperties: 1, maxProperties: 1 },
);
