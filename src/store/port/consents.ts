// Consents: the scopes a user approved for an app at the authorization endpoint, remembered
// until they expire, so that the same request does not ask again.

export interface ConsentStore {
  /** The scopes `subject` approved for the app and not yet expired at `now`; empty when none. */
  findConsent(appId: string, subject: string, now: number): Promise<readonly string[]>;
  /** Remembers `scopes` (replacing what was remembered) until `expiresAt`. */
  saveConsent(appId: string, subject: string, scopes: readonly string[], now: number, expiresAt: number): Promise<void>;
}
