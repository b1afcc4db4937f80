// Lingering close: an answer given before the request's body was read (401, 413) reaches clients
// that stream their body, because the gateway goes on reading and throwing away what they still
// send instead of resetting the connection under them; and only for as long and as much as
// listen.lingeringTime, lingeringTimeout and lingeringBytes allow. The gateway runs as a process of
// its own, as in production (in one process with its client, the reset hid behind timing).
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { configYaml, tempDir } from '../helpers.ts';
import { gateway, serve, type Served } from './children.ts';

const run = promisify(execFile);
const MIB = 1 << 20;
const BODY_MIB = 16;
const TRIES = 5;
const hasGo = spawnSync('go', ['version']).status === 0;

/** A Go client (net/http) posting `BODY_MIB` MiB of spaces, as a stream of unknown length; prints the status and body. */
const GO_CLIENT = `package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

type spaces struct{ left int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > s.left {
		n = s.left
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	s.left -= n
	return int(n), nil
}

func main() {
	req, _ := http.NewRequest("POST", os.Args[1], io.NopCloser(&spaces{${BODY_MIB} << 20}))
	req.Header.Set("Content-Type", "application/json")
	if len(os.Args) > 2 {
		req.Header.Set("Authorization", os.Args[2])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	body, _ := io.ReadAll(res.Body)
	fmt.Printf("%d %s", res.StatusCode, body)
}
`;

/** A Python client (requests) posting the same as a generator, sent chunked. */
const PYTHON_CLIENT = `import sys, requests
def body():
    for _ in range(${BODY_MIB}):
        yield b' ' * ${MIB}
headers = {'Content-Type': 'application/json'}
if len(sys.argv) > 2:
    headers['Authorization'] = sys.argv[2]
r = requests.post(sys.argv[1], data=body(), headers=headers)
print(r.status_code, r.text, end='')
`;

describe('lingering close, with clients that stream their body', () => {
  const dir = tempDir();
  let served: Served;
  let token: string;
  let validating: string;
  const config = path.join(dir.dir, 'gateway.yaml');

  before(async () => {
    writeFileSync(
      config,
      configYaml({
        listen: `  maxBodySize: ${MIB}`,
        routes: '  validated:\n    method: POST\n    path: /v1/validated\n    upstream: echo\n    policies:\n      - validateRequest:\n          body: { type: object }\n',
        products: '  validating:\n    routes: [validated]\n',
      }),
    );
    await gateway(['admin', 'developers', 'create', '--config', config, '--email', 'dev@example.com', '--name', 'Dev']);
    const tokenOf = async (product: string) => {
      const app = JSON.parse((await gateway(['admin', 'apps', 'create', '--config', config, '--developer', 'dev@example.com', '--name', product, '--product', product, '--json'])).stdout);
      const res = await fetch(`${served.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    served = await serve(config);
    token = await tokenOf('hello');
    validating = await tokenOf('validating');
  });
  after(async () => {
    await served?.stop();
    dir.remove();
  });

  /** The early answers and what each says. */
  const cases = () =>
    [
      ['no token', undefined, 401, 'a bearer token is required'],
      ['a wrong token', 'Bearer gwat_not-a-token', 401, 'the access token is invalid, expired or revoked'],
      ['a body over listen.maxBodySize', `Bearer ${token}`, 413, `request body exceeds ${MIB} bytes`],
    ] as const;

  test("Node's fetch with a stream body gets each answer, every time", async () => {
    const body = () => {
      let sent = 0;
      return new ReadableStream({
        pull(controller) {
          if (sent++ < BODY_MIB) controller.enqueue(Buffer.alloc(MIB, 0x20));
          else controller.close();
        },
      });
    };
    for (const [name, authorization, status, detail] of cases()) {
      for (let i = 0; i < TRIES; i++) {
        const res = await fetch(`${served.url}/v1/echo`, {
          method: 'POST',
          body: body(),
          duplex: 'half',
          headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        } as RequestInit);
        assert.equal(res.status, status, name);
        assert.equal(res.headers.get('content-type'), 'application/problem+json', name);
        assert.equal(((await res.json()) as { detail: string }).detail, detail, name);
      }
    }
  });

  test('a raw client sending a chunked JSON body in 1 MiB chunks to a validated route gets the 413 problem, not a reset', async () => {
    const { port } = new URL(served.url);
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true }, async () => {
        socket.write(`POST /v1/validated HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${validating}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
        const chunk = Buffer.alloc(MIB, 0x20);
        chunk[0] = 0x5b;
        for (let i = 0; i < BODY_MIB && !socket.destroyed; i++) {
          socket.write(`${MIB.toString(16)}\r\n`);
          socket.write(chunk);
          socket.write('\r\n');
          await new Promise((r) => setTimeout(r, 10));
        }
        if (!socket.destroyed) socket.end('0\r\n\r\n');
      });
      socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
      socket.on('error', (err: NodeJS.ErrnoException) => (received += ` [${err.code}]`));
      socket.on('close', () => resolve(received));
    });
    assert.match(answer, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
    assert.match(answer, /\r\ncontent-type: application\/problem\+json\r\n/);
    assert.ok(answer.includes(`"detail":"request body exceeds ${MIB} bytes"`), answer);
  });

  test("Python's requests with a generator body gets each answer", async () => {
    for (const [name, authorization, status, detail] of cases()) {
      const { stdout } = await run('/usr/bin/python3', ['-c', PYTHON_CLIENT, `${served.url}/v1/echo`, ...(authorization === undefined ? [] : [authorization])]);
      const [code, ...rest] = stdout.split(' ');
      assert.equal(Number(code), status, `${name}: ${stdout}`);
      assert.equal(JSON.parse(rest.join(' ')).detail, detail, name);
    }
  });

  test("Go's net/http with a body of unknown length gets each answer", { skip: hasGo ? false : 'no go here (.ci/run installs golang-go)' }, async () => {
    const source = path.join(dir.dir, 'client.go');
    writeFileSync(source, GO_CLIENT);
    const binary = path.join(dir.dir, 'client');
    await run('go', ['build', '-o', binary, source], { env: { ...process.env, GOCACHE: path.join(dir.dir, 'go-cache'), GOPATH: path.join(dir.dir, 'go'), HOME: dir.dir }, cwd: dir.dir });
    for (const [name, authorization, status, detail] of cases()) {
      const { stdout } = await run(binary, [`${served.url}/v1/echo`, ...(authorization === undefined ? [] : [authorization])]);
      const [code, ...rest] = stdout.split(' ');
      assert.equal(Number(code), status, `${name}: ${stdout}`);
      assert.equal(JSON.parse(rest.join(' ')).detail, detail, name);
    }
  });
});

