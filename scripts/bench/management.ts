// npm run bench:management [-- --apps 1000 --concurrency 1]: a thousand apps registered through
// the management API of a gateway on a SQLite file of its own, beside the same registrations made
// by src/admin on a store of its own in the same run (what `gateway admin apps create` does, without
// HTTP): the time of each, their ratio, and the store's size once closed.
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../src/admin/apps.ts';
import { createDeveloper } from '../../src/admin/developers.ts';
import { createManagementClient, MANAGEMENT_SCOPES } from '../../src/admin/management-clients.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { startGateway } from '../../src/host/index.ts';
import { createLogger } from '../../src/log.ts';
import { createAdminServices } from '../../src/services.ts';
import { tempDir } from '../../test/helpers.ts';

const { values: args } = parseArgs({ options: { apps: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '1' } } });
const APPS = Number(args.apps);
const CONCURRENCY = Number(args.concurrency);

const CONFIG = `
listen: { host: 127.0.0.1, port: 0 }
store: { path: ./gateway.db }
log: { level: warn, access: false }
admin: false
management: { port: 0 }
upstreams: { mock: { mock: { body: { ok: true } } } }
routes: { hello: { method: GET, path: /v1/hello, upstream: mock } }
products: { hello: { routes: [hello] } }
`;

/** The bytes of the store's files (database, write-ahead log, key) in `dir`. */
function storeBytes(dir: string): number {
  return readdirSync(dir)
    .filter((f) => f.startsWith('gateway.db'))
    .reduce((sum, f) => sum + statSync(path.join(dir, f)).size, 0);
}

/** Runs `make(i)` for i in 0..n-1, `concurrency` at a time; resolves to the milliseconds taken. */
async function timed(n: number, concurrency: number, make: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await make(next++);
    }),
  );
  return performance.now() - started;
}

async function throughApi(): Promise<{ ms: number; bytes: number }> {
  const temp = tempDir();
  writeFileSync(path.join(temp.dir, 'gateway.yaml'), CONFIG);
  const config = loadConfigFile(path.join(temp.dir, 'gateway.yaml'), { env: {} });
  const gateway = await startGateway({ config, logger: createLogger('warn') });
  const base = gateway.managementUrl!;
  const deps = { ...gateway.services, products: config.products, portal: config.portal, keyOverlapMs: config.keyOverlapMs, operator: { kind: 'operator', user: 'bench' } as const };
  const client = await createManagementClient(deps, { name: 'bench', scopes: Object.keys(MANAGEMENT_SCOPES) });
  const tokenAnswer = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.key}:${client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await fetch(`${base}/v1/developers`, { method: 'POST', headers, body: JSON.stringify({ email: 'bench@example.com', name: 'Bench' }) });
  const ms = await timed(APPS, CONCURRENCY, async (i) => {
    const res = await fetch(`${base}/v1/apps`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': `app-${i}` },
      body: JSON.stringify({ developer: 'bench@example.com', name: `app-${i}`, product: 'hello' }),
    });
    if (res.status !== 201) throw new Error(`app-${i}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  });
  await gateway.close();
  const bytes = storeBytes(temp.dir);
  temp.remove();
  return { ms, bytes };
}

async function throughAdmin(): Promise<{ ms: number; bytes: number }> {
  const temp = tempDir();
  writeFileSync(path.join(temp.dir, 'gateway.yaml'), CONFIG);
  const config = loadConfigFile(path.join(temp.dir, 'gateway.yaml'), { env: {} });
  const services = await createAdminServices(config, createLogger('warn'));
  const deps = { ...services, products: config.products, portal: config.portal, keyOverlapMs: config.keyOverlapMs, operator: { kind: 'operator', user: 'bench' } as const };
  await createDeveloper(deps, { email: 'bench@example.com', name: 'Bench' });
  const ms = await timed(APPS, CONCURRENCY, async (i) => {
    await createApp(deps, { developer: 'bench@example.com', name: `app-${i}`, product: 'hello' });
  });
  await services.store.close();
  const bytes = storeBytes(temp.dir);
  temp.remove();
  return { ms, bytes };
}

const admin = await throughAdmin();
const api = await throughApi();
const row = (name: string, r: { ms: number; bytes: number }) =>
  `${name.padEnd(26)} ${(r.ms / 1000).toFixed(2).padStart(7)} s ${(APPS / (r.ms / 1000)).toFixed(0).padStart(7)} apps/s ${(r.bytes / 1024).toFixed(0).padStart(7)} KiB ${(r.bytes / APPS).toFixed(0).padStart(6)} B/app`;
console.log(`${APPS} apps, ${CONCURRENCY} at a time, SQLite`);
console.log(row('src/admin (baseline)', admin));
console.log(row('management API', api));
console.log(`API time / baseline time: ${(api.ms / admin.ms).toFixed(2)}`);
