// Single-use ids spent on Redis: one key per id (`once:`), outside the catalog; its TTL is what
// remembers it.
import type { OnceStore } from '../port/index.ts';
import { digest, ttlMs } from './catalog.ts';
import type { RedisDb } from './db.ts';

const spentKey = (idHash: string) => `once:${idHash}`;

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