describe('lingering close is bounded', () => {
  const dir = tempDir();
  let served: Served;
  const config = path.join(dir.dir, 'gateway.yaml');

  before(async () => {
    writeFileSync(config, configYaml({ listen: '  lingeringTime: 10s\n  lingeringTimeout: 1s\n  lingeringBytes: 1048576' }));
    served = await serve(config);
  });
  after(async () => {
    await served?.stop();
    dir.remove();
  });

  /**
   * Sends the head of a POST announcing `length` bytes, then body: without pause (`pump`), or one
   * chunk and then, once the gateway has ended its side, one byte after `probeMs` (which a closed
   * connection answers with a reset). Resolves when the connection is closed, or after `giveUpMs`.
   */
  function stream(length: number, mode: { pump: true } | { probeMs: number }, giveUpMs: number): Promise<{ answer: string; written: number; closed: boolean }> {
    const { port } = new URL(served.url);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    return new Promise((resolve) => {
      let answer = '';
      // Half-open: the gateway's FIN (its side ended after the answer) does not end ours; we go on sending.
      const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true }, () => {
        socket.write(`POST /v1/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
        if ('pump' in mode) {
          const pump = () => {
            while (!socket.destroyed && socket.write(chunk)) {}
          };
          socket.on('drain', pump);
          pump();
        } else {
          socket.write(chunk);
          // A write to a closed connection is answered with a reset, which the next write reports.
          socket.once('end', () => setTimeout(() => setInterval(() => !socket.destroyed && socket.write('x'), 200).unref(), mode.probeMs).unref());
        }
      });
      const done = (closed: boolean) => {
        clearTimeout(giveUp);
        resolve({ answer, written: socket.bytesWritten, closed });
        socket.destroy();
      };
      const giveUp = setTimeout(() => done(false), giveUpMs);
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => done(true));
    });
  }

  test('a client that goes on sending after the 413 is cut once it has sent lingeringBytes more', async () => {
    const { answer, written, closed } = await stream(1 << 30, { pump: true }, 8_000);
    // The announced gigabyte is over listen.maxBodySize: answered at once, before a byte of it is read.
    assert.match(answer, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    // Cut before lingeringTime (10 s), by the bytes: 1 MiB past the answer, what loopback carries
    // between two looks at them (20 ms), and what the kernel's buffers held; not the gigabyte.
    assert.equal(closed, true, 'closed within 8 s');
    assert.ok(written < 128 * MIB, `the client wrote ${written} bytes before the gateway closed`);
  });

  test('a client that falls silent after the 401 is cut after lingeringTimeout, within lingeringTime', async () => {
    // Its probe, 3 s after the answer, finds the connection closed (after lingeringTimeout, 1 s).
    const { answer, closed } = await stream(4 * MIB, { probeMs: 3_000 }, 8_000);
    assert.match(answer, /^HTTP\/1\.1 401 Unauthorized\r\n/);
    assert.equal(closed, true);
  });
});
