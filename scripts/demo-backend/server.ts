// The demo backend of the example's `orders` product, as a server that has not started listening:
// scripts/demo-backend.ts runs it, tests listen on a port of their own. Orders live in memory.
//   GET  /v1/orders       200 {subject, orders}
//   GET  /v1/orders/{id}  200 {subject, order} | 404
//   POST /v1/orders       {"item": "…", "quantity": n ≥ 1}  →  201 {subject, order} | 400 | 413
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface Order {
  id: string;
  item: string;
  quantity: number;
}

/** The backend reads no more than this itself, whatever the gateway in front allows. */
export const BODY_LIMIT = 64 * 1024;

const TOO_LARGE = Symbol('too large');

/** The whole body, or TOO_LARGE past BODY_LIMIT (then the rest is discarded and the connection closes). */
function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE> {
  if (Number(req.headers['content-length'] ?? 0) > BODY_LIMIT) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        req.removeAllListeners('data').resume();
        resolve(TOO_LARGE);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

/** The new order's item and quantity, or undefined when the body is not {item: non-empty string, quantity: integer ≥ 1}. */
function newOrder(body: Buffer): { item: string; quantity: number } | undefined {
  let input: unknown;
  try {
    input = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const { item, quantity } = input as Record<string, unknown>;
  if (typeof item !== 'string' || item === '' || !Number.isSafeInteger(quantity) || (quantity as number) < 1) return undefined;
  return { item, quantity: quantity as number };
}

export function createOrdersBackend(): Server {
  const orders: Order[] = [
    { id: '1', item: 'teapot', quantity: 1 },
    { id: '2', item: 'cups', quantity: 6 },
  ];
  let lastId = orders.length;

  return createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      const json = JSON.stringify(body);
      if (!res.headersSent) res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
    };
    const subject = req.headers['x-gateway-subject'] ?? null;
    const path = (req.url ?? '/').split('?')[0]!;

    async function create(): Promise<void> {
      const body = await readBody(req);
      if (body === TOO_LARGE) return send(413, { error: `the body is larger than ${BODY_LIMIT} bytes` }, { connection: 'close' });
      const fields = newOrder(body);
      if (fields === undefined) return send(400, { error: 'the body must be JSON: {"item": a non-empty string, "quantity": an integer of at least 1}' });
      const order = { id: String(++lastId), ...fields };
      orders.push(order);
      send(201, { subject, order }, { location: `/v1/orders/${order.id}` });
    }

    if (path === '/v1/orders') {
      if (req.method === 'GET') return send(200, { subject, orders });
      if (req.method === 'POST') {
        // Whatever a request holds, the server answers it and keeps serving the next.
        return void create().catch(() => send(400, { error: 'the body could not be read' }));
      }
      return send(405, { error: 'method not allowed' }, { allow: 'GET, POST' });
    }
    const match = /^\/v1\/orders\/([^/]+)$/.exec(path);
    const order = match && req.method === 'GET' ? orders.find((o) => o.id === match[1]) : undefined;
    if (order !== undefined) return send(200, { subject, order });
    send(404, { error: 'no such order' });
  });
}
