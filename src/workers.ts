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
import { parseConfig, type Config } from './config/load.ts';
import { freePort, listenerUrl } from './http/listener.ts';
import { Closers } from './main.ts';
import { exposition, type MetricsJson } from './metrics.ts';
import { startPortal } from './portal/server.ts';
import { nextConfig, reloadQueue, type ReloadResult, type ReloadTrigger } from './runtime/reload.ts';
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

export interface WorkerData {
  configFile: string;
  /** The file's text as the main thread loaded it. */
  configText: string;
  env: Record<string, string | undefined>;
  port: number;
  shared: Services['shared'];
}

/**
 * What the main thread asks a worker, and what the worker answers. A reload is two steps: every
 * worker prepares (compiles) the same text, and only when all could does each commit; else each
 * discards, and none has changed.
 */
export type ToWorker =
  | { type: 'prepare'; id: number; text: string }
  | { type: 'commit' }
  | { type: 'discard' }
  | { type: 'metrics'; id: number }
  | { type: 'stop' };
export type FromWorker = { type: 'listening' } | { type: 'prepared'; id: number; result: ReloadResult } | { type: 'metrics'; id: number; metrics: MetricsJson };

export interface Workers {
  url: string;
  port: number;
  portalUrl: string | undefined;
  adminUrl: string | undefined;
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  close(): Promise<void>;
}

/** How long the main thread waits for a worker to prepare a reload (it compiles the whole config). */
const PREPARE_TIMEOUT_MS = 10_000;
/** How long a scrape of /metrics waits for a worker's counts. */
const METRICS_TIMEOUT_MS = 2_000;
/** Beyond shutdownTimeout, how long a worker may take to save and close before it is terminated. */
const STOP_MARGIN_MS = 5_000;

