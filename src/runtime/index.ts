// A config compiled against the long-lived services: one object holding the route table, the
// OAuth endpoints, the policies, the upstream pools, the authorization server clients and the
// client-IP rules. The listener asks the current runtime to handle each request; a reload
// compiles a new one and swaps it in, and the old one closes once its calls have finished.
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { createAuthServerClient, type AuthServerClient } from '../authserver/client.ts';
import { compiledOf } from '../config/compiled.ts';
import type { Config } from '../config/load.ts';
import { createClientIp } from '../http/ip.ts';
import type { Services } from '../services.ts';
import { createSenderChecks } from '../oauth/senders.ts';
import { createHandler, writesAccessLines, type InFlight } from './handler.ts';
import { compileOAuthRoutes } from './oauth-routes.ts';
import { compileRoutes } from './routes.ts';

export interface Runtime {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Resolves once every call it took has finished and its upstream pools and authorization server clients are closed (once, however often it is called). */
  close(): Promise<void>;
  /** Fails at once the calls still waiting on an upstream or an authorization server: the end of a stop's timeout. */
  cut(): void;
}

/** The services a runtime's parts use. */
export type RuntimeServices = Pick<Services, 'store' | 'secretKey' | 'clock' | 'logger' | 'usage' | 'metrics' | 'keys' | 'tracing' | 'usageStream'>;

export function compileRuntime(config: Config, services: RuntimeServices): Runtime {
  const authServers = new Map([...config.authServers].map(([name, s]) => [name, createAuthServerClient(s)]));
  try {
    return compileWith(config, services, authServers);
  } catch (err) {
    // A config that cannot compile leaves no client open.
    for (const client of authServers.values()) void client.close(true);
    throw err;
  }
}

function compileWith(config: Config, runtimeServices: RuntimeServices, authServers: ReadonlyMap<string, AuthServerClient>): Runtime {
  const { clock, logger, usage, metrics, tracing, usageStream } = runtimeServices;
  const services = { ...runtimeServices, senders: createSenderChecks({ listen: config.listen, dpop: config.oauth.dpop, issuer: config.oauth.issuer }, runtimeServices) };
  const configDir = path.dirname(config.file);
  // What the load compiled: its documents and their validators, and each policy's compiled options.
  const { documents, policies: compiled } = compiledOf(config);
  // The OAuth endpoints first: they open nothing, so failing to compile them leaves no upstream pool open.
  const oauthRoutes = compileOAuthRoutes(config, services, authServers, { configDir, documents, compiled });
  const routes = compileRoutes(
    {
      routes: config.routes,
      products: config.products,
      upstreams: config.upstreams,
      listen: config.listen,
      openapi: config.openapi,
      realm: config.oauth.realm,
      issuer: config.oauth.issuer,
      signing: config.oauth.signing,
      configDir,
      documents,
      compiled,
    },
    services,
    oauthRoutes,
  );

  // Calls this runtime has taken and not finished: close() waits for them.
  const calls: InFlight = { running: 0, idle: undefined };
  const handle = createHandler({
    calls,
    routes,
    clientIp: createClientIp(config.listen.trustedProxies),
    accessLog: writesAccessLines(config.log, logger),
    logger,
    usage,
    clock,
    metrics,
    protocol: config.listen.tls === undefined ? 'http' : 'https',
    tracing,
    usageStream,
  });

  let closing: Promise<void> | undefined;
  let cut = false;
  // undici leaves a graceful close pending for good when a destroy follows it: a cut during the
  // close ends the close once the pools and clients are destroyed.
  let destroyed: () => void = () => {};
  const whenDestroyed = new Promise<void>((resolve) => (destroyed = resolve));
  return {
    handle,
    close() {
      closing ??= (async () => {
        if (calls.running > 0) await new Promise<void>((resolve) => (calls.idle = resolve));
        if (cut) return;
        const graceful = (async () => {
          await routes.close();
          await Promise.all([...authServers.values()].map((a) => a.close()));
        })();
        await Promise.race([graceful, whenDestroyed]);
      })();
      return closing;
    },
    cut() {
      cut = true;
      Promise.all([routes.close(true), ...[...authServers.values()].map((client) => client.close(true))]).then(destroyed, destroyed);
    },
  };
}
