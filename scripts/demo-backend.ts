// A small backend for the example's `orders` product: it shows who the gateway says is calling.
// Usage: npm run demo:backend [-- --port 9200]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: process.env.ORDERS_PORT ?? '9200' } } });

const orders = [
  { id: '1', item: 'teapot', quantity: 1 },
  { id: '2', item: 'cups', quantity: 6 },
];

const server = createServer((req, res) => {
  const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const subject = req.headers['x-gateway-subject'] ?? null;
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/v1/orders') return send(200, { subject, orders });
  const match = /^\/v1\/orders\/([^/]+)$/.exec(path ?? '');
  const order = match && orders.find((o) => o.id === match[1]);
  if (order) return send(200, { subject, order });
  send(404, { error: 'no such order' });
});

server.listen(Number(values.port), '127.0.0.1', () => console.log(`demo backend on http://127.0.0.1:${values.port}`));
