// The serving part of a gateway: the compiled runtime and the listener that hands it each request.
// A reload is two steps, so that several threads take a new config all or none: prepare compiles
// it and holds it, commit swaps it in, discard drops it. The in-process topology is one of these on
// the host's thread; each worker thread (worker.ts) runs one of its own.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Config } from '../config/load.ts';
import { checkCertificate, listen, type Listener, type TlsFiles } from '../http/listener.ts';
import { compileRuntime, type Runtime } from '../runtime/index.ts';
import { nextConfig } from '../runtime/reload.ts';
import type { Services } from '../services.ts';
import type { Closers } from './closers.ts';
import { collectWhenQuiet } from './memory.ts';
import type { Prepared, Topology } from './topology.ts';

export interface Serving {
  url: string;
  port: number;
  /** The config it serves: the one it started with, or the last one committed. */
  readonly config: Config;
  /**
   * Loads the config file again (or `text`, as the host's thread read it once for every worker)
   * and compiles it, holding the result for commit(); or says why it cannot.
   */
  prepare(text?: string): Prepared;
  /** Swaps in what prepare() compiled, in one step; the old runtime closes once its calls are done. */
  commit(): void;
  /** Drops what prepare() compiled. */
  discard(): void;
  /** Stops accepting, drains the connections and waits for calls in flight (`timeoutMs`), then closes the runtimes. */
  close(timeoutMs: number): Promise<void>;
}

export interface ServingOptions {
  /** What ${VAR} in the file is substituted with when a reload reads it again. */
  env: Readonly<Record<string, string | undefined>>;
  /** Overrides the listener's port from the config (0: any free port). */
  port: number | undefined;
  /** Beside other threads on the same port (worker threads). */
  reusePort: boolean;
  /**
   * Gives memory back when the thread falls quiet (memory.ts): for a thread that serves alone in
   * its isolate (the CLI's gateway, a worker thread), not for one gateway among a test's many.
   */
  collectWhenQuiet: boolean;
}

/** A config compiled and ready to swap in. */
interface Compiled {
  config: Config;
  runtime: Runtime;
  tls: TlsFiles | undefined;
}

/** Compiles `config` and listens; what it opens is added to `starting`. */
export async function startServing(config: Config, services: Services, options: ServingOptions, starting: Closers): Promise<Serving> {
  const { logger } = services;
  let runtime = await starting.open(
    async () => compileRuntime(config, services),
    (r) => r.close(),
  );
  const memory = options.collectWhenQuiet ? collectWhenQuiet() : undefined;
  starting.add(() => void memory?.stop());
  const handle: Handler = (req, res) => {
    memory?.call();
    return runtime.handle(req, res);
  };
  const listener = await starting.open(
    () => listenFor(config, options, handle, logger),
    (l) => l.drain(0),
  );

  let closing = false;
  let prepared: Compiled | undefined;
  /** Runtimes a reload replaced whose calls are not done yet: a stop waits for them too. */
  const retiring = new Set<Runtime>();

  function prepare(text?: string): Prepared {
    discard();
    if (closing) return { ok: false, errors: ['the gateway is stopping'] };
    const next = nextConfig(config, options.env, text);
    if (!next.ok) return next;
    try {
      prepared = compile(next.config, services);
      return next;
    } catch (err) {
      return { ok: false, errors: [`the config could not be applied: ${(err as Error).message}`] };
    }
  }

  function commit(): void {
    if (prepared === undefined) return;
    const next = prepared;
    prepared = undefined;
    const old = runtime;
    logger.level = next.config.log.level;
    if (next.tls !== undefined) listener.setCertificate(next.tls);
    listener.setTimeouts(next.config.listen.timeouts);
    runtime = next.runtime;
    config = next.config;
    retiring.add(old);
    memory?.due();
    old
      .close()
      .catch((err: unknown) => logger.error({ err }, 'closing the previous config failed'))
      .finally(() => retiring.delete(old));
  }

  function discard(): void {
    void prepared?.runtime.close();
    prepared = undefined;
  }

  async function close(timeoutMs: number): Promise<void> {
    closing = true;
    memory?.stop();
    const deadline = performance.now() + timeoutMs;
    discard();
    const cut = await listener.drain(timeoutMs);
    // Calls still running, on this config or one a reload replaced, get what is left of the timeout.
    await closeRuntimes([runtime, ...retiring], deadline, cut > 0, logger);
  }

  return {
    url: listener.url,
    port: listener.port,
    get config() {
      return config;
    },
    prepare,
    commit,
    discard,
    close,
  };
}

type Handler = Parameters<typeof listen>[0];

/** The listener `config` and `options` describe, handing each request to `handle`. */
function listenFor(config: Config, options: ServingOptions, handle: Handler, logger: Logger): Promise<Listener> {
  return listen(handle, config.listen.host, options.port ?? config.listen.port, {
    reusePort: options.reusePort,
    tls: config.listen.tls && readTls(config.listen.tls),
    timeouts: config.listen.timeouts,
    onError: (err) => logger.error({ err }, 'request handler failed'),
  });
}

/** `config` compiled, its certificate files read again (they may have changed since the file was loaded) and tried; throws why it cannot serve. */
function compile(config: Config, services: Services): Compiled {
  const tls = config.listen.tls && readTls(config.listen.tls);
  if (tls !== undefined) checkCertificate(tls);
  return { config, runtime: compileRuntime(config, services), tls };
}

/**
 * Closes `runtimes` once their calls are done; at `deadline` their upstream calls are cut, so that
 * the store closes under none. `drainCut`: the drain already cut calls at the end of
 * shutdownTimeout, so the rest are cut at once; the warning says so either way.
 */
async function closeRuntimes(runtimes: Runtime[], deadline: number, drainCut: boolean, logger: Logger): Promise<void> {
  const closed = Promise.all(runtimes.map((r) => r.close()));
  const inTime = !drainCut && (await Promise.race([closed.then(() => true), sleep(Math.max(0, deadline - performance.now()), false, { ref: false })]));
  if (!inTime) {
    logger.warn('stopping: cutting the calls still in flight at the end of shutdownTimeout');
    for (const r of runtimes) r.cut();
    await closed;
  }
}

/** One thread serves: the host's own. */
export async function inProcess(config: Config, services: Services, options: Omit<ServingOptions, 'reusePort'>, starting: Closers): Promise<Topology> {
  const serving = await startServing(config, services, { ...options, reusePort: false }, starting);
  return {
    url: serving.url,
    port: serving.port,
    described: {},
    prepare: () => serving.prepare(),
    commit: () => serving.commit(),
    unready: () => undefined,
    metrics: async () => [],
    stop: (timeoutMs) => serving.close(timeoutMs),
  };
}

/** The store as the "listening" lines name it. */
export function storeName(config: Config): string {
  return config.store.driver === 'sqlite' ? config.store.path : `redis ${config.store.connection.kind}`;
}

function readTls(files: { cert: string; key: string; clientCa?: string | undefined }): TlsFiles {
  return { cert: readFileSync(files.cert), key: readFileSync(files.key), clientCa: files.clientCa === undefined ? undefined : readFileSync(files.clientCa) };
}
