// The bounded cache of verified access tokens and authenticated clients, the same for every
// driver. It trusts what it remembers only until the driver reports a change (its ChangeFeed):
// a revoked family, key, app or developer evicts exactly the entries it names, and a gap in the
// feed evicts everything. Before answering from memory it lets the driver catch up, so a
// revocation made by another process takes effect on the next call.
import type { ActiveToken, Change, Client, Store, StoreDriver, VerifiedCache } from './port/index.ts';

/** Clients kept in memory; they are few (one per app key in use). */
const CLIENT_CACHE_SIZE = 10_000;

export interface TokenCacheOptions {
  /** Access tokens kept in memory; 0 reads every one from the driver. */
  size: number;
}

/** The driver's ports, with verified tokens and clients read through one TokenCache. */
export function withTokenCache(driver: StoreDriver, options: TokenCacheOptions): Store {
  return {
    accounts: driver.accounts,
    apps: driver.apps,
    tokens: driver.tokens,
    throttles: driver.throttles,
    once: driver.once,
    consents: driver.consents,
    idempotency: driver.idempotency,
    counters: driver.counters,
    usage: driver.usage,
    signingKeys: driver.signingKeys,
    changes: driver.changes,
    cache: new TokenCache(driver, options),
    purgeExpired: (now) => driver.purgeExpired(now),
    ping: () => driver.ping(),
    warnings: () => driver.warnings?.() ?? [],
    claimSecretKey: (fingerprint) => driver.claimSecretKey(fingerprint),
    exportData: (now) => driver.exportData(now),
    importData: (data, now) => driver.importData(data, now),
    close: () => driver.close(),
  };
}

export class TokenCache implements VerifiedCache {
  readonly #driver: Pick<StoreDriver, 'tokens' | 'apps' | 'changes'>;
  readonly #size: number;
  readonly #tokens = new Map<string, ActiveToken>();
  /**
   * The cached tokens by what a change names (family, app, key, developer): a change evicts its
   * own entries without scanning the cache, which anyone who can revoke a token of their own
   * could otherwise make every instance do, at will.
   */
  readonly #tokensBy: Record<TokenRef, Map<string, Set<string>>> = {
    family: new Map(),
    app: new Map(),
    key: new Map(),
    developer: new Map(),
  };
  readonly #clients = new Map<string, Client>();
  /**
   * Keys presented that do not exist. Without it an unknown key costs a read that a known
   * (cached) one does not, and the time of a 401 would tell which keys exist. A created key is a
   * change the driver reports, which takes it out of here.
   */
  readonly #unknownClients = new Set<string>();
  /**
   * Counts changes heard. A read that answers with a promise is remembered only if no change came
   * while it was under way: the change may concern what it read.
   */
  #generation = 0;

  constructor(driver: Pick<StoreDriver, 'tokens' | 'apps' | 'changes'>, options: TokenCacheOptions) {
    if (!Number.isInteger(options.size) || options.size < 0) throw new TypeError('TokenCache: size must be a non-negative integer');
    this.#driver = driver;
    this.#size = options.size;
    driver.changes.listen((change) => this.#evict(change));
  }

  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined | Promise<ActiveToken | undefined> {
    // A token that cannot be checked is never taken as valid: the driver throws StoreUnavailable.
    this.#driver.changes.catchUp();
    const id = hash.toString('latin1');
    const cached = this.#tokens.get(id);
    if (cached !== undefined) {
      if (cached.expiresAt > now) return cached;
      this.#forgetToken(id, cached);
      return undefined;
    }
    const generation = this.#generation;
    const found = this.#driver.tokens.findAccessToken(hash, now);
    if (found instanceof Promise) return found.then((token) => this.#rememberToken(id, token, generation));
    return this.#rememberToken(id, found, generation);
  }

  #rememberToken(id: string, token: ActiveToken | undefined, generation: number): ActiveToken | undefined {
    if (token === undefined || this.#size === 0 || generation !== this.#generation) return token;
    const known = this.#tokens.get(id);
    if (known !== undefined) this.#forgetToken(id, known);
    if (this.#tokens.size >= this.#size) {
      const [oldest, entry] = this.#tokens.entries().next().value!;
      this.#forgetToken(oldest, entry);
    }
    this.#tokens.set(id, token);
    for (const [kind, ref] of refsOf(token)) {
      const ids = this.#tokensBy[kind].get(ref);
      if (ids === undefined) this.#tokensBy[kind].set(ref, new Set([id]));
      else ids.add(id);
    }
    return token;
  }

  #forgetToken(id: string, token: ActiveToken): void {
    this.#tokens.delete(id);
    for (const [kind, ref] of refsOf(token)) {
      const ids = this.#tokensBy[kind].get(ref);
      if (ids === undefined) continue;
      ids.delete(id);
      if (ids.size === 0) this.#tokensBy[kind].delete(ref);
    }
  }

  async findClient(key: string): Promise<Client | undefined> {
    this.#driver.changes.catchUp();
    const cached = this.#clients.get(key);
    if (cached !== undefined) return cached;
    if (this.#unknownClients.has(key)) return undefined;
    const generation = this.#generation;
    const client = await this.#driver.apps.findClient(key);
    if (generation !== this.#generation) return client;
    if (client === undefined) {
      if (key.length > 64) return undefined; // not a key this gateway makes; not worth remembering
      if (this.#unknownClients.size >= CLIENT_CACHE_SIZE) this.#unknownClients.delete(this.#unknownClients.values().next().value!);
      this.#unknownClients.add(key);
      return undefined;
    }
    if (this.#clients.size >= CLIENT_CACHE_SIZE) this.#clients.delete(this.#clients.keys().next().value!);
    this.#clients.set(key, client);
    return client;
  }

  #evict(change: Change): void {
    this.#generation++;
    if (change.kind === 'everything') {
      this.#tokens.clear();
      for (const index of Object.values(this.#tokensBy)) index.clear();
      this.#clients.clear();
      this.#unknownClients.clear();
      return;
    }
    const { kind, ref } = change;
    if (kind === 'signing-key') return; // what a signing key signed is forgotten by its verifier (src/oauth/signing/)
    for (const id of [...(this.#tokensBy[kind].get(ref) ?? [])]) this.#forgetToken(id, this.#tokens.get(id)!);
    if (kind === 'family') return;
    if (kind === 'key') this.#unknownClients.delete(ref);
    for (const [key, c] of this.#clients) {
      const hit = kind === 'app' ? c.app.id === ref : kind === 'key' ? key === ref : c.app.developerEmail === ref;
      if (hit) this.#clients.delete(key);
    }
  }
}

type TokenRef = Exclude<Change['kind'], 'everything' | 'signing-key'>;

/** What a change may name of a token. */
function refsOf(t: ActiveToken): [TokenRef, string][] {
  return [
    ['family', t.family],
    ['app', t.appId],
    ['key', t.key],
    ['developer', t.developerEmail],
  ];
}
