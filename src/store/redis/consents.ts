// Consents on Redis: one key per app and subject (`consent:`, the subject by its SHA-256, so that
// no key spells a user's name), holding the scopes and their expiry; its TTL only cleans up.
import { sha256 } from '../../crypto.ts';
import type { ConsentStore } from '../port/index.ts';
import { digest, ttlMs } from './catalog.ts';
import type { RedisDb } from './db.ts';

const consentKey = (appId: string, subject: string) => `consent:${appId}:${digest(sha256(subject))}`;

export class RedisConsents implements ConsentStore {
  readonly #db: RedisDb;

  constructor(db: RedisDb) {
    this.#db = db;
  }

  async findConsent(appId: string, subject: string, now: number): Promise<readonly string[]> {
    const [scope, expiresAt] = await this.#db.run(this.#db.client.hmget(consentKey(appId, subject), 'scope', 'expiresAt'));
    if (scope == null || expiresAt == null || Number(expiresAt) <= now || scope === '') return [];
    return scope.split(' ');
  }

  async saveConsent(appId: string, subject: string, scopes: readonly string[], now: number, expiresAt: number): Promise<void> {
    const key = consentKey(appId, subject);
    // One MULTI: the hash and its TTL together, or neither.
    await this.#db.run(this.#db.client.multi().hset(key, 'scope', scopes.join(' '), 'expiresAt', String(expiresAt)).pexpire(key, ttlMs(expiresAt, now)).exec());
  }
}
