// The store port: the narrow interfaces, one per aggregate, that the gateway needs from durable
// state. A driver (src/store/sqlite/, src/store/redis/) implements StoreDriver and nothing else; the
// gateway uses it through withTokenCache (src/store/token-cache.ts), which serves verified tokens
// and clients from memory and forgets them when the driver reports a change. Every driver runs
// the contract suite in test/store/contract/.
import type { AccountStore } from './accounts.ts';
import type { AppStore, Client } from './apps.ts';
import type { ConsentStore } from './consents.ts';
import type { Counters, UsageStore } from './counters.ts';
import type { IdempotencyStore, OnceStore } from './once.ts';
import type { ThrottleStore } from './throttles.ts';
import type { SigningKeyStore } from './signing-keys.ts';
import type { ActiveToken, TokenStore } from './tokens.ts';
import type { TransferStore } from './transfer.ts';

export type { AccountStore, Developer, EmailTokenPurpose } from './accounts.ts';
export type { ConsentStore } from './consents.ts';
export {
  isLive,
  type App,
  type AppStore,
  type Approval,
  type CertificateAuth,
  type CertificateSubject,
  type RegisteredCertificate,
  type Client,
  type ClientType,
  type Credential,
  type CredentialStatus,
  type NewApp,
  type Status,
} from './apps.ts';
export {
  rollingRetryAt,
  rollingUsed,
  spikeRemaining,
  latencyBucket,
  LATENCY_BOUNDS_MS,
  LATENCY_BUCKETS,
  USAGE_KEPT_MS,
  type CounterCheck,
  type CounterResult,
  type Counters,
  type QuotaResult,
  type SpikeResult,
  type HourCount,
  type StatusClass,
  type UsageCount,
  type UsageFilter,
  type UsageStore,
  type WindowOf,
} from './counters.ts';
export type { IdempotencyClaim, IdempotencyStore, OnceStore } from './once.ts';
export { nextAttemptAt, type AttemptAccount, type AttemptResult, type BackoffRule, type ThrottleStore } from './throttles.ts';
export type { SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from './signing-keys.ts';
export {
  bindingOf,
  sameConfirmation,
  successorRecords,
  type ActiveToken,
  type Confirmation,
  type NewTokenHashes,
  type RotateRequest,
  type RotateResult,
  type TokenKind,
  type TokenRecord,
  type TokenStore,
} from './tokens.ts';
export type { ExportedApp, ExportedCredential, ExportedDeveloper, StoreExport, TransferStore } from './transfer.ts';

/**
 * A change to what a verified token or client is worth: a token family revoked; a key revoked,
 * created or given an expiry; an app or a developer (by email) changed in any way; a signing key
 * (by kid) added, revoked or removed. `everything`: changes may have been missed, so nothing
 * remembered can be trusted.
 */
export type Change = { kind: 'family' | 'app' | 'developer' | 'key' | 'signing-key'; ref: string } | { kind: 'everything' };

/** How a driver reports changes, made through it or by any other process on the same data. */
export interface ChangeFeed {
  /** `listener` hears each change, those of this process as they are made. */
  listen(listener: (change: Change) => void): void;
  /**
   * Delivers, synchronously, the changes other processes have made since the last call that a
   * driver does not push by itself. Called before every answer from memory, so it must be cheap.
   */
  catchUp(): void;
}

/** What a driver implements; TransferStore is what `gateway admin migrate` reads from one store and writes into another. */
export interface StoreDriver extends TransferStore {
  readonly accounts: AccountStore;
  readonly apps: AppStore;
  readonly tokens: TokenStore;
  readonly throttles: ThrottleStore;
  readonly once: OnceStore;
  readonly idempotency: IdempotencyStore;
  readonly consents: ConsentStore;
  readonly counters: Counters;
  readonly usage: UsageStore;
  readonly signingKeys: SigningKeyStore;
  readonly changes: ChangeFeed;
  /** Removes expired tokens, sessions, links, spent single-use ids, idempotency keys, consents and ended counters; resolves to the number of tokens removed. */
  purgeExpired(now: number): Promise<number>;
  /** Resolves when the store answers a read now; rejects with StoreUnavailable when it cannot (readiness). */
  ping(): Promise<void>;
  /** What an operator should change in the store's setup (a Redis that persists nothing), for readiness to show; absent when nothing can be. */
  warnings?(): readonly string[];
  /**
   * Records the fingerprint of the key app secrets are hashed with, the first time; false when
   * the store's secrets were hashed with another key (an instance started with a key file of its
   * own). A store whose key file lives beside it (SQLite) has nothing to compare and answers true.
   */
  claimSecretKey(fingerprint: string): Promise<boolean>;
  /** Commits what is pending, then closes. */
  close(): Promise<void>;
}

/** Verified tokens and clients, answered from memory when they are there. */
export interface VerifiedCache {
  /**
   * The access token if it is unexpired and unrevoked, and its credential, app and developer
   * active. Answers without a promise when the token is in memory: every call but the first for
   * a token, on the path every proxied request takes.
   */
  findAccessToken(hash: Buffer, now: number): ActiveToken | undefined | Promise<ActiveToken | undefined>;
  findClient(key: string): Promise<Client | undefined>;
}

/** What the gateway uses: the driver's ports, with tokens and clients read through the cache. */
export interface Store extends TransferStore {
  readonly accounts: AccountStore;
  readonly apps: Omit<AppStore, 'findClient'>;
  readonly tokens: Omit<TokenStore, 'findAccessToken'>;
  readonly throttles: ThrottleStore;
  readonly once: OnceStore;
  readonly idempotency: IdempotencyStore;
  readonly consents: ConsentStore;
  /** Quota and spike-arrest counts, shared by every thread and process on the store. */
  readonly counters: Counters;
  readonly usage: UsageStore;
  readonly signingKeys: SigningKeyStore;
  /** The driver's change feed, for what keeps its own memory of the store (the signing keys). */
  readonly changes: ChangeFeed;
  readonly cache: VerifiedCache;
  purgeExpired(now: number): Promise<number>;
  ping(): Promise<void>;
  warnings?(): readonly string[];
  claimSecretKey(fingerprint: string): Promise<boolean>;
  close(): Promise<void>;
}

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: 'conflict' | 'limit';
  constructor(code: 'conflict' | 'limit', message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The store cannot answer now: another process holds its lock past the busy timeout, or its
 * database is read-only, full or gone. The call may succeed later; every surface answers 503.
 */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}
