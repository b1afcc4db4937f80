// Wires the store, clock, logger, authorization servers and routes together and starts serving.
import type { Logger } from 'pino';
import { createAuthServerClient } from './authserver/client.ts';
import { compileRoutes } from './config/compile.ts';
import type { Config } from './config/load.ts';
import type { Deps } from './deps.ts';
import { createHandler, listen } from './http/server.ts';
import { createLogger } from './log.ts';
import { Counters, DEFAULT_SLOTS, persistCounters } from './policies/counters.ts';
import { startPortal } from './portal/server.ts';
import { openStore, storeShared } from './store/open.ts';
import type { Store } from './store/port/index.ts';
import { loadSecretKey } from './store/secret-key.ts';
import { startUsage } from './usage.ts';
import { createPasswords } from './admin/passwords.ts';
import { createMailer } from './mail.ts';

export interface GatewayOptions {
  config: Config;
  /** Overrides the listener's port from the config (0: any free port). */
  port?: number;
  logger?: Logger;
  clock?: () => number;
  store?: Store;
  /**
   * A worker of several (src/workers.ts): it shares the main thread's counters, listens with
   * SO_REUSEPORT beside the other workers, and leaves saving counters and purging to the main thread.
   */
  worker?: { counters: Counters; storeShared: SharedArrayBuffer };
}

export interface Gateway {
  url: string;
  port: number;
  /** The developer portal's address, when the config declares one. */
  portalUrl: string | undefined;
  deps: Deps;
  close(): Promise<void>;
}

const PURGE_EVERY_MS = 60_000;

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.log.level);
  const store = options.store ?? openStore(config, {
      warn: (message) => logger.warn(message),
      serving: options.worker === undefined ? { shared: storeShared(), maintains: true } : { shared: options.worker.storeShared, maintains: false },
    });
  const clock = options.clock ?? Date.now;
  const counters = options.worker?.counters ?? new Counters({ slots: DEFAULT_SLOTS });
  const saving = options.worker === undefined ? await persistCounters(counters, store, clock, logger) : undefined;
  const deps: Deps = {
    config,
    store,
    secretKey: loadSecretKey(config.store.secretKeyFile),
    clock,
    logger,
    authServers: new Map([...config.authServers].map(([name, s]) => [name, createAuthServerClient(s)])),
    counters,
    usage: startUsage(store, logger),
    passwords: createPasswords(),
    mailer: config.mail && createMailer(config.mail, logger),
  };
  const routes = compileRoutes(deps);
  const listener = await listen(createHandler(deps, routes), config.listen.host, options.port ?? config.listen.port, {
    reusePort: options.worker !== undefined,
    timeouts: config.listen.timeouts,
  });

  const purge = options.worker === undefined ? startPurging(store, clock, logger) : undefined;
  // With workers, the main thread serves the portal (src/workers.ts).
  const portal = options.worker === undefined ? await startPortal(deps) : undefined;

  logger.info({ url: listener.url, config: config.file, store: config.store.path }, 'gateway listening');
  return {
    url: listener.url,
    port: listener.port,
    portalUrl: portal?.url,
    deps,
    async close() {
      clearInterval(purge);
      await portal?.close();
      await listener.close();
      await routes.close();
      await Promise.all([...deps.authServers.values()].map((a) => a.close()));
      // Counts that cannot be saved now (the store failing) are logged, and the rest still closes.
      await saving?.close().catch((err: unknown) => logger.error({ err }, 'saving quota counters failed at close'));
      await deps.usage.close();
      deps.mailer?.close();
      await store.close();
    },
  };
}

/** Removes expired tokens and ended quota windows every minute. */
export function startPurging(store: Store, clock: () => number, logger: Logger): NodeJS.Timeout {
  const timer = setInterval(() => {
    store.purgeExpired(clock()).catch((err: unknown) => logger.error({ err }, 'purging expired tokens failed'));
  }, PURGE_EVERY_MS);
  timer.unref();
  return timer;
}
