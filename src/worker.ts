// One worker thread of `workers: N` (src/workers.ts): a whole gateway on the shared port, which
// reloads and stops when the main thread says so.
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfigFile } from './config/load.ts';
import { startGateway } from './main.ts';
import type { FromWorker, ToWorker, WorkerData } from './workers.ts';

const data = workerData as WorkerData;
const config = loadConfigFile(data.configFile, { env: data.env });
const port = parentPort!;
// No top-level await: the single executable runs this bundled as a CommonJS script.
void startGateway({ config, env: data.env, port: data.port, worker: { shared: data.shared } }).then((gateway) => {
  port.on('message', (message: ToWorker) => {
    if (message.type === 'reload') {
      void gateway.reload(message.text).then((result) => port.postMessage({ type: 'reloaded', id: message.id, result } satisfies FromWorker));
    } else if (message.type === 'metrics') {
      void gateway.services.metrics.registry.getMetricsAsJSON().then((metrics) => port.postMessage({ type: 'metrics', id: message.id, metrics } satisfies FromWorker));
    } else {
      void gateway.close().then(() => process.exit(0));
    }
  });
  port.postMessage({ type: 'listening' } satisfies FromWorker);
});
