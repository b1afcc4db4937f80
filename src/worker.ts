// One worker thread of `workers: N` (src/workers.ts): a whole gateway on the shared port.
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfigFile } from './config/load.ts';
import { startGateway } from './main.ts';
import { Counters } from './policies/counters.ts';
import type { WorkerData } from './workers.ts';

const data = workerData as WorkerData;
const config = loadConfigFile(data.configFile, { env: data.env });
// No top-level await: the single executable runs this bundled as a CommonJS script.
void startGateway({ config, port: data.port, worker: { counters: new Counters({ buffer: data.counters }), storeShared: data.storeShared } }).then((gateway) => {
  parentPort!.once('message', () => {
    void gateway.close().then(() => process.exit(0));
  });
  parentPort!.postMessage('listening');
});
