// Apps and credentials on SQLite. Every write that changes what a key, an app or its tokens are
// worth reports the change (SqliteDb.changed) inside its transaction.
import { newId } from '../../crypto.ts';
import { StoreError, type App, type AppStore, type Approval, type CertificateAuth, type Client, type ClientType, type Credential, type NewApp, type Status } from '../port/index.ts';
import type { SqliteUsage } from './counters.ts';
import { conflictOr, type Row, type SqliteDb } from './db.ts';
import type { SqliteTokens } from './tokens.ts';

const APP_COLUMNS = 'a.id, a.developer_id, d.email AS developer_email, a.name, a.product, a.status, a.approval, a.created_at, a.scopes, a.client_type, a.redirect_uris, a.certificate_auth';

export class SqliteApps implements AppStore {
  readonly #db: SqliteDb;
  readonly #tokens: SqliteTokens;
  readonly #usage: SqliteUsage;
  readonly #insertApp;
  readonly #insertCredential;
  readonly #appExists;
  readonly #appByName;
  readonly #appById;
  readonly #appByKey;
  readonly #apps;
  readonly #appsOfDeveloper;
  readonly #appIdsOfDeveloper;
  readonly #setStatus;
  readonly #setApproval;
  readonly #setRedirectUris;
  readonly #setCertificateAuth;
  readonly #appCountOfDeveloper;
  readonly #appActive;
  readonly #credentialsOfApp;
  readonly #revokeCredential;
  readonly #approvedKeysOfApp;
  readonly #expireOtherCredentials;
  readonly #client;
  readonly #deleteRows;

