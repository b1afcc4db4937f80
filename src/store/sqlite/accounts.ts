// Developers, their portal passwords, invitations, mailed links and sessions on SQLite.
import { newId } from '../../crypto.ts';
import type { AccountStore, Developer, EmailTokenPurpose, Status } from '../port/index.ts';
import type { SqliteApps } from './apps.ts';
import { conflictOr, type Row, type SqliteDb } from './db.ts';
import type { SqliteTokens } from './tokens.ts';

export class SqliteAccounts implements AccountStore {
  readonly #db: SqliteDb;
  readonly #apps: SqliteApps;
  readonly #tokens: SqliteTokens;
  readonly #insertDeveloper;
  readonly #unverifiedDeveloper;
  readonly #deleteDeveloper;
  readonly #developerByEmail;
  readonly #developerById;
  readonly #developers;
  readonly #setStatus;
  readonly #markVerified;
  readonly #passwordHash;
  readonly #setPassword;
  readonly #setInvitation;
  readonly #acceptInvitation;
  readonly #deleteEmailTokens;
  readonly #insertEmailToken;
  readonly #spendEmailToken;
  readonly #emailToken;
  readonly #purgeEmailTokens;
  readonly #insertSession;
  readonly #session;
  readonly #deleteSession;
  readonly #deleteSessions;
  readonly #purgeSessions;

