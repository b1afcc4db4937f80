// A demo of the third-party authorization server the password grant relies on. It checks a
// username and password against a small JSON file of users and names the subject.
//   POST /authenticate  Authorization: Basic <gateway client id:secret>
//   {"username": "...", "password": "..."}  →  200 {"sub": "..."} | 401
// Usage: npm run demo:authserver [-- --port 9100 --users scripts/demo-users.json]
import { createServer } from 'node:http';
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

const users = JSON.parse(readFileSync(values.users, 'utf8')) as Record<string, { password: string; sub: string }>;
const expectedAuth = `Basic ${Buffer.from(`${values['client-id']}:${values['client-secret']}`).toString('base64')}`;
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

const server = createServer(async (req, res) => {
  const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.method !== 'POST' || req.url !== '/authenticate') return send(404, { error: 'not_found' });
  // Not 401/403: the gateway reads those as "wrong username or password".
  if (!same(req.headers.authorization ?? '', expectedAuth)) return send(500, { error: 'unknown caller: check the gateway\'s clientId and clientSecret' });
  let body = '';
  for await (const chunk of req) body += chunk;
  let input: { username?: unknown; password?: unknown };
  try {
    input = JSON.parse(body) as typeof input;
  } catch {
    return send(400, { error: 'invalid JSON' });
  }
  const user = typeof input.username === 'string' ? users[input.username] : undefined;
  if (user === undefined || typeof input.password !== 'string' || !same(input.password, user.password)) {
    return send(401, { error: 'invalid credentials' });
  }
  send(200, { sub: user.sub });
});

server.listen(Number(values.port), '127.0.0.1', () => console.log(`demo authorization server on http://127.0.0.1:${values.port}/authenticate`));
