// listen.maxBodySize bounds every request body: a Content-Length over it is refused up front, a
// chunked body the moment it grows past it, on routes with and without validateRequest. The
// upstream never receives the end of a body that was refused: it sees its request cut off.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, closeServer, listenOn, startTestGateway, tokenRequest, type TestGateway } from '../helpers.ts';

const LIMIT = 1000;

/** The problem body of a 413, whichever check gave it. */
const tooLarge = (limit: number) => ({ type: 'about:blank', title: 'Payload Too Large', status: 413, detail: `request body exceeds ${limit} bytes`, code: 'payload_too_large' });

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The request's 'end': the upstream read a complete request. */
  ended: boolean;
  /** req.complete when the request closed. */
  complete: boolean | undefined;
  closed: Promise<void>;
}

/** An upstream that records each request as it arrives, byte by byte; /v1/early answers before reading the body. */
async function startRecorder(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let onClosed!: () => void;
    const entry: Seen = { url: req.url ?? '', headers: req.headers, body: '', ended: false, complete: undefined, closed: new Promise((r) => (onClosed = r)) };
    seen.push(entry);
    if (req.url === '/v1/early') res.writeHead(200, { 'content-type': 'text/plain' }).write('started');
    req.setEncoding('latin1');
    req.on('data', (chunk: string) => (entry.body += chunk));
    req.on('end', () => {
      entry.ended = true;
      if (res.headersSent) res.end('done');
      else {
        const json = JSON.stringify({ received: entry.body.length });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
      }
    });
    req.on('error', () => {});
    req.on('close', () => {
      entry.complete = req.complete;
      onClosed();
    });
  });
  const url = await listenOn(server);
  return { url, seen, close: () => closeServer(server) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 3000; !check(); await sleep(5)) if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
}

interface Exchange {
  /** Sends one chunk of the chunked body; '' sends the last chunk. */
  chunk(data: string): void;
  /** What the gateway sent so far. */
  received(): string;
  /** Resolves when the connection closes, with everything the gateway sent; rejects if it stays open 5 s. */
  closed: Promise<string>;
  destroy(): void;
}

/** A raw keep-alive connection that sends a request head and then its body chunk by chunk, when told. */
function open(url: string, head: string[]): Exchange {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.write([...head, '', ''].join('\r\n'));
  let answer = '';
  socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
  // A reset after the answer is a close too: the answer is what counts.
  socket.on('error', () => {});
  return {
    chunk: (data) => void socket.write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`),
    received: () => answer,
    // A gateway that keeps the connection open fails the test in seconds, not at the test timeout.
    closed: new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the gateway kept the connection open; it sent: ${answer}`));
        socket.destroy();
      }, 5000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(answer);
      });
    }),
    destroy: () => socket.destroy(),
  };
}

function parse(answer: string): { status: number; headers: Record<string, string>; body: string } {
  const split = answer.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = answer.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: answer.slice(split + 4) };
}

