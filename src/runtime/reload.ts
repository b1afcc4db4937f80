// What a reload may change, and what it may not: the addresses the gateway listens on, its store,
// its threads, its portal and its mail are set up once at start; a reload that changes them is
// refused as a whole, with one message each, and the previous config keeps serving.
import type { Config } from '../config/load.ts';

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
  compare('store', current.store, next.store, 'the store');
  compare('workers', current.workers, next.workers, 'the number of worker threads');
  compare('admin', current.admin, next.admin, "the admin listener's address");
  compare('portal', current.portal, next.portal, 'the portal');
  compare('mail', current.mail, next.mail, 'the mail transport');
  return errors;
}