export async function startWorkers(
  initial: Config,
  options: { env: Record<string, string | undefined>; port?: number; adminPort?: number; logger?: Logger },
): Promise<Workers> {
  // Read once: the main thread and every worker serve the same text, even if the file changes meanwhile.
  const configText = readFileSync(initial.file, 'utf8');
  let config = parseConfig(configText, initial.file, { env: options.env });
  // Opened first: it runs the migrations before any worker opens the file.
  const services = await createServices(config, { role: { kind: 'main' }, ...(options.logger && { logger: options.logger }) });
  const { logger } = services;
  const starting = new Closers();
  starting.add(() => services.close());
  // Every worker must bind the same port: choose it now when the config says "any".
  const wanted = options.port ?? config.listen.port;
  const port = wanted === 0 ? await freePort(config.listen.host) : wanted;

  const data: WorkerData = { configFile: config.file, configText, env: options.env, port, shared: services.shared };
  const workers = Array.from({ length: config.workers }, () => startWorker(data));
  const exited = new Set<Worker>();
  let stopping: Promise<void> | undefined;
  const stopWorkers = (timeoutMs: number) =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (exited.has(w)) return resolve();
            // A worker that cannot save and close in time is ended: the process must stop.
            const timer = setTimeout(() => void w.terminate(), timeoutMs + STOP_MARGIN_MS);
            w.once('exit', () => (clearTimeout(timer), resolve()));
            w.postMessage({ type: 'stop' } satisfies ToWorker);
          }),
      ),
    );
  starting.add(() => stopWorkers(0));
  await starting.open(
    () =>
      Promise.all(
        workers.map(
          (w, i) =>
            new Promise<void>((resolve, reject) => {
              const failed = (err: Error) => (w.off('message', listening), reject(err));
              const early = (code: number) => failed(new Error(`worker ${i} exited with code ${code} before listening`));
              const listening = () => {
                w.off('error', failed).off('exit', early);
                resolve();
              };
              w.once('message', listening).once('error', failed).once('exit', early);
            }),
        ),
      ),
    async () => {},
  );
  // After the start: a worker that ends is one the gateway no longer has; it says so and is not ready.
  workers.forEach((w, i) => {
    w.on('error', (err) => logger.error({ err, worker: i }, 'a worker failed'));
    w.once('exit', (code) => {
      exited.add(w);
      if (stopping === undefined) logger.error({ worker: i, code }, 'a worker exited; the gateway is not ready until it is restarted');
    });
  });
  const url = listenerUrl(config.listen.host, port, config.listen.tls !== undefined);
  // The portal runs here; the workers add their calls to the store's usage counts themselves.
  const portal = await starting.open(() => startPortal(config, services, () => config), (p) => p?.drain(0));

  let asked = 0;
  /** Asks every worker still running; one that exits or does not answer within `timeoutMs` answers undefined. */
  function askWorkers<T extends 'prepared' | 'metrics'>(ask: (id: number) => ToWorker, answer: T, timeoutMs: number): Promise<(Extract<FromWorker, { type: T }> | undefined)[]> {
    const id = ++asked;
    return Promise.all(
      workers.map(
        (w) =>
          new Promise<Extract<FromWorker, { type: T }> | undefined>((resolve) => {
            if (exited.has(w)) return resolve(undefined);
            const done = (message: Extract<FromWorker, { type: T }> | undefined) => {
              clearTimeout(timer);
              w.off('message', hear).off('exit', gone);
              resolve(message);
            };
            const hear = (message: FromWorker) => {
              if (message.type === answer && 'id' in message && message.id === id) done(message as Extract<FromWorker, { type: T }>);
            };
            const gone = () => done(undefined);
            const timer = setTimeout(gone, timeoutMs);
            w.on('message', hear).once('exit', gone);
            w.postMessage(ask(id));
          }),
      ),
    );
  }

  const reload = reloadQueue(
    async () => {
      if (stopping !== undefined) return { ok: false, errors: ['the gateway is stopping'] };
      let text: string;
      try {
        text = readFileSync(config.file, 'utf8');
      } catch (err) {
        return { ok: false, errors: [`cannot read ${config.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] };
      }
      const next = nextConfig(config, options.env, text);
      if (!next.ok) return next;
      const answers = await askWorkers((id) => ({ type: 'prepare', id, text }), 'prepared', PREPARE_TIMEOUT_MS);
      const errors = answers.flatMap((a, i) => (a === undefined ? [`worker ${i}: no answer`] : a.result.ok ? [] : a.result.errors.map((e) => `worker ${i}: ${e}`)));
      const verdict: ToWorker = { type: errors.length === 0 ? 'commit' : 'discard' };
      for (const w of workers) if (!exited.has(w)) w.postMessage(verdict);
      if (errors.length > 0) return { ok: false, errors };
      config = next.config;
      logger.level = config.log.level;
      portal?.setTimeouts(config.listen.timeouts);
      return { ok: true };
    },
    { logger, metrics: services.metrics, file: () => config.file },
  );

  const ready = readiness(services.store, () => stopping !== undefined);
  const admin: AdminListener | undefined =
    config.admin === undefined
      ? undefined
      : await starting.open(
          () =>
            startAdminListener(config.admin!.host, options.adminPort ?? config.admin!.port, {
              logger,
              ready: async () => (exited.size > 0 && stopping === undefined ? `${exited.size} of ${workers.length} workers exited` : ready()),
              reload: (ip) => reload({ via: 'admin', ip }),
              // The process's own metrics are this thread's; the gateway's are the workers', added up.
              metrics: async () =>
                exposition(
                  services.metrics.registry,
                  (await askWorkers((id) => ({ type: 'metrics', id }), 'metrics', METRICS_TIMEOUT_MS)).flatMap((m) => (m === undefined ? [] : [m.metrics])),
                ),
            }),
          (a) => a.close(),
        );

  logger.info({ url, workers: workers.length, config: config.file, admin: admin?.url }, 'gateway listening');
  return {
    url,
    port,
    portalUrl: portal?.url,
    adminUrl: admin?.url,
    reload: (trigger = { via: 'signal' }) => reload(trigger),
    close() {
      stopping ??= (async () => {
        const timeoutMs = config.shutdownTimeoutMs;
        logger.info({ timeoutMs }, 'stopping: draining connections');
        await Promise.all([portal?.drain(timeoutMs), stopWorkers(timeoutMs)]);
        await admin?.close();
        await services.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
