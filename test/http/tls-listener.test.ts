// The gateway's own listener over TLS, with certificates made here by openssl: tokens and routes
// over HTTPS, TLS 1.2 at least, X-Forwarded-Proto, a certificate that cannot serve refused when
// the config loads, a new certificate swapped in by a reload without dropping a connection; and
// the sender timeouts and keep-alive timeout from the YAML, at start and after a reload.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect as connectTls, type PeerCertificate, type SecureVersion, type TLSSocket } from 'node:tls';
import { ConfigError, loadConfigFile } from '../../src/config/load.ts';
import { basic, configYaml, startTestGateway, startUpstream, tempDir, type TestGateway, type Upstream } from '../helpers.ts';

/** A CA, and leaves it signs for localhost and 127.0.0.1, made with the openssl command in `dir`. */
function certificates(dir: string) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=gateway test CA');
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  return {
    ca: readFileSync(path.join(dir, 'ca.crt')),
    /** Makes `<name>.crt` and `<name>.key`, the certificate with this serial number (hex). */
    leaf(name: string, serial: string): { cert: string; key: string } {
      openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=localhost');
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${serial}`, '-days', '2', '-extfile', 'san.ext', '-out', `${name}.crt`);
      return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
    },
  };
}

interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The serial number of the certificate the connection was made with. */
  serial: string;
  reusedSocket: boolean;
}

function httpsCall(url: string, agent: Agent, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { agent, method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const serial = ((res.socket as TLSSocket).getPeerCertificate() as PeerCertificate).serialNumber;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, serial, reusedSocket: req.reusedSocket });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A TLS handshake limited to these versions: the protocol agreed, or the error code. */
function handshake(port: number, ca: Buffer, minVersion: SecureVersion, maxVersion: SecureVersion): Promise<string> {
  return new Promise((resolve) => {
    // SECLEVEL=0: the client itself must be willing to offer TLS 1.0 and 1.1, so that the refusal is the gateway's.
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ca, minVersion, maxVersion, ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
      resolve(socket.getProtocol() ?? 'none');
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('listen.tls', () => {
  const temp = tempDir();
  const made = certificates(temp.dir);
  const first = made.leaf('first', '1001');
  const second = made.leaf('second', '1002');
  const other = made.leaf('other', '1003');
  const served = { cert: path.join(temp.dir, 'served.crt'), key: path.join(temp.dir, 'served.key') };
  let upstream: Upstream;
  let gw: TestGateway;
  let agent: Agent;

  before(async () => {
    copyFileSync(first.cert, served.cert);
    copyFileSync(first.key, served.key);
    upstream = await startUpstream();
    gw = await startTestGateway({ upstreamUrl: upstream.url, listen: `  headersTimeout: 1s\n  tls:\n    cert: ${served.cert}\n    key: ${served.key}\n` });
    agent = new Agent({ ca: made.ca, keepAlive: true, maxSockets: 1 });
  });
  after(async () => {
    agent.destroy();
    await gw.close();
    await upstream.close();
    temp.remove();
  });

  test('a token (client_credentials) and a route over HTTPS; the upstream is told X-Forwarded-Proto: https', async () => {
    assert.match(gw.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const app = await gw.client('hello');
    const issued = await httpsCall(`${gw.url}/oauth2/token`, agent, {
      method: 'POST',
      headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    assert.equal(issued.status, 200, issued.body);
    assert.equal(issued.serial, '1001');
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token;
    const routed = await httpsCall(`${gw.url}/v1/backend/7`, agent, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-proto': 'http' } });
    assert.equal(routed.status, 200, routed.body);
    assert.deepEqual(JSON.parse(routed.body), { upstream: true, path: '/v1/backend/7' });
    assert.equal(upstream.received.at(-1)!.headers['x-forwarded-proto'], 'https');
    const echoed = await httpsCall(`${gw.url}/v1/echo`, agent, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
    assert.equal((JSON.parse(echoed.body) as { headers: Record<string, string> }).headers['x-forwarded-proto'], 'https');
  });

  test('TLS 1.2 and 1.3 are served; TLS 1.0 and 1.1 are refused with a protocol_version alert', async () => {
    const port = Number(new URL(gw.url).port);
    assert.equal(await handshake(port, made.ca, 'TLSv1.3', 'TLSv1.3'), 'TLSv1.3');
    assert.equal(await handshake(port, made.ca, 'TLSv1.2', 'TLSv1.2'), 'TLSv1.2');
    assert.equal(await handshake(port, made.ca, 'TLSv1.1', 'TLSv1.1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    assert.equal(await handshake(port, made.ca, 'TLSv1', 'TLSv1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  test("a client that connects and never completes the handshake is cut by headersTimeout (1s), not after Node's 120 s", async () => {
    const { port } = new URL(gw.url);
    const started = performance.now();
    const socket = connectTcp(Number(port), '127.0.0.1');
    const ended = await new Promise<string>((resolve) => {
      socket.on('close', () => resolve('closed'));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    const ms = performance.now() - started;
    assert.ok(ended === 'closed' || ended === 'ECONNRESET', ended);
    assert.ok(ms < 5_000, `cut after ${ms} ms`);
  });

  test('a reload serves a new certificate to new connections; a keep-alive connection opened before keeps working; a pair that does not match is refused', async () => {
    const before = await httpsCall(`${gw.url}/v1/hello`, agent);
    assert.deepEqual([before.status, before.serial], [401, '1001']);

    copyFileSync(second.cert, served.cert);
    copyFileSync(second.key, served.key);
    assert.deepEqual(await gw.gateway.reload(), { ok: true });

    const kept = await httpsCall(`${gw.url}/v1/hello`, agent);
    assert.deepEqual([kept.status, kept.serial, kept.reusedSocket], [401, '1001', true], 'the connection opened before the reload still answers');
    const fresh = new Agent({ ca: made.ca });
    try {
      const renewed = await httpsCall(`${gw.url}/v1/hello`, fresh);
      assert.deepEqual([renewed.status, renewed.serial, renewed.reusedSocket], [401, '1002', false]);
      // Still TLS 1.2 at least after the swap.
      assert.equal(await handshake(Number(new URL(gw.url).port), made.ca, 'TLSv1.1', 'TLSv1.1'), 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');

      // Half a rotation: the new certificate beside the old key.
      copyFileSync(other.cert, served.cert);
      const refused = await gw.gateway.reload();
      assert.equal(refused.ok, false);
      assert.deepEqual(!refused.ok && refused.errors.map((e) => e.replace(/: error:.*key values mismatch \(/, ': …key values mismatch (')), [
        `listen.tls: the certificate and key cannot serve TLS: …key values mismatch (gateway.yaml:${yamlLine(gw.configFile, '  tls:')})`,
      ]);
      const unchanged = await httpsCall(`${gw.url}/v1/hello`, new Agent({ ca: made.ca }));
      assert.deepEqual([unchanged.status, unchanged.serial], [401, '1002'], 'the certificate serving before keeps serving');
    } finally {
      fresh.destroy();
    }
  });
});

function yamlLine(file: string, fragment: string): number {
  const text = readFileSync(file, 'utf8');
  const index = text.indexOf(fragment);
  assert.notEqual(index, -1, fragment);
  return text.slice(0, index).split('\n').length;
}

describe('listen.tls that cannot serve: the config does not load, and says where', () => {
  const temp = tempDir();
  const made = certificates(temp.dir);
  const pair = made.leaf('pair', '2001');
  const stranger = made.leaf('stranger', '2002');
  writeFileSync(path.join(temp.dir, 'garbage.crt'), 'not a certificate\n');
  after(() => temp.remove());

  /** The message of loading a config whose listen.tls names these files, and the line of each key. */
  function load(cert: string, key: string): { message: string; tlsLine: number; certLine: number; keyLine: number } {
    const file = path.join(temp.dir, 'gateway.yaml');
    const yaml = configYaml({ listen: `  tls:\n    cert: ${cert}\n    key: ${key}\n` });
    writeFileSync(file, yaml);
    const line = (fragment: string) => yaml.slice(0, yaml.indexOf(fragment)).split('\n').length;
    try {
      loadConfigFile(file, { env: {} });
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return { message: err.message, tlsLine: line('  tls:'), certLine: line('    cert:'), keyLine: line('    key:') };
    }
    assert.fail('the config loaded');
  }

  test('a certificate file that does not exist', () => {
    const missing = path.join(temp.dir, 'missing.crt');
    const { message, certLine } = load(missing, pair.key);
    assert.equal(message, `listen.tls.cert: cannot read ${missing}: no such file (gateway.yaml:${certLine})`);
  });

  test('a key file that does not exist; a folder', () => {
    const missing = path.join(temp.dir, 'missing.key');
    const { message, keyLine } = load(pair.cert, missing);
    assert.equal(message, `listen.tls.key: cannot read ${missing}: no such file (gateway.yaml:${keyLine})`);
    const folder = load(pair.cert, temp.dir);
    assert.equal(folder.message, `listen.tls.key: cannot read ${temp.dir}: a folder, not a file (gateway.yaml:${folder.keyLine})`);
  });

  test('paths relative to the config file', () => {
    const { message, certLine } = load('./nowhere/site.crt', pair.key);
    assert.equal(message, `listen.tls.cert: cannot read ${path.join(temp.dir, 'nowhere/site.crt')}: no such file (gateway.yaml:${certLine})`);
    const file = path.join(temp.dir, 'relative.yaml');
    writeFileSync(file, configYaml({ listen: '  tls:\n    cert: ./pair.crt\n    key: ./pair.key\n' }));
    assert.deepEqual(loadConfigFile(file, { env: {} }).listen.tls, { cert: pair.cert, key: pair.key, clientCa: undefined });
  });

  test('a certificate and a key that are not a pair', () => {
    const { message, tlsLine } = load(pair.cert, stranger.key);
    assert.match(message, new RegExp(`^listen\\.tls: the certificate and key cannot serve TLS: error:[0-9A-F]+:x509 certificate routines::key values mismatch \\(gateway\\.yaml:${tlsLine}\\)$`));
  });

  test('a file that is not PEM', () => {
    const { message, tlsLine } = load(path.join(temp.dir, 'garbage.crt'), pair.key);
    assert.match(message, new RegExp(`^listen\\.tls: the certificate and key cannot serve TLS: error:[0-9A-F]+:PEM routines::no start line \\(gateway\\.yaml:${tlsLine}\\)$`));
  });
});

describe('X-Forwarded-Proto behind a proxy that ends TLS', () => {
  test("a trusted proxy's https (or http) is passed on; anyone else's, or another value, gives the listener's own", async () => {
    const upstream = await startUpstream();
    const proto = async (gw: TestGateway, token: string, said: string | undefined) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(said === undefined ? {} : { 'x-forwarded-proto': said }) };
      const res = await fetch(`${gw.url}/v1/backend/1`, { headers });
      assert.equal(res.status, 200, await res.text());
      return upstream.received.at(-1)!.headers['x-forwarded-proto'];
    };
    const issue = async (gw: TestGateway) => {
      const app = await gw.client('hello');
      const res = await fetch(`${gw.url}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(app.key, app.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const behind = await startTestGateway({ upstreamUrl: upstream.url, listen: '  trustedProxies: [127.0.0.1]\n' });
    const exposed = await startTestGateway({ upstreamUrl: upstream.url });
    try {
      const token = await issue(behind);
      assert.equal(await proto(behind, token, 'https'), 'https');
      assert.equal(await proto(behind, token, 'http'), 'http');
      assert.equal(await proto(behind, token, undefined), 'http');
      assert.equal(await proto(behind, token, 'https, http'), 'http');
      assert.equal(await proto(behind, token, 'gopher'), 'http');
      const other = await issue(exposed);
      assert.equal(await proto(exposed, other, 'https'), 'http', 'from a client that is not a trusted proxy');
    } finally {
      await behind.close();
      await exposed.close();
      await upstream.close();
    }
  });
});

