// Apps and their credentials (key and secret hash), and what client authentication reads.

export type Status = 'active' | 'disabled';
/** Whether an operator let the app use its keys: apps registered in the portal for a product with `approval: manual` start pending. */
export type Approval = 'approved' | 'pending';
export type CredentialStatus = 'approved' | 'revoked';
/** OAuth 2.1 §2.1: whether the app can keep a secret. */
export type ClientType = 'confidential' | 'public';

/** RFC 8705 §2.1.2: the subject DN (RFC 4514), or one subjectAltName entry, a CA-signed certificate must carry. */
export type CertificateSubject = { dn: string } | { san: 'dns' | 'uri' | 'ip' | 'email'; value: string };

/** A certificate an app registered for self_signed_tls_client_auth (RFC 8705 §2.2), by its SHA-256 thumbprint. */
export interface RegisteredCertificate {
  /** base64url SHA-256 of the DER certificate (x5t#S256). */
  thumbprint: string;
  /** Its subject, as Node prints it, for people to recognise it by; empty when registered by thumbprint alone. */
  subject: string;
  /** Its notAfter (epoch ms); null when registered by thumbprint alone. */
  expiresAt: number | null;
}

/** RFC 8705 §2: how an app authenticates with a client certificate at the token endpoint. */
export type CertificateAuth = { method: 'tls_client_auth'; subject: CertificateSubject } | { method: 'self_signed_tls_client_auth'; certificates: readonly RegisteredCertificate[] };

export interface App {
  id: string;
  developerId: string;
  developerEmail: string;
  name: string;
  product: string;
  status: Status;
  approval: Approval;
  createdAt: number;
  /** confidential: key and secret; public: key only (it cannot keep a secret). */
  type: ClientType;
  /** Where the authorization endpoint may send the user back (src/oauth/redirect-uris.ts), in the order registered. */
  redirectUris: readonly string[];
  /**
   * The scopes the app may have: a management client's, or any app limited to part of its
   * product's. Absent: every scope of its product.
   */
  scopes?: readonly string[];
  /** Absent: the app does not authenticate with a certificate. */
  certificateAuth?: CertificateAuth;
}

export interface Credential {
  key: string;
  appId: string;
  status: CredentialStatus;
  /** Epoch ms after which the secret no longer authenticates; null: no expiry. */
  expiresAt: number | null;
  createdAt: number;
}

/** Whether a key still authenticates: approved, and the overlap after a rotation, if any, not over. */
export function isLive(c: Pick<Credential, 'status' | 'expiresAt'>, now: number): boolean {
  return c.status === 'approved' && (c.expiresAt === null || c.expiresAt > now);
}

/** What client authentication needs: the credential, its app and the app's developer. */
export interface Client {
  credential: Credential;
  secretHash: Buffer;
  app: App;
  developerStatus: Status;
}

/** What createApp needs: the app, its first credential, and the limit on the developer's apps. */
export interface NewApp {
  developerId: string;
  name: string;
  product: string;
  key: string;
  secretHash: Buffer;
  now: number;
  approval?: Approval;
  maxAppsOfDeveloper?: number;
  /** App.scopes; absent: the product's. */
  scopes?: readonly string[];
  /**
   * Default 'confidential'. A public app's credential still holds a secret hash: the caller makes
   * it of random bytes it throws away, so that no secret ever matches.
   */
  type?: ClientType;
  /** Default none. */
  redirectUris?: readonly string[];
}

export interface AppStore {
  /**
   * Creates the app (approved unless `approval` says otherwise) and its first credential
   * atomically. StoreError 'conflict' on a duplicate name; 'limit' when the developer already
   * holds `maxAppsOfDeveloper` apps.
   */
  createApp(input: NewApp): Promise<App>;
  findApp(developerEmail: string, name: string): Promise<App | undefined>;
  findAppByKey(key: string): Promise<App | undefined>;
  findAppById(id: string): Promise<App | undefined>;
  listApps(filter?: { developerEmail?: string }): Promise<App[]>;
  /** Disabling also revokes every token issued to the app up to `now`; enabling does not bring them back. */
  setAppStatus(appId: string, status: Status, now: number): Promise<App | undefined>;
  setAppApproval(appId: string, approval: Approval, now: number): Promise<App | undefined>;
  /** Replaces the app's redirect URIs; undefined when the app does not exist. A change of the app (the cache forgets it). */
  setRedirectUris(appId: string, uris: readonly string[], now: number): Promise<App | undefined>;
  /** Replaces how the app authenticates with a certificate (undefined: it does not); undefined when the app does not exist. A change of the app. */
  setCertificateAuth(appId: string, auth: CertificateAuth | undefined, now: number): Promise<App | undefined>;
  listCredentials(appId: string): Promise<Credential[]>;
  revokeCredential(key: string, now: number): Promise<boolean>;
  /**
   * Adds a credential to the app and gives each of its other approved credentials an expiry of
   * `overlapUntil` at the latest: they keep working until then, and so do their tokens. False, and
   * nothing written, when the app does not exist (deleted since the caller read it).
   */
  rotateCredential(input: { appId: string; key: string; secretHash: Buffer; now: number; overlapUntil: number }): Promise<boolean>;
  /**
   * Adds a credential made elsewhere (a key imported from another gateway) to the app, leaving its
   * other credentials as they are. StoreError 'conflict', and nothing written, when any app holds
   * the key already, in any status; undefined when the app does not exist.
   */
  addCredential(input: { appId: string; key: string; secretHash: Buffer; now: number }): Promise<Credential | undefined>;
  /**
   * Deletes the app, its credentials, tokens and usage; its tokens stop working at once. With
   * `onlyIfActive`, only if the app and its developer are active (false otherwise).
   */
  deleteApp(appId: string, now: number, options?: { onlyIfActive?: boolean }): Promise<boolean>;
  /** The credential with its app and developer, read from the driver; the gateway reads it through the TokenCache. */
  findClient(key: string): Promise<Client | undefined>;
}
