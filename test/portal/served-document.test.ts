// The OpenAPI document a product's reference offers for download, made from a document and the
// files beside it: what of the operator's stays the operator's (other products' operations and
// what only they use, servers of paths and operations, extensions), and what the product's
// developers need comes whole in one file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { servedDocument } from '../../src/portal/served-document.ts';
import type { ReferenceOperation } from '../../src/portal/reference.ts';

const FILE = '/srv/api/orders.yaml';
const url = (name: string) => pathToFileURL(`/srv/api/${name}`).href;

const ROOT = {
  openapi: '3.1.0',
  info: { title: 'Orders', version: '1', 'x-owner': 'team-internal' },
  'x-backend-secret': 'hunter2',
  servers: [{ url: 'http://orders.internal.corp:9200/v1' }],
  security: [{ oauth: [] }],
  tags: [{ name: 'orders' }, { name: 'admin' }],
  paths: {
    '/orders': {
      servers: [{ url: 'http://10.1.2.3:9200' }],
      get: {
        operationId: 'listOrders',
        tags: ['orders'],
        servers: [{ url: 'http://10.1.2.4' }],
        'x-internal-upstream': 'http://10.1.2.3:9200',
        responses: {
          '200': {
            description: 'ok',
            headers: { 'x-total-count': { schema: { type: 'integer' } } },
            content: { 'application/json': { schema: { $ref: './schemas.yaml#/components/schemas/OrderList' }, example: { 'x-kept': 'data' } } },
          },
        },
      },
      post: {
        operationId: 'createOrder',
        tags: ['orders'],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/NewOrder' } } } },
        responses: { '201': { description: 'made' } },
      },
    },
    '/purge': { $ref: './admin-paths.yaml#/purge' },
  },
  components: {
    schemas: { NewOrder: { type: 'object' }, Order: { type: 'object', properties: { id: { type: 'string' }, 'x-id': { type: 'string' } } } },
    securitySchemes: { oauth: { type: 'oauth2', flows: {} }, internalKey: { type: 'apiKey', in: 'header', name: 'X-Internal' } },
  },
};
const FILES = new Map<string, unknown>([
  [url('orders.yaml'), ROOT],
  [
    url('schemas.yaml'),
    {
      components: { schemas: { OrderList: { type: 'array', items: { $ref: '../api/orders.yaml#/components/schemas/Order' } }, Node: { properties: { next: { $ref: '#/components/schemas/Node' } } } } },
    },
  ],
  [url('admin-paths.yaml'), { purge: { post: { operationId: 'adminPurge', description: 'INTERNAL purge at admin.internal.corp:7000', responses: {} } } }],
]);

const only = (path: string, method: string) => ({ operation: { path, method }, route: { path: `/v1${path}` } }) as unknown as ReferenceOperation;

test("one file: the product's operations only, the gateway as server, servers of paths and operations and extensions left out, the components used (brought from beside it) and no others", () => {
  const served = servedDocument({ file: FILE, files: FILES }, 'https://api.example.com', [only('/orders', 'GET')]);
  assert.deepEqual(served, {
    openapi: '3.1.0',
    info: { title: 'Orders', version: '1' },
    servers: [{ url: 'https://api.example.com/v1', description: 'the gateway' }],
    security: [{ oauth: [] }],
    tags: [{ name: 'orders' }],
    paths: {
      '/orders': {
        get: {
          operationId: 'listOrders',
          tags: ['orders'],
          responses: {
            '200': {
              description: 'ok',
              headers: { 'x-total-count': { schema: { type: 'integer' } } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderList' }, example: { 'x-kept': 'data' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        OrderList: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
        Order: { type: 'object', properties: { id: { type: 'string' }, 'x-id': { type: 'string' } } },
      },
      securitySchemes: { oauth: { type: 'oauth2', flows: {} } },
    },
  });
  const text = JSON.stringify(served);
  for (const secret of ['hunter2', 'internal.corp', '10.1.2.', 'adminPurge', 'NewOrder', 'internalKey']) assert.ok(!text.includes(secret), secret);
});

test('a schema of another file that names itself is brought in once, and a path item of another file is put in place', () => {
  const files = new Map(FILES);
  files.set(url('orders.yaml'), {
    ...ROOT,
    paths: {
      '/nodes': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: 'schemas.yaml#/components/schemas/Node' } } } } } } },
      '/purge': { $ref: './admin-paths.yaml#/purge' },
    },
  });
  const served = servedDocument({ file: FILE, files }, 'https://api.example.com', [only('/nodes', 'GET'), only('/purge', 'POST')]) as { paths: Record<string, unknown>; components: unknown };
  assert.deepEqual(served.components, { schemas: { Node: { properties: { next: { $ref: '#/components/schemas/Node' } } } }, securitySchemes: { oauth: { type: 'oauth2', flows: {} } } });
  assert.deepEqual(served.paths['/purge'], { post: { operationId: 'adminPurge', description: 'INTERNAL purge at admin.internal.corp:7000', responses: {} } });
});