/**
 * Sends `head` on a new connection, then `drip` every 100 ms until the gateway answers or closes;
 * resolves to what it answered and how long that took.
 */
/**
 * Sends `head`, then `drip` every 100 ms for `dripForMs`, then nothing: the limits are on the whole
 * headers or request, so the server cuts the client at them either way. It stops before the limit
 * so that no byte of its own races the server's close (a byte arriving after it draws a reset,
 * which can take the 408 with it).
 */
function trickle(url: string, head: string, drip: string, dripForMs: number): Promise<{ answer: string; ms: number }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connectTcp(Number(port), '127.0.0.1', () => socket.write(head));
    const timer = setInterval(() => performance.now() - started < dripForMs && socket.writable && socket.write(drip), 100);
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, ms: performance.now() - started });
    });
    socket.on('error', (err) => {
      clearInterval(timer);
      reject(err);
    });
  });
}

describe('listener timeouts from the YAML', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ listen: '  headersTimeout: 1s\n  requestTimeout: 2s\n  keepAliveTimeout: 7s\n' });
  });
  after(() => gw.close());

  test('keepAliveTimeout shows in Keep-Alive: timeout=N', async () => {
    const res = await fetch(`${gw.url}/v1/hello`);
    await res.text();
    assert.equal(res.headers.get('keep-alive'), 'timeout=7');
  });

  test('headersTimeout: a client trickling its headers gets 408 and the connection ends, within a few seconds of the 1s limit', async () => {
    const { answer, ms } = await trickle(gw.url, 'GET /v1/hello HTTP/1.1\r\nHost: x\r\n', 'X-Slow: y\r\n', 600);
    assert.equal(answer, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    assert.ok(ms < 5_000, `cut after ${ms} ms`);
  });

  test('requestTimeout: a client trickling its body gets 408 within a few seconds of the 2s limit', async () => {
    const head = 'POST /oauth2/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n';
    const { answer, ms } = await trickle(gw.url, head, 'a', 1400);
    assert.equal(answer, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    assert.ok(ms < 6_000, `cut after ${ms} ms`);
  });
});

