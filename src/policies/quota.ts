// Quota: N calls per app (or per developer, across their apps) and API product in a window of a
// minute, hour, day, week or month.
import { Type, type Static } from '@sinclair/typebox';
import { about, Strict } from '../fragments.ts';
import { GatewayError } from '../errors.ts';
import { policyMember, type RequestContext, type Step } from '../pipeline/context.ts';
import type { ActiveToken, Counters, QuotaResult, WindowOf } from '../store/port/index.ts';
import { countStep, type Count, type RateLimitSite, type RequestPolicy } from './policy.ts';

export const QuotaOptions = Type.Object(
  {
    limit: about(Type.Integer({ minimum: 1 }), 'Calls allowed in each interval; one more gets 429.'),
    interval: about(Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]), 'The interval the limit is counted over.'),
    window: Type.Optional(
      about(
        Type.Union([Type.Literal('calendar'), Type.Literal('rolling')]),
        'calendar: windows aligned to UTC (the minute, hour, day, ISO week from Monday, month); rolling: the last interval before each call (a month is 30 days), estimated from two windows.',
        { default: 'calendar' },
      ),
    ),
    per: Type.Optional(
      about(
        Type.Unsafe<'app' | 'developer'>({ type: 'string', enum: ['app', 'developer'] }),
        "app: each app has the limit; developer: all of a developer's apps share it, so a new app brings no new budget.",
        { default: 'app' },
      ),
    ),
    failOpen: Type.Optional(about(Type.Boolean(), 'When the store cannot count (Redis down): false answers 503, true lets calls through uncounted.', { default: false })),
  },
  Strict,
);
export type QuotaSettings = Static<typeof QuotaOptions>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function calendarWindow(interval: QuotaSettings['interval']): WindowOf {
  switch (interval) {
    case 'minute':
    case 'hour':
    case 'day': {
      const size = interval === 'minute' ? MINUTE : interval === 'hour' ? HOUR : DAY;
      return (now) => {
        const start = now - (now % size);
        return { start, end: start + size };
      };
    }
    case 'week':
      // 1970-01-01 was a Thursday: Monday is 3 days before day 0.
      return (now) => {
        const day = Math.floor(now / DAY);
        const start = (day - ((day + 3) % 7)) * DAY;
        return { start, end: start + 7 * DAY };
      };
    case 'month':
      return (now) => {
        const d = new Date(now);
        return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
      };
  }
}

const ROLLING_SIZE = { minute: MINUTE, hour: HOUR, day: DAY, week: 7 * DAY, month: 30 * DAY } as const;

// The limit is not part of the key: raising or lowering it keeps the calls already counted.
const keyPrefix = (options: QuotaSettings, scope: string) => `quota|${scope}|${options.interval}/${options.window ?? 'calendar'}|`;

/** Whose calls a quota counts together: the app's, or every app's of its developer. */
type Counted = Pick<ActiveToken, 'appId' | 'developerEmail'>;
const countedAs = (options: QuotaSettings): ((t: Counted) => string) => (options.per === 'developer' ? (t) => `developer:${t.developerEmail}` : (t) => t.appId);

/** How much of an app's quota (of `scope`: 'product' or a route) is used now, for the portal. */
export function quotaUsed(options: QuotaSettings, scope: string, counters: Counters, product: string, app: Counted, now: number): number | Promise<number> {
  const rolling = options.window === 'rolling' ? ROLLING_SIZE[options.interval] : undefined;
  return counters.used(`${keyPrefix(options, scope)}${product}|${countedAs(options)(app)}`, now, rolling);
}

/**
 * The count of the calls of each app in `scope` ('product', or one route), per API product of the
 * token. Over the limit: 429 with Retry-After. Every answer reports the quota to `site` as `name`:
 * the limit per window, the calls left and the seconds until the window ends.
 */
function quotaCount(options: QuotaSettings, scope: string, site: RateLimitSite, name: string): Count {
  const { limit, interval } = options;
  const windowOf = calendarWindow(interval);
  const size = ROLLING_SIZE[interval];
  const prefix = keyPrefix(options, scope);
  const counted = countedAs(options);
  const keyOf = (ctx: RequestContext) => `${prefix}${ctx.token!.product}|${counted(ctx.token!)}`;
  // A calendar month is as long as it is; every other window has one length, and one member.
  const member = policyMember(name, limit, size / 1000);
  const policyAt =
    options.window !== 'rolling' && interval === 'month'
      ? (now: number) => {
          const w = windowOf(now);
          return policyMember(name, limit, (w.end - w.start) / 1000);
        }
      : () => member;
  return {
    policy: 'quota',
    check: options.window === 'rolling' ? (ctx) => ({ kind: 'rolling', key: keyOf(ctx), limit, size }) : (ctx) => ({ kind: 'calendar', key: keyOf(ctx), limit, windowOf }),
    apply(ctx, answer, now) {
      const result = answer as QuotaResult;
      if (site.on) site.report(ctx, { name, policy: policyAt(now), remaining: result.remaining, reset: Math.max(0, Math.ceil((result.resetAt - now) / 1000)) });
      if (!result.allowed) {
        const retryAfter = Math.max(1, Math.ceil((result.retryAt - now) / 1000));
        throw new GatewayError(429, 'quota_exceeded', `quota of ${limit} calls per ${interval} exceeded`, { headers: { 'retry-after': String(retryAfter) }, policy: 'quota' });
      }
    },
    failOpen: options.failOpen ?? false,
  };
}

/** The step of a quota of `scope` ('product', or one route), named `name` in the RateLimit headers. */
export function createQuotaStep(options: QuotaSettings, scope: string, counters: Counters, clock: () => number, site: RateLimitSite, name: string): Step {
  return countStep([quotaCount(options, scope, site, name)], counters, clock);
}

export const quota: RequestPolicy<typeof QuotaOptions> = {
  phase: 'access',
  schema: QuotaOptions,
  create: (options, env) => createQuotaStep(options, `route:${env.route}`, env.counters, env.clock, env.rateLimits, env.rateLimits.name(`quota-${options.interval}`)),
};
