// The benchmark's openapi pair: one route, a POST with a path parameter, a query parameter and a
// JSON body of 303 bytes, forwarded to the bench upstream. In the `openapi` case the route is an
// operation of LINE_DOCUMENT, which validates all three; in the `unvalidated` case it is written
// out under `routes`, the same method, path and upstream, and nothing is validated. The two
// gateways differ in that alone.

/** The route's path, in the document and in the written-out route alike. */
const LINE_PATH = '/v1/orders/{id}/lines';
/** The path and query every request of the load asks for. */
export const LINE_TARGET = '/v1/orders/42/lines?priority=3';

/** The body of every request of the load: valid against the document, every property of its schema used. */
export const LINE_BODY = JSON.stringify({
  sku: 'TEA-0042',
  quantity: 12,
  unitPrice: 4.75,
  currency: 'EUR',
  gift: true,
  reference: 'PO-2026-11-0042',
  note: 'Loose-leaf green tea in the 250 g tin, packed with the cups of the last order; deliver to the back door and ring twice, please.',
  tags: ['tea', 'green', 'loose-leaf', 'tin', 'gift', 'spring'],
});

/** A body the document refuses: how the bench checks that validation is on in one case and off in the other. */
export const LINE_REFUSED_BODY = JSON.stringify({ sku: 'tea', quantity: 0, currency: 'EUR' });

/** Path, query and body schemas, with $refs into components as real documents have them. */
export const LINE_DOCUMENT = `openapi: 3.1.0
info: { title: Bench orders, version: '1' }
paths:
  ${LINE_PATH}:
    post:
      operationId: lines
      parameters:
        - { name: id, in: path, required: true, schema: { $ref: '#/components/schemas/OrderId' } }
        - { name: priority, in: query, schema: { type: integer, minimum: 0, maximum: 9 } }
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Line' }
      responses:
        '200': { description: the upstream's answer }
components:
  schemas:
    OrderId: { type: string, pattern: '^[1-9][0-9]{0,11}$' }
    Line:
      type: object
      required: [sku, quantity, unitPrice, currency]
      properties:
        sku: { type: string, pattern: '^[A-Z]{3}-[0-9]{4}$' }
        quantity: { type: integer, minimum: 1, maximum: 1000 }
        unitPrice: { type: number, minimum: 0 }
        currency: { enum: [EUR, USD, GBP] }
        gift: { type: boolean }
        reference: { type: string, maxLength: 32 }
        note: { type: string, maxLength: 200 }
        tags: { type: array, maxItems: 10, items: { type: string, maxLength: 32 } }
      additionalProperties: false
`;

/** The YAML of each variant: entries under `routes`, a top-level `openapi` section, and the product's members. */
export interface LineRoute {
  routes: string;
  openapi: string;
  product: string;
}

/** The route `lines` from `file` (the document, validated) or written out (not validated), to upstream `up`. */
export function lineRoutes(file: string): Record<'openapi' | 'unvalidated', LineRoute> {
  return {
    openapi: { routes: '', openapi: `openapi:\n  lines: { file: ${file}, upstream: up }\n`, product: 'routes: [bench], openapi: [lines]' },
    unvalidated: { routes: `  lines: { method: POST, path: '${LINE_PATH}', upstream: up }\n`, openapi: '', product: 'routes: [bench, lines]' },
  };
}