  constructor(db: SqliteDb, tokens: SqliteTokens, usage: SqliteUsage) {
    this.#db = db;
    this.#tokens = tokens;
    this.#usage = usage;
    this.#insertApp = db.prepare('INSERT INTO apps (id, developer_id, name, product, status, approval, created_at, scopes, client_type, redirect_uris) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.#insertCredential = db.prepare('INSERT INTO credentials (key, app_id, secret_hash, status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    this.#appExists = db.prepare('SELECT 1 FROM apps WHERE id = ?');
    const appFrom = `SELECT ${APP_COLUMNS} FROM apps a JOIN developers d ON d.id = a.developer_id`;
    this.#appByName = db.prepare(`${appFrom} WHERE d.email = ? AND a.name = ?`);
    this.#appById = db.prepare(`${appFrom} WHERE a.id = ?`);
    this.#appByKey = db.prepare(`${appFrom} JOIN credentials c ON c.app_id = a.id WHERE c.key = ?`);
    this.#apps = db.prepare(`${appFrom} ORDER BY d.email, a.name`);
    this.#appsOfDeveloper = db.prepare(`${appFrom} WHERE d.email = ? ORDER BY a.name`);
    this.#appIdsOfDeveloper = db.prepare('SELECT id FROM apps WHERE developer_id = ?');
    this.#setStatus = db.prepare('UPDATE apps SET status = ? WHERE id = ?');
    this.#setApproval = db.prepare('UPDATE apps SET approval = ? WHERE id = ?');
    this.#setRedirectUris = db.prepare('UPDATE apps SET redirect_uris = ? WHERE id = ?');
    this.#setCertificateAuth = db.prepare('UPDATE apps SET certificate_auth = ? WHERE id = ?');
    this.#appCountOfDeveloper = db.prepare('SELECT count(*) AS n FROM apps WHERE developer_id = ?');
    this.#appActive = db.prepare(`SELECT a.status = 'active' AND d.status = 'active' AS active FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.id = ?`);
    this.#credentialsOfApp = db.prepare('SELECT * FROM credentials WHERE app_id = ? ORDER BY created_at, key');
    this.#revokeCredential = db.prepare(`UPDATE credentials SET status = 'revoked' WHERE key = ? AND status <> 'revoked'`);
    this.#approvedKeysOfApp = db.prepare(`SELECT key FROM credentials WHERE app_id = ? AND status = 'approved' AND key <> ?`);
    this.#expireOtherCredentials = db.prepare(`UPDATE credentials SET expires_at = min(coalesce(expires_at, ?), ?) WHERE app_id = ? AND status = 'approved' AND key <> ?`);
    this.#client = db.prepare(
      `SELECT c.key, c.secret_hash, c.status AS credential_status, c.expires_at AS credential_expires_at,
              c.created_at AS credential_created_at, ${APP_COLUMNS}, d.status AS developer_status
         FROM credentials c JOIN apps a ON a.id = c.app_id JOIN developers d ON d.id = a.developer_id
        WHERE c.key = ?`,
    );
    // An app's consents go with it; on Redis they expire by themselves (its ids are never used again).
    this.#deleteRows = [db.prepare('DELETE FROM consents WHERE app_id = ?'), db.prepare('DELETE FROM credentials WHERE app_id = ?'), db.prepare('DELETE FROM apps WHERE id = ?')];
  }

  async createApp(input: NewApp): Promise<App> {
    const id = newId();
    try {
      await this.#db.write(() => {
        // Counted inside the write transaction, so parallel registrations cannot pass the bound together.
        if (input.maxAppsOfDeveloper !== undefined && (this.#appCountOfDeveloper.get(input.developerId) as { n: number }).n >= input.maxAppsOfDeveloper) {
          throw new StoreError('limit', `the developer already holds ${input.maxAppsOfDeveloper} apps`);
        }
        const { approval = 'approved', type = 'confidential', redirectUris = [] } = input;
        this.#insertApp.run(id, input.developerId, input.name, input.product, 'active', approval, input.now, scopesColumn(input.scopes), type, redirectUrisColumn(redirectUris));
        this.#insertCredential.run(input.key, id, input.secretHash, 'approved', null, input.now);
        // A key presented before it existed is no longer unknown.
        this.#db.changed({ kind: 'key', ref: input.key }, input.now);
      });
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw conflictOr(err, `app "${input.name}" already exists for this developer`);
    }
    return toApp(this.#db.read(() => this.#appById.get(id)) as Row);
  }

  async findApp(developerEmail: string, name: string): Promise<App | undefined> {
    const row = this.#db.read(() => this.#appByName.get(developerEmail, name)) as Row | undefined;
    return row && toApp(row);
  }

  async findAppById(id: string): Promise<App | undefined> {
    const row = this.#db.read(() => this.#appById.get(id)) as Row | undefined;
    return row && toApp(row);
  }

  async findAppByKey(key: string): Promise<App | undefined> {
    const row = this.#db.read(() => this.#appByKey.get(key)) as Row | undefined;
    return row && toApp(row);
  }

  async listApps(filter: { developerEmail?: string } = {}): Promise<App[]> {
    const rows = this.#db.read(() => (filter.developerEmail === undefined ? this.#apps.all() : this.#appsOfDeveloper.all(filter.developerEmail)));
    return (rows as Row[]).map(toApp);
  }

  async setAppStatus(appId: string, status: Status, now: number): Promise<App | undefined> {
    return this.#db.write(() => {
      if (this.#setStatus.run(status, appId).changes === 0) return undefined;
      if (status === 'disabled') this.#tokens.revokeOfApp(appId, now);
      this.#db.changed({ kind: 'app', ref: appId }, now);
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async setAppApproval(appId: string, approval: Approval, now: number): Promise<App | undefined> {
    return this.#db.write(() => {
      if (this.#setApproval.run(approval, appId).changes === 0) return undefined;
      // Cached clients of the app are read again, with their approval.
      this.#db.changed({ kind: 'app', ref: appId }, now);
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async setRedirectUris(appId: string, uris: readonly string[], now: number): Promise<App | undefined> {
    const column = redirectUrisColumn(uris);
    return this.#db.write(() => {
      if (this.#setRedirectUris.run(column, appId).changes === 0) return undefined;
      // Cached clients of the app are read again, with their redirect URIs.
      this.#db.changed({ kind: 'app', ref: appId }, now);
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async setCertificateAuth(appId: string, auth: CertificateAuth | undefined, now: number): Promise<App | undefined> {
    const column = certificateAuthColumn(auth);
    return this.#db.write(() => {
      if (this.#setCertificateAuth.run(column, appId).changes === 0) return undefined;
      // Cached clients of the app are read again, with how they authenticate.
      this.#db.changed({ kind: 'app', ref: appId }, now);
      return toApp(this.#appById.get(appId) as Row);
    });
  }

  async listCredentials(appId: string): Promise<Credential[]> {
    return (this.#db.read(() => this.#credentialsOfApp.all(appId)) as Row[]).map(toCredential);
  }

  async revokeCredential(key: string, now: number): Promise<boolean> {
    return this.#db.write(() => {
      if (this.#revokeCredential.run(key).changes === 0) return false;
      // The tokens stay in place: a revoked credential never comes back, and verification joins its status.
      this.#db.changed({ kind: 'key', ref: key }, now);
      return true;
    });
  }

  async rotateCredential(input: { appId: string; key: string; secretHash: Buffer; now: number; overlapUntil: number }): Promise<boolean> {
    return this.#db.write(() => {
      if (this.#appExists.get(input.appId) === undefined) return false;
      const old = (this.#approvedKeysOfApp.all(input.appId, input.key) as Row[]).map((r) => r.key as string);
      this.#insertCredential.run(input.key, input.appId, input.secretHash, 'approved', null, input.now);
      this.#expireOtherCredentials.run(input.overlapUntil, input.overlapUntil, input.appId, input.key);
      // The new key is no longer unknown; cached clients and tokens of the old keys are read again, with their new expiry.
      for (const key of [input.key, ...old]) this.#db.changed({ kind: 'key', ref: key }, input.now);
      return true;
    });
  }

  async addCredential(input: { appId: string; key: string; secretHash: Buffer; now: number }): Promise<Credential | undefined> {
    try {
      return await this.#db.write(() => {
        if (this.#appExists.get(input.appId) === undefined) return undefined;
        // The key is the credentials' primary key: one held by any app, in any status, is refused.
        this.#insertCredential.run(input.key, input.appId, input.secretHash, 'approved', null, input.now);
        // A key presented before it was imported is no longer unknown.
        this.#db.changed({ kind: 'key', ref: input.key }, input.now);
        return { key: input.key, appId: input.appId, status: 'approved', expiresAt: null, createdAt: input.now } satisfies Credential;
      });
    } catch (err) {
      throw conflictOr(err, `key ${input.key} already exists`);
    }
  }

  async deleteApp(appId: string, now: number, options: { onlyIfActive?: boolean } = {}): Promise<boolean> {
    return this.#db.write(() => {
      const row = this.#appActive.get(appId) as { active: number } | undefined;
      if (row === undefined || (options.onlyIfActive === true && row.active !== 1)) return false;
      this.deleteRows(appId, now);
      return true;
    });
  }

  /** Inside a write: deletes every app of the developer with its rows (the developer is being deleted). */
  deleteOfDeveloper(developerId: string, now: number): void {
    for (const app of this.#appIdsOfDeveloper.all(developerId) as Row[]) this.deleteRows(app.id as string, now);
  }

  /** Inside a write: deletes the app with its tokens, usage and credentials. */
  deleteRows(appId: string, now: number): void {
    this.#tokens.deleteOfApp(appId);
    this.#usage.deleteOfApp(appId);
    for (const statement of this.#deleteRows) statement.run(appId);
    this.#db.changed({ kind: 'app', ref: appId }, now);
  }

  async findClient(key: string): Promise<Client | undefined> {
    const row = this.#db.read(() => this.#client.get(key)) as Row | undefined;
    if (!row) return undefined;
    return {
      credential: {
        key: row.key as string,
        appId: row.id as string,
        status: row.credential_status as Credential['status'],
        expiresAt: (row.credential_expires_at as number | null) ?? null,
        createdAt: row.credential_created_at as number,
      },
      secretHash: Buffer.from(row.secret_hash as Uint8Array),
      app: toApp(row),
      developerStatus: row.developer_status as Status,
    };
  }
}

function toApp(r: Row): App {
  return {
    id: r.id as string,
    developerId: r.developer_id as string,
    developerEmail: r.developer_email as string,
    name: r.name as string,
    product: r.product as string,
    status: r.status as Status,
    approval: r.approval as Approval,
    createdAt: r.created_at as number,
    type: r.client_type as ClientType,
    redirectUris: redirectUrisOf(r.redirect_uris as string),
    ...(typeof r.scopes === 'string' && { scopes: scopesOf(r.scopes) }),
    ...certificateAuthMember(r.certificate_auth),
  };
}

/** App.certificateAuth as the `certificate_auth` column holds it: JSON, NULL when absent. */
export function certificateAuthColumn(auth: CertificateAuth | undefined): string | null {
  return auth === undefined ? null : JSON.stringify(auth);
}

/** The `certificate_auth` column as App's optional member. */
export function certificateAuthMember(column: unknown): { certificateAuth?: CertificateAuth } {
  return typeof column === 'string' ? { certificateAuth: JSON.parse(column) as CertificateAuth } : {};
}

/** App.redirectUris as the `redirect_uris` column holds them: a JSON array of strings, in order. */
export function redirectUrisColumn(uris: readonly string[]): string {
  return JSON.stringify(uris);
}

export function redirectUrisOf(column: string): string[] {
  return JSON.parse(column) as string[];
}

/** App.scopes as the `scopes` column holds them: space-delimited, as a token's scope; NULL when absent. */
export function scopesColumn(scopes: readonly string[] | undefined): string | null {
  if (scopes === undefined) return null;
  // RFC 6749 §3.3: a scope is one or more characters, none a space; anything else would not read back as written.
  if (scopes.some((s) => s === '' || s.includes(' '))) throw new TypeError('SqliteStore: a scope is a non-empty string without spaces');
  return scopes.join(' ');
}

/** The `scopes` column (not NULL) as App.scopes: '' is no scope at all. */
export function scopesOf(column: string): string[] {
  return column === '' ? [] : column.split(' ');
}

export function toCredential(r: Row): Credential {
  return {
    key: r.key as string,
    appId: r.app_id as string,
    status: r.status as Credential['status'],
    expiresAt: (r.expires_at as number | null) ?? null,
    createdAt: r.created_at as number,
  };
}
