// Single-use ids spent on Redis: one key per id (`once:`), outside the catalog; its TTL is what
// remembers it. Idempotency keys: one hash per key (`idempotency:`), decided by one script each.
import type { IdempotencyClaim, IdempotencyStore, OnceStore } from '../port/index.ts';
import { digest, ttlMs } from './catalog.ts';
import type { RedisDb, Script } from './db.ts';

const spentKey = (idHash: string) => `once:${idHash}`;
const idempotencyKey = (keyHash: Buffer) => `idempotency:${digest(keyHash)}`;

export class RedisOnce implements OnceStore {
  readonly #db: RedisDb;

  constructor(db: RedisDb) {
    this.#db = db;
  }

  async spendOnce(idHash: Buffer, now: number, expiresAt: number): Promise<boolean> {
    // SET NX: of every instance trying, the first sets the key. Kept a minute past `expiresAt`
    // (ttlMs), so that an instance whose clock runs a little behind still finds it.
    const set = await this.#db.run(this.#db.client.set(spentKey(digest(idHash)), '1', 'PX', ttlMs(expiresAt, now), 'NX'));
    return set === 'OK';
  }
}

// A key's hash: fingerprint, state (claimed, done), lockedUntil, expiresAt, and once done status
// and body (base64: a script's answer reaches ioredis as text). The times decide, the TTL (a
// minute past expiresAt, as ttlMs gives) only cleans up.
// KEYS[1]: the key. ARGV: fingerprint, now, lockedUntil, expiresAt, TTL ms. Answers what the
// claim found: { 'claimed' }, { 'busy' }, { 'mismatch' } or { 'replay', status, body }.
const CLAIM = `
local saved = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'lockedUntil', 'expiresAt', 'status', 'body')
local now = tonumber(ARGV[2])
if saved[1] and tonumber(saved[4]) > now then
  if saved[1] ~= ARGV[1] then return { 'mismatch' } end
  if saved[2] == 'done' then return { 'replay', saved[5], saved[6] } end
  if tonumber(saved[3]) > now then return { 'busy' } end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'state', 'claimed', 'lockedUntil', ARGV[3], 'expiresAt', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return { 'claimed' }
`;

// Only a claim is completed or released: an answer stored (by whoever claimed the key after this
// caller's lock lapsed) is what the retries get, and a late release must not forget it; a key
// gone (expired) is not written again without its fingerprint and TTL.
// KEYS[1]: the key. ARGV: status and body to complete; none to release.
const SETTLE = `
if redis.call('HGET', KEYS[1], 'state') ~= 'claimed' then return 0 end
if #ARGV == 0 then return redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'state', 'done', 'status', ARGV[1], 'body', ARGV[2])
return 1
`;

const CLAIMED: IdempotencyClaim = Object.freeze({ kind: 'claimed' });
const BUSY: IdempotencyClaim = Object.freeze({ kind: 'busy' });
const MISMATCH: IdempotencyClaim = Object.freeze({ kind: 'mismatch' });

export class RedisIdempotency implements IdempotencyStore {
  readonly #claim: Script;
  readonly #settle: Script;

  constructor(db: RedisDb) {
    this.#claim = db.script(CLAIM);
    this.#settle = db.script(SETTLE);
  }

  /** One script: of several claims at once, on any instances, the first finds the key free and takes it. */
  async claim(keyHash: Buffer, fingerprint: Buffer, now: number, times: { lockedUntil: number; expiresAt: number }): Promise<IdempotencyClaim> {
    const args = [digest(fingerprint), now, times.lockedUntil, times.expiresAt, ttlMs(times.expiresAt, now)];
    const [kind, status, body] = (await this.#claim([idempotencyKey(keyHash)], args)) as [string, string?, string?];
    switch (kind) {
      case 'replay':
        return { kind: 'replay', status: Number(status), body: Buffer.from(body ?? '', 'base64') };
      case 'busy':
        return BUSY;
      case 'mismatch':
        return MISMATCH;
      default:
        return CLAIMED;
    }
  }

  async complete(keyHash: Buffer, answer: { status: number; body: Buffer }): Promise<void> {
    await this.#settle([idempotencyKey(keyHash)], [answer.status, answer.body.toString('base64')]);
  }

  async release(keyHash: Buffer): Promise<void> {
    await this.#settle([idempotencyKey(keyHash)], []);
  }
}
