// The signing keys every instance shares, held in memory: which key signs now, which verify, what
// the JWKS publishes, and (in the thread that maintains the store) the schedule that adds the
// next key ahead of its turn and removes keys past their last token. A key's life is given by
// times alone, so every instance reads the same state from the same records:
//
//   created (published) ── publishAhead ──▶ activates (signs) ── until the next activates ──▶
//   retired ── retireAfter (its last token's lifetime, and skew) ──▶ removed
//
// A revoked key leaves the JWKS and verifies nothing from the moment an instance hears of it.
import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { Logger } from 'pino';
import type { SigningSettings } from '../../config/types.ts';
import { StoreUnavailable, type Change, type ChangeFeed, type SigningKeyRecord, type SigningKeyStore } from '../../store/port/index.ts';
import { newSigningKey, openSigningKey, type SigningKey } from './keys.ts';

export type SigningKeyStatus = 'next' | 'signing' | 'retired' | 'revoked';

/** What `gateway admin keys list` shows of a key; the private half never leaves the ring. */
export interface SigningKeyView {
  kid: string;
  algorithm: string;
  status: SigningKeyStatus;
  createdAt: number;
  activatesAt: number;
  /** When it stops signing: a later key activates; null while none is scheduled. */
  retiresAt: number | null;
  /** When it leaves the JWKS: retiresAt and retireAfter, or at once when revoked. */
  unpublishedAt: number | null;
  revokedAt: number | null;
}

type Timeline = Pick<SigningKey, 'kid' | 'activatesAt' | 'createdAt' | 'revokedAt' | 'algorithm'>;

