// The long-lived services of a gateway: built once from the config's store, log and mail sections,
// kept across reloads, and handed to the parts that use them. None of them holds the Config.
// The one place that wires them, for a serving gateway, each of its worker threads and `gateway admin`.
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { AdminDeps } from './admin/operations.ts';
import { createPasswords, type Passwords } from './admin/passwords.ts';
import type { Config } from './config/load.ts';
import { createLogger } from './log.ts';
import { createMailer, type Mailer } from './mail.ts';
import { KeyRing } from './oauth/signing/key-ring.ts';
import { Metrics } from './metrics.ts';
import { openStore, storeShared, type StoreShared } from './store/open.ts';
import { StoreUnavailable, type Store } from './store/port/index.ts';
import { keyFingerprint, loadSecretKey } from './store/secret-key.ts';
import { startUsage, type Usage } from './usage.ts';
import type { Tracing } from './pipeline/trace.ts';
import type { UsageStream } from './telemetry/usage-stream.ts';

export interface Services {
  store: Store;
  /** Key of the keyed hash of app secrets. */
  secretKey: KeyObject;
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  /** Calls per app and hour, for the portal's usage chart. */
  usage: Usage;
  /** The portal's password hasher (scrypt, bounded). */
  passwords: Passwords;
  /** The config's mail transport; undefined without a `mail` section. */
  mailer: Mailer | undefined;
  /** This thread's Prometheus metrics; the process's own only in the main thread. */
  metrics: Metrics;
  /** The signing keys of JWT access tokens and upstream identities, read from the store and kept up to date. */
  keys: KeyRing;
  /** What the worker threads of this gateway share with the thread that made these services (a SQLite store's memory). */
  shared: StoreShared | undefined;
  /** Where the calls' spans go (telemetry.traces); undefined: no traces, and the OpenTelemetry SDK is not loaded. */
  tracing: Tracing | undefined;
  /** Where an event per call made with an app's token goes (telemetry.usage); undefined: nowhere. */
  usageStream: UsageStream | undefined;
  /** Saves usage, then closes the store (which saves its counts). */
  close(): Promise<void>;
}

export interface ServicesOptions {
  /**
   * `main`: the thread that owns the store's upkeep (migrations, checkpoints, saving counters,
   * purging); `worker`: one of several, sharing the main thread's counters and store signal.
   */
  role: { kind: 'main' } | { kind: 'worker'; shared: Services['shared'] };
  logger?: Logger;
  clock?: () => number;
  store?: Store;
}

const PURGE_EVERY_MS = 60_000;

export async function createServices(config: Config, options: ServicesOptions): Promise<Services> {
  const { role } = options;
  const logger = options.logger ?? createLogger(config.log.level);
  const clock = options.clock ?? Date.now;
  const shared = role.kind === 'worker' ? role.shared : storeShared(config.store);
  const store = options.store ?? (await openStore(config.store, { warn: (message) => logger.warn(message), ...(shared !== undefined && { serving: { shared, maintains: role.kind === 'main' } }) }));
  const secretKey = await sharedSecretKey(store, config.store.secretKeyFile).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  const metrics = new Metrics({ process: role.kind === 'main' });
  const purge = role.kind === 'main' ? startPurging(store, clock, logger, metrics) : undefined;
  const usage = startUsage(store, logger);
  const keys = new KeyRing({ store, secretKey }, { clock, logger, maintains: role.kind === 'main' });
  // In the main thread, a key signs before the first call can ask for a token: the first start makes it.
  await (async () => {
    await keys.load();
    await keys.configure(config.oauth.signing);
  })().catch(async (err: unknown) => {
    clearInterval(purge);
    await usage.close();
    await store.close();
    throw err;
  });
  const mailer = config.mail && createMailer(config.mail, logger);
  const traces = config.telemetry.traces;
  const tracing = traces && (await import('./telemetry/traces.ts')).createTracing(traces, logger);
  const stream = config.telemetry.usage;
  const usageStream = stream && (await import('./telemetry/usage-stream.ts')).startUsageStream(stream, logger, metrics);
  return {
    store,
    secretKey,
    clock,
    logger,
    usage,
    passwords: createPasswords(),
    mailer,
    metrics,
    keys,
    shared,
    tracing,
    usageStream,
    async close() {
      // The spans, usage events and usage counts of the last calls go out before the store closes.
      clearInterval(purge);
      keys.close();
      await Promise.all([tracing?.close(), usageStream?.close(), usage.close()]);
      mailer?.close();
      await store.close();
    },
  };
}

/** What `gateway admin` uses: the store, its key, the clock, the password hasher, and a logger for the audit lines. */
export type AdminServices = Omit<AdminDeps, 'products' | 'portal' | 'keyOverlapMs'>;

/** The services of one `gateway admin` command: the store the config names, opened for a moment. */
export async function createAdminServices(config: Config, logger: Logger): Promise<AdminServices> {
  const store = await openStore(config.store);
  const secretKey = await sharedSecretKey(store, config.store.secretKeyFile).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  return { store, secretKey, clock: Date.now, logger, passwords: createPasswords() };
}

/**
 * The key in `file`, once the store confirms its secrets were hashed with it: instances that share
 * a store (Redis) must share the key, or an app's secret would work on some and not on others.
 */
async function sharedSecretKey(store: Store, file: string): Promise<KeyObject> {
  const key = loadSecretKey(file);
  if (!(await store.claimSecretKey(keyFingerprint(key)))) {
    throw new Error(`${file} is not the secret key this store's app secrets are hashed with: copy the key file of the instances already using the store`);
  }
  return key;
}

/** Removes expired tokens and ended quota windows every minute. */
function startPurging(store: Store, clock: () => number, logger: Logger, metrics: Metrics): NodeJS.Timeout {
  const timer = setInterval(() => {
    store.purgeExpired(clock()).catch((err: unknown) => {
      if (err instanceof StoreUnavailable) metrics.storeErrors.labels('background').inc();
      logger.error({ err }, 'purging expired tokens failed');
    });
  }, PURGE_EVERY_MS);
  timer.unref();
  return timer;
}
