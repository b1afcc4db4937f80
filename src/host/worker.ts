// One worker thread of `workers: N` (worker-threads.ts): the serving part of the in-process
// topology on the shared port, which prepares, commits or discards a reload and stops when the
// host's thread says so.
import { parentPort, workerData } from 'node:worker_threads';
import { parseConfig } from '../config/load.ts';
import { createServices, type Services } from '../services.ts';
import { Closers } from './closers.ts';
import { startServing, storeName, type Serving } from './in-process.ts';
import type { FromWorker, ToWorker, WorkerData } from './worker-threads.ts';

/** This thread's services (sharing the host thread's counters and store signal) and its serving part, listening. */
async function start(data: WorkerData): Promise<{ services: Services; serving: Serving }> {
  // The text the host's thread loaded: every thread serves the same config, whatever the file holds now.
  const config = parseConfig(data.configText, data.configFile, { env: data.env });
  const services = await createServices(config, { role: { kind: 'worker', shared: data.shared } });
  const starting = new Closers();
  starting.add(() => services.close());
  const serving = await startServing(config, services, { env: data.env, port: data.port, reusePort: true, collectWhenQuiet: true }, starting);
  // The host's thread says the gateway listens, once every worker does.
  services.logger.info({ url: serving.url, config: config.file, store: storeName(config) }, 'worker listening');
  return { services, serving };
}

/** Answers the host's thread, and says it listens. */
function serve(port: NonNullable<typeof parentPort>, { services, serving }: { services: Services; serving: Serving }): void {
  const { logger } = services;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const timeoutMs = serving.config.shutdownTimeoutMs;
      logger.info({ timeoutMs }, 'stopping: draining connections');
      await serving.close(timeoutMs);
      await services.close();
      logger.info('stopped');
    })());
  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'prepare': {
        const prepared = serving.prepare(message.text);
        // The compiled config stays here: only the verdict crosses to the host's thread.
        port.postMessage({ type: 'prepared', id: message.id, result: prepared.ok ? { ok: true } : prepared } satisfies FromWorker);
        return;
      }
      case 'commit':
        serving.commit();
        return;
      case 'discard':
        serving.discard();
        return;
      case 'metrics':
        services.metrics.registry.getMetricsAsJSON().then(
          (metrics) => port.postMessage({ type: 'metrics', id: message.id, metrics } satisfies FromWorker),
          (err: unknown) => {
            logger.error({ err }, 'reading the metrics failed');
            port.postMessage({ type: 'metrics', id: message.id, metrics: [] } satisfies FromWorker);
          },
        );
        return;
      case 'stop':
        stop().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'stopping failed');
            process.exit(1);
          },
        );
    }
  });
  port.postMessage({ type: 'listening' } satisfies FromWorker);
}

const port = parentPort!;
// No top-level await: the single executable runs this bundled as a CommonJS script.
start(workerData as WorkerData).then(
  (started) => serve(port, started),
  (err: unknown) => {
    // The host's thread hears of it through the worker's error event, and stops.
    throw err;
  },
);
