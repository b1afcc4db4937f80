// What `gateway admin migrate` (src/admin/migrate.ts) carries from one store to another, of any
// driver: the catalog (developers, apps, credentials), the tokens still worth something and the
// signing keys, so that JWTs issued before the move still verify after it.
// Portal sessions, mailed links, invitations, login throttles, quota counts and usage stay behind.
import type { Developer } from './accounts.ts';
import type { App, Credential } from './apps.ts';
import type { SigningKeyRecord } from './signing-keys.ts';
import type { TokenRecord } from './tokens.ts';

export interface ExportedDeveloper extends Omit<Developer, 'verified'> {
  /** When the developer proved the address; null: not yet (an open sign-up). */
  verifiedAt: number | null;
  /** The portal password's hash; null when none is set. */
  passwordHash: string | null;
}

/** An app; its developer is named by id, which the import keeps. */
export type ExportedApp = Omit<App, 'developerEmail'>;

export interface ExportedCredential extends Credential {
  /** Keyed with the store's secret key file: the target must use the same key. */
  secretHash: Buffer;
}

/** Every list in no particular order. */
export interface StoreExport {
  developers: ExportedDeveloper[];
  apps: ExportedApp[];
  credentials: ExportedCredential[];
  /**
   * The tokens that still work or may still be rotated: unexpired, of no revoked family, issued
   * after the last disabling of their app and developer, of a key that still authenticates, and,
   * for a refresh token, not yet rotated.
   */
  tokens: TokenRecord[];
  /**
   * Every signing key, revoked ones included (they stay refused). The private keys are encrypted
   * under the secret key file, like the secret hashes: the target must use the same key.
   */
  signingKeys: SigningKeyRecord[];
}

export interface TransferStore {
  /** What the store holds worth carrying at `now`, read as of one moment where the driver can (SQLite: one read transaction). */
  exportData(now: number): Promise<StoreExport>;
  /**
   * Writes `data` into this store, keeping every id, so that tokens keep their app and family and
   * a migrated refresh token rotates (or, reused, revokes its family) as before. The signing keys
   * join any the store holds (a gateway on it may have made one); a kid it holds already stays as
   * it is there, so a revocation is never undone. Reports a `signing-key` change for each key
   * added. StoreError 'conflict', and nothing written, when the store holds a developer. A driver
   * that cannot write it all at once (Redis, in batches) leaves what it wrote when it fails part-way.
   */
  importData(data: StoreExport, now: number): Promise<void>;
}
