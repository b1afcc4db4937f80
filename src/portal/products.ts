// The API products: the list, a product's page, and its reference with the try-it panels and the
// OpenAPI documents it is made of, for download.
import path from 'node:path';
import { stringify } from 'yaml';
import { listApps } from '../admin/apps.ts';
import type { ProductSettings } from '../config/load.ts';
import { isLive } from '../store/port/index.ts';
import { asDeveloper, notFound, page, visible, visibleProduct, type Answer, type PortalContext, type Request } from './context.ts';
import * as pages from './pages.ts';
import type { ReferenceDocument, ReferenceOperation } from './reference.ts';
import { servedDocument } from './served-document.ts';

export const PRODUCT = /^\/products\/(?<name>[A-Za-z0-9_.-]+)$/;
export const REFERENCE = /^\/products\/(?<name>[A-Za-z0-9_.-]+)\/reference$/;
/** An OpenAPI document of the product, by its file's name. */
export const OPENAPI_FILE = /^\/products\/(?<name>[A-Za-z0-9_.-]+)\/openapi\/(?<api>[A-Za-z0-9_.-]+)\/(?<file>[A-Za-z0-9_.-]+)$/;

export const productsPage = async (ctx: PortalContext, r: Request) => page(200, pages.productsPage(r.frame, visible(ctx)));

export async function productPage(ctx: PortalContext, r: Request): Promise<Answer> {
  const p = visibleProduct(ctx, r.params.name);
  if (p === undefined) return notFound(r);
  return page(
    200,
    pages.productPage(
      r.frame,
      p,
      p.routes.map((name) => ctx.catalog().routes.get(name)!),
    ),
  );
}

/** /products/{name}/reference: the product's operations from OpenAPI documents; not found when it has none. */
export async function referencePage(ctx: PortalContext, r: Request): Promise<Answer> {
  const product = visibleProduct(ctx, r.params.name);
  if (product === undefined) return notFound(r);
  const docs = referenceDocuments(ctx, product);
  if (docs.length === 0) return notFound(r);
  const dev = r.frame.developer;
  const { clock } = ctx.services;
  // Only apps that can get a token now, each by its newest live key; never a secret (the store has
  // only their hashes). Not a public app: the panels' grants (client_credentials, password) take a secret.
  const apps =
    dev === undefined
      ? undefined
      : (await listApps(asDeveloper(ctx, r))).flatMap((app) => {
          const key = app.credentials.filter((c) => isLive(c, clock())).at(-1)?.key;
          const usable = app.product === product.name && app.type === 'confidential' && app.status === 'active' && app.approval !== 'pending';
          return usable && key !== undefined ? [{ name: app.name, key }] : [];
        });
  return page(200, pages.referencePage(r.frame, product, docs, { gatewayUrl: ctx.gatewayOrigin, grants: product.grants, apps, productName: product.name }));
}

/** The product's routes that have an OpenAPI operation, by document. */
function referenceDocuments(ctx: PortalContext, product: ProductSettings): (ReferenceDocument & { operations: ReferenceOperation[] })[] {
  const { routes, openapi } = ctx.catalog();
  const docs = new Map<string, ReferenceDocument & { operations: ReferenceOperation[] }>();
  for (const name of product.routes) {
    const route = routes.get(name);
    const api = route?.operation?.api;
    const doc = api === undefined ? undefined : openapi.get(api);
    if (route?.operation === undefined || api === undefined || doc === undefined) continue;
    const download = `/products/${encodeURIComponent(product.name)}/openapi/${api}/${path.basename(doc.file)}`;
    const entry = docs.get(api) ?? { api, doc, operations: [], download };
    entry.operations.push({ route, operation: route.operation.operation });
    docs.set(api, entry);
  }
  return [...docs.values()];
}

/**
 * /products/{name}/openapi/{api}/{file}: the document of the product's reference, whole in one
 * file (./served-document.ts), as YAML, or JSON for a .json document; nothing else of its folder.
 */
export async function openApiFile(ctx: PortalContext, r: Request): Promise<Answer> {
  const product = visibleProduct(ctx, r.params.name);
  const entry = product === undefined ? undefined : referenceDocuments(ctx, product).find((d) => d.api === r.params.api);
  if (entry === undefined) return notFound(r);
  if (r.params.file !== path.basename(entry.doc.file)) return notFound(r);
  const served = servedDocument(entry.doc, ctx.gatewayOrigin, entry.operations);
  const json = entry.doc.file.endsWith('.json');
  return {
    status: 200,
    file: json ? { type: 'application/json', body: `${JSON.stringify(served, null, 2)}\n` } : { type: 'application/yaml; charset=utf-8', body: stringify(served) },
  };
}
