// What the parts of the store contract share: the store each test opens, the fixed clock, and
// the fixtures written through the store (a developer with an app and its key, tokens, grants).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it as nodeIt, type TestContext } from 'node:test';
import {
  LATENCY_BUCKETS,
  StoreError,
  type App,
  type NewTokenHashes,
  type Developer,
  type RotateRequest,
  type SigningKeyRecord,
  type StatusClass,
  type Store,
  type TokenRecord,
  type UsageCount,
} from '../../../src/store/port/index.ts';

export interface OpenedStore {
  store: Store;
  /** Opens the same data again (after the contract closed `store`); absent for volatile drivers. */
  reopen?: () => Promise<Store>;
  /** Closes whatever is still open and removes the data. */
  cleanup: () => Promise<void>;
}

/** Opens a fresh, empty store. */
export type OpenStore = () => Promise<OpenedStore>;

/** The tests' clock: every `now` is T0 or an offset from it; the driver never reads the time itself. */
export const T0 = 1_700_000_000_000;
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** `calls` in one bucket of LATENCY_BOUNDS_MS, none in the others. */
export const inBucket = (bucket: number, calls: number): number[] => Array.from({ length: LATENCY_BUCKETS }, (_, b) => (b === bucket ? calls : 0));

/** A count of usage, its calls taking up to 5 ms (bucket 2) unless `latency` says otherwise; the product, unless given, is 'orders'. */
export const use = (appId: string, route: string, statusClass: StatusClass, hour: number, count: number, product = 'orders', latency = inBucket(2, count)): UsageCount => ({
  appId,
  product,
  route,
  statusClass,
  hour,
  count,
  latency,
});

/** A random token, session, code or secret digest. */
export function hash(): Buffer {
  return randomBytes(32);
}

export function isConflict(err: unknown): boolean {
  assert.ok(err instanceof StoreError, `expected a StoreError, got ${String(err)}`);
  assert.equal(err.code, 'conflict');
  return true;
}

let keyCounter = 0;
/** An app key no test has used. */
export function newKey(): string {
  return `key-${++keyCounter}-${randomBytes(6).toString('hex')}`;
}

let kidCounter = 0;
/** A signing key (not saved) no test has used, in kid order of creation; the stored bytes are opaque to the store. */
export function signingKey(activatesAt: number, overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return {
    kid: `gwk_${String(++kidCounter).padStart(4, '0')}${randomBytes(9).toString('base64url')}`,
    algorithm: 'ES256',
    publicJwk: JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }),
    privateKey: randomBytes(138),
    createdAt: T0,
    activatesAt,
    revokedAt: null,
    ...overrides,
  };
}

/** A developer with one app and that app's key. */
export interface Fixture {
  developer: Developer;
  app: App;
  key: string;
  secretHash: Buffer;
}

/** An access token of the fixture's app (not saved), valid for an hour from T0. */
export function token(f: Fixture, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    hash: hash(),
    kind: 'access',
    appId: f.app.id,
    key: f.key,
    product: f.app.product,
    scope: 'orders:read orders:write',
    subject: 'user-1',
    family: `family-${randomBytes(6).toString('hex')}`,
    issuedAt: T0,
    expiresAt: T0 + HOUR,
    ...overrides,
  };
}

/** Asks to rotate `refresh` at `now`, for new tokens valid an hour (access) and a day (refresh). */
export function rotation(f: Fixture, refresh: TokenRecord, now: number, scope?: readonly string[]): RotateRequest & NewTokenHashes {
  return {
    hash: refresh.hash,
    appId: f.app.id,
    now,
    scope,
    accessHash: hash(),
    accessExpiresAt: now + HOUR,
    refreshHash: hash(),
    refreshExpiresAt: now + 24 * HOUR,
  };
}

/** What each contract test gets: a fresh, empty store, and the fixtures that write to it. */
export interface StoreTest {
  store: Store;
  opened: OpenedStore;
  /** A developer (created unless it exists) with one app and its credential. */
  seed(options?: { email?: string; app?: string; product?: string }): Promise<Fixture>;
  /** An access and a refresh token of one family, saved. */
  grant(f: Fixture, overrides?: Partial<TokenRecord>): Promise<{ access: TokenRecord; refresh: TokenRecord }>;
  /** Whether the gateway takes the access token (read through the cache) at `now`. */
  found(h: Buffer, now?: number): Promise<boolean>;
}

function storeTest(opened: OpenedStore): StoreTest {
  const { store } = opened;
  return {
    store,
    opened,
    async seed(options = {}) {
      const email = options.email ?? 'dev@example.com';
      const developer = (await store.accounts.findDeveloper(email)) ?? (await store.accounts.createDeveloper({ email, name: `Dev ${email}`, now: T0 }));
      const key = newKey();
      const secretHash = randomBytes(32);
      const app = await store.apps.createApp({
        developerId: developer.id,
        name: options.app ?? 'app',
        product: options.product ?? 'orders',
        key,
        secretHash,
        now: T0 + 1,
      });
      return { developer, app, key, secretHash };
    },
    async grant(f, overrides = {}) {
      const access = token(f, overrides);
      const refresh = token(f, { ...overrides, kind: 'refresh', family: access.family, expiresAt: T0 + 24 * HOUR });
      await store.tokens.saveTokens([access, refresh]);
      return { access, refresh };
    },
    async found(h, now = T0 + MINUTE) {
      return (await store.cache.findAccessToken(h, now)) !== undefined;
    },
  };
}

export type ContractIt = (name: string, fn: (s: StoreTest, t: TestContext) => Promise<void>) => void;

/**
 * The contract's `it`: each test runs on a store `open` makes for it alone, cleaned up after it
 * (when the test fails, its own failure is the one reported).
 */
export function itWithStore(open: OpenStore): ContractIt {
  return (name, fn) =>
    nodeIt(name, async (t) => {
      const opened = await open();
      try {
        await fn(storeTest(opened), t);
      } catch (err) {
        await opened.cleanup().catch(() => undefined);
        throw err;
      }
      await opened.cleanup();
    });
}
