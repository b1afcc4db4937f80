// A client that leaves while its body is still being forwarded, after the upstream has begun to
// answer: undici 8's stream() reported the request's error twice, and the second throw was
// uncaught, so one client could stop the gateway. Every streamed body now reaches undici through
// a counter that never errors, and failures through the abort signal (src/http/body.ts).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, closeServer, listenOn, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

let gw: TestGateway;
let token: string;
let helloToken: string;
// Answers at once, reads the body, and ends its answer only seconds later.
const upstream = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).write('started');
  req.resume();
  setTimeout(() => res.end('done'), 3000).unref();
});

before(async () => {
  const url = await listenOn(upstream);
  gw = await startTestGateway({ upstreamUrl: url, routes: '  upload:\n    method: POST\n    path: /v1/upload\n    upstream: backend\n', products: '  uploads:\n    routes: [upload]\n' });
  token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('uploads'))).body.access_token;
  helloToken = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('hello'))).body.access_token;
});
after(async () => {
  await gw.close();
  upstream.closeAllConnections();
  await closeServer(upstream);
});

/** Starts an upload that declares more than it sends, and resolves once the answer has begun. */
async function startUpload(length: string): Promise<ReturnType<typeof connect>> {
  const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(`POST /v1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${length}\r\n\r\n`);
  socket.write(length.startsWith('Content') ? 'a'.repeat(1000) : `3e8\r\n${'a'.repeat(1000)}\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  return socket;
}

for (const length of ['Content-Length: 100000', 'Transfer-Encoding: chunked']) {
  test(`client-leaves (${length}): the client leaving mid-body, then the upstream failing mid-answer, and the gateway still serves`, async () => {
    const left = await startUpload(length);
    await sleep(500);
    left.destroy();
    const cut = await startUpload(length);
    await sleep(300);
    upstream.closeAllConnections();
    await sleep(500);
    cut.destroy();
    const res = await call(`${gw.url}/v1/hello`, { headers: bearer(helloToken) });
    assert.equal(res.status, 200, 'still serving');
  });
}
