// Usage reports: calls per app, product, route and status class per hour, as src/usage.ts counted
// them into the store, for the management API (GET /v1/usage) and `gateway admin usage export`.
import { MANAGEMENT_PRODUCT } from './management-clients.ts';
import type { StatusClass, Store } from '../store/port/index.ts';
import { HOUR_MS } from '../usage.ts';

/** The longest report one call may ask for: a month. */
export const MAX_USAGE_RANGE_MS = 31 * 24 * HOUR_MS;

/** The calls of one app through one route in one hour (`hour`: epoch ms of its start), answered with one status class. */
export interface UsageRow {
  hour: number;
  app: string;
  product: string;
  route: string;
  statusClass: StatusClass;
  count: number;
}

/** The hours that overlap [from, to) (epoch ms), narrowed to an app (its id), a product or a route. */
export interface UsageQuery {
  from: number;
  to: number;
  app?: string;
  product?: string;
  route?: string;
}

/**
 * The rows of the hours that overlap the query's range (which its caller has checked: not empty,
 * at most MAX_USAGE_RANGE_MS), ordered by hour, then app, route and status class. The management
 * clients' own calls are left out: those clients, and their ids, are the gateway's, not the API's.
 */
export async function usageReport(deps: { store: Store }, query: UsageQuery): Promise<UsageRow[]> {
  const { from, to } = query;
  const counts = await deps.store.usage.report({
    fromHour: from - (from % HOUR_MS),
    // The hour holding `to` counts when `to` falls inside it.
    toHour: Math.ceil(to / HOUR_MS) * HOUR_MS,
    ...(query.app === undefined ? {} : { appId: query.app }),
    ...(query.product === undefined ? {} : { product: query.product }),
    ...(query.route === undefined ? {} : { route: query.route }),
  });
  return counts.filter((c) => c.product !== MANAGEMENT_PRODUCT).map((c) => ({ hour: c.hour, app: c.appId, product: c.product, route: c.route, statusClass: c.statusClass, count: c.count }));
}
