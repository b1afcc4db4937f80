// A serving gateway: the services, the compiled runtime the listener hands each request to, the
// portal and the admin listener; reload swaps the runtime, close drains and stops.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { readiness, startAdminListener, type AdminListener } from './admin-listener/server.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from './config/load.ts';
import { checkCertificate, listen, type Listener, type TlsFiles } from './http/listener.ts';
import { startPortal } from './portal/server.ts';
import { nextConfig, reloadQueue, type ReloadResult, type ReloadTrigger } from './runtime/reload.ts';
import { compileRuntime, type Runtime } from './runtime/index.ts';
import { exposition } from './metrics.ts';
import { createServices, type Services } from './services.ts';
import type { Store } from './store/port/index.ts';

export interface GatewayOptions {
  config: Config;
  /** What ${VAR} in the file is substituted with when a reload reads it again. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Overrides the listener's port from the config (0: any free port). */
  port?: number;
  /** Overrides the admin listener's port from the config (0: any free port). */
  adminPort?: number;
  logger?: Logger;
  clock?: () => number;
  store?: Store;
  /**
   * A worker of several (src/workers.ts): it shares the main thread's counters and store signal,
   * listens with SO_REUSEPORT beside the other workers, and leaves the store's upkeep, the portal
   * and the admin listener to the main thread.
   */
  worker?: { shared: Services['shared'] };
}

export interface Gateway {
  url: string;
  port: number;
  /** The developer portal's address, when the config declares one. */
  portalUrl: string | undefined;
  /** The admin listener's address, unless the config turns it off. */
  adminUrl: string | undefined;
  services: Services;
  /**
   * Loads the config file again (or `text`, as the main thread read it once for every worker)
   * and compiles it, holding the result for commit(); or says why it cannot.
   */
  prepare(text?: string): ReloadResult;
  /** Swaps in what prepare() compiled, in one step; the old runtime closes once its calls are done. */
  commit(): void;
  /** Drops what prepare() compiled. */
  discard(): void;
  /** prepare() and commit(), one reload at a time, with its audit line and metric. */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** Stops accepting, drains the connections, waits for calls in flight (shutdownTimeout), saves and closes. */
  close(): Promise<void>;
}

/** A config compiled and ready to swap in. */
interface Prepared {
  config: Config;
  runtime: Runtime;
  tls: TlsFiles | undefined;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  let config = options.config;
  const services = await createServices(config, {
    role: options.worker === undefined ? { kind: 'main' } : { kind: 'worker', shared: options.worker.shared },
    ...(options.logger && { logger: options.logger }),
    ...(options.clock && { clock: options.clock }),
    ...(options.store && { store: options.store }),
  });
  const { logger } = services;
  const starting = new Closers();
  starting.add(() => services.close());
  let runtime = await starting.open(async () => compileRuntime(config, services), (r) => r.close());
  const listener: Listener = await starting.open(
    () =>
      listen((req, res) => runtime.handle(req, res), config.listen.host, options.port ?? config.listen.port, {
        reusePort: options.worker !== undefined,
        tls: config.listen.tls && readTls(config.listen.tls),
        timeouts: config.listen.timeouts,
        onError: (err) => logger.error({ err }, 'request handler failed'),
      }),
    (l) => l.drain(0),
  );
  // With workers, the main thread serves the portal (src/workers.ts).
  const portal = options.worker === undefined ? await starting.open(() => startPortal(config, services, () => config), (p) => p?.drain(0)) : undefined;

  let stopping: Promise<void> | undefined;
  let prepared: Prepared | undefined;
  /** Runtimes a reload replaced whose calls are not done yet: a stop waits for them too. */
  const retiring = new Set<Runtime>();

