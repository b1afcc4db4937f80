// Apps and credentials on Redis, in the catalog (src/store/redis/catalog.ts). Disabling an app
// stamps it: its tokens issued until then are revoked (checked when a token is read), and
// enabling it again does not bring them back. Every change to what a key, an app or its tokens
// are worth is reported on the change feed once committed.
import { newId } from '../../crypto.ts';
import { StoreError, type App, type AppStore, type Approval, type CertificateAuth, type Client, type Credential, type NewApp, type Status } from '../port/index.ts';
import { Catalog, KEYS, newCredential, revokedUpTo, nameKey, toApp, toCredential, Writes, type AppRow, type CredentialRow, type DeveloperRow } from './catalog.ts';
import type { RedisUsage } from './counters.ts';
import type { RedisDb, Script } from './db.ts';

/** What a token of a key is worth: its client, and the time up to which the app's or developer's tokens were revoked. */
export interface Grounds extends Client {
  revokedUpTo: number;
}

// KEYS: credentials, apps, developers. ARGV[1]: the key. The three rows a token's worth depends on, in one read.
const GROUNDS = `
local credential = redis.call('HGET', KEYS[1], ARGV[1])
if not credential then return false end
local app = redis.call('HGET', KEYS[2], cjson.decode(credential).appId)
if not app then return false end
local developer = redis.call('HGET', KEYS[3], cjson.decode(app).developerId)
if not developer then return false end
return { credential, app, developer }
`;

export class RedisApps implements AppStore {
  readonly catalog: Catalog;
  readonly #db: RedisDb;
  readonly #usage: RedisUsage;
  readonly #grounds: Script;

  constructor(db: RedisDb, usage: RedisUsage) {
    this.#db = db;
    this.catalog = new Catalog(db);
    this.#usage = usage;
    this.#grounds = db.script(GROUNDS);
  }

  async createApp(input: NewApp): Promise<App> {
    const c = this.catalog;
    const app: AppRow = {
      id: newId(),
      developerId: input.developerId,
      name: input.name,
      product: input.product,
      status: 'active',
      approval: input.approval ?? 'approved',
      createdAt: input.now,
      revokedAt: null,
      type: input.type ?? 'confidential',
      redirectUris: [...(input.redirectUris ?? [])],
      ...(input.scopes !== undefined && { scopes: [...input.scopes] }),
    };
    const credential = newCredential({ ...input, appId: app.id });
    const developer = await c.write(async () => {
      const [dev, sameName, keyTaken, count] = await Promise.all([
        c.developer(input.developerId),
        this.#db.run(this.#db.client.hexists(KEYS.appNames, nameKey(input.developerId, input.name))),
        this.#db.run(this.#db.client.hexists(KEYS.credentials, input.key)),
        this.#db.run(this.#db.client.scard(KEYS.appsOf(input.developerId))),
      ]);
      if (dev === undefined) throw new StoreError('conflict', `no developer ${input.developerId}`);
      if (sameName === 1) throw new StoreError('conflict', `app "${input.name}" already exists for this developer`);
      if (keyTaken === 1) throw new StoreError('conflict', `key ${input.key} already exists`);
      if (input.maxAppsOfDeveloper !== undefined && count >= input.maxAppsOfDeveloper) {
        throw new StoreError('limit', `the developer already holds ${input.maxAppsOfDeveloper} apps`);
      }
      const writes = new Writes()
        .add('HSET', KEYS.apps, app.id, JSON.stringify(app))
        .add('HSET', KEYS.appNames, nameKey(app.developerId, app.name), app.id)
        .add('SADD', KEYS.appsOf(app.developerId), app.id)
        .add('HSET', KEYS.credentials, credential.key, JSON.stringify(credential))
        .add('SADD', KEYS.keysOf(app.id), credential.key)
        // A key presented before it existed is no longer unknown.
        .announce({ kind: 'key', ref: input.key });
      return { result: dev, writes };
    });
    return toApp(app, developer.email);
  }

  async findApp(developerEmail: string, name: string): Promise<App | undefined> {
    const dev = await this.catalog.developerByEmail(developerEmail);
    if (dev === undefined) return undefined;
    const id = await this.#db.run(this.#db.client.hget(KEYS.appNames, nameKey(dev.id, name)));
    const app = id === null ? undefined : await this.catalog.app(id);
    return app && toApp(app, dev.email);
  }

  async findAppById(id: string): Promise<App | undefined> {
    const app = await this.catalog.app(id);
    if (app === undefined) return undefined;
    const dev = await this.catalog.developer(app.developerId);
    return dev && toApp(app, dev.email);
  }

  async findAppByKey(key: string): Promise<App | undefined> {
    const credential = await this.catalog.credential(key);
    return credential && this.findAppById(credential.appId);
  }

