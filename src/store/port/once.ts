// Once: single-use ids, each spent by its first caller across every instance sharing the store.

export interface OnceStore {
  /**
   * Spends a single-use id: true for the first spend, whichever instance sharing the store makes
   * it (of several at once, exactly one wins); false for every later one while the id is
   * remembered, which is at least until `expiresAt`, through a purge and a restart. `idHash` is a
   * hash of the id (its SHA-256), and only that is stored: what the store holds spends nothing.
   */
  spendOnce(idHash: Buffer, now: number, expiresAt: number): Promise<boolean>;
}

/** What claiming an Idempotency-Key found. */
export type IdempotencyClaim =
  /** The key is the caller's: it makes the request, then completes or releases the key. */
  | { kind: 'claimed' }
  /** A request with the key and the same content finished: its answer, as stored. */
  | { kind: 'replay'; status: number; body: Buffer }
  /** A request with the key and the same content has not finished yet. */
  | { kind: 'busy' }
  /** The key was used for a request with other content. */
  | { kind: 'mismatch' };

/**
 * Idempotency keys (draft-ietf-httpapi-idempotency-key-header): a retried create answers as the
 * first did instead of creating again, on whichever instance sharing the store it arrives.
 */
export interface IdempotencyStore {
  /**
   * Claims `keyHash` (a hash of the client and its key) for a request whose content hashes to
   * `fingerprint`. Of several claims at once, exactly one is 'claimed'. A claim neither completed
   * nor released by `lockedUntil` (its instance stopped) may be claimed again; the key is
   * remembered until `expiresAt`, through a purge and a restart.
   */
  claim(keyHash: Buffer, fingerprint: Buffer, now: number, times: { lockedUntil: number; expiresAt: number }): Promise<IdempotencyClaim>;
  /** Stores the answer of the claimed request, for the retries to get: `body` as the caller gives it (sealed, when it holds a secret). */
  complete(keyHash: Buffer, answer: { status: number; body: Buffer }): Promise<void>;
  /** Forgets the claim of a request that failed in a way a retry may not (a store outage): the next claim is 'claimed'. */
  release(keyHash: Buffer): Promise<void>;
}
