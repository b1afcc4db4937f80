// How the host serves: on its own thread (in-process.ts) or through worker threads
// (worker-threads.ts). The host owns everything else (services, portal, admin listener, reload
// queue, close order) and asks its topology only what differs between the two.
import type { Config } from '../config/load.ts';
import type { MetricsJson } from '../metrics.ts';

/** A config loaded again and compiled wherever it serves, or why it could not be. */
export type Prepared = { ok: true; config: Config } | { ok: false; errors: readonly string[] };

export interface Topology {
  url: string;
  port: number;
  /** What the "gateway listening" line says of the topology. */
  described: Record<string, unknown>;
  /**
   * Loads `current`'s file again and compiles it wherever it serves, holding the result for
   * commit(); when it cannot, nothing is held and nothing has changed.
   */
  prepare(current: Config): Promise<Prepared> | Prepared;
  /** Swaps in what prepare() compiled, everywhere. */
  commit(): void;
  /** Why the gateway cannot serve though its store answers (a worker exited), or undefined. */
  unready(): string | undefined;
  /** The gateway's metrics counted outside this thread's registry. */
  metrics(): Promise<MetricsJson[]>;
  /** Stops accepting, drains, waits for calls in flight (`timeoutMs`) and closes what serves. */
  stop(timeoutMs: number): Promise<void>;
}
