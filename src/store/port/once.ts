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