/** Keys in the order they take turns: by activatesAt, then kid. */
function inTurn<T extends Timeline>(keys: readonly T[]): T[] {
  return [...keys].sort((a, b) => a.activatesAt - b.activatesAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

/** The key that signs at `now`: the unrevoked one activated last. */
export function signerAt<T extends Timeline>(keys: readonly T[], now: number): T | undefined {
  let signer: T | undefined;
  for (const k of inTurn(keys)) if (k.revokedAt === null && k.activatesAt <= now) signer = k;
  return signer;
}

/** When `key` stops signing: the first unrevoked key after it activates. */
function retiresAt(keys: readonly Timeline[], key: Timeline): number | null {
  const ordered = inTurn(keys);
  const after = ordered.slice(ordered.indexOf(key) + 1).find((k) => k.revokedAt === null);
  return after === undefined ? null : after.activatesAt;
}

export function describeKeys(keys: readonly Timeline[], retireAfterMs: number, now: number): SigningKeyView[] {
  return inTurn(keys).map((k) => {
    const retires = k.revokedAt === null ? retiresAt(keys, k) : null;
    const status: SigningKeyStatus = k.revokedAt !== null ? 'revoked' : k.activatesAt > now ? 'next' : retires !== null && retires <= now ? 'retired' : 'signing';
    return {
      kid: k.kid,
      algorithm: k.algorithm,
      status,
      createdAt: k.createdAt,
      activatesAt: k.activatesAt,
      retiresAt: retires,
      unpublishedAt: k.revokedAt ?? (retires === null ? null : retires + retireAfterMs),
      revokedAt: k.revokedAt,
    };
  });
}

/** The unrevoked key that activates last: what a new key is added after. */
function latest(keys: readonly Timeline[]): string | null {
  return inTurn(keys.filter((k) => k.revokedAt === null)).at(-1)?.kid ?? null;
}

export interface KeyStoreDeps {
  store: { signingKeys: SigningKeyStore };
  secretKey: KeyObject;
}

/**
 * Adds a key that signs from `activatesAt` after the keys in `seen`, unless another instance
 * added one meanwhile (then false: the caller reads again).
 */
async function addKey(deps: KeyStoreDeps, settings: Pick<SigningSettings, 'algorithm'>, seen: readonly Timeline[], now: number, activatesAt: number): Promise<string | undefined> {
  const record = await newSigningKey(settings.algorithm, deps.secretKey, now, activatesAt);
  return (await deps.store.signingKeys.addSigningKey(record, latest(seen))) ? record.kid : undefined;
}

/** `gateway admin keys rotate`: a new key, published now, that signs from publishAhead on. */
export async function rotateSigningKey(deps: KeyStoreDeps, settings: Pick<SigningSettings, 'algorithm' | 'publishAheadMs'>, now: number): Promise<SigningKeyView> {
  for (;;) {
    const keys = await deps.store.signingKeys.listSigningKeys();
    const kid = await addKey(deps, settings, keys, now, now + settings.publishAheadMs);
    if (kid === undefined) continue;
    const after = await deps.store.signingKeys.listSigningKeys();
    return describeKeys(after, 0, now).find((k) => k.kid === kid)!;
  }
}

/**
 * `gateway admin keys revoke`: the key leaves the JWKS and what it signed is refused; when it was
 * the one signing, a new key signs at once (it cannot wait publishAhead: nothing else may sign).
 */
export async function revokeSigningKey(deps: KeyStoreDeps, settings: Pick<SigningSettings, 'algorithm'>, kid: string, now: number): Promise<{ revoked: boolean; replacement: string | undefined }> {
  const before = await deps.store.signingKeys.listSigningKeys();
  const wasSigning = signerAt(before, now)?.kid === kid;
  if (!(await deps.store.signingKeys.revokeSigningKey(kid, now))) return { revoked: false, replacement: undefined };
  if (!wasSigning) return { revoked: true, replacement: undefined };
  for (;;) {
    const keys = await deps.store.signingKeys.listSigningKeys();
    // A key made since the revocation to sign at once (by another instance's schedule, which
    // found none signing) replaces it; an older one, retired earlier, does not sign again. It
    // signs from when it was made, which may be after `now`: another key added to sign from
    // `now` would never sign.
    const made = inTurn(keys).findLast((k) => k.revokedAt === null && k.createdAt >= now && k.activatesAt === k.createdAt);
    if (made !== undefined) return { revoked: true, replacement: made.kid };
    const added = await addKey(deps, settings, keys, now, now);
    if (added !== undefined) return { revoked: true, replacement: added };
  }
}

/** How often the maintaining thread looks at the schedule: often enough for publishAhead, never more than every 30 s. */
function maintenanceEvery(settings: SigningSettings): number {
  return Math.min(30_000, Math.max(250, Math.floor(settings.publishAheadMs / 4)));
}

/** At most one reload a second when the feed keeps saying it may have missed something. */
const RELOAD_AT_MOST_EVERY_MS = 1000;

export class KeyRing {
  readonly #deps: KeyStoreDeps & { store: { changes: ChangeFeed } };
  readonly #clock: () => number;
  readonly #logger: Logger;
  readonly #maintains: boolean;
  #keys: readonly SigningKey[] = [];
  #byKid = new Map<string, SigningKey>();
  #settings: SigningSettings | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reloading: Promise<void> | undefined;
  #reloadedAt = -Infinity;
  /** A read of the keys owed to a change heard: `now`, or `soon` (at most one a second). */
  #owed: 'now' | 'soon' | undefined;
  #owedTimer: NodeJS.Timeout | undefined;
  /** For each read of the keys under way, the kids heard of since it began: what it read of them may be old. */
  readonly #heardDuringLoads = new Set<Set<string>>();

  constructor(deps: KeyStoreDeps & { store: { changes: ChangeFeed } }, options: { clock: () => number; logger: Logger; maintains: boolean }) {
    this.#deps = deps;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#maintains = options.maintains;
    deps.store.changes.listen((change) => this.#heard(change));
  }

  /** Reads the keys from the store; the serving gateway waits for it before it listens. */
  async load(): Promise<void> {
    const heard = new Set<string>();
    this.#heardDuringLoads.add(heard);
    let records: SigningKeyRecord[];
    try {
      records = await this.#deps.store.signingKeys.listSigningKeys();
    } finally {
      this.#heardDuringLoads.delete(heard);
    }
    const keys: SigningKey[] = [];
    for (const record of records) {
      try {
        keys.push(openSigningKey(record, this.#deps.secretKey));
      } catch (err) {
        this.#logger.error({ kid: record.kid, err: (err as Error).message }, 'a signing key does not decrypt with this secret key; it is left out');
      }
    }
    this.#keys = inTurn(keys);
    // A key heard of while reading verifies nothing until the next read, which is on its way (#reload).
    this.#byKid = new Map(keys.filter((k) => k.revokedAt === null && !heard.has(k.kid)).map((k) => [k.kid, k]));
    this.#reloadedAt = performance.now();
  }

  #heard(change: Change): void {
    if (change.kind === 'signing-key') {
      // Until the keys are read again, the kid named verifies nothing: it may be the one revoked.
      this.#byKid.delete(change.ref);
      for (const heard of this.#heardDuringLoads) heard.add(change.ref);
      this.#reload(true);
    } else if (change.kind === 'everything') {
      this.#reload(false);
    }
  }

  /** `now`: a kid was named, read at once; else the feed may have missed a change, read within RELOAD_AT_MOST_EVERY_MS. */
  #reload(now: boolean): void {
    if (now) this.#owed = 'now';
    else this.#owed ??= 'soon';
    this.#reloadWhenDue();
  }

  /**
   * Starts the read owed, unless one is under way (it looks again when it ends: a change heard
   * while reading may be missing from what it read) or, for a read owed `soon`, the last one is
   * too recent: then a timer starts it. Postponed, never dropped: the feed's `everything` may
   * stand for a key's revocation that it missed.
   */
  #reloadWhenDue(): void {
    if (this.#owed === undefined || this.#reloading !== undefined) return;
    const wait = RELOAD_AT_MOST_EVERY_MS - (performance.now() - this.#reloadedAt);
    if (this.#owed === 'soon' && wait > 0) {
      this.#owedTimer ??= setTimeout(() => {
        this.#owedTimer = undefined;
        this.#reloadWhenDue();
      }, wait).unref();
      return;
    }
    this.#owed = undefined;
    this.#reloading = this.load()
      .catch((err: unknown) => this.#logger.error({ err: (err as Error).message }, 'reading the signing keys failed; the keys held are kept'))
      .finally(() => {
        this.#reloading = undefined;
        this.#reloadWhenDue();
      });
  }

  /**
   * Applies a config's oauth.signing in the maintaining thread: it then keeps a key signing and the
   * next one published. Resolves once it has looked at the schedule (never rejects).
   */
  configure(settings: SigningSettings): Promise<void> {
    if (!this.#maintains) return Promise.resolve();
    this.#settings = settings;
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (!settings.used) return Promise.resolve();
    this.#timer = setInterval(() => void this.maintain(), maintenanceEvery(settings));
    this.#timer.unref();
    return this.maintain();
  }

  /** The key that signs now; undefined before the first key exists. */
  signer(now: number): SigningKey | undefined {
    this.#deps.store.changes.catchUp();
    return signerAt(
      this.#keys.filter((k) => this.#byKid.has(k.kid)),
      now,
    );
  }

  /** The key that verifies a token naming `kid`: unrevoked, known to this instance, and still published. */
  verifier(kid: unknown): SigningKey | undefined {
    this.#deps.store.changes.catchUp();
    return typeof kid === 'string' ? this.#byKid.get(kid) : undefined;
  }

  /**
   * The read of the keys under way, if any: a kid this instance does not know may be the key it
   * has just heard of (catching up with the feed starts the read). Undefined when none is.
   */
  reading(): Promise<void> | undefined {
    return this.#reloading;
  }

  /** The public keys in the JWKS: every unrevoked key until retireAfter past its retirement. */
  published(now: number, retireAfterMs: number): JWK[] {
    this.#deps.store.changes.catchUp();
    const live = this.#keys.filter((k) => this.#byKid.has(k.kid));
    return describeKeys(live, retireAfterMs, now)
      .filter((v) => v.unpublishedAt === null || v.unpublishedAt > now)
      .map((v) => this.#byKid.get(v.kid)!.publicJwk);
  }

  /**
   * One look at the schedule, in the maintaining thread: a key when none signs, the next key
   * publishAhead before its turn, and keys past their last token removed.
   */
  async maintain(): Promise<void> {
    const settings = this.#settings;
    if (settings === undefined || !settings.used) return;
    const now = this.#clock();
    try {
      const keys = await this.#deps.store.signingKeys.listSigningKeys();
      const signer = signerAt(keys, now);
      const next = keys.some((k) => k.revokedAt === null && k.activatesAt > now);
      let added: string | undefined;
      if (signer === undefined) {
        // The first key (or every key revoked): nothing signs until one exists, so it signs at once.
        added = await addKey(this.#deps, settings, keys, now, now);
      } else if (!next && now >= signer.activatesAt + settings.rotateEveryMs - settings.publishAheadMs) {
        added = await addKey(this.#deps, settings, keys, now, Math.max(now + settings.publishAheadMs, signer.activatesAt + settings.rotateEveryMs));
      }
      if (added !== undefined) this.#logger.info({ audit: 'signing-key.add', kid: added }, 'signing key added');
      const gone = describeKeys(keys, settings.retireAfterMs, now)
        .filter((v) => v.unpublishedAt !== null && v.unpublishedAt + (v.revokedAt === null ? 0 : settings.retireAfterMs) <= now)
        .map((v) => v.kid);
      if (gone.length > 0) await this.#deps.store.signingKeys.deleteSigningKeys(gone);
      if (added !== undefined || gone.length > 0) await this.load();
    } catch (err) {
      // Never a rejection: the schedule is looked at again on the next tick.
      this.#logger.error({ err: err instanceof StoreUnavailable ? err.message : err }, 'the signing keys could not be maintained; trying again');
    }
  }

  /** Every key, for `gateway admin keys list` and the portal. */
  describe(now: number, retireAfterMs: number): SigningKeyView[] {
    return describeKeys(this.#keys, retireAfterMs, now);
  }

  close(): void {
    clearInterval(this.#timer);
    clearTimeout(this.#owedTimer);
  }
}