  function prepare(text?: string): ReloadResult {
    discard();
    if (stopping !== undefined) return { ok: false, errors: ['the gateway is stopping'] };
    const next = nextConfig(config, options.env ?? {}, text);
    if (!next.ok) return next;
    let compiled: Runtime | undefined;
    try {
      // The certificate files may have changed since the file was loaded: read again, and tried here.
      const tls = next.config.listen.tls && readTls(next.config.listen.tls);
      if (tls !== undefined) checkCertificate(tls);
      compiled = compileRuntime(next.config, services);
      prepared = { config: next.config, runtime: compiled, tls };
      return { ok: true };
    } catch (err) {
      void compiled?.close();
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
    portal?.setTimeouts(next.config.listen.timeouts);
    runtime = next.runtime;
    config = next.config;
    retiring.add(old);
    old
      .close()
      .catch((err: unknown) => logger.error({ err }, 'closing the previous config failed'))
      .finally(() => retiring.delete(old));
  }

  function discard(): void {
    void prepared?.runtime.close();
    prepared = undefined;
  }

  const reload = reloadQueue(
    () => {
      const result = prepare();
      if (result.ok) commit();
      return result;
    },
    { logger, metrics: services.metrics, file: () => config.file },
  );

  const admin: AdminListener | undefined =
    options.worker === undefined && config.admin !== undefined
      ? await starting.open(
          () =>
            startAdminListener(config.admin!.host, options.adminPort ?? config.admin!.port, {
              logger,
              ready: readiness(services.store, () => stopping !== undefined),
              reload: (ip) => reload({ via: 'admin', ip }),
              metrics: () => exposition(services.metrics.registry, []),
            }),
          (a) => a.close(),
        )
      : undefined;

  // With workers, the main thread says the gateway listens, once all of them do (src/workers.ts).
  logger.info({ url: listener.url, config: config.file, store: config.store.driver === 'sqlite' ? config.store.path : `redis ${config.store.connection.kind}`, admin: admin?.url }, options.worker === undefined ? 'gateway listening' : 'worker listening');
  return {
    url: listener.url,
    port: listener.port,
    portalUrl: portal?.url,
    adminUrl: admin?.url,
    services,
    prepare,
    commit,
    discard,
    reload: (trigger = { via: 'signal' }) => reload(trigger),
    close() {
      stopping ??= (async () => {
        const timeoutMs = config.shutdownTimeoutMs;
        const deadline = performance.now() + timeoutMs;
        logger.info({ timeoutMs }, 'stopping: draining connections');
        discard();
        await Promise.all([listener.drain(timeoutMs), portal?.drain(timeoutMs)]);
        // Calls still running, on this config or one a reload replaced, get what is left of the
        // timeout; then their upstream calls are cut, so that the store closes under none.
        const runtimes = [runtime, ...retiring];
        const closed = Promise.all(runtimes.map((r) => r.close()));
        const left = Math.max(0, deadline - performance.now());
        if ((await Promise.race([closed.then(() => true), sleep(left, false, { ref: false })])) === false) {
          logger.warn('stopping: cutting the calls still in flight at the end of shutdownTimeout');
          for (const r of runtimes) r.cut();
          await closed;
        }
        await admin?.close();
        await services.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}

/** What a start has opened so far, closed newest first when a later part cannot start (a port taken), so the process ends. */
export class Closers {
  readonly #closers: (() => Promise<unknown> | undefined)[] = [];

  add(close: () => Promise<unknown> | undefined): void {
    this.#closers.unshift(close);
  }

  /** Starts a part and remembers how to close it; when it cannot start, closes what was opened and rethrows. */
  async open<T>(start: () => Promise<T>, close: (part: T) => Promise<unknown> | undefined): Promise<T> {
    let part: T;
    try {
      part = await start();
    } catch (err) {
      for (const closeOne of this.#closers) await closeOne()?.catch(() => {});
      throw err;
    }
    this.add(() => close(part));
    return part;
  }
}

function readTls(files: { cert: string; key: string }): TlsFiles {
  return { cert: readFileSync(files.cert), key: readFileSync(files.key) };
}
