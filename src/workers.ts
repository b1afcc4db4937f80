// `workers: N`: N worker threads, each a whole gateway listening on the same port with
// SO_REUSEPORT (the kernel spreads connections over them). They share one counters table
// (SharedArrayBuffer), so quotas and spike arrests hold exactly across them; each has its own
// SQLite connection, so a revocation reaches every worker's cache through PRAGMA data_version.
// The main thread owns the schema, the counters' saving and the purge.
import { getAsset, isSea } from 'node:sea';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from './config/load.ts';
import { freePort } from './http/server.ts';
import { createLogger } from './log.ts';
import { startPurging } from './main.ts';
import { Counters, DEFAULT_SLOTS, persistCounters } from './policies/counters.ts';
import { startPortal } from './portal/server.ts';
import { openStore, storeShared } from './store/open.ts';
import { loadSecretKey } from './store/secret-key.ts';
import { startUsage } from './usage.ts';
import { createPasswords } from './admin/passwords.ts';
import { createMailer } from './mail.ts';

/**
 * A worker thread running src/worker.ts. In the single executable its bundle is an asset, run as
 * a script; from source it goes through the TypeScript loader; in the bundle (scripts/build.ts)
 * this module is part of dist/gateway.mjs and the worker is dist/worker.mjs beside it.
 */
function startWorker(data: WorkerData): Worker {
  if (isSea()) return new Worker(getAsset(WORKER_ASSET, 'utf8'), { eval: true, workerData: data });
  const entry = import.meta.url.endsWith('/src/workers.ts') ? new URL('../bin/worker.js', import.meta.url) : new URL('./worker.mjs', import.meta.url);
  return new Worker(entry, { workerData: data });
}

/** The name of the worker's bundle among the single executable's assets (scripts/build.ts). */
export const WORKER_ASSET = 'worker.cjs';

export interface WorkerData {
  configFile: string;
  env: Record<string, string | undefined>;
  port: number;
  counters: SharedArrayBuffer;
  storeShared: SharedArrayBuffer;
}

export interface Workers {
  url: string;
  port: number;
  portalUrl: string | undefined;
  close(): Promise<void>;
}

export async function startWorkers(config: Config, options: { env: Record<string, string | undefined>; port?: number; logger?: Logger }): Promise<Workers> {
  const logger = options.logger ?? createLogger(config.log.level);
  const shared = storeShared();
  // Opened first: it runs the migrations before any worker opens the file.
  const store = openStore(config, { warn: (message) => logger.warn(message), serving: { shared, maintains: true } });
  const counters = new Counters({ slots: DEFAULT_SLOTS });
  const saving = await persistCounters(counters, store, Date.now, logger);
  const purge = startPurging(store, Date.now, logger);
  // Every worker must bind the same port: choose it now when the config says "any".
  const wanted = options.port ?? config.listen.port;
  const port = wanted === 0 ? await freePort(config.listen.host) : wanted;

  const data: WorkerData = { configFile: config.file, env: options.env, port, counters: counters.buffer, storeShared: shared };
  const workers = Array.from({ length: config.workers }, () => startWorker(data));
  try {
    await Promise.all(
      workers.map(
        (w, i) =>
          new Promise<void>((resolve, reject) => {
            w.once('message', () => resolve());
            w.once('error', reject);
            w.once('exit', (code) => reject(new Error(`worker ${i} exited with code ${code} before listening`)));
          }),
      ),
    );
  } catch (err) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw err;
  }
  const host = config.listen.host === '0.0.0.0' || config.listen.host === '::' ? '127.0.0.1' : config.listen.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url, workers: workers.length, config: config.file }, 'gateway listening');
  // The portal runs here; the workers add their calls to the store's usage counts themselves.
  const usage = startUsage(store, logger);
  const mailer = config.mail && createMailer(config.mail, logger);
  const portal = await startPortal({ config, store, secretKey: loadSecretKey(config.store.secretKeyFile), clock: Date.now, logger, counters, usage, passwords: createPasswords(), mailer });
  return {
    url,
    port,
    portalUrl: portal?.url,
    async close() {
      clearInterval(purge);
      await portal?.close();
      await usage.close();
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve) => {
              w.once('exit', () => resolve());
              w.postMessage('stop');
            }),
        ),
      );
      await saving.close();
      mailer?.close();
      await store.close();
    },
  };
}
