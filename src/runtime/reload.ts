// What a reload may change, and what it may not: the addresses the gateway listens on, its store,
// its threads, its portal, its mail and its telemetry are set up once at start; a reload that changes them is
// refused as a whole, with one message each, and the previous config keeps serving.
import type { Logger } from 'pino';
import { ConfigError, loadConfigFile, parseConfig, type Config } from '../config/load.ts';
import type { Metrics } from '../metrics.ts';

/** What a reload did: swapped in the new config, or kept the old one for these reasons. */
export type ReloadResult = { ok: true } | { ok: false; errors: readonly string[] };

const RESTART = 'needs a restart; the running config keeps serving';

/** One message per setting `next` changes that only a restart can apply; empty when a reload may swap it in. */
export function restartNeeded(current: Config, next: Config): string[] {
  const errors: string[] = [];
  const compare = (where: string, a: unknown, b: unknown, what: string) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) errors.push(`${where}: ${what} ${RESTART}`);
  };
  compare('listen.host', current.listen.host, next.listen.host, "the listener's address");
  compare('listen.port', current.listen.port, next.listen.port, "the listener's port");
  compare('listen.tls', current.listen.tls === undefined, next.listen.tls === undefined, 'switching between HTTP and HTTPS');
  // Whether clients are asked for certificates is the TLS server's, set once; which CAs it names, a reload changes.
  compare('listen.tls.clientCa', current.listen.tls?.clientCa === undefined, next.listen.tls?.clientCa === undefined, 'asking clients for certificates, or no longer,');
  compare('store', current.store, next.store, 'the store');
  compare('workers', current.workers, next.workers, 'the number of worker threads');
  compare('admin', current.admin, next.admin, "the admin listener's address");
  compare('portal', current.portal, next.portal, 'the portal');
  compare('mail', current.mail, next.mail, 'the mail transport');
  compare('telemetry', current.telemetry, next.telemetry, 'where telemetry goes');
  return errors;
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

/** Who asked for a reload: a signal, or the admin listener's POST /reload from an address. */
export type ReloadTrigger = { via: 'signal' } | { via: 'admin'; ip: string };

/**
 * Runs reloads one at a time, each on the file as it is when its turn comes; a reload that throws
 * is refused with its message rather than leaving the queue rejected. Each result is counted and
 * written as the `config.reload` audit line.
 */
export function reloadQueue(run: () => Promise<ReloadResult> | ReloadResult, report: { logger: Logger; metrics: Metrics; file: () => string }): (trigger: ReloadTrigger) => Promise<ReloadResult> {
  let last: Promise<unknown> = Promise.resolve();
  return (trigger) => {
    const turn = last.then(async (): Promise<ReloadResult> => {
      let result: ReloadResult;
      try {
        result = await run();
      } catch (err) {
        result = { ok: false, errors: [`the reload failed: ${(err as Error).message}`] };
      }
      report.metrics.reloads.labels(result.ok ? 'reloaded' : 'refused').inc();
      const line = { audit: 'config.reload', actor: trigger, file: report.file() };
      if (result.ok) report.logger.info({ ...line, result: 'reloaded' }, 'config reloaded');
      else report.logger.error({ ...line, result: 'refused', errors: result.errors }, 'config reload refused; the previous config keeps serving');
      return result;
    });
    last = turn;
    return turn;
  };
}
