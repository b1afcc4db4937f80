// Memory given back when the gateway falls quiet. Start-up (the bundle's modules, the config's
// compilation) and a burst of calls leave V8's young generation grown to its 8 MB semi-spaces and
// old space full of garbage that no collection reclaims while the thread has nothing to do: an idle
// gateway on the example config kept about 150 MB. A full collection that also shrinks the young
// generation and compacts old space (V8's "last resort", the one it runs under memory pressure)
// brings it near 110 MB and costs 40 to 60 ms: so it runs only once half a second has gone by without a
// call, after start-up, after a reload, and after calls grew the heap by GROWTH_BYTES.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Half a second without a call counts as quiet. */
export const QUIET_MS = 500;
/** Calls that grew V8's heap by this much since the last collection earn another (the young generation alone grows by 14 MB). */
export const GROWTH_BYTES = 8 * 1024 * 1024;
/** At most one collection every so often, however the heap grows between quiet seconds. */
export const MIN_INTERVAL_MS = 30_000;

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
let v8Collect: Collect | undefined;

/**
 * V8's own collector, as `--expose-gc` gives it to a new context: the flag set now reaches only
 * contexts made after it, so the gateway's own (and its dependencies') never see a `gc` global.
 */
function fullCollection(): void {
  if (v8Collect === undefined) {
    setFlagsFromString('--expose-gc');
    v8Collect = runInNewContext('gc') as Collect;
  }
  v8Collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

export interface QuietCollector {
  /** Counts a call; a call in the last half second keeps the collection waiting. */
  call(): void;
  /** What the timer does every quietMs: collects when no call came since the last tick and a collection is due (a test calls it itself). */
  tick(): void;
  /** Asks for a collection at the next quiet moment (a reload made the previous config garbage). */
  due(): void;
  stop(): void;
}

export interface QuietOptions {
  quietMs?: number;
  minIntervalMs?: number;
  /** The collection (a test counts them). */
  collect?: () => void;
  /** The heap's committed size, whose growth asks for another collection. */
  heapBytes?: () => number;
}

/** Collects this thread's garbage at quiet moments, from start-up on. */
export function collectWhenQuiet(options: QuietOptions = {}): QuietCollector {
  const { quietMs = QUIET_MS, minIntervalMs = MIN_INTERVAL_MS, collect = fullCollection, heapBytes = () => getHeapStatistics().total_heap_size } = options;
  let calls = 0;
  let seen = 0;
  let due = true;
  let lastAt = Number.NEGATIVE_INFINITY;
  let heapAfter = 0;
  function tick(): void {
    const quiet = calls === seen;
    seen = calls;
    if (!quiet || performance.now() - lastAt < minIntervalMs) return;
    if (!due && heapBytes() - heapAfter < GROWTH_BYTES) return;
    collect();
    due = false;
    lastAt = performance.now();
    heapAfter = heapBytes();
  }
  const timer = setInterval(tick, quietMs);
  timer.unref();
  return {
    call() {
      calls++;
    },
    tick,
    due() {
      due = true;
      lastAt = Number.NEGATIVE_INFINITY;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
