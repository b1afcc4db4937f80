// The host: the long-lived services, the portal, the admin listener, the reload queue and the close
// order, around a topology that serves: the host's own thread (in-process.ts), or `workers: N`
// worker threads (worker-threads.ts). Reload swaps the config everywhere or nowhere; close drains
// and stops.
import type { Logger } from 'pino';
import { readiness, startAdminListener, type AdminListener } from '../admin-listener/server.ts';
import type { Config } from '../config/load.ts';
import { exposition } from '../metrics.ts';
import { startManagement } from '../management/server.ts';
import { startPortal } from '../portal/server.ts';
import { reloadQueue, type ReloadResult, type ReloadTrigger } from '../runtime/reload.ts';
import { createServices, type Services } from '../services.ts';
import type { Store } from '../store/port/index.ts';
import { Closers } from './closers.ts';
import { inProcess, storeName } from './in-process.ts';
import type { Topology } from './topology.ts';
import { readOnce, workerThreads } from './worker-threads.ts';

export interface GatewayOptions {
  /** With `workers` over 1, served by that many worker threads; else by this thread. */
  config: Config;
  /** What ${VAR} in the file is substituted with when a reload reads it again. */
  env?: Record<string, string | undefined>;
  /** Overrides the listener's port from the config (0: any free port). */
  port?: number;
  /** Overrides the admin listener's port from the config (0: any free port). */
  adminPort?: number;
  /** Overrides the management API's port from the config (0: any free port). */
  managementPort?: number;
  /** Gives memory back when the gateway falls quiet (memory.ts): for the gateway of a process, not one of a test's many. */
  collectWhenQuiet?: boolean;
  logger?: Logger;
  clock?: () => number;
  store?: Store;
}

export interface Gateway {
  url: string;
  port: number;
  /** The developer portal's address, when the config declares one. */
  portalUrl: string | undefined;
  /** The admin listener's address, unless the config turns it off. */
  adminUrl: string | undefined;
  /** The management API's address, when the config has a `management` section. */
  managementUrl: string | undefined;
  /** This thread's services (with worker threads, the store's upkeep and the portal's). */
  services: Services;
  /** Loads the config file again and swaps it in everywhere, one reload at a time, with its audit line and metric. */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** Stops accepting, drains the connections, waits for calls in flight (shutdownTimeout), saves and closes. */
  close(): Promise<void>;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const env = options.env ?? {};
  const once = options.config.workers > 1 ? readOnce(options.config, env) : undefined;
  let config = once?.config ?? options.config;
  // Opened first: it runs the migrations before any worker opens the file.
  const services = await createServices(config, {
    role: { kind: 'main' },
    ...(options.logger && { logger: options.logger }),
    ...(options.clock && { clock: options.clock }),
    ...(options.store && { store: options.store }),
  });
  const { logger } = services;
  const starting = new Closers();
  starting.add(() => services.close());
  const serving = { env, port: options.port, collectWhenQuiet: options.collectWhenQuiet === true };
  const topology: Topology = once === undefined ? await inProcess(config, services, serving, starting) : await workerThreads(config, once.text, services, serving, starting);
  // The portal runs on this thread whatever the topology; worker threads add their calls to the store's usage counts themselves.
  const portal = await starting.open(
    () => startPortal(config, services, () => config),
    (p) => p?.drain(0),
  );
  // On this thread too: it acts on the store, and reads the config serving now.
  const management = await starting.open(
    () => startManagement(config, services, () => config, options.managementPort),
    (m) => m?.drain(0),
  );

  let stopping: Promise<void> | undefined;
  const reload = reloadQueue(
    async (): Promise<ReloadResult> => {
      if (stopping !== undefined) return { ok: false, errors: ['the gateway is stopping'] };
      const next = await topology.prepare(config);
      if (!next.ok) return next;
      topology.commit();
      config = next.config;
      logger.level = config.log.level;
      void services.keys.configure(config.oauth.signing);
      portal?.setTimeouts(config.listen.timeouts);
      return { ok: true };
    },
    { logger, metrics: services.metrics, file: () => config.file },
  );

  const ready = readiness(services.store, () => stopping !== undefined);
  const admin: AdminListener | undefined =
    config.admin === undefined
      ? undefined
      : await starting.open(
          () =>
            startAdminListener(config.admin!.host, options.adminPort ?? config.admin!.port, {
              logger,
              ready: async () => (stopping === undefined ? topology.unready() : undefined) ?? ready(),
              reload: (ip) => reload({ via: 'admin', ip }),
              metrics: async () => exposition(services.metrics.registry, await topology.metrics()),
            }),
          (a) => a.close(),
        );

  logger.info({ url: topology.url, ...topology.described, config: config.file, store: storeName(config), admin: admin?.url }, 'gateway listening');
  return {
    url: topology.url,
    port: topology.port,
    portalUrl: portal?.url,
    adminUrl: admin?.url,
    managementUrl: management?.url,
    services,
    reload: (trigger = { via: 'signal' }) => reload(trigger),
    close() {
      stopping ??= (async () => {
        const timeoutMs = config.shutdownTimeoutMs;
        logger.info({ timeoutMs }, 'stopping: draining connections');
        await Promise.all([topology.stop(timeoutMs), portal?.drain(timeoutMs), management?.drain(timeoutMs)]);
        await admin?.close();
        await services.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