describe('listener timeouts that cannot hold', () => {
  test('0 (no limit) for headersTimeout or requestTimeout, or headers allowed longer than the request, is refused at load with the line', () => {
    const temp = tempDir();
    try {
      const file = path.join(temp.dir, 'gateway.yaml');
      /** The load's message for a config with `listen` added, and the line of a key of it. */
      const message = (listen: string) => {
        const yaml = configYaml({ listen });
        writeFileSync(file, yaml);
        let thrown: unknown;
        try {
          loadConfigFile(file, { env: {} });
        } catch (err) {
          thrown = err;
        }
        assert.ok(thrown instanceof ConfigError, 'the config loaded');
        return { text: thrown.message, line: (key: string) => yaml.slice(0, yaml.indexOf(`  ${key}:`)).split('\n').length };
      };
      const zero = message('  headersTimeout: 0s\n  requestTimeout: 0\n');
      assert.equal(
        zero.text,
        [
          `listen.headersTimeout: must be longer than 0 (gateway.yaml:${zero.line('headersTimeout')})`,
          `listen.requestTimeout: must be longer than 0 (gateway.yaml:${zero.line('requestTimeout')})`,
        ].join('\n'),
      );
      const longer = message('  headersTimeout: 2m\n');
      assert.equal(longer.text, `listen.headersTimeout: must not be longer than listen.requestTimeout (gateway.yaml:${longer.line('headersTimeout')})`);
      writeFileSync(file, configYaml({ listen: '  headersTimeout: 500ms\n  requestTimeout: 1m\n  keepAliveTimeout: 0\n' }));
      assert.deepEqual(loadConfigFile(file, { env: {} }).listen.timeouts, { headersMs: 500, requestMs: 60_000, keepAliveMs: 0, lingering: { ms: 30_000, idleMs: 5_000, bytes: 64 * 1024 * 1024 } });
    } finally {
      temp.remove();
    }
  });
});

describe('listener timeouts after a reload', () => {
  test('the defaults (Keep-Alive: timeout=65), then a reload to keepAliveTimeout 9s and headersTimeout 1s applies both', async () => {
    const gw = await startTestGateway();
    try {
      const keepAlive = async () => {
        const res = await fetch(`${gw.url}/v1/hello`);
        await res.text();
        return res.headers.get('keep-alive');
      };
      assert.equal(await keepAlive(), 'timeout=65');
      const yaml = readFileSync(gw.configFile, 'utf8');
      writeFileSync(gw.configFile, yaml.replace('  port: 0\n', '  port: 0\n  keepAliveTimeout: 9s\n  headersTimeout: 1s\n'));
      assert.deepEqual(await gw.gateway.reload(), { ok: true });
      assert.equal(await keepAlive(), 'timeout=9');
      const { answer, ms } = await trickle(gw.url, 'GET /v1/hello HTTP/1.1\r\nHost: x\r\n', 'X-Slow: y\r\n', 600);
      assert.equal(answer, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      assert.ok(ms < 5_000, `cut after ${ms} ms, not after the 10s default`);
    } finally {
      await gw.close();
    }
  });
});
