// Test harness: a real gateway on port 0 with a real SQLite file in a temp dir, a real upstream
// server and a stand-in authorization server, all over real HTTP.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { createApp, createDeveloper, type OperatorDeps } from '../src/admin/operations.ts';
import { ConfigError, loadConfigFile, type Config } from '../src/config/load.ts';
import { createLogger } from '../src/log.ts';
import { startGateway, type Gateway } from '../src/host/index.ts';
import { createPasswords } from '../src/admin/passwords.ts';
import type { Store } from '../src/store/port/index.ts';
import { loadSecretKey } from '../src/store/secret-key.ts';

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function listenOn(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A real upstream that records what it receives and answers with `handler` (JSON 200 by default). */
export async function startUpstream(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void = (req, res) =>
    void res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end(JSON.stringify({ upstream: true, path: req.url })),
): Promise<Upstream> {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    handler(req, res, body);
  });
  const url = await listenOn(server);
  return { url, received, close: () => closeServer(server) };
}

export interface AuthServer {
  url: string;
  calls: { authorization: string | undefined; body: unknown }[];
  /** Overrides the answer for the next calls; default: users table. */
  answer: ((body: { username: string; password: string }) => { status: number; body?: unknown; delayMs?: number }) | undefined;
  close(): Promise<void>;
}

// The secret holds characters that form-encoding would change: the gateway must send it as configured.
export const AUTH_CLIENT = { id: 'gateway-test', secret: 's3c/r+t:x%41' };

/** Stand-in for the third-party authorization server, over real HTTP. */
export async function startAuthServer(users: Record<string, { password: string; sub?: string }> = { alice: { password: 'wonderland', sub: 'user-1' } }): Promise<AuthServer> {
  const state: AuthServer = { url: '', calls: [], answer: undefined, close: async () => {} };
  const expected = `Basic ${Buffer.from(`${AUTH_CLIENT.id}:${AUTH_CLIENT.secret}`).toString('base64')}`;
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text) as { username: string; password: string };
    state.calls.push({ authorization: req.headers.authorization, body });
    let result: { status: number; body?: unknown; delayMs?: number };
    if (state.answer) result = state.answer(body);
    else if (req.headers.authorization !== expected) result = { status: 500, body: { error: 'gateway did not authenticate' } };
    else {
      const user = users[body.username];
      result = user && user.password === body.password ? { status: 200, body: user.sub === undefined ? {} : { sub: user.sub } } : { status: 401, body: { error: 'bad credentials' } };
    }
    if (result.delayMs) await new Promise((r) => setTimeout(r, result.delayMs));
    if (!res.destroyed) res.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.body ?? {}));
  });
  state.url = `${await listenOn(server)}/authenticate`;
  state.close = () => closeServer(server);
  return state;
}

export interface ConfigParts {
  /** Extra YAML under `listen:` (two-space indented), and the host (default 127.0.0.1). */
  listen?: string;
  host?: string;
  /** Extra YAML under `oauth:`. */
  oauth?: string;
  upstreamUrl?: string;
  authServerUrl?: string;
  /** Extra YAML appended under each section. */
  upstreams?: string;
  routes?: string;
  products?: string;
  extra?: string;
}

/**
 * Set (by test/e2e/on-redis.test.ts) to run tests written for the default store on a Redis of the
 * test's own instead: each configuration then names that Redis, under a key prefix of its own.
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

/** The store section of a test configuration: a SQLite file beside it, or a fresh prefix on TEST_REDIS_URL. */
function storeYaml(): string {
  if (TEST_REDIS_URL === undefined) return 'store:\n  path: ./gateway.db';
  return `store:\n  driver: redis\n  url: ${TEST_REDIS_URL}\n  keyPrefix: "t${randomBytes(6).toString('hex')}:"\n  secretKeyFile: ./gateway.db.key`;
}

/** A configuration with products `hello` (client_credentials) and `orders` (password + refresh_token). */
export function configYaml(parts: ConfigParts = {}): string {
  return `
listen:
  host: ${parts.host ?? '127.0.0.1'}
  port: 0
${parts.listen ?? ''}
${storeYaml()}
log:
  level: info
admin:
  port: 0
oauth:
  realm: test-realm
${parts.oauth ?? ''}
authServers:
  users:
    url: ${parts.authServerUrl ?? 'http://127.0.0.1:9/authenticate'}
    allowInsecureHttp: true
    timeout: 1s
    clientId: ${AUTH_CLIENT.id}
    clientSecret: '${AUTH_CLIENT.secret}'
upstreams:
  mock:
    mock:
      body: { message: hello }
  echo:
    echo: true
  backend:
    url: ${parts.upstreamUrl ?? 'http://127.0.0.1:9'}
    connectTimeout: 1s
    timeout: 1s
${parts.upstreams ?? ''}
routes:
  hello:
    method: GET
    path: /v1/hello
    upstream: mock
  echo:
    method: POST
    path: /v1/echo
    upstream: echo
  backend:
    method: GET
    path: /v1/backend/{id}
    upstream: backend
  admin-only:
    method: GET
    path: /v1/admin
    upstream: mock
    scopes: [hello:admin]
  orders:
    method: GET
    path: /v1/orders
    upstream: backend
    scopes: [orders:read]
${parts.routes ?? ''}
products:
  hello:
    routes: [hello, echo, backend, admin-only]
    scopes: [hello:read, hello:admin]
  orders:
    routes: [orders]
    scopes: [orders:read, orders:write]
    grants: [password, refresh_token, client_credentials]
    authServer: users
    accessTokenLifetime: 600
    refreshTokenLifetime: 1h
${parts.products ?? ''}
${parts.extra ?? ''}`;
}

