// The catalog on Redis: developers, apps, credentials, portal sessions and mailed links, every
// key under the hash tag `{c}` (small, written by people, read through the token cache).
//
// A write is optimistic: it reads the catalog's version and the rows it needs, decides in
// TypeScript, and one script applies its changes only if the version has not moved since (then
// moves it); otherwise it reads again. So every rule the SQLite driver checks inside a
// transaction (unique email and app name, the app limit, an invitation unspent) holds here for
// any number of instances, without a Lua script per operation.
import { setTimeout as sleep } from 'node:timers/promises';
import type { App, Approval, CertificateAuth, Change, ClientType, Credential, CredentialStatus, Developer, Status } from '../port/index.ts';
import { isLive, StoreUnavailable } from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

export const KEYS = {
  version: '{c}:version',
  developers: '{c}:developers',
  emails: '{c}:emails',
  apps: '{c}:apps',
  appNames: '{c}:app-names',
  credentials: '{c}:credentials',
  appsOf: (developerId: string) => `{c}:apps-of:${developerId}`,
  keysOf: (appId: string) => `{c}:keys-of:${appId}`,
  sessionsOf: (developerId: string) => `{c}:sessions-of:${developerId}`,
  session: (idHash: string) => `{c}:session:${idHash}`,
  emailToken: (hash: string) => `{c}:email-token:${hash}`,
} as const;

/** A developer as kept: the port's fields, and what only the store reads. */
export interface DeveloperRow {
  id: string;
  email: string;
  name: string;
  status: Status;
  verifiedAt: number | null;
  createdAt: number;
  passwordHash: string | null;
  invitation: { hash: string; expiresAt: number } | null;
  /** The mailed link of each purpose still valid, by its hash, so a new one replaces it. */
  emailTokens: { verify?: string; reset?: string };
  /** Tokens issued at or before this were revoked when the developer was disabled. */
  revokedAt: number | null;
}

export interface AppRow {
  id: string;
  developerId: string;
  name: string;
  product: string;
  status: Status;
  approval: Approval;
  createdAt: number;
  /** Tokens issued at or before this were revoked when the app was disabled. */
  revokedAt: number | null;
  /** App.scopes; absent when the app has its product's. */
  scopes?: readonly string[];
  /** App.type; absent in a row written before apps had one: confidential. */
  type?: ClientType;
  /** App.redirectUris; absent in a row written before apps had them: none. */
  redirectUris?: readonly string[];
  /** App.certificateAuth; absent: none. */
  certificateAuth?: CertificateAuth;
}

export interface CredentialRow {
  key: string;
  appId: string;
  secretHash: string;
  status: CredentialStatus;
  expiresAt: number | null;
  createdAt: number;
}

export interface SessionRow {
  developerId: string;
  expiresAt: number;
}

export interface EmailTokenRow {
  developerId: string;
  purpose: 'verify' | 'reset';
  expiresAt: number;
}

export const toDeveloper = (r: DeveloperRow): Developer => ({
  id: r.id,
  email: r.email,
  name: r.name,
  status: r.status,
  verified: r.verifiedAt !== null,
  createdAt: r.createdAt,
});

export const toApp = (r: AppRow, developerEmail: string): App => ({
  id: r.id,
  developerId: r.developerId,
  developerEmail,
  name: r.name,
  product: r.product,
  status: r.status,
  approval: r.approval,
  createdAt: r.createdAt,
  type: r.type ?? 'confidential',
  redirectUris: r.redirectUris ?? [],
  ...(r.scopes !== undefined && { scopes: r.scopes }),
  ...(r.certificateAuth !== undefined && { certificateAuth: r.certificateAuth }),
});

export const toCredential = (r: CredentialRow): Credential => ({ key: r.key, appId: r.appId, status: r.status, expiresAt: r.expiresAt, createdAt: r.createdAt });

/** A credential as a new key (created, rotated in or imported) is kept: approved, without expiry. */
export const newCredential = (input: { appId: string; key: string; secretHash: Buffer; now: number }): CredentialRow => ({
  key: input.key,
  appId: input.appId,
  secretHash: input.secretHash.toString('base64'),
  status: 'approved',
  expiresAt: null,
  createdAt: input.now,
});

/** The field of an app in KEYS.appNames: an app's name is unique per developer. */
export const nameKey = (developerId: string, name: string): string => `${developerId}\n${name}`;

/** Up to when the tokens of an app were revoked: when it or its developer was last disabled. */
export const revokedUpTo = (app: AppRow, developer: DeveloperRow): number => Math.max(app.revokedAt ?? -Infinity, developer.revokedAt ?? -Infinity);

/**
 * Whether a token (its app and issue time) still holds on its credential: the key is the app's
 * and live at `now`, and neither the app nor its developer was disabled since the token was issued.
 */
export const holds = (credential: Pick<CredentialRow, 'appId' | 'status' | 'expiresAt'>, upTo: number, token: { appId: string; issuedAt: number }, now: number): boolean =>
  credential.appId === token.appId && isLive(credential, now) && token.issuedAt > upTo;

