// A serving gateway: the services, the compiled runtime the listener hands each request to, the
// portal and the admin listener; reload swaps the runtime, close drains and stops.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { readiness, startAdminListener, type AdminListener } from './admin-listener/server.ts';
import { ConfigError, loadConfigFile, parseConfig, type Config } from './config/load.ts';
import { listen, type Listener, type TlsFiles } from './http/listener.ts';
import { startPortal } from './portal/server.ts';
import { restartNeeded, type ReloadResult } from './runtime/reload.ts';
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
  /** The runtime serving now. */
  runtime(): Runtime;
  /**
   * Reads the config file again (or takes its `text`, as the main thread read it for every
   * worker) and swaps it in, or keeps the old one and says why.
   */
  reload(text?: string): Promise<ReloadResult>;
  /** Stops accepting, drains the connections, waits for calls in flight (shutdownTimeout), saves and closes. */
  close(): Promise<void>;
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
  let runtime = compileRuntime(config, services);
  // What is open so far closes, newest first, when a later part cannot start (a port taken), so the process ends.
  const opened: (() => Promise<void>)[] = [() => runtime.close(), () => services.close()];
  const startOrClose = async <T>(start: () => Promise<T>): Promise<T> => {
    try {
      return await start();
    } catch (err) {
      for (const close of opened) await close().catch(() => {});
      throw err;
    }
  };
  const listener: Listener = await startOrClose(() =>
    listen((req, res) => runtime.handle(req, res), config.listen.host, options.port ?? config.listen.port, {
      reusePort: options.worker !== undefined,
      tls: config.listen.tls && readTls(config.listen.tls),
      timeouts: config.listen.timeouts,
    }),
  );
  opened.unshift(() => listener.drain(0));
  // With workers, the main thread serves the portal (src/workers.ts).
  const portal = options.worker === undefined ? await startOrClose(() => startPortal(config, services, () => config)) : undefined;
  if (portal !== undefined) opened.unshift(() => portal.drain(0));

  let stopping: Promise<void> | undefined;
  let reloading: Promise<ReloadResult> = Promise.resolve({ ok: true });

  /** Compiles `next` and swaps it in; the old runtime finishes its calls, then closes. */
  function swap(next: Config): ReloadResult {
    let compiled: Runtime | undefined;
    logger.level = next.log.level;
    try {
      // The certificate files may have changed since the file was checked: read, checked and set last.
      const tls = next.listen.tls && readTls(next.listen.tls);
      compiled = compileRuntime(next, services);
      if (tls !== undefined) listener.setCertificate(tls);
    } catch (err) {
      logger.level = config.log.level;
      void compiled?.close();
      return { ok: false, errors: [`the config could not be applied: ${(err as Error).message}`] };
    }
    const old = runtime;
    runtime = compiled;
    config = next;
    listener.setTimeouts(next.listen.timeouts);
    old.close().catch((err: unknown) => logger.error({ err }, 'closing the previous config failed'));
    return { ok: true };
  }

  function reload(text?: string): Promise<ReloadResult> {
    // One at a time: a second reload reads the file after the first has swapped.
    reloading = reloading.then(() => {
      if (stopping !== undefined) return { ok: false, errors: ['the gateway is stopping'] } as const;
      let result: ReloadResult;
      try {
        const next = nextConfig(config, options.env ?? {}, text);
        result = next.ok ? swap(next.config) : next;
      } catch (err) {
        // Never a rejected chain: the next reload must still run.
        result = { ok: false, errors: [`the reload failed: ${(err as Error).message}`] };
      }
      // A worker's reload is the main thread's to log (src/workers.ts), once for all.
      if (options.worker === undefined) logReload(services, config.file, result);
      return result;
    });
    return reloading;
  }

  const admin: AdminListener | undefined =
    options.worker === undefined && config.admin !== undefined
      ? await startOrClose(() =>
          startAdminListener(config.admin!.host, options.adminPort ?? config.admin!.port, {
            logger,
            ready: readiness(services.store, () => stopping !== undefined),
            reload,
            metrics: () => exposition(services.metrics.registry, []),
          }),
        )
      : undefined;

  // With workers, the main thread says the gateway listens, once all of them do (src/workers.ts).
  logger.info({ url: listener.url, config: config.file, store: config.store.path, admin: admin?.url }, options.worker === undefined ? 'gateway listening' : 'worker listening');
  return {
    url: listener.url,
    port: listener.port,
    portalUrl: portal?.url,
    adminUrl: admin?.url,
    services,
    runtime: () => runtime,
    reload,
    close() {
      stopping ??= (async () => {
        logger.info({ timeoutMs: config.shutdownTimeoutMs }, 'stopping: draining connections');
        await Promise.all([listener.drain(config.shutdownTimeoutMs), portal?.drain(config.shutdownTimeoutMs)]);
        await runtime.close();
        await admin?.close();
        await services.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}

/**
 * `current`'s file loaded again (or `text`, read from it once for every thread), unless it does
 * not load or changes what only a restart can: the result then says why.
 */
export function nextConfig(current: Config, env: Readonly<Record<string, string | undefined>>, text?: string): { ok: true; config: Config } | { ok: false; errors: readonly string[] } {
  let next: Config;
  try {
    next = text === undefined ? loadConfigFile(current.file, { env }) : parseConfig(text, current.file, { env });
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, errors: err.message.split('\n') };
    throw err;
  }
  const errors = restartNeeded(current, next);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config: next };
}

/** The audit line and the metric of a reload: what file, and whether it now serves or why it does not. */
export function logReload({ logger, metrics }: Pick<Services, 'logger' | 'metrics'>, file: string, result: ReloadResult): void {
  metrics.reloads.labels(result.ok ? 'reloaded' : 'refused').inc();
  if (result.ok) logger.info({ audit: 'config.reload', file, result: 'reloaded' }, 'config reloaded');
  else logger.error({ audit: 'config.reload', file, result: 'refused', errors: result.errors }, 'config reload refused; the previous config keeps serving');
}

function readTls(files: { cert: string; key: string }): TlsFiles {
  return { cert: readFileSync(files.cert), key: readFileSync(files.key) };
}