export interface TestGateway {
  url: string;
  dir: string;
  configFile: string;
  gateway: Gateway;
  /** Runs the operator's operations, as `gateway admin` would, by the operator `test`. */
  admin: OperatorDeps;
  logs: string[];
  /** Registers a developer (once) and an app for `product`; returns its key and secret. */
  client(product: string, name?: string): Promise<{ key: string; secret: string }>;
  close(): Promise<void>;
}

let appCounter = 0;

/** `port`: the gateway's listener port, for a test that must name it in the config (the portal's gatewayUrl); default any free one. */
export async function startTestGateway(parts: ConfigParts = {}, options: { clock?: () => number; dir?: string; port?: number } = {}): Promise<TestGateway> {
  const temp = options.dir === undefined ? tempDir() : { dir: options.dir, remove: () => {} };
  const configFile = path.join(temp.dir, 'gateway.yaml');
  writeFileSync(configFile, configYaml(parts));
  const config = loadConfigFile(configFile, { env: {} });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const gateway = await startGateway({ config, logger: createLogger('info', sink), ...(options.clock ? { clock: options.clock } : {}), ...(options.port === undefined ? {} : { port: options.port }) });
  const admin = adminDeps(gateway, config);
  let developer: string | undefined;
  return {
    url: gateway.url,
    dir: temp.dir,
    configFile,
    gateway,
    admin,
    logs,
    async client(product, name = `app-${++appCounter}`) {
      if (developer === undefined) {
        developer = 'dev@example.com';
        await createDeveloper(admin, { email: developer, name: 'Dev' });
      }
      const created = await createApp(admin, { developer, name, product });
      return { key: created.key, secret: created.secret };
    },
    async close() {
      await gateway.close();
      temp.remove();
    },
  };
}

/** The message of the ConfigError a gateway with this configuration stops its start with. */
export async function configError(parts: ConfigParts): Promise<string> {
  try {
    const gw = await startTestGateway(parts);
    await gw.close();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('the configuration loaded');
}

/** What src/admin's operations need, from a running gateway and its config; the operator is `test`. */
export function adminDeps(gateway: Gateway, config: Config): OperatorDeps {
  const { store, secretKey, clock, logger, passwords } = gateway.services;
  return { store, secretKey, clock, logger, passwords, products: config.products, portal: config.portal, keyOverlapMs: config.keyOverlapMs, operator: { kind: 'operator', user: 'test' } };
}

/** What src/admin's operations need, beside gateways that share `store` (a test's own connection to their store); the operator is `test`. */
export function storeAdminDeps(config: Config, store: Store): OperatorDeps {
  return {
    store,
    secretKey: loadSecretKey(config.store.secretKeyFile),
    clock: Date.now,
    logger: createLogger('silent'),
    passwords: createPasswords(),
    products: config.products,
    portal: config.portal,
    keyOverlapMs: config.keyOverlapMs,
    operator: { kind: 'operator', user: 'test' },
  };
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer of any shape, which hundreds of assertions read by property; unknown would need a cast at each.
  body: any;
  text: string;
}

export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

/** POSTs a form to the token endpoint (or another form endpoint), authenticating with Basic when `creds` are given. */
export function tokenRequest(base: string, params: Record<string, string>, creds?: { key: string; secret: string }, endpoint = '/oauth2/token'): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (creds) headers.authorization = basic(creds.key, creds.secret);
  return call(`${base}${endpoint}`, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
}

/**
 * Writes `text` as is on a fresh connection and resolves to the whole answer, for requests fetch
 * will not send (two Authorization headers, ambiguous framing). The request should say
 * `Connection: close`; the socket is not half-closed, which would end a proxied answer early.
 * `from`: the loopback address to send from (127.0.0.2, a trusted proxy).
 */
export function rawExchange(url: string, text: string, from?: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1', ...(from === undefined ? {} : { localAddress: from }) }, () => socket.write(text));
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/**
 * The status line and headers (lower-cased names, every value in order) of a raw HTTP/1.1 answer
 * as rawExchange reads it, and the bytes after its head, undecoded.
 */
export function rawHead(answer: string): { status: string; headers: Map<string, string[]>; body: string } {
  const end = answer.indexOf('\r\n\r\n');
  const [status, ...lines] = answer.slice(0, end).split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return { status: status!, headers, body: answer.slice(end + 4) };
}

export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/**
 * Everything the store of the gateway configured in `dir` holds, as text to search: the SQLite
 * files, or (on TEST_REDIS_URL) every key under its prefix and every value, read by type.
 */
export async function storedText(dir: string): Promise<string> {
  if (TEST_REDIS_URL === undefined) {
    return ['gateway.db', 'gateway.db-wal']
      .map((f) => path.join(dir, f))
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
  }
  const prefix = /keyPrefix: "([^"]+)"/.exec(readFileSync(path.join(dir, 'gateway.yaml'), 'utf8'))![1]!;
  const client = new Redis(TEST_REDIS_URL);
  try {
    const parts: string[] = [];
    for (const key of await client.keys(`${prefix}*`)) {
      const type = await client.type(key);
      const values =
        type === 'string'
          ? [await client.get(key)]
          : type === 'hash'
            ? Object.entries(await client.hgetall(key)).flat()
            : type === 'set'
              ? await client.smembers(key)
              : type === 'zset'
                ? await client.zrange(key, '0', '-1')
                : [];
      parts.push(key, ...values.map(String));
    }
    return parts.join('\n');
  } finally {
    client.disconnect();
  }
}

/** Polls `check` every 20 ms for up to `withinMs` (a bound on waiting, not a timing); the last value it returned. */
export async function within<T>(withinMs: number, check: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + withinMs;
  let value = await check();
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await check();
  }
  return value;
}
