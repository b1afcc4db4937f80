// WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
// file (a checkpoint, with its fsyncs) inside the commit that finds the log past
// `wal_autocheckpoint` pages: on this machine 40 to 60 ms, once every hundred or so commits under
// a steady load of token requests, with every request of the process waiting. A serving
// gateway's connections raise that bound to a safety net (should the thread stop, the log still
// never grows past it), and a worker thread with its own connection checkpoints instead.
//
// A passive checkpoint copies the log without holding up writers, but under a steady stream of
// commits it never reaches the last one, and only a log copied to its end starts over from its
// beginning. So once the log is past RESTART_AT_PAGES the thread also runs a RESTART checkpoint,
// which needs the write lock and has only the pages since the passive one left to copy. SQLite's
// busy handler would lose the lock to a writer that takes it again right after each commit, so
// the thread raises a flag in shared memory first: the gateway's connections then leave the lock
// to it (their writes wait in their queue, src/store/sqlite/db.ts, not on the event loop).
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How often the thread checkpoints; the log grows by what is written in between. */
const CHECKPOINT_EVERY_MS = 200;
/** Past this many pages (4 MB) the thread restarts the log. */
const RESTART_AT_PAGES = 1000;
/** How long the thread waits for the write lock and for readers before it tries again on its next tick. */
const LOCK_WAIT_MS = 100;
/** The serving connections' own bound, in pages of 4 KiB: 80 MB (SQLite's default is 1,000). */
export const SAFETY_NET_PAGES = 20_000;

// A CommonJS script run with `eval`, so that it needs no file of its own: the same from source,
// from the bundle and from the single executable.
const CHECKPOINTER = `
const { DatabaseSync } = require('node:sqlite');
const { workerData } = require('node:worker_threads');
// The lowest priority for this thread alone (Linux keeps a nice value per thread, and names a
// thread's id in /proc/thread-self): where the gateway has one core, a checkpoint's copying
// waits for the calls instead of taking the core from them.
try {
  require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), 19);
} catch {
  // Not Linux: the thread runs at the process's priority.
}
const wants = new Int32Array(workerData.signal);
const db = new DatabaseSync(workerData.path, { timeout: workerData.lockWaitMs });
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
setInterval(() => {
  try {
    if (passive.get().log < workerData.restartAtPages) return;
    Atomics.store(wants, 0, 1);
    restart.get();
  } catch {
    // Busy, or the database failing: the serving connections' bound still holds; try again later.
  } finally {
    Atomics.store(wants, 0, 0);
  }
}, workerData.everyMs);
`;

/**
 * What the checkpoint thread and the gateway's connections share: one Int32, 1 while the thread
 * wants the write lock. Workers of `workers: N` get the main thread's.
 */
export function checkpointSignal(): SharedArrayBuffer {
  return new SharedArrayBuffer(4);
}

/** Whether the checkpoint thread is waiting for the write lock, so a writer should leave it be. */
export function checkpointWaiting(signal: Int32Array): boolean {
  return Atomics.load(signal, 0) === 1;
}

export interface Checkpointer {
  /** This thread's connection committed a write: the thread is needed from now on. */
  committed(): void;
  stop(): Promise<void>;
}

/** How often the log's size is looked at until the thread starts. */
const WATCH_EVERY_MS = 1000;
/** The log's size that starts the thread: 256 pages. */
const START_AT_BYTES = 1024 * 1024;

/**
 * Starts the checkpoint thread at the first write this thread's connection commits, or once the
 * database at `path` has a write-ahead log of START_AT_BYTES (written by another connection: a
 * worker's, `gateway admin`'s): a thread costs 20 ms of CPU and a few megabytes, which a gateway
 * that has not written yet need not spend at its start.
 */
export function watchCheckpoints(path: string, signal: SharedArrayBuffer, onError: (err: Error) => void): Checkpointer {
  let started: ReturnType<typeof startCheckpoints> | undefined;
  const start = () => {
    clearInterval(watch);
    started ??= startCheckpoints(path, signal, onError);
  };
  const watch = setInterval(() => {
    if ((statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) >= START_AT_BYTES) start();
  }, WATCH_EVERY_MS);
  watch.unref();
  return {
    committed() {
      if (started === undefined) start();
    },
    async stop() {
      clearInterval(watch);
      await started?.stop();
    },
  };
}

/** Starts checkpointing the database at `path` in a worker thread. */
function startCheckpoints(path: string, signal: SharedArrayBuffer, onError: (err: Error) => void): { stop(): Promise<void> } {
  const worker = new Worker(CHECKPOINTER, {
    eval: true,
    workerData: { path, signal, everyMs: CHECKPOINT_EVERY_MS, restartAtPages: RESTART_AT_PAGES, lockWaitMs: LOCK_WAIT_MS },
  });
  worker.on('error', onError);
  // It never keeps the process alive: the serving connections checkpoint on their own past their bound.
  worker.unref();
  return {
    async stop() {
      await worker.terminate();
    },
  };
}
