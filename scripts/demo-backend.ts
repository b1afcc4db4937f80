// A small backend for the example's `orders` product: it shows who the gateway says is calling,
// and creates orders (scripts/demo-backend/server.ts).
// Usage: npm run demo:backend [-- --port 9200]
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createOrdersBackend } from './demo-backend/server.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: process.env.ORDERS_PORT ?? '9200' } } });

const server = createOrdersBackend();
server.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`demo backend on http://127.0.0.1:${port}`);
});