describe('bounded request bodies (listen.maxBodySize)', () => {
  let upstream: Awaited<ReturnType<typeof startRecorder>>;
  let gw: TestGateway;
  let token: string;
  let helloToken: string;

  before(async () => {
    upstream = await startRecorder();
    const route = (name: string, policies = '') => `  ${name}:\n    method: POST\n    path: /v1/${name}\n    upstream: up\n${policies}`;
    gw = await startTestGateway({
      listen: `  maxBodySize: ${LIMIT}\n`,
      upstreams: `  up:\n    url: ${upstream.url}\n    timeout: 5s\n`,
      routes:
        route('upload') +
        route('early') +
        // A body transform holds the answer: the call goes through undici's request(), not stream().
        route('held', '    policies:\n      - transformResponse: { body: { remove: [/received] } }\n') +
        route('validated', '    policies:\n      - validateRequest: { maxBodySize: 500 }\n') +
        route('validated-large', '    policies:\n      - validateRequest: { maxBodySize: 4000 }\n'),
      products: '  uploads:\n    routes: [upload, early, held, validated, validated-large]\n',
    });
    token = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('uploads'))).body.access_token;
    helloToken = (await tokenRequest(gw.url, { grant_type: 'client_credentials' }, await gw.client('hello'))).body.access_token;
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const chunkedHead = (path: string, bearerToken = token, type = 'application/octet-stream') => [
    `POST ${path} HTTP/1.1`,
    'Host: gw.test',
    `Authorization: Bearer ${bearerToken}`,
    `Content-Type: ${type}`,
    'Transfer-Encoding: chunked',
  ];

  test('a chunked body of exactly maxBodySize on a route without validateRequest reaches the upstream whole, streamed', async () => {
    const seen = upstream.seen.length;
    const body = ['a'.repeat(300), 'b'.repeat(300), 'c'.repeat(300), 'd'.repeat(100)];
    const exchange = open(gw.url, [...chunkedHead('/v1/upload'), 'Connection: close']);
    exchange.chunk(body[0]!);
    // The first chunk arrives before the second is sent: nothing holds the body back.
    await until(() => upstream.seen[seen]?.body.length === 300, 'the upstream has the first chunk');
    for (const part of body.slice(1)) exchange.chunk(part);
    exchange.chunk('');
    const answer = parse(await exchange.closed);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { received: LIMIT });
    const got = upstream.seen[seen]!;
    assert.equal(got.body, body.join(''));
    assert.equal(got.ended, true);
    assert.equal(got.headers['transfer-encoding'], 'chunked');
  });

  test('a body with a Content-Length within the limit is forwarded as it is, with its length', async () => {
    const res = await call(`${gw.url}/v1/upload`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'text/plain' }, body: 'x'.repeat(LIMIT) });
    assert.equal(res.status, 200);
    const got = upstream.seen.at(-1)!;
    assert.equal(got.headers['content-length'], String(LIMIT));
    assert.equal(got.headers['transfer-encoding'], undefined);
    assert.equal(got.body, 'x'.repeat(LIMIT));
    assert.equal(got.ended, true);
  });

  test('a chunked body growing past maxBodySize: 413, the connection closed, and the upstream request cut off before its end', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, chunkedHead('/v1/upload'));
    exchange.chunk('a'.repeat(400));
    await until(() => upstream.seen[seen]?.body.length === 400, 'the upstream has the first chunk');
    exchange.chunk('b'.repeat(400));
    await until(() => upstream.seen[seen]!.body.length === 800, 'the upstream has the second chunk');
    // 1200 bytes: one past the limit is enough, the whole chunk is refused.
    exchange.chunk('c'.repeat(400));
    // The gateway closes the keep-alive connection itself.
    const answer = parse(await exchange.closed);
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.equal(answer.headers['content-type'], 'application/problem+json');
    assert.deepEqual(JSON.parse(answer.body), tooLarge(LIMIT));
    const got = upstream.seen[seen]!;
    await got.closed;
    assert.equal(got.ended, false, 'the upstream never read the end of the body');
    assert.equal(got.complete, false);
    assert.equal(got.body, 'a'.repeat(400) + 'b'.repeat(400), 'the chunk that crossed the limit was not forwarded');
    assert.equal(upstream.seen.length, seen + 1);
    const line = gw.logs.filter((l) => l.includes('"path":"/v1/upload"')).at(-1);
    assert.ok(line?.includes('"status":413') && line.includes('"error":"payload_too_large"'), line);
  });

  test('an answer given before the body was read closes the connection: a client sending without end is cut off, not read for a minute', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, ['POST /v1/upload HTTP/1.1', 'Host: gw.test', 'Transfer-Encoding: chunked']);
    const megabyte = 'x'.repeat(1 << 20);
    const sending = setInterval(() => exchange.chunk(megabyte), 5);
    try {
      const received = await exchange.closed;
      // Closed with bytes unread, the socket may be reset before the client reads the answer.
      if (received !== '') {
        const answer = parse(received);
        assert.equal(answer.status, 401, received);
        assert.equal(answer.headers.connection, 'close');
      }
    } finally {
      clearInterval(sending);
    }
    assert.equal(upstream.seen.length, seen, 'the upstream was not called');
  });

  test('a body read to its end keeps the connection alive for the next request', async () => {
    const exchange = open(gw.url, chunkedHead('/v1/upload'));
    exchange.chunk('a'.repeat(10));
    exchange.chunk('');
    await until(() => exchange.received().includes('\r\n\r\n'), 'the answer');
    assert.equal(parse(exchange.received()).status, 200);
    assert.equal(parse(exchange.received()).headers.connection, undefined, 'HTTP/1.1: kept alive');
    assert.equal(await Promise.race([exchange.closed.then(() => 'closed'), sleep(300).then(() => 'open')]), 'open');
    exchange.destroy();
  });

  test('RFC 9112 §6.1: a transfer coding other than chunked is refused with 501, and never reaches the upstream', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, ['POST /v1/upload HTTP/1.1', 'Host: gw.test', `Authorization: Bearer ${token}`, 'Transfer-Encoding: gzip, chunked']);
    exchange.chunk('{"a":1}');
    exchange.chunk('');
    const answer = parse(await exchange.closed);
    assert.equal(answer.status, 501);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(JSON.parse(answer.body), { type: 'about:blank', title: 'Not Implemented', status: 501, detail: 'only the chunked transfer coding is supported', code: 'not_implemented' });
    assert.equal(upstream.seen.length, seen);
  });

  test('the same on a route whose answer is held for a response policy', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, chunkedHead('/v1/held'));
    exchange.chunk('a'.repeat(600));
    await until(() => upstream.seen[seen]?.body.length === 600, 'the upstream has the first chunk');
    exchange.chunk('b'.repeat(600));
    const answer = parse(await exchange.closed);
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(JSON.parse(answer.body), tooLarge(LIMIT));
    const got = upstream.seen[seen]!;
    await got.closed;
    assert.equal(got.ended, false);
    assert.equal(got.body, 'a'.repeat(600));

    const fits = open(gw.url, [...chunkedHead('/v1/held'), 'Connection: close']);
    fits.chunk('a'.repeat(LIMIT));
    fits.chunk('');
    const whole = parse(await fits.closed);
    assert.equal(whole.status, 200);
    assert.deepEqual(JSON.parse(whole.body), {});
    assert.equal(upstream.seen.at(-1)!.ended, true);
  });

  test('the limit crossed after the upstream answered: the client connection is cut, the upstream request too', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, chunkedHead('/v1/early'));
    exchange.chunk('a'.repeat(600));
    await until(() => exchange.received().includes('started'), 'the answer has begun');
    assert.match(exchange.received(), /^HTTP\/1\.1 200 OK\r\n/);
    exchange.chunk('b'.repeat(600));
    const answer = await exchange.closed;
    assert.ok(!answer.includes('413') && !answer.includes('done'), answer);
    // The chunked answer never got its last chunk: the client can tell it was cut.
    assert.ok(!answer.endsWith('0\r\n\r\n'), answer);
    const got = upstream.seen[seen]!;
    await got.closed;
    assert.equal(got.ended, false);
    assert.equal(got.body, 'a'.repeat(600));
  });

  test('a Content-Length over maxBodySize: the same 413 at once, and the upstream is not called', async () => {
    const seen = upstream.seen.length;
    const exchange = open(gw.url, [`POST /v1/upload HTTP/1.1`, 'Host: gw.test', `Authorization: Bearer ${token}`, 'Content-Type: text/plain', `Content-Length: ${LIMIT + 1}`]);
    const answer = parse(await exchange.closed);
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(JSON.parse(answer.body), tooLarge(LIMIT));
    assert.equal(upstream.seen.length, seen);
  });

  test('validateRequest with a smaller maxBodySize: its own 413 for a chunked body, and a body within it forwarded whole', async () => {
    const seen = upstream.seen.length;
    const refused = open(gw.url, chunkedHead('/v1/validated'));
    refused.chunk('a'.repeat(300));
    refused.chunk('b'.repeat(300));
    const answer = parse(await refused.closed);
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(JSON.parse(answer.body), tooLarge(500));
    assert.equal(upstream.seen.length, seen, 'a body validateRequest reads is held: the upstream was not called');

    const fits = open(gw.url, [...chunkedHead('/v1/validated'), 'Connection: close']);
    fits.chunk('a'.repeat(250));
    fits.chunk('b'.repeat(250));
    fits.chunk('');
    assert.equal(parse(await fits.closed).status, 200);
    assert.equal(upstream.seen.at(-1)!.body, 'a'.repeat(250) + 'b'.repeat(250));
    assert.equal(upstream.seen.at(-1)!.headers['content-length'], '500');
  });

  test('validateRequest with a larger maxBodySize, the echo target and the form check read no more than listen.maxBodySize', async () => {
    const seen = upstream.seen.length;
    const cases: [string, string, string][] = [
      ['/v1/validated-large', token, 'application/octet-stream'],
      ['/v1/echo', helloToken, 'application/octet-stream'],
      // A form body is read to look for a second token; under its own 64 KiB, the listener's bound.
      ['/v1/upload', token, 'application/x-www-form-urlencoded'],
    ];
    for (const [path, bearerToken, type] of cases) {
      const exchange = open(gw.url, chunkedHead(path, bearerToken, type));
      exchange.chunk('a'.repeat(600));
      exchange.chunk('b'.repeat(600));
      const answer = parse(await exchange.closed);
      assert.equal(answer.status, 413, path);
      assert.deepEqual(JSON.parse(answer.body), tooLarge(LIMIT), path);
    }
    assert.equal(upstream.seen.length, seen);
  });

  test("a client leaving mid-body: the upstream request is cut off; logged as the client's doing, not an upstream failure", async () => {
    const seen = upstream.seen.length;
    const logged = gw.logs.length;
    const exchange = open(gw.url, chunkedHead('/v1/upload'));
    exchange.chunk('a'.repeat(100));
    await until(() => upstream.seen[seen]?.body.length === 100, 'the upstream has the first chunk');
    exchange.destroy();
    const got = upstream.seen[seen]!;
    await got.closed;
    assert.equal(got.ended, false);
    await until(() => gw.logs.slice(logged).some((l) => l.includes('"path":"/v1/upload"')), 'the access line');
    const lines = gw.logs.slice(logged).join('');
    assert.match(lines, /"error":"request_aborted"/);
    assert.doesNotMatch(lines, /"level":50/);
    // The target was not marked as failing.
    assert.equal((await call(`${gw.url}/v1/upload`, { method: 'POST', headers: bearer(token), body: 'ok' })).status, 200);
  });
});
