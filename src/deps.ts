// What main.ts wires together and hands to the factories; tests pass their own.
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuthServerClient } from './authserver/client.ts';
import type { Config } from './config/load.ts';
import type { Counters } from './policies/counters.ts';
import type { Store } from './store/port/index.ts';
import type { Passwords } from './admin/passwords.ts';
import type { Mailer } from './mail.ts';
import type { Usage } from './usage.ts';

export interface Deps {
  config: Config;
  store: Store;
  /** Key of the keyed hash of app secrets. */
  secretKey: KeyObject;
  /** Epoch milliseconds. */
  clock: () => number;
  logger: Logger;
  authServers: ReadonlyMap<string, AuthServerClient>;
  counters: Counters;
  /** Calls per app and hour, for the portal's usage chart. */
  usage: Usage;
  /** The portal's password hasher (scrypt, bounded). */
  passwords: Passwords;
  /** The config's mail transport; undefined without a `mail` section. */
  mailer: Mailer | undefined;
}