  async listApps(filter: { developerEmail?: string } = {}): Promise<App[]> {
    const c = this.catalog;
    let apps: AppRow[];
    let developers: Map<string, DeveloperRow>;
    if (filter.developerEmail === undefined) {
      const [appJson, devJson] = await Promise.all([this.#db.run(this.#db.client.hvals(KEYS.apps)), this.#db.run(this.#db.client.hvals(KEYS.developers))]);
      apps = appJson.map((j) => JSON.parse(j) as AppRow);
      developers = new Map(devJson.map((j) => JSON.parse(j) as DeveloperRow).map((d) => [d.id, d]));
    } else {
      const dev = await c.developerByEmail(filter.developerEmail);
      if (dev === undefined) return [];
      apps = await c.rows<AppRow>(KEYS.apps, await c.members(KEYS.appsOf(dev.id)));
      developers = new Map([[dev.id, dev]]);
    }
    return apps
      .flatMap((a) => {
        const dev = developers.get(a.developerId);
        return dev === undefined ? [] : [toApp(a, dev.email)];
      })
      .sort((x, y) => compare(x.developerEmail, y.developerEmail) || compare(x.name, y.name));
  }

  async setAppStatus(appId: string, status: Status, now: number): Promise<App | undefined> {
    return this.#updateApp(appId, (app) => ({ ...app, status, revokedAt: status === 'disabled' ? now : app.revokedAt }));
  }

  async setAppApproval(appId: string, approval: Approval, _now: number): Promise<App | undefined> {
    // Cached clients of the app are read again, with their approval (the change is announced).
    return this.#updateApp(appId, (app) => ({ ...app, approval }));
  }

  async setRedirectUris(appId: string, uris: readonly string[], _now: number): Promise<App | undefined> {
    // Cached clients of the app are read again, with their redirect URIs (the change is announced).
    return this.#updateApp(appId, (app) => ({ ...app, redirectUris: [...uris] }));
  }

  async setCertificateAuth(appId: string, auth: CertificateAuth | undefined, _now: number): Promise<App | undefined> {
    // Cached clients of the app are read again, with how they authenticate (the change is announced).
    return this.#updateApp(appId, ({ certificateAuth: _old, ...app }) => (auth === undefined ? app : { ...app, certificateAuth: auth }));
  }

  /** Changes the app as `change` says, in one catalog write that announces it. */
  #updateApp(appId: string, change: (app: AppRow) => AppRow): Promise<App | undefined> {
    const c = this.catalog;
    return c.write(async () => {
      const app = await c.app(appId);
      if (app === undefined) return { result: undefined };
      const dev = await c.developer(app.developerId);
      const next = change(app);
      const writes = new Writes().add('HSET', KEYS.apps, appId, JSON.stringify(next)).announce({ kind: 'app', ref: appId });
      return { result: toApp(next, dev?.email ?? ''), writes };
    });
  }

  async listCredentials(appId: string): Promise<Credential[]> {
    const c = this.catalog;
    const rows = await c.rows<CredentialRow>(KEYS.credentials, await c.members(KEYS.keysOf(appId)));
    return rows.sort((x, y) => x.createdAt - y.createdAt || compare(x.key, y.key)).map(toCredential);
  }

  async revokeCredential(key: string, _now: number): Promise<boolean> {
    const c = this.catalog;
    return c.write(async () => {
      const credential = await c.credential(key);
      if (credential === undefined || credential.status === 'revoked') return { result: false };
      const next: CredentialRow = { ...credential, status: 'revoked' };
      // The tokens stay in place: a revoked credential never comes back, and reading a token reads its credential.
      return { result: true, writes: new Writes().add('HSET', KEYS.credentials, key, JSON.stringify(next)).announce({ kind: 'key', ref: key }) };
    });
  }

  async rotateCredential(input: { appId: string; key: string; secretHash: Buffer; now: number; overlapUntil: number }): Promise<boolean> {
    const c = this.catalog;
    return c.write(async () => {
      const [app, taken, others] = await Promise.all([
        c.app(input.appId),
        this.#db.run(this.#db.client.hexists(KEYS.credentials, input.key)),
        c.rows<CredentialRow>(KEYS.credentials, await c.members(KEYS.keysOf(input.appId))),
      ]);
      // Deleted since the caller read it: a credential of no app would outlive it.
      if (app === undefined) return { result: false };
      if (taken === 1) throw new StoreError('conflict', `key ${input.key} already exists`);
      const credential = newCredential(input);
      const writes = new Writes().add('HSET', KEYS.credentials, input.key, JSON.stringify(credential)).add('SADD', KEYS.keysOf(input.appId), input.key);
      const approved = others.filter((o) => o.status === 'approved');
      for (const o of approved) {
        const expiresAt = Math.min(o.expiresAt ?? input.overlapUntil, input.overlapUntil);
        writes.add('HSET', KEYS.credentials, o.key, JSON.stringify({ ...o, expiresAt }));
      }
      // The new key is no longer unknown; cached clients and tokens of the old keys are read again, with their new expiry.
      for (const key of [input.key, ...approved.map((o) => o.key)]) writes.announce({ kind: 'key', ref: key });
      return { result: true, writes };
    });
  }

  async addCredential(input: { appId: string; key: string; secretHash: Buffer; now: number }): Promise<Credential | undefined> {
    const c = this.catalog;
    const credential = newCredential(input);
    return c.write(async () => {
      const [app, taken] = await Promise.all([c.app(input.appId), this.#db.run(this.#db.client.hexists(KEYS.credentials, input.key))]);
      if (app === undefined) return { result: undefined };
      // Any app's key, in any status: a key names one client for good.
      if (taken === 1) throw new StoreError('conflict', `key ${input.key} already exists`);
      const writes = new Writes()
        .add('HSET', KEYS.credentials, input.key, JSON.stringify(credential))
        .add('SADD', KEYS.keysOf(input.appId), input.key)
        // A key presented before it was imported is no longer unknown.
        .announce({ kind: 'key', ref: input.key });
      return { result: toCredential(credential), writes };
    });
  }

  async deleteApp(appId: string, _now: number, options: { onlyIfActive?: boolean } = {}): Promise<boolean> {
    const c = this.catalog;
    const deleted = await c.write(async () => {
      const app = await c.app(appId);
      if (app === undefined) return { result: false };
      if (options.onlyIfActive === true) {
        const dev = await c.developer(app.developerId);
        if (app.status !== 'active' || dev?.status !== 'active') return { result: false };
      }
      const writes = new Writes();
      await this.deleteRows(app, writes);
      return { result: true, writes };
    });
    if (deleted) await this.#usage.deleteOfApp(appId);
    return deleted;
  }

  /**
   * Adds to `writes` the deletion of the app and its credentials, announced. Its tokens stop
   * working (reading one reads its app); they expire on their own. The caller deletes the app's
   * usage once committed (RedisUsage.deleteOfApp).
   */
  async deleteRows(app: AppRow, writes: Writes): Promise<void> {
    const keys = await this.catalog.members(KEYS.keysOf(app.id));
    writes
      .add('HDEL', KEYS.apps, app.id)
      .add('HDEL', KEYS.appNames, nameKey(app.developerId, app.name))
      .add('SREM', KEYS.appsOf(app.developerId), app.id)
      .add('DEL', KEYS.keysOf(app.id))
      .announce({ kind: 'app', ref: app.id });
    for (const key of keys) writes.add('HDEL', KEYS.credentials, key);
  }

  /** The app's usage: deleted with the app, after its rows. */
  get usage(): RedisUsage {
    return this.#usage;
  }

  async findClient(key: string): Promise<Client | undefined> {
    const grounds = await this.grounds(key);
    if (grounds === undefined) return undefined;
    const { revokedUpTo: _revoked, ...client } = grounds;
    return client;
  }

  /** Of the apps that exist among `appIds`, the time up to which each one's tokens were revoked (disabling it or its developer). */
  async revokedUpTo(appIds: readonly string[]): Promise<Map<string, number>> {
    const c = this.catalog;
    const apps = await c.rows<AppRow>(KEYS.apps, appIds);
    const developers = new Map((await c.rows<DeveloperRow>(KEYS.developers, [...new Set(apps.map((a) => a.developerId))])).map((d) => [d.id, d]));
    return new Map(
      apps.flatMap((app) => {
        const developer = developers.get(app.developerId);
        return developer === undefined ? [] : [[app.id, revokedUpTo(app, developer)] as const];
      }),
    );
  }

  /** The key's client and the time up to which its tokens were revoked, in one read. */
  async grounds(key: string): Promise<Grounds | undefined> {
    const rows = (await this.#grounds([KEYS.credentials, KEYS.apps, KEYS.developers], [key])) as [string, string, string] | null;
    if (rows === null) return undefined;
    const credential = JSON.parse(rows[0]) as CredentialRow;
    const app = JSON.parse(rows[1]) as AppRow;
    const developer = JSON.parse(rows[2]) as DeveloperRow;
    return {
      credential: toCredential(credential),
      secretHash: Buffer.from(credential.secretHash, 'base64'),
      app: toApp(app, developer.email),
      developerStatus: developer.status,
      revokedUpTo: revokedUpTo(app, developer),
    };
  }
}

/** Code-point order, as SQLite's BINARY collation sorts. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