  constructor(db: SqliteDb, apps: SqliteApps, tokens: SqliteTokens) {
    this.#db = db;
    this.#apps = apps;
    this.#tokens = tokens;
    this.#insertDeveloper = db.prepare('INSERT INTO developers (id, email, name, status, created_at, password_hash, verified_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#unverifiedDeveloper = db.prepare('SELECT id, email FROM developers WHERE email = ? AND verified_at IS NULL');
    // Sessions and mailed links go with it (ON DELETE CASCADE).
    this.#deleteDeveloper = db.prepare('DELETE FROM developers WHERE id = ?');
    this.#developerByEmail = db.prepare('SELECT * FROM developers WHERE email = ?');
    this.#developerById = db.prepare('SELECT * FROM developers WHERE id = ?');
    this.#developers = db.prepare('SELECT * FROM developers ORDER BY email');
    this.#setStatus = db.prepare('UPDATE developers SET status = ? WHERE email = ?');
    this.#markVerified = db.prepare('UPDATE developers SET verified_at = coalesce(verified_at, ?) WHERE id = ?');
    this.#passwordHash = db.prepare('SELECT password_hash FROM developers WHERE email = ?');
    this.#setPassword = db.prepare('UPDATE developers SET password_hash = ? WHERE email = ?');
    this.#setInvitation = db.prepare('UPDATE developers SET invite_hash = ?, invite_expires_at = ? WHERE email = ?');
    this.#acceptInvitation = db.prepare(
      `UPDATE developers SET password_hash = ?, invite_hash = NULL, invite_expires_at = NULL, verified_at = coalesce(verified_at, ?)
        WHERE email = ? AND invite_hash = ? AND invite_expires_at > ? RETURNING id`,
    );
    this.#deleteEmailTokens = db.prepare('DELETE FROM email_tokens WHERE developer_id = ? AND purpose = ?');
    this.#insertEmailToken = db.prepare('INSERT INTO email_tokens (hash, developer_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.#spendEmailToken = db.prepare('DELETE FROM email_tokens WHERE hash = ? AND purpose = ? AND expires_at > ? RETURNING developer_id');
    this.#emailToken = db.prepare('SELECT developer_id FROM email_tokens WHERE hash = ? AND purpose = ? AND expires_at > ?');
    this.#purgeEmailTokens = db.prepare('DELETE FROM email_tokens WHERE expires_at <= ?');
    this.#insertSession = db.prepare(
      `INSERT INTO portal_sessions (id_hash, developer_id, created_at, expires_at)
        SELECT ?, id, ?, ? FROM developers WHERE id = ? AND status = 'active' AND password_hash = ?`,
    );
    this.#session = db.prepare(
      `SELECT d.* FROM portal_sessions s JOIN developers d ON d.id = s.developer_id
        WHERE s.id_hash = ? AND s.expires_at > ? AND d.status = 'active' AND d.verified_at IS NOT NULL`,
    );
    this.#deleteSession = db.prepare('DELETE FROM portal_sessions WHERE id_hash = ?');
    this.#deleteSessions = db.prepare('DELETE FROM portal_sessions WHERE developer_id = ?');
    this.#purgeSessions = db.prepare('DELETE FROM portal_sessions WHERE expires_at <= ?');
  }

  async createDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): Promise<Developer> {
    const verified = input.verified ?? true;
    const dev: Developer = { id: newId(), email: input.email, name: input.name, status: 'active', verified, createdAt: input.now };
    try {
      await this.#db.write(() => this.#insertDeveloper.run(dev.id, dev.email, dev.name, dev.status, dev.createdAt, input.passwordHash ?? null, verified ? input.now : null));
    } catch (err) {
      throw conflictOr(err, `developer ${input.email} already exists`);
    }
    return dev;
  }

  async replaceUnverifiedDeveloper(input: { email: string; name: string; now: number }): Promise<Developer | undefined> {
    return this.#db.write(() => {
      const row = this.#unverifiedDeveloper.get(input.email) as Row | undefined;
      if (row === undefined) return undefined;
      this.#deleteRows(row, input.now);
      const dev: Developer = { id: newId(), email: input.email, name: input.name, status: 'active', verified: true, createdAt: input.now };
      this.#insertDeveloper.run(dev.id, dev.email, dev.name, dev.status, dev.createdAt, null, input.now);
      return dev;
    });
  }

  async findDeveloper(email: string): Promise<Developer | undefined> {
    const row = this.#db.read(() => this.#developerByEmail.get(email)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async findDeveloperById(id: string): Promise<Developer | undefined> {
    const row = this.#db.read(() => this.#developerById.get(id)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async listDevelopers(): Promise<Developer[]> {
    return (this.#db.read(() => this.#developers.all()) as Row[]).map(toDeveloper);
  }

  async deleteDeveloper(id: string, now: number): Promise<boolean> {
    return this.#db.write(() => {
      const row = this.#developerById.get(id) as Row | undefined;
      if (row === undefined) return false;
      this.#deleteRows(row, now);
      return true;
    });
  }

  /** Inside a write: deletes the developer (a row with its id and email) with their apps, sessions, mailed links and invitation. */
  #deleteRows(row: Row, now: number): void {
    this.#apps.deleteOfDeveloper(row.id as string, now);
    this.#deleteDeveloper.run(row.id as string);
    this.#db.changed({ kind: 'developer', ref: row.email as string }, now);
  }

  async setDeveloperStatus(email: string, status: Status, now: number): Promise<Developer | undefined> {
    return this.#db.write(() => {
      if (this.#setStatus.run(status, email).changes === 0) return undefined;
      const dev = toDeveloper(this.#developerByEmail.get(email) as Row);
      if (status === 'disabled') {
        this.#tokens.revokeOfDeveloper(dev.id, now);
        // Ended, not suspended: enabling the developer again must not bring the sessions back.
        this.#deleteSessions.run(dev.id);
      }
      this.#db.changed({ kind: 'developer', ref: dev.email }, now);
      return dev;
    });
  }

  async findPasswordHash(email: string): Promise<string | null | undefined> {
    const row = this.#db.read(() => this.#passwordHash.get(email)) as Row | undefined;
    return row === undefined ? undefined : ((row.password_hash as string | null) ?? null);
  }

  async setPasswordHash(email: string, hash: string): Promise<boolean> {
    return this.#db.write(() => Number(this.#setPassword.run(hash, email).changes) > 0);
  }

  async setInvitation(email: string, codeHash: Buffer, expiresAt: number): Promise<boolean> {
    return this.#db.write(() => Number(this.#setInvitation.run(codeHash, expiresAt, email).changes) > 0);
  }

  async acceptInvitation(input: { email: string; codeHash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    return this.#db.write(() => {
      const row = this.#acceptInvitation.get(input.passwordHash, input.now, input.email, input.codeHash, input.now) as Row | undefined;
      if (row === undefined) return undefined;
      // A password set through an invitation ends whatever sessions the account had.
      this.#deleteSessions.run(row.id as string);
      return toDeveloper(this.#developerByEmail.get(input.email) as Row);
    });
  }

  async saveEmailToken(input: { hash: Buffer; developerId: string; purpose: EmailTokenPurpose; now: number; expiresAt: number }): Promise<void> {
    await this.#db.write(() => {
      this.#deleteEmailTokens.run(input.developerId, input.purpose);
      this.#insertEmailToken.run(input.hash, input.developerId, input.purpose, input.now, input.expiresAt);
    });
  }

  async confirmEmail(input: { hash: Buffer; developerId: string; now: number }): Promise<Developer | undefined> {
    return this.#db.write(() => {
      // Another developer's token is left as it is: only its own developer may spend it.
      const owner = (this.#emailToken.get(input.hash, 'verify', input.now) as Row | undefined)?.developer_id;
      if (owner !== input.developerId) return undefined;
      this.#spendEmailToken.run(input.hash, 'verify', input.now);
      this.#markVerified.run(input.now, input.developerId);
      return toDeveloper(this.#developerById.get(input.developerId) as Row);
    });
  }

  async resetPassword(input: { hash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined> {
    return this.#db.write(() => {
      const row = this.#spendEmailToken.get(input.hash, 'reset', input.now) as Row | undefined;
      if (row === undefined) return undefined;
      const id = row.developer_id as string;
      const dev = this.#developerById.get(id) as Row;
      this.#setPassword.run(input.passwordHash, dev.email as string);
      this.#markVerified.run(input.now, id);
      this.#deleteSessions.run(id);
      return toDeveloper(this.#developerById.get(id) as Row);
    });
  }

  async createSession(input: { idHash: Buffer; developerId: string; passwordHash: string; now: number; expiresAt: number }): Promise<boolean> {
    return this.#db.write(() => Number(this.#insertSession.run(input.idHash, input.now, input.expiresAt, input.developerId, input.passwordHash).changes) === 1);
  }

  async findSession(idHash: Buffer, now: number): Promise<Developer | undefined> {
    const row = this.#db.read(() => this.#session.get(idHash, now)) as Row | undefined;
    return row && toDeveloper(row);
  }

  async deleteSession(idHash: Buffer): Promise<void> {
    await this.#db.write(() => this.#deleteSession.run(idHash));
  }

  async deleteSessions(developerId: string): Promise<void> {
    await this.#db.write(() => this.#deleteSessions.run(developerId));
  }

  /** Inside a write: removes ended sessions and spent-by-time mailed links. */
  purgeExpired(now: number): void {
    this.#purgeSessions.run(now);
    this.#purgeEmailTokens.run(now);
  }
}

function toDeveloper(r: Row): Developer {
  return {
    id: r.id as string,
    email: r.email as string,
    name: r.name as string,
    status: r.status as Status,
    verified: r.verified_at !== null,
    createdAt: r.created_at as number,
  };
}
