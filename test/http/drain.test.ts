// The drain of a stop, byte by byte on raw connections: an answer begun during it says
// `Connection: close` (with a body or not), a request still being sent when it begins is answered
// rather than reset, and a connection that never finishes its TLS handshake does not outlive it.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { listen } from '../../src/http/listener.ts';
import { startTestGateway, tokenRequest } from '../helpers.ts';

/** A raw connection that collects what it reads, and resolves answers as they complete. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let text = '';
  let isClosed = false;
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  socket.on('error', () => {});
  return {
    socket,
    closed,
    /** The next whole answer (headers and a Content-Length body) read from the connection. */
    async answer(): Promise<string> {
      for (;;) {
        const end = text.indexOf('\r\n\r\n');
        if (end !== -1) {
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
          if (text.length >= end + 4 + length) {
            const whole = text.slice(0, end + 4 + length);
            text = text.slice(end + 4 + length);
            return whole;
          }
        }
        if (isClosed) throw new Error(`the connection closed with ${JSON.stringify(text)} unread`);
        await sleep(10);
      }
    },
  };
}

async function gatewayWithToken() {
  const gw = await startTestGateway();
  const app = await gw.client('hello');
  const token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, app)).body.access_token as string;
  return { gw, token, port: Number(new URL(gw.url).port) };
}

const FIXTURES = path.join(import.meta.dirname, '../fixtures');

const post = (token: string, body: string) => `POST /v1/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

test('an answer to a request with a body, begun during the drain, says Connection: close', async () => {
  const { gw, token, port } = await gatewayWithToken();
  const conn = rawConnection(port);
  conn.socket.write(post(token, 'one'));
  const first = await conn.answer();
  assert.match(first, /^HTTP\/1\.1 200 /);
  assert.doesNotMatch(first, /\r\nconnection: close/i);
  const closing = gw.close();
  conn.socket.write(post(token, 'two'));
  const second = await conn.answer();
  assert.match(second, /^HTTP\/1\.1 200 /);
  assert.match(second, /\r\nconnection: close\r\n/i);
  await conn.closed;
  await closing;
});

test('a request still being sent when the drain begins is answered, not reset', async () => {
  const { gw, token, port } = await gatewayWithToken();
  const conn = rawConnection(port);
  conn.socket.write(post(token, 'one'));
  await conn.answer();
  // Idle long enough that a drain would close it, then half a request, then the drain.
  await sleep(1500);
  const whole = post(token, 'two');
  conn.socket.write(whole.slice(0, 40));
  await sleep(100);
  const closing = gw.close();
  await sleep(800);
  conn.socket.write(whole.slice(40, 90));
  await sleep(800);
  conn.socket.write(whole.slice(90));
  const answer = await conn.answer();
  assert.match(answer, /^HTTP\/1\.1 200 /);
  assert.match(answer, /\r\nconnection: close\r\n/i);
  await closing;
});

test('a connection that never finishes its TLS handshake is closed when the drain ends', async () => {
  const gw = await startTestGateway({ listen: `  tls: { cert: ${path.join(FIXTURES, 'localhost.crt')}, key: ${path.join(FIXTURES, 'localhost.key')} }\n` });
  const conn = rawConnection(Number(new URL(gw.url).port));
  await new Promise((resolve) => conn.socket.once('connect', resolve));
  let closed = false;
  void conn.closed.then(() => (closed = true));
  await gw.close();
  // Before the fix it stayed open until the client gave up.
  await sleep(100);
  assert.equal(closed, true);
});

/** A bare listener's timeouts, none of which these tests reach. */
const TIMEOUTS = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5000, lingering: { ms: 5000, idleMs: 1000, bytes: 1 << 20 } };

test('a drain that ends with answers under way says how many it cut: a connection idle between calls is not one', async () => {
  // /hang is never answered; anything else is, and its connection stays open, idle.
  const listener = await listen(
    async (req, res) => {
      if (req.url !== '/hang') res.end('ok');
    },
    '127.0.0.1',
    0,
    { timeouts: TIMEOUTS, onError: () => {} },
  );
  const idle = rawConnection(listener.port);
  idle.socket.write('GET /ok HTTP/1.1\r\nHost: x\r\n\r\n');
  await idle.answer();
  const hung = [rawConnection(listener.port), rawConnection(listener.port)];
  for (const conn of hung) conn.socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
  await sleep(100);
  assert.equal(await listener.drain(300), 2);
  await Promise.all([idle.closed, ...hung.map((c) => c.closed)]);
});

test('a drain whose connections all close in time has cut none', async () => {
  const listener = await listen(async (_req, res) => void res.end('ok'), '127.0.0.1', 0, { timeouts: TIMEOUTS, onError: () => {} });
  const conn = rawConnection(listener.port);
  conn.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await conn.answer();
  assert.equal(await listener.drain(10_000), 0);
});
