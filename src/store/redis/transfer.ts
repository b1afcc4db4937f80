// The catalog, the live tokens and the signing keys on Redis, for `gateway admin migrate`
// (src/store/port/transfer.ts). The catalog is read in one MULTI (its keys share the hash tag {c})
// and written through Catalog.write in batches; the tokens are found through the expiries and
// saved by family; the signing keys are written one by one, each announcing itself.
import { StoreError, StoreUnavailable, type StoreExport, type TransferStore } from '../port/index.ts';
import type { RedisApps } from './apps.ts';
import { holds, KEYS, nameKey, revokedUpTo, Writes, type AppRow, type CredentialRow, type DeveloperRow } from './catalog.ts';
import type { RedisDb } from './db.ts';
import type { RedisSigningKeys } from './signing-keys.ts';
import type { RedisTokens } from './tokens.ts';

/** Rows per catalog write, and tokens per save: one script runs at a time on Redis, so none holds it long. */
const BATCH = 500;

export class RedisTransfer implements TransferStore {
  readonly #db: RedisDb;
  readonly #apps: RedisApps;
  readonly #tokens: RedisTokens;
  readonly #signingKeys: RedisSigningKeys;

  constructor(db: RedisDb, apps: RedisApps, tokens: RedisTokens, signingKeys: RedisSigningKeys) {
    this.#db = db;
    this.#apps = apps;
    this.#tokens = tokens;
    this.#signingKeys = signingKeys;
  }

  async exportData(now: number): Promise<StoreExport> {
    const replies = await this.#db.run(this.#db.client.multi().hvals(KEYS.developers).hvals(KEYS.apps).hvals(KEYS.credentials).exec());
    const [developers, apps, credentials] = [0, 1, 2].map((i) => {
      const [err, json] = replies?.[i] ?? [new Error('the transaction was aborted'), undefined];
      if (err !== null) throw new StoreUnavailable(`the Redis store failed: ${err.message}`, { cause: err });
      return (json as string[]).map((j) => JSON.parse(j) as unknown);
    }) as [DeveloperRow[], AppRow[], CredentialRow[]];
    const developerById = new Map(developers.map((d) => [d.id, d]));
    const appById = new Map(apps.map((a) => [a.id, a]));
    const credentialByKey = new Map(credentials.map((c) => [c.key, c]));
    // As RedisTokens reads a token's worth (RedisApps.grounds): disabling an app or a developer revoked the tokens issued until then.
    const tokens = (await this.#tokens.unspent(now)).filter((t) => {
      const credential = credentialByKey.get(t.key);
      const app = appById.get(t.appId);
      const developer = app === undefined ? undefined : developerById.get(app.developerId);
      return credential !== undefined && app !== undefined && developer !== undefined && holds(credential, revokedUpTo(app, developer), t, now);
    });
    return {
      developers: developers.map((d) => ({
        id: d.id,
        email: d.email,
        name: d.name,
        status: d.status,
        createdAt: d.createdAt,
        verifiedAt: d.verifiedAt,
        passwordHash: d.passwordHash,
      })),
      apps: apps.map((a) => ({
        id: a.id,
        developerId: a.developerId,
        name: a.name,
        product: a.product,
        status: a.status,
        approval: a.approval,
        createdAt: a.createdAt,
        type: a.type ?? 'confidential',
        redirectUris: a.redirectUris ?? [],
        ...(a.scopes !== undefined && { scopes: a.scopes }),
        ...(a.certificateAuth !== undefined && { certificateAuth: a.certificateAuth }),
      })),
      credentials: credentials.map((c) => ({
        key: c.key,
        appId: c.appId,
        status: c.status,
        expiresAt: c.expiresAt,
        createdAt: c.createdAt,
        secretHash: Buffer.from(c.secretHash, 'base64'),
      })),
      tokens,
      signingKeys: await this.#signingKeys.listSigningKeys(),
    };
  }

  async importData(data: StoreExport, _now: number): Promise<void> {
    // Each row as the commands that write it, as RedisAccounts and RedisApps write them.
    const rows: ((writes: Writes) => void)[] = [
      ...data.developers.map((d) => (writes: Writes) => {
        const row: DeveloperRow = {
          id: d.id,
          email: d.email,
          name: d.name,
          status: d.status,
          verifiedAt: d.verifiedAt,
          createdAt: d.createdAt,
          passwordHash: d.passwordHash,
          invitation: null,
          emailTokens: {},
          revokedAt: null,
        };
        writes.add('HSET', KEYS.developers, d.id, JSON.stringify(row)).add('HSET', KEYS.emails, d.email, d.id);
      }),
      ...data.apps.map((a) => (writes: Writes) => {
        const row: AppRow = {
          id: a.id,
          developerId: a.developerId,
          name: a.name,
          product: a.product,
          status: a.status,
          approval: a.approval,
          createdAt: a.createdAt,
          revokedAt: null,
          type: a.type,
          redirectUris: a.redirectUris,
          ...(a.scopes !== undefined && { scopes: a.scopes }),
          ...(a.certificateAuth !== undefined && { certificateAuth: a.certificateAuth }),
        };
        writes.add('HSET', KEYS.apps, a.id, JSON.stringify(row)).add('HSET', KEYS.appNames, nameKey(a.developerId, a.name), a.id).add('SADD', KEYS.appsOf(a.developerId), a.id);
      }),
      ...data.credentials.map((c) => (writes: Writes) => {
        const row: CredentialRow = { key: c.key, appId: c.appId, secretHash: c.secretHash.toString('base64'), status: c.status, expiresAt: c.expiresAt, createdAt: c.createdAt };
        writes.add('HSET', KEYS.credentials, c.key, JSON.stringify(row)).add('SADD', KEYS.keysOf(c.appId), c.key);
      }),
    ];
    const catalog = this.#apps.catalog;
    // The first batch is committed only if the catalog is still empty as read: the check and the
    // first developers are one write, so two imports (or an import and a sign-up) cannot both pass.
    await catalog.write(async () => {
      if ((await this.#db.run(this.#db.client.hlen(KEYS.developers))) > 0) throw new StoreError('conflict', 'the store is not empty: it holds developers');
      return { result: undefined, writes: batch(rows.slice(0, BATCH)) };
    });
    for (let at = BATCH; at < rows.length; at += BATCH) {
      const writes = batch(rows.slice(at, at + BATCH));
      await catalog.write(async () => ({ result: undefined, writes }));
    }
    for (const key of data.signingKeys) await this.#signingKeys.copySigningKey(key);
    for (let at = 0; at < data.tokens.length; at += BATCH) await this.#tokens.saveTokens(data.tokens.slice(at, at + BATCH));
    // A gateway already serving this store may remember the keys as unknown.
    await this.#db.changed({ kind: 'everything' });
  }
}

function batch(rows: readonly ((writes: Writes) => void)[]): Writes {
  const writes = new Writes();
  for (const row of rows) row(writes);
  return writes;
}
