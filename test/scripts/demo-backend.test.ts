// scripts/demo-backend.ts as `npm run demo:backend` runs it: a child process, over real HTTP.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BODY_LIMIT } from '../../scripts/demo-backend/server.ts';
import { call, type Answer } from '../helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BAD_BODY = { error: 'the body must be JSON: {"item": a non-empty string, "quantity": an integer of at least 1}' };

/** Writes `text` on a fresh connection; resolves to what came back once the server closed it. */
function raw(url: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(answer));
  });
}

describe('demo backend', () => {
  let child: ChildProcess;
  let url: string;

  before(async () => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    delete env.ORDERS_PORT;
    child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-backend.ts', '--port', '0'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /on (http:\/\/\S+)$/.exec(line);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the demo backend exited (${code})`)));
    });
  });
  after(() => {
    child.kill('SIGKILL');
  });

  const subject = { 'x-gateway-subject': 'user-1001' };
  const create = (body: string): Promise<Answer> => call(`${url}/v1/orders`, { method: 'POST', headers: { ...subject, 'content-type': 'application/json' }, body });

  test('POST /v1/orders creates an order with the next id and names the subject; GET lists and finds it', async () => {
    const first = await create('{"item":"kettle","quantity":2}');
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('location'), '/v1/orders/3');
    assert.deepEqual(first.body, { subject: 'user-1001', order: { id: '3', item: 'kettle', quantity: 2 } });
    const second = await create('{"item":"saucer","quantity":6,"note":"ignored"}');
    assert.deepEqual(second.body, { subject: 'user-1001', order: { id: '4', item: 'saucer', quantity: 6 } });
    assert.deepEqual((await call(`${url}/v1/orders/4`, { headers: subject })).body, { subject: 'user-1001', order: { id: '4', item: 'saucer', quantity: 6 } });
    const list = await call(`${url}/v1/orders`, { headers: subject });
    assert.deepEqual(
      list.body.orders.map((o: { id: string }) => o.id),
      ['1', '2', '3', '4'],
    );
  });

  test('a body that is not {item, quantity ≥ 1} is 400, and the server keeps serving', async () => {
    for (const body of [
      '',
      'not json',
      'null',
      '[]',
      '"kettle"',
      '{"item":"kettle"}',
      '{"item":"","quantity":1}',
      '{"item":7,"quantity":1}',
      '{"item":"kettle","quantity":0}',
      '{"item":"kettle","quantity":"2"}',
      '{"item":"kettle","quantity":2.5}',
    ]) {
      const res = await create(body);
      assert.equal(res.status, 400, body);
      assert.deepEqual(res.body, BAD_BODY);
    }
    assert.equal((await create('{"item":"tray","quantity":1}')).status, 201);
    const other = await call(`${url}/v1/orders`, { method: 'DELETE' });
    assert.equal(other.status, 405);
    assert.equal(other.headers.get('allow'), 'GET, POST');
  });

  test(`a body over ${BODY_LIMIT} bytes is 413 and the connection closes, with a Content-Length or chunked`, async () => {
    const head = ['POST /v1/orders HTTP/1.1', 'Host: backend.test', 'Content-Type: application/json'];
    const declared = await raw(url, [...head, `Content-Length: ${BODY_LIMIT + 1}`, '', ''].join('\r\n'));
    assert.match(declared, /^HTTP\/1\.1 413 /);
    assert.match(declared, /\r\nconnection: close\r\n/i);
    assert.ok(declared.endsWith(JSON.stringify({ error: `the body is larger than ${BODY_LIMIT} bytes` })), declared);
    const chunk = 'x'.repeat(BODY_LIMIT + 1);
    const chunked = await raw(url, [...head, 'Transfer-Encoding: chunked', '', `${chunk.length.toString(16)}\r\n${chunk}\r\n`].join('\r\n'));
    assert.match(chunked, /^HTTP\/1\.1 413 /);
    assert.match(chunked, /\r\nconnection: close\r\n/i);
    assert.equal((await create('{"item":"tray","quantity":1}')).status, 201);
  });
});
