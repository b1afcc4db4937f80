// Spike arrest: smooths traffic to a rate such as 30ps (one call per 33 ms) with GCRA, keyed
// per app, per client IP or per route; an optional burst admits that many calls at once.
import { Type } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { policyMember, type RequestContext } from '../pipeline/context.ts';
import { spikeRemaining, type SpikeResult } from '../store/port/index.ts';
import { countStep, type Count, type RequestPolicy } from './policy.ts';

const SpikeArrestOptions = Type.Object(
  {
    rate: about(
      Type.String({ pattern: '^[1-9][0-9]{0,6}p[sm]$', title: 'rate', examples: ['10ps', '600pm'] }),
      'Calls per second (ps) or per minute (pm), spread evenly; a call too soon after the last gets 429.',
    ),
    burst: Type.Optional(about(Type.Integer({ minimum: 1, maximum: 100_000 }), 'Calls allowed at once before the rate applies.', { default: 1 })),
    key: Type.Optional(
      about(
        Type.Union([Type.Literal('app'), Type.Literal('ip'), Type.Literal('route')]),
        'Who is counted: each app, each client address, or the route as a whole. Default: ip on the token endpoint, else app.',
      ),
    ),
    failOpen: Type.Optional(about(Type.Boolean(), 'When the store cannot count (Redis down): true lets calls through, false answers 503.', { default: true })),
  },
  Strict,
);

export const spikeArrest: RequestPolicy<typeof SpikeArrestOptions> = {
  phase: 'access',
  schema: SpikeArrestOptions,
  tokenEndpoint: (options) => options.key !== 'app',
  create(options, env) {
    const count = Number(options.rate.slice(0, -2));
    const intervalMs = (options.rate.endsWith('ps') ? 1000 : 60_000) / count;
    const burst = options.burst ?? 1;
    const by = options.key ?? (env.tokenEndpoint ? 'ip' : 'app');
    // Two spike arrests on one route (say a burst and a sustained rate) keep separate arrival times.
    const prefix = `spike|${env.route}|${options.rate}/${burst}/${by}|`;
    const keyOf = by === 'ip' ? (ctx: RequestContext) => prefix + ctx.clientIp : by === 'route' ? () => prefix : (ctx: RequestContext) => prefix + ctx.token!.appId;
    // In the RateLimit headers: the most calls it admits in a second or a minute (a burst, then one
    // per interval); the calls the burst still admits at once, and the seconds until all of it is back.
    const name = env.rateLimits.name(`spike-${options.rate}`);
    const policy = policyMember(name, count + burst - 1, options.rate.endsWith('ps') ? 1 : 60);
    const spike: Count = {
      policy: 'spikeArrest',
      check: (ctx) => ({ kind: 'spike', key: keyOf(ctx), intervalMs, burst }),
      apply(ctx, answer) {
        const result = answer as SpikeResult;
        if (env.rateLimits.on) env.rateLimits.report(ctx, { name, policy, remaining: spikeRemaining(result, intervalMs, burst), reset: Math.ceil(result.refillMs / 1000) });
        if (!result.allowed) {
          throw new GatewayError(429, 'spike_arrest', `rate of ${options.rate} exceeded`, {
            policy: 'spikeArrest',
            headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
          });
        }
      },
      failOpen: options.failOpen ?? true,
    };
    return countStep([spike], env.counters, env.clock);
  },
};
