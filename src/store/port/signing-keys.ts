// Signing keys: the key pairs the gateway signs JWT access tokens and upstream identities with,
// shared by every instance on the store. The private part is stored encrypted (src/oauth/signing/),
// the store never sees it in the clear.

export type SigningAlgorithm = 'ES256' | 'EdDSA' | 'RS256';

export interface SigningKeyRecord {
  /** The key id, `gwk_` and 22 base64url characters: never the shape of an app key (no '_' there). */
  kid: string;
  algorithm: SigningAlgorithm;
  /** The public JWK (RFC 7517) as JSON, with kid, alg and use. */
  publicJwk: string;
  /** The PKCS #8 private key, encrypted under the gateway's secret key (AES-256-GCM, bound to kid). */
  privateKey: Buffer;
  /** Epoch ms: published in the JWKS from then on. */
  createdAt: number;
  /** Epoch ms: signs from then on, until a later key activates. */
  activatesAt: number;
  /** Epoch ms when revoked: out of the JWKS, and whatever it signed is refused; null while not. */
  revokedAt: number | null;
}

export interface SigningKeyStore {
  /** Every key, revoked ones included, by activatesAt then kid. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  /**
   * Adds `key` if the unrevoked key that activates last is still the one named `after` (null: no
   * unrevoked key at all), atomically across instances: of several instances rotating at once,
   * one adds its key and the others get false. Reports a `signing-key` change naming the kid.
   */
  addSigningKey(key: SigningKeyRecord, after: string | null): Promise<boolean>;
  /** Marks the key revoked at `now`; false, and nothing written, for an unknown or already revoked kid. Reports a `signing-key` change. */
  revokeSigningKey(kid: string, now: number): Promise<boolean>;
  /** Removes the keys (retired past their last token, or revoked long ago); reports a `signing-key` change for each one removed. */
  deleteSigningKeys(kids: readonly string[]): Promise<void>;
}
