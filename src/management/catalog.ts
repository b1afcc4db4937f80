// The management API's reads of what the config declares (products, with their routes and
// scopes) and of what the gateway counted (usage per app, product, route and status class per hour).
import { AdminError } from '../admin/errors.ts';
import { MAX_USAGE_RANGE_MS, usageReport } from '../admin/usage.ts';
import type { Config, ProductSettings } from '../config/load.ts';
import { GatewayError } from '../errors.ts';
import { HOUR_MS } from '../usage.ts';
import { page, type ManagementOperation } from './call.ts';

function productView(product: ProductSettings, config: Config) {
  return {
    name: product.name,
    displayName: product.displayName,
    description: product.description,
    scopes: product.scopes,
    grants: [...product.grants],
    approval: product.approval,
    visible: product.visible,
    accessTokenLifetime: product.accessTokenLifetime,
    refreshTokenLifetime: product.refreshTokenLifetime,
    routes: product.routes.flatMap((name) => {
      const route = config.routes.get(name);
      return route === undefined ? [] : [{ name, method: route.method, path: route.path, scopes: route.scopes }];
    }),
  };
}

function timeOf(value: string | null, fallback: number, name: string): number {
  if (value === null) return fallback;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new GatewayError(400, 'invalid_request', `${name} is not an RFC 3339 date-time`);
  return ms;
}

export const catalogOperations: Record<string, ManagementOperation> = {
  async listProducts(call) {
    const config = call.config();
    const products = [...config.products.values()].map((p) => productView(p, config));
    return { status: 200, body: page(products, (p) => p.name, call.query) };
  },
  async getProduct(call) {
    const config = call.config();
    const product = config.products.get(call.params.product!);
    if (product === undefined) throw new AdminError('unknown_product', `no API product "${call.params.product}"`);
    return { status: 200, body: productView(product, config) };
  },
  async listUsage(call) {
    const { query, deps } = call;
    const now = deps.clock();
    const to = timeOf(query.get('to'), now, 'to');
    const from = timeOf(query.get('from'), to - 24 * HOUR_MS, 'from');
    if (from >= to) throw new GatewayError(400, 'invalid_request', '"from" must be before "to"');
    if (to - from > MAX_USAGE_RANGE_MS) throw new GatewayError(400, 'invalid_request', 'a report covers at most 31 days: ask for several');
    await call.flushUsage();
    const [app, product, route] = [query.get('app'), query.get('product'), query.get('route')];
    const rows = await usageReport(deps, {
      from,
      to,
      ...(app === null ? {} : { app }),
      ...(product === null ? {} : { product }),
      ...(route === null ? {} : { route }),
    });
    // Hours are 13 digits until 2286: their text sorts as their number.
    return { status: 200, body: page(rows, (r) => `${r.hour}\u0000${r.app}\u0000${r.route}\u0000${r.statusClass}`, query) };
  },
};