/** A Buffer digest as it appears in keys and rows. */
export const digest = (hash: Buffer): string => hash.toString('base64url');

/** Lets a TTL outlive a row's own expiry a little: the row's time decides, the TTL only cleans up. */
export const ttlMs = (expiresAt: number, now: number): number => Math.max(1, Math.ceil(expiresAt - now)) + 60_000;

export const parse = <T>(json: string | null | undefined): T | undefined => (json == null ? undefined : (JSON.parse(json) as T));

// KEYS[1]: the version; the others: the keys written. ARGV[1]: the version read; ARGV[2]: the
// changes channel; ARGV[3]: how many announcements follow, then they; then each command as its
// name, the index of its key, the number of its arguments, and the arguments. The announcements
// are published with the commit, so no committed change goes unannounced.
const COMMIT = `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
local announced = tonumber(ARGV[3])
local i = 4 + announced
while i <= #ARGV do
  local n = tonumber(ARGV[i + 2])
  redis.call(ARGV[i], KEYS[tonumber(ARGV[i + 1])], unpack(ARGV, i + 3, i + 2 + n))
  i = i + 3 + n
end
redis.call('INCR', KEYS[1])
for m = 4, 3 + announced do redis.call('PUBLISH', ARGV[2], ARGV[m]) end
return 1
`;

/** The changes of one catalog write, applied together or not at all, and what they change for cached tokens and clients. */
export class Writes {
  readonly keys: string[] = [KEYS.version];
  readonly args: (string | number)[] = [];
  readonly changes: Change[] = [];

  /** Announces, with the commit, a change to what a cached token or client is worth. */
  announce(change: Change): this {
    this.changes.push(change);
    return this;
  }

  #key(key: string): number {
    const at = this.keys.indexOf(key);
    if (at !== -1) return at + 1;
    this.keys.push(key);
    return this.keys.length;
  }

  /** One Redis command on a catalog key, such as HSET, HDEL, SADD, SREM, DEL, SET … PX. */
  add(command: string, key: string, ...args: (string | number)[]): this {
    this.args.push(command, this.#key(key), args.length, ...args);
    return this;
  }
}

/** How many times a write reads again after others changed the catalog under it. */
const ATTEMPTS = 50;
/** The most a write waits before reading again, in ms: a random wait up to 2^attempt ms, at most this. */
const BACKOFF_MAX_MS = 32;

export class Catalog {
  readonly db: RedisDb;
  readonly #commit: Script;

  constructor(db: RedisDb) {
    this.db = db;
    this.#commit = db.script(COMMIT);
  }

  /**
   * Runs `decide` on the catalog as it is, and commits the writes it returns if nothing changed
   * the catalog meanwhile (otherwise runs it again). `decide` returns the answer, and the writes
   * (none: nothing to write).
   */
  async write<T>(decide: () => Promise<{ result: T; writes?: Writes }>): Promise<T> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const version = (await this.db.run(this.db.client.get(KEYS.version))) ?? '0';
      const { result, writes } = await decide();
      if (writes === undefined || writes.args.length === 0) return result;
      const messages = writes.changes.map((change) => this.db.announce(change));
      let committed: unknown;
      try {
        committed = await this.#commit(writes.keys, [version, messages[0]?.channel ?? '', messages.length, ...messages.map((m) => m.message), ...writes.args]);
      } catch (err) {
        // Committed or not, nobody can say: what this process remembers of it goes.
        for (const change of writes.changes) this.db.told(change);
        throw err;
      }
      if (committed === 1) {
        for (const change of writes.changes) this.db.told(change);
        return result;
      }
      // Writers that all lost to one read again at once, and all but one lose again: a random wait
      // spreads them out, or a few dozen at once (logins on a few instances) exhaust the attempts.
      await sleep(Math.random() * Math.min(2 ** attempt, BACKOFF_MAX_MS));
    }
    throw new StoreUnavailable('the Redis store is too busy: the catalog kept changing under a write');
  }

  async developer(id: string): Promise<DeveloperRow | undefined> {
    return parse<DeveloperRow>(await this.db.run(this.db.client.hget(KEYS.developers, id)));
  }

  async developerByEmail(email: string): Promise<DeveloperRow | undefined> {
    const id = await this.db.run(this.db.client.hget(KEYS.emails, email));
    return id === null ? undefined : this.developer(id);
  }

  async app(id: string): Promise<AppRow | undefined> {
    return parse<AppRow>(await this.db.run(this.db.client.hget(KEYS.apps, id)));
  }

  async credential(key: string): Promise<CredentialRow | undefined> {
    return parse<CredentialRow>(await this.db.run(this.db.client.hget(KEYS.credentials, key)));
  }

  /** Rows of a hash by id, in the order asked; missing ones left out. */
  async rows<T>(hash: string, ids: readonly string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const found = await this.db.run(this.db.client.hmget(hash, ...ids));
    return found.flatMap((json) => (json === null ? [] : [JSON.parse(json) as T]));
  }

  async members(set: string): Promise<string[]> {
    return this.db.run(this.db.client.smembers(set));
  }
}
