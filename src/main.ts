// Wires the store, clock, logger, authorization servers and routes together and starts serving.
import type { Logger } from 'pino';
import { createAuthServerClient } from './authserver/client.ts';
import { compileRoutes } from './config/compile.ts';
import type { Config } from './config/load.ts';
import type { Deps } from './deps.ts';
import { createHandler, listen } from './http/server.ts';
import { createLogger } from './log.ts';
import { startCounters } from './policies/counters.ts';
import { openStore } from './store/open.ts';
import type { Store } from './store/port.ts';
import { loadSecretKey } from './store/secret-key.ts';

export interface GatewayOptions {
  config: Config;
  /** Overrides the listener's port from the config (0: any free port). */
  port?: number;
  logger?: Logger;
  clock?: () => number;
  store?: Store;
}

export interface Gateway {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

const PURGE_EVERY_MS = 60_000;

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.log.level);
  const store = options.store ?? openStore(config);
  const clock = options.clock ?? Date.now;
  const counters = await startCounters(store, clock, logger);
  const deps: Deps = {
    config,
    store,
    secretKey: loadSecretKey(config.store.secretKeyFile),
    clock,
    logger,
    authServers: new Map([...config.authServers].map(([name, s]) => [name, createAuthServerClient(s)])),
    counters: counters.counters,
  };
  const routes = compileRoutes(deps);
  const listener = await listen(createHandler(deps, routes), config.listen.host, options.port ?? config.listen.port);

  const purge = setInterval(() => {
    store.purgeExpired(deps.clock()).catch((err: unknown) => logger.error({ err }, 'purging expired tokens failed'));
  }, PURGE_EVERY_MS);
  purge.unref();

  logger.info({ url: listener.url, config: config.file, store: config.store.path }, 'gateway listening');
  return {
    url: listener.url,
    port: listener.port,
    deps,
    async close() {
      clearInterval(purge);
      await listener.close();
      await routes.close();
      await Promise.all([...deps.authServers.values()].map((a) => a.close()));
      await counters.close();
      await store.close();
    },
  };
}
