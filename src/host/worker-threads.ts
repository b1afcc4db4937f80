// `workers: N`: N worker threads, each serving (in-process.ts's serving part) on the same port with
// SO_REUSEPORT (the kernel spreads connections over them). They share one counters table
// (SharedArrayBuffer), so quotas and spike arrests hold exactly across them; each has its own
// SQLite connection, so a revocation reaches every worker's cache through PRAGMA data_version.
// The host's thread keeps the store's upkeep, the portal and the admin listener; a reload is read
// there once and sent to every worker, and a stop drains every worker.
import { readFileSync } from 'node:fs';
import { getAsset, isSea } from 'node:sea';
import { Worker } from 'node:worker_threads';
import { parseConfig, type Config } from '../config/load.ts';
import { freePort, listenerUrl } from '../http/listener.ts';
import type { MetricsJson } from '../metrics.ts';
import { nextConfig, type ReloadResult } from '../runtime/reload.ts';
import type { Services } from '../services.ts';
import type { Closers } from './closers.ts';
import type { Prepared, Topology } from './topology.ts';

/** The name of the worker's bundle among the single executable's assets (scripts/build.ts). */
export const WORKER_ASSET = 'worker.cjs';

export interface WorkerData {
  configFile: string;
  /** The file's text as the host's thread loaded it. */
  configText: string;
  env: Record<string, string | undefined>;
  port: number;
  shared: Services['shared'];
}

/**
 * What the host's thread asks a worker, and what the worker answers. A reload is two steps: every
 * worker prepares (compiles) the same text, and only when all could does each commit; else each
 * discards, and none has changed.
 */
export type ToWorker = { type: 'prepare'; id: number; text: string } | { type: 'commit' } | { type: 'discard' } | { type: 'metrics'; id: number } | { type: 'stop' };
export type FromWorker = { type: 'listening' } | { type: 'prepared'; id: number; result: ReloadResult } | { type: 'metrics'; id: number; metrics: MetricsJson };

/** How long the host waits for a worker to prepare a reload (it compiles the whole config). */
const PREPARE_TIMEOUT_MS = 10_000;
/** How long a scrape of /metrics waits for a worker's counts. */
const METRICS_TIMEOUT_MS = 2_000;
/** Beyond shutdownTimeout, how long a worker may take to save and close before it is terminated. */
const STOP_MARGIN_MS = 5_000;

/**
 * The config file read once, and `initial` as that text says: the host's thread and every worker
 * serve the same text, even if the file changes meanwhile.
 */
export function readOnce(initial: Config, env: Record<string, string | undefined>): { config: Config; text: string } {
  const text = readFileSync(initial.file, 'utf8');
  return { config: parseConfig(text, initial.file, { env }), text };
}

/**
 * A worker thread running worker.ts. In the single executable its bundle is an asset, run as a
 * script; from source it goes through the TypeScript loader; in the bundle (scripts/build.ts) this
 * module is part of dist/gateway.mjs and the worker is dist/worker.mjs beside it.
 */
function startWorker(data: WorkerData): Worker {
  if (isSea()) return new Worker(getAsset(WORKER_ASSET, 'utf8'), { eval: true, workerData: data });
  const entry = import.meta.url.endsWith('/src/host/worker-threads.ts') ? new URL('../../bin/worker.js', import.meta.url) : new URL('./worker.mjs', import.meta.url);
  return new Worker(entry, { workerData: data });
}

/** Resolves once every worker listens; rejects when one fails or exits first. */
function allListening(workers: Worker[]): Promise<void[]> {
  return Promise.all(
    workers.map(
      (w, i) =>
        new Promise<void>((resolve, reject) => {
          const failed = (err: Error) => {
            w.off('message', listening);
            reject(err);
          };
          const early = (code: number) => failed(new Error(`worker ${i} exited with code ${code} before listening`));
          const listening = () => {
            w.off('error', failed).off('exit', early);
            resolve();
          };
          w.once('message', listening).once('error', failed).once('exit', early);
        }),
    ),
  );
}

