// The catalog, the live tokens and the signing keys on SQLite, read in one read transaction and
// written in one write transaction, for `gateway admin migrate` (src/store/port/transfer.ts).
import { StoreError, type ExportedApp, type ExportedCredential, type ExportedDeveloper, type StoreExport, type TransferStore } from '../port/index.ts';
import type { Row, SqliteDb } from './db.ts';
import { certificateAuthColumn, certificateAuthMember, redirectUrisColumn, redirectUrisOf, scopesColumn, scopesOf, toCredential as toAppCredential } from './apps.ts';
import { toSigningKey } from './signing-keys.ts';
import { cnfColumn, toToken } from './tokens.ts';

export class SqliteTransfer implements TransferStore {
  readonly #db: SqliteDb;
  readonly #developers;
  readonly #apps;
  readonly #credentials;
  readonly #liveTokens;
  readonly #signingKeys;
  readonly #anyDeveloper;
  readonly #insertDeveloper;
  readonly #insertApp;
  readonly #insertCredential;
  readonly #insertToken;
  readonly #insertSigningKey;

  constructor(db: SqliteDb) {
    this.#db = db;
    this.#developers = db.prepare('SELECT id, email, name, status, created_at, verified_at, password_hash FROM developers');
    this.#apps = db.prepare('SELECT id, developer_id, name, product, status, approval, created_at, scopes, client_type, redirect_uris, certificate_auth FROM apps');
    this.#credentials = db.prepare('SELECT key, app_id, secret_hash, status, expires_at, created_at FROM credentials');
    // Disabling an app or a developer, and a reuse, set revoked_at; a rotation sets used_at.
    this.#liveTokens = db.prepare(
      `SELECT t.* FROM tokens t JOIN credentials c ON c.key = t.key AND c.app_id = t.app_id
        WHERE t.expires_at > ? AND t.revoked_at IS NULL AND t.used_at IS NULL
          AND c.status = 'approved' AND (c.expires_at IS NULL OR c.expires_at > ?)`,
    );
    this.#signingKeys = db.prepare('SELECT * FROM signing_keys');
    this.#anyDeveloper = db.prepare('SELECT 1 FROM developers LIMIT 1');
    this.#insertDeveloper = db.prepare('INSERT INTO developers (id, email, name, status, created_at, verified_at, password_hash) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#insertApp = db.prepare(
      'INSERT INTO apps (id, developer_id, name, product, status, approval, created_at, scopes, client_type, redirect_uris, certificate_auth) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#insertCredential = db.prepare('INSERT INTO credentials (key, app_id, secret_hash, status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    this.#insertToken = db.prepare(
      `INSERT INTO tokens (hash, kind, app_id, key, product, scope, subject, family, issued_at, expires_at, cnf)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertSigningKey = db.prepare(
      `INSERT INTO signing_keys (kid, algorithm, public_jwk, private_key, created_at, activates_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kid) DO NOTHING`,
    );
  }

  async exportData(now: number): Promise<StoreExport> {
    return this.#db.snapshot(() => ({
      developers: (this.#developers.all() as Row[]).map(toDeveloper),
      apps: (this.#apps.all() as Row[]).map(toApp),
      credentials: (this.#credentials.all() as Row[]).map(toCredential),
      tokens: (this.#liveTokens.all(now, now) as Row[]).map(toToken),
      signingKeys: (this.#signingKeys.all() as Row[]).map(toSigningKey),
    }));
  }

  async importData(data: StoreExport, now: number): Promise<void> {
    await this.#db.write(() => {
      if (this.#anyDeveloper.get() !== undefined) throw new StoreError('conflict', 'the store is not empty: it holds developers');
      for (const d of data.developers) this.#insertDeveloper.run(d.id, d.email, d.name, d.status, d.createdAt, d.verifiedAt, d.passwordHash);
      for (const a of data.apps) {
        this.#insertApp.run(
          a.id,
          a.developerId,
          a.name,
          a.product,
          a.status,
          a.approval,
          a.createdAt,
          scopesColumn(a.scopes),
          a.type,
          redirectUrisColumn(a.redirectUris),
          certificateAuthColumn(a.certificateAuth),
        );
      }
      for (const c of data.credentials) this.#insertCredential.run(c.key, c.appId, c.secretHash, c.status, c.expiresAt, c.createdAt);
      for (const t of data.tokens) this.#insertToken.run(t.hash, t.kind, t.appId, t.key, t.product, t.scope, t.subject, t.family, t.issuedAt, t.expiresAt, cnfColumn(t));
      // A gateway already serving this file may remember the keys as unknown.
      for (const c of data.credentials) this.#db.changed({ kind: 'key', ref: c.key }, now);
      for (const k of data.signingKeys) {
        const added = this.#insertSigningKey.run(k.kid, k.algorithm, k.publicJwk, k.privateKey, k.createdAt, k.activatesAt, k.revokedAt).changes;
        if (Number(added) === 1) this.#db.changed({ kind: 'signing-key', ref: k.kid }, now);
      }
    });
  }
}

function toDeveloper(r: Row): ExportedDeveloper {
  return {
    id: r.id as string,
    email: r.email as string,
    name: r.name as string,
    status: r.status as ExportedDeveloper['status'],
    createdAt: r.created_at as number,
    verifiedAt: (r.verified_at as number | null) ?? null,
    passwordHash: (r.password_hash as string | null) ?? null,
  };
}

function toApp(r: Row): ExportedApp {
  return {
    id: r.id as string,
    developerId: r.developer_id as string,
    name: r.name as string,
    product: r.product as string,
    status: r.status as ExportedApp['status'],
    approval: r.approval as ExportedApp['approval'],
    createdAt: r.created_at as number,
    type: r.client_type as ExportedApp['type'],
    redirectUris: redirectUrisOf(r.redirect_uris as string),
    ...(typeof r.scopes === 'string' && { scopes: scopesOf(r.scopes) }),
    ...certificateAuthMember(r.certificate_auth),
  };
}

function toCredential(r: Row): ExportedCredential {
  return { ...toAppCredential(r), secretHash: Buffer.from(r.secret_hash as Uint8Array) };
}
