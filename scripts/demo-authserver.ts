// A demo of the third-party authorization server the password grant relies on. It checks a
// username and password against a small JSON file of users and names the subject.
//   POST /authenticate  Authorization: Basic <gateway client id:secret>
//   {"username": "...", "password": "..."}  →  200 {"sub": "..."} | 401
// Usage: npm run demo:authserver [-- --port 9100 --users scripts/demo-users.json]
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { timingSafeEqual, createHash } from 'node:crypto';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.AUTHSERVER_PORT ?? '9100' },
    users: { type: 'string', default: new URL('./demo-users.json', import.meta.url).pathname },
    'client-id': { type: 'string', default: 'gateway' },
    'client-secret': { type: 'string', default: process.env.AUTHSERVER_SECRET ?? 'demo-gateway-secret' },
  },
});

interface User {
  password: string;
  sub: string;
}

/** The users file as a Map: a username such as "constructor" or "__proto__" is a key like any other, never a property of Object. */
function loadUsers(file: string): ReadonlyMap<string, User> {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const users = new Map<string, User>();
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${file}: not an object of users`);
  for (const [name, entry] of Object.entries(parsed)) {
    const { password, sub } = (entry ?? {}) as Partial<User>;
    if (typeof password !== 'string' || typeof sub !== 'string') throw new Error(`${file}: user "${name}" needs a string password and sub`);
    users.set(name, { password, sub });
  }
  return users;
}

const users = loadUsers(values.users);
const expectedAuth = `Basic ${Buffer.from(`${values['client-id']}:${values['client-secret']}`).toString('base64')}`;
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
// Compared against when the user is unknown, so both failures do the same work.
const NO_PASSWORD = 'no password matches this';
const BODY_LIMIT = 16 * 1024;

/** The body's username and password when both are strings, else undefined. */
async function credentials(req: IncomingMessage): Promise<{ username: string; password: string } | undefined> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > BODY_LIMIT) return undefined;
  }
  let input: unknown;
  try {
    input = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (input === null || typeof input !== 'object') return undefined;
  const { username, password } = input as Record<string, unknown>;
  return typeof username === 'string' && typeof password === 'string' ? { username, password } : undefined;
}

const server = createServer((req, res) => {
  const send = (status: number, body: unknown): void => {
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const answer = async () => {
    if (req.method !== 'POST' || req.url !== '/authenticate') return send(404, { error: 'not_found' });
    // Not 401/403: the gateway reads those as "wrong username or password".
    if (!same(req.headers.authorization ?? '', expectedAuth)) return send(500, { error: "unknown caller: check the gateway's clientId and clientSecret" });
    const input = await credentials(req);
    if (input === undefined) return send(400, { error: 'the body must be JSON with a string username and password' });
    const user = users.get(input.username);
    const matches = same(input.password, user?.password ?? NO_PASSWORD);
    if (user === undefined || !matches) return send(401, { error: 'invalid credentials' });
    send(200, { sub: user.sub });
  };
  // Whatever a request holds, the server answers it and keeps serving the next.
  answer().catch((err: unknown) => {
    console.error('demo authorization server: request failed:', err);
    send(500, { error: 'internal error' });
  });
});

server.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`demo authorization server on http://127.0.0.1:${port}/authenticate`);
});