/** Asks every worker that has not exited; one that exits or does not answer within `timeoutMs` answers undefined. */
function askAll<T extends 'prepared' | 'metrics'>(
  workers: Worker[],
  exited: Set<Worker>,
  id: number,
  question: (id: number) => ToWorker,
  answer: T,
  timeoutMs: number,
): Promise<(Extract<FromWorker, { type: T }> | undefined)[]> {
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
          w.postMessage(question(id));
        }),
    ),
  );
}

/** Tells every worker that has not exited to stop, and resolves when all have exited. */
function stopAll(workers: Worker[], exited: Set<Worker>, timeoutMs: number): Promise<void[]> {
  return Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (exited.has(w)) return resolve();
          // A worker that cannot save and close in time is ended: the process must stop.
          const timer = setTimeout(() => void w.terminate(), timeoutMs + STOP_MARGIN_MS);
          w.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          w.postMessage({ type: 'stop' } satisfies ToWorker);
        }),
    ),
  );
}

/** `config.workers` threads serving `configText`; the host's thread listens on nothing itself. */
export async function workerThreads(
  config: Config,
  configText: string,
  services: Services,
  options: { env: Record<string, string | undefined>; port: number | undefined },
  starting: Closers,
): Promise<Topology> {
  const { logger } = services;
  // Every worker must bind the same port: choose it now when the config says "any".
  const wanted = options.port ?? config.listen.port;
  const port = wanted === 0 ? await freePort(config.listen.host) : wanted;
  const workers = Array.from({ length: config.workers }, () => startWorker({ configFile: config.file, configText, env: options.env, port, shared: services.shared }));
  const exited = new Set<Worker>();
  let stopping = false;
  const stop = async (timeoutMs: number) => {
    stopping = true;
    await stopAll(workers, exited, timeoutMs);
  };
  starting.add(() => stop(0));
  await starting.open(
    () => allListening(workers),
    async () => {},
  );
  // After the start: a worker that ends is one the gateway no longer has; it says so and is not ready.
  workers.forEach((w, i) => {
    w.on('error', (err) => logger.error({ err, worker: i }, 'a worker failed'));
    w.once('exit', (code) => {
      exited.add(w);
      if (!stopping) logger.error({ worker: i, code }, 'a worker exited; the gateway is not ready until it is restarted');
    });
  });

  let asked = 0;
  const ask = <T extends 'prepared' | 'metrics'>(question: (id: number) => ToWorker, answer: T, timeoutMs: number) => askAll(workers, exited, ++asked, question, answer, timeoutMs);
  const tell = (message: ToWorker) => {
    for (const w of workers) if (!exited.has(w)) w.postMessage(message);
  };

  async function prepare(current: Config): Promise<Prepared> {
    let text: string;
    try {
      text = readFileSync(current.file, 'utf8');
    } catch (err) {
      return { ok: false, errors: [`cannot read ${current.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] };
    }
    const loaded = nextConfig(current, options.env, text);
    if (!loaded.ok) return loaded;
    const answers = await ask((id) => ({ type: 'prepare', id, text }), 'prepared', PREPARE_TIMEOUT_MS);
    const errors = answers.flatMap((a, i) => (a === undefined ? [`worker ${i}: no answer`] : a.result.ok ? [] : a.result.errors.map((e) => `worker ${i}: ${e}`)));
    if (errors.length === 0) return loaded;
    tell({ type: 'discard' });
    return { ok: false, errors };
  }

  return {
    url: listenerUrl(config.listen.host, port, config.listen.tls !== undefined),
    port,
    described: { workers: workers.length },
    prepare,
    commit: () => tell({ type: 'commit' }),
    unready: () => (exited.size > 0 ? `${exited.size} of ${workers.length} workers exited` : undefined),
    // The process's own metrics are the host thread's; the gateway's are the workers', added up.
    metrics: async () => (await ask((id) => ({ type: 'metrics', id }), 'metrics', METRICS_TIMEOUT_MS)).flatMap((m) => (m === undefined ? [] : [m.metrics])),
    stop,
  };
}
