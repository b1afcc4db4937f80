// Entry of a worker thread: the same tsx loader as bin/gateway.js, then the worker itself.
import { register } from 'tsx/esm/api';

register();
await import('../src/host/worker.ts');
