// `workers: N`: N worker threads, each a whole gateway listening on the same port with
// SO_REUSEPORT (the kernel spreads connections over them). They share one counters table
// (SharedArrayBuffer), so quotas and spike arrests hold exactly across them; each has its own
// SQLite connection, so a revocation reaches every worker's cache through PRAGMA data_version.
// The main thread owns the store's upkeep, the portal and the admin listener; a reload is read
// here once and sent to every worker, and a stop drains every worker.
import { readFileSync } from 'node:fs';
import { getAsset, isSea } from 'node:sea';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { readiness, startAdminListener, type AdminListener } from './admin-listener/server.ts';
import type { Config } from './config/load.ts';
import { freePort } from './http/listener.ts';
import { logReload, nextConfig } from './main.ts';
import { exposition, type MetricsJson } from './metrics.ts';
import { startPortal } from './portal/server.ts';
import type { ReloadResult } from './runtime/reload.ts';
import { createServices, type Services } from './services.ts';

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

/** How long the main thread waits for a worker's answer (a reload compiles the whole config). */
const ASK_TIMEOUT_MS = 10_000;

export interface WorkerData {
  configFile: string;
  env: Record<string, string | undefined>;
  port: number;
  shared: Services['shared'];
}

/** What the main thread asks a worker, and what the worker answers. */
export type ToWorker = { type: 'reload'; id: number; text: string } | { type: 'metrics'; id: number } | { type: 'stop' };
export type FromWorker = { type: 'listening' } | { type: 'reloaded'; id: number; result: ReloadResult } | { type: 'metrics'; id: number; metrics: MetricsJson };

export interface Workers {
  url: string;
  port: number;
  portalUrl: string | undefined;
  adminUrl: string | undefined;
  reload(): Promise<ReloadResult>;
  close(): Promise<void>;
}

export async function startWorkers(
  initial: Config,
  options: { env: Record<string, string | undefined>; port?: number; adminPort?: number; logger?: Logger },
): Promise<Workers> {
  let config = initial;
  // Opened first: it runs the migrations before any worker opens the file.
  const services = await createServices(config, { role: { kind: 'main' }, ...(options.logger && { logger: options.logger }) });
  const { logger } = services;
  // Every worker must bind the same port: choose it now when the config says "any".
  const wanted = options.port ?? config.listen.port;
  const port = wanted === 0 ? await freePort(config.listen.host) : wanted;

  const data: WorkerData = { configFile: config.file, env: options.env, port, shared: services.shared };
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
    await services.close();
    throw err;
  }
  const host = config.listen.host === '0.0.0.0' || config.listen.host === '::' ? '127.0.0.1' : config.listen.host;
  const url = `${config.listen.tls === undefined ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const stopWorkers = () =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (exited.has(w)) return resolve();
            w.once('exit', () => resolve());
            w.postMessage({ type: 'stop' } satisfies ToWorker);
          }),
      ),
    );
  const exited = new Set<Worker>();
  for (const w of workers) w.once('exit', () => exited.add(w));
  /** Starts a part, or stops everything started so far when it cannot (a port taken), so the process ends. */
  const startOrClose = async <T>(start: () => Promise<T>, opened: (() => Promise<unknown>)[]): Promise<T> => {
    try {
      return await start();
    } catch (err) {
      for (const close of [...opened, stopWorkers, () => services.close()]) await close().catch(() => {});
      throw err;
    }
  };
  // The portal runs here; the workers add their calls to the store's usage counts themselves.
  const portal = await startOrClose(() => startPortal(config, services, () => config), []);

  let stopping: Promise<void> | undefined;
  let reloading: Promise<ReloadResult> = Promise.resolve({ ok: true });
  let asked = 0;

  /**
   * Asks every worker still running and gathers their answers; a worker that exits, or does not
   * answer within ASK_TIMEOUT_MS, answers undefined.
   */
  function askWorkers<T extends FromWorker['type']>(ask: (id: number) => ToWorker, answer: T): Promise<(Extract<FromWorker, { type: T }> | undefined)[]> {
    const id = ++asked;
    return Promise.all(
      workers.map(
        (w) =>
          new Promise<Extract<FromWorker, { type: T }> | undefined>((resolve) => {
            if (exited.has(w)) return resolve(undefined);
            const done = (message: Extract<FromWorker, { type: T }> | undefined) => {
              clearTimeout(timer);
              w.off('message', hear);
              w.off('exit', gone);
              resolve(message);
            };
            const hear = (message: FromWorker) => {
              if (message.type === answer && 'id' in message && message.id === id) done(message as Extract<FromWorker, { type: T }>);
            };
            const gone = () => done(undefined);
            const timer = setTimeout(gone, ASK_TIMEOUT_MS);
            w.on('message', hear);
            w.once('exit', gone);
            w.postMessage(ask(id));
          }),
      ),
    );
  }

  function reload(): Promise<ReloadResult> {
    reloading = reloading.then(async () => {
      if (stopping !== undefined) return { ok: false, errors: ['the gateway is stopping'] } as const;
      // Read once: every worker compiles the same text, even if the file changes meanwhile.
      let text: string | undefined;
      try {
        text = readFileSync(config.file, 'utf8');
      } catch {
        text = undefined;
      }
      let next: ReturnType<typeof nextConfig>;
      try {
        next = nextConfig(config, options.env, text);
      } catch (err) {
        // Never a rejected chain: the next reload must still run.
        next = { ok: false, errors: [`the reload failed: ${(err as Error).message}`] };
      }
      let result: ReloadResult = next;
      if (next.ok) {
        const results = (await askWorkers((id) => ({ type: 'reload', id, text: text! }), 'reloaded')).map(
          (m): ReloadResult => m?.result ?? { ok: false, errors: ['did not answer'] },
        );
        const errors = results.flatMap((r, i) => (r.ok ? [] : r.errors.map((e) => `worker ${i}: ${e}`)));
        result = errors.length === 0 ? { ok: true } : { ok: false, errors };
        if (result.ok) {
          config = next.config;
          logger.level = config.log.level;
        }
      }
      logReload(services, config.file, result);
      return result;
    });
    return reloading;
  }

  const admin: AdminListener | undefined =
    config.admin === undefined
      ? undefined
      : await startOrClose(
          () =>
            startAdminListener(config.admin!.host, options.adminPort ?? config.admin!.port, {
              logger,
              ready: readiness(services.store, () => stopping !== undefined),
              reload,
              // The process's own metrics are this thread's; the gateway's are the workers', added up.
              metrics: async () =>
                exposition(
                  services.metrics.registry,
                  (await askWorkers((id) => ({ type: 'metrics', id }), 'metrics')).flatMap((m) => (m === undefined ? [] : [m.metrics])),
                ),
            }),
          [async () => portal?.drain(0)],
        );

  logger.info({ url, workers: workers.length, config: config.file, admin: admin?.url }, 'gateway listening');
  return {
    url,
    port,
    portalUrl: portal?.url,
    adminUrl: admin?.url,
    reload,
    close() {
      stopping ??= (async () => {
        logger.info({ timeoutMs: config.shutdownTimeoutMs }, 'stopping: draining connections');
        await Promise.all([portal?.drain(config.shutdownTimeoutMs), stopWorkers()]);
        await admin?.close();
        await services.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
