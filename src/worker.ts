// One worker thread of `workers: N` (src/workers.ts): a whole gateway on the shared port, which
// prepares, commits or discards a reload and stops when the main thread says so.
import { parentPort, workerData } from 'node:worker_threads';
import { parseConfig } from './config/load.ts';
import { startGateway } from './main.ts';
import type { FromWorker, ToWorker, WorkerData } from './workers.ts';

const data = workerData as WorkerData;
const port = parentPort!;
// The text the main thread loaded: every thread serves the same config, whatever the file holds now.
const config = parseConfig(data.configText, data.configFile, { env: data.env });
// No top-level await: the single executable runs this bundled as a CommonJS script.
startGateway({ config, env: data.env, port: data.port, worker: { shared: data.shared } }).then(
  (gateway) => {
    const { logger } = gateway.services;
    port.on('message', (message: ToWorker) => {
      switch (message.type) {
        case 'prepare':
          port.postMessage({ type: 'prepared', id: message.id, result: gateway.prepare(message.text) } satisfies FromWorker);
          return;
        case 'commit':
          gateway.commit();
          return;
        case 'discard':
          gateway.discard();
          return;
        case 'metrics':
          gateway.services.metrics.registry.getMetricsAsJSON().then(
            (metrics) => port.postMessage({ type: 'metrics', id: message.id, metrics } satisfies FromWorker),
            (err: unknown) => {
              logger.error({ err }, 'reading the metrics failed');
              port.postMessage({ type: 'metrics', id: message.id, metrics: [] } satisfies FromWorker);
            },
          );
          return;
        case 'stop':
          gateway.close().then(
            () => process.exit(0),
            (err: unknown) => {
              logger.error({ err }, 'stopping failed');
              process.exit(1);
            },
          );
      }
    });
    port.postMessage({ type: 'listening' } satisfies FromWorker);
  },
  (err: unknown) => {
    // The main thread hears of it through the worker's error event, and stops.
    throw err;
  },
);
