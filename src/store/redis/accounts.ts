// Developers, their portal passwords, invitations, mailed links and sessions on Redis, in the
// catalog (src/store/redis/catalog.ts). Sessions and mailed links are keys of their own that
// expire with them; the time passed in decides, the TTL only cleans up.
import { timingSafeEqual } from 'node:crypto';
import { newId } from '../../crypto.ts';
import { StoreError, type AccountStore, type Developer, type EmailTokenPurpose, type Status } from '../port/index.ts';
import type { RedisApps } from './apps.ts';
import { digest, KEYS, parse, toDeveloper, ttlMs, Writes, type AppRow, type DeveloperRow, type EmailTokenRow, type SessionRow } from './catalog.ts';
import type { RedisDb } from './db.ts';

export class RedisAccounts implements AccountStore {
  readonly #db: RedisDb;
  readonly #apps: RedisApps;

  constructor(db: RedisDb, apps: RedisApps) {
    this.#db = db;
    this.#apps = apps;
  }

  get #catalog() {
    return this.#apps.catalog;
  }

  #newDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): DeveloperRow {
    return {
      id: newId(),
      email: input.email,
      name: input.name,
      status: 'active',
      verifiedAt: (input.verified ?? true) ? input.now : null,
      createdAt: input.now,
      passwordHash: input.passwordHash ?? null,
      invitation: null,
      emailTokens: {},
      revokedAt: null,
    };
  }

  async createDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): Promise<Developer> {
    const dev = this.#newDeveloper(input);
    await this.#catalog.write(async () => {
      if ((await this.#db.run(this.#db.client.hexists(KEYS.emails, input.email))) === 1) throw new StoreError('conflict', `developer ${input.email} already exists`);
      return { result: undefined, writes: putDeveloper(new Writes(), dev).add('HSET', KEYS.emails, dev.email, dev.id) };
    });
    return toDeveloper(dev);
  }

  async replaceUnverifiedDeveloper(input: { email: string; name: string; now: number }): Promise<Developer | undefined> {
    const c = this.#catalog;
    const dev = this.#newDeveloper({ ...input, verified: true });
    const replaced = await c.write(async () => {
      const old = await c.developerByEmail(input.email);
      if (old === undefined || old.verifiedAt !== null) return { result: undefined };
      const writes = new Writes();
      const appIds = await this.#deleteRows(old, writes);
      putDeveloper(writes, dev).add('HSET', KEYS.emails, dev.email, dev.id);
      return { result: appIds, writes };
    });
    if (replaced === undefined) return undefined;
    for (const appId of replaced) await this.#apps.usage.deleteOfApp(appId);
    return toDeveloper(dev);
  }

  async deleteDeveloper(id: string, _now: number): Promise<boolean> {
    const c = this.#catalog;
    const deleted = await c.write(async () => {
      const dev = await c.developer(id);
      if (dev === undefined) return { result: undefined };
      const writes = new Writes();
      return { result: await this.#deleteRows(dev, writes), writes };
    });
    if (deleted === undefined) return false;
    for (const appId of deleted) await this.#apps.usage.deleteOfApp(appId);
    return true;
  }

  /**
   * Adds to `writes` the deletion of the developer with their apps (RedisApps.deleteRows),
   * sessions, mailed links and invitation (kept in their row), announced; resolves to the apps'
   * ids, whose usage the caller deletes once committed.
   */
  async #deleteRows(dev: DeveloperRow, writes: Writes): Promise<string[]> {
    const c = this.#catalog;
    const apps = await c.rows<AppRow>(KEYS.apps, await c.members(KEYS.appsOf(dev.id)));
    for (const app of apps) await this.#apps.deleteRows(app, writes);
    await this.#endSessions(dev.id, writes);
    for (const hash of Object.values(dev.emailTokens)) writes.add('DEL', KEYS.emailToken(hash));
    writes.add('HDEL', KEYS.developers, dev.id).add('HDEL', KEYS.emails, dev.email).add('DEL', KEYS.appsOf(dev.id));
    writes.announce({ kind: 'developer', ref: dev.email });
    return apps.map((a) => a.id);
  }

  async findDeveloper(email: string): Promise<Developer | undefined> {
    const dev = await this.#catalog.developerByEmail(email);
    return dev && toDeveloper(dev);
  }

  async findDeveloperById(id: string): Promise<Developer | undefined> {
    const dev = await this.#catalog.developer(id);
    return dev && toDeveloper(dev);
  }

  async listDevelopers(): Promise<Developer[]> {
    const rows = (await this.#db.run(this.#db.client.hvals(KEYS.developers))).map((j) => JSON.parse(j) as DeveloperRow);
    return rows.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0)).map(toDeveloper);
  }

  async setDeveloperStatus(email: string, status: Status, now: number): Promise<Developer | undefined> {
    const changed = await this.#update(email, async (dev, writes) => {
      writes.announce({ kind: 'developer', ref: dev.email });
      if (status !== 'disabled') return { ...dev, status };
      // Ended, not suspended: enabling the developer again must not bring the sessions (or tokens) back.
      await this.#endSessions(dev.id, writes);
      return { ...dev, status, revokedAt: now };
    });
    return changed && toDeveloper(changed);
  }

  async findPasswordHash(email: string): Promise<string | null | undefined> {
    return (await this.#catalog.developerByEmail(email))?.passwordHash;
  }

  async setPasswordHash(email: string, hash: string): Promise<boolean> {
    return (await this.#update(email, async (dev) => ({ ...dev, passwordHash: hash }))) !== undefined;
  }

  async setInvitation(email: string, codeHash: Buffer, expiresAt: number): Promise<boolean> {
    return (await this.#update(email, async (dev) => ({ ...dev, invitation: { hash: digest(codeHash), expiresAt } }))) !== undefined;
  }

  async acceptInvitation(input: { email: string; codeHash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    const accepted = await this.#update(input.email, async (dev, writes) => {
      const invitation = dev.invitation;
      if (invitation === null || invitation.expiresAt <= input.now || !sameDigest(invitation.hash, digest(input.codeHash))) return undefined;
      // A password set through an invitation ends whatever sessions the account had.
      await this.#endSessions(dev.id, writes);
      return { ...dev, passwordHash: input.passwordHash, invitation: null, verifiedAt: dev.verifiedAt ?? input.now };
    });
    return accepted && toDeveloper(accepted);
  }

  async saveEmailToken(input: { hash: Buffer; developerId: string; purpose: EmailTokenPurpose; now: number; expiresAt: number }): Promise<void> {
    const c = this.#catalog;
    const hash = digest(input.hash);
    const token: EmailTokenRow = { developerId: input.developerId, purpose: input.purpose, expiresAt: input.expiresAt };
    await c.write(async () => {
      const dev = await c.developer(input.developerId);
      if (dev === undefined) throw new StoreError('conflict', `no developer ${input.developerId}`);
      const writes = new Writes();
      const earlier = dev.emailTokens[input.purpose];
      if (earlier !== undefined) writes.add('DEL', KEYS.emailToken(earlier));
      writes.add('SET', KEYS.emailToken(hash), JSON.stringify(token), 'PX', ttlMs(input.expiresAt, input.now));
      putDeveloper(writes, { ...dev, emailTokens: { ...dev.emailTokens, [input.purpose]: hash } });
      return { result: undefined, writes };
    });
  }

  /** Spends the developer's unexpired mailed link of `purpose`; `change` says what else the spending does. */
  async #spend(hash: Buffer, purpose: EmailTokenPurpose, now: number, change: (dev: DeveloperRow, writes: Writes) => Promise<DeveloperRow | undefined>): Promise<DeveloperRow | undefined> {
    const c = this.#catalog;
    const id = digest(hash);
    return c.write(async () => {
      const token = parse<EmailTokenRow>(await this.#db.run(this.#db.client.get(KEYS.emailToken(id))));
      if (token === undefined || token.purpose !== purpose || token.expiresAt <= now) return { result: undefined };
      const dev = await c.developer(token.developerId);
      if (dev === undefined) return { result: undefined };
      const writes = new Writes();
      const next = await change(dev, writes);
      if (next === undefined) return { result: undefined };
      const emailTokens = { ...next.emailTokens };
      if (emailTokens[purpose] === id) delete emailTokens[purpose];
      writes.add('DEL', KEYS.emailToken(id));
      putDeveloper(writes, { ...next, emailTokens });
      return { result: next, writes };
    });
  }

  async confirmEmail(input: { hash: Buffer; developerId: string; now: number }): Promise<Developer | undefined> {
    // Another developer's token is left as it is: only its own developer may spend it.
    const dev = await this.#spend(input.hash, 'verify', input.now, async (d) => (d.id === input.developerId ? { ...d, verifiedAt: d.verifiedAt ?? input.now } : undefined));
    return dev && toDeveloper(dev);
  }

  async resetPassword(input: { hash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    const dev = await this.#spend(input.hash, 'reset', input.now, async (d, writes) => {
      await this.#endSessions(d.id, writes);
      return { ...d, passwordHash: input.passwordHash, verifiedAt: d.verifiedAt ?? input.now };
    });
    return dev && toDeveloper(dev);
  }

  async createSession(input: { idHash: Buffer; developerId: string; passwordHash: string; now: number; expiresAt: number }): Promise<boolean> {
    const c = this.#catalog;
    const session: SessionRow = { developerId: input.developerId, expiresAt: input.expiresAt };
    const id = digest(input.idHash);
    return c.write(async () => {
      const dev = await c.developer(input.developerId);
      if (dev === undefined || dev.status !== 'active' || dev.passwordHash !== input.passwordHash) return { result: false };
      // The developer's sessions by expiry: ended ones leave the set as new ones come.
      const writes = new Writes()
        .add('SET', KEYS.session(id), JSON.stringify(session), 'PX', ttlMs(input.expiresAt, input.now))
        .add('ZREMRANGEBYSCORE', KEYS.sessionsOf(dev.id), '-inf', input.now)
        .add('ZADD', KEYS.sessionsOf(dev.id), input.expiresAt, id);
      return { result: true, writes };
    });
  }

  async findSession(idHash: Buffer, now: number): Promise<Developer | undefined> {
    const session = parse<SessionRow>(await this.#db.run(this.#db.client.get(KEYS.session(digest(idHash)))));
    if (session === undefined || session.expiresAt <= now) return undefined;
    const dev = await this.#catalog.developer(session.developerId);
    if (dev === undefined || dev.status !== 'active' || dev.verifiedAt === null) return undefined;
    return toDeveloper(dev);
  }

  async deleteSession(idHash: Buffer): Promise<void> {
    const id = digest(idHash);
    const session = parse<SessionRow>(await this.#db.run(this.#db.client.get(KEYS.session(id))));
    await this.#db.run(this.#db.client.del(KEYS.session(id)));
    if (session !== undefined) await this.#db.run(this.#db.client.zrem(KEYS.sessionsOf(session.developerId), id));
  }

  async deleteSessions(developerId: string): Promise<void> {
    await this.#catalog.write(async () => {
      const writes = new Writes();
      await this.#endSessions(developerId, writes);
      return { result: undefined, writes };
    });
  }

  /** Adds to `writes` the end of every session of the developer. */
  async #endSessions(developerId: string, writes: Writes): Promise<void> {
    for (const id of await this.#db.run(this.#db.client.zrange(KEYS.sessionsOf(developerId), '0', '-1'))) writes.add('DEL', KEYS.session(id));
    writes.add('DEL', KEYS.sessionsOf(developerId));
  }

  /** Changes the developer of `email` as `change` says (undefined: not at all), in one catalog write. */
  async #update(email: string, change: (dev: DeveloperRow, writes: Writes) => Promise<DeveloperRow | undefined>): Promise<DeveloperRow | undefined> {
    const c = this.#catalog;
    return c.write(async () => {
      const dev = await c.developerByEmail(email);
      if (dev === undefined) return { result: undefined };
      const writes = new Writes();
      const next = await change(dev, writes);
      if (next === undefined) return { result: undefined };
      return { result: next, writes: putDeveloper(writes, next) };
    });
  }
}

function putDeveloper(writes: Writes, dev: DeveloperRow): Writes {
  return writes.add('HSET', KEYS.developers, dev.id, JSON.stringify(dev));
}

function sameDigest(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
