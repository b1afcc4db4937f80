// Signing keys on Redis: one hash, `signing-keys`, a field per kid holding the record as JSON
// (the encrypted private key in base64). Adding and revoking are scripts that publish their change.
import type { SigningKeyRecord, SigningKeyStore } from '../port/index.ts';
import type { RedisDb, Script } from './db.ts';

const KEY = 'signing-keys';

// KEYS[1]: the hash. ARGV: the new kid, its record, the kid it must follow ('' for none), the
// changes channel and the change announced. Adds the key if the unrevoked key that activates
// last is still the one named.
const ADD = `
local fields = redis.call('HGETALL', KEYS[1])
local latest, latestAt = '', nil
for i = 2, #fields, 2 do
  local k = cjson.decode(fields[i])
  if k.revokedAt == cjson.null or k.revokedAt == nil then
    if latestAt == nil or k.activatesAt > latestAt or (k.activatesAt == latestAt and k.kid > latest) then
      latest, latestAt = k.kid, k.activatesAt
    end
  end
end
if latest ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`;

// KEYS[1]: the hash. ARGV: the kid, now, the changes channel and the change announced.
const REVOKE = `
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return 0 end
local k = cjson.decode(record)
if k.revokedAt ~= cjson.null and k.revokedAt ~= nil then return 0 end
k.revokedAt = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(k))
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

// KEYS[1]: the hash. ARGV: the kid, its record, the changes channel and the change announced.
// Adds the key unless the kid is there already.
const COPY = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

// KEYS[1]: the hash. ARGV: the kid, the changes channel and the change announced.
const DELETE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`;

type Stored = Omit<SigningKeyRecord, 'privateKey'> & { privateKey: string };

function toRecord(json: string): SigningKeyRecord {
  const stored = JSON.parse(json) as Stored;
  return { ...stored, privateKey: Buffer.from(stored.privateKey, 'base64'), revokedAt: stored.revokedAt ?? null };
}

function toJson(key: SigningKeyRecord): string {
  const stored: Stored = { ...key, privateKey: key.privateKey.toString('base64') };
  return JSON.stringify(stored);
}

export class RedisSigningKeys implements SigningKeyStore {
  readonly #db: RedisDb;
  readonly #add: Script;
  readonly #revoke: Script;
  readonly #copy: Script;
  readonly #delete: Script;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#add = db.script(ADD);
    this.#revoke = db.script(REVOKE);
    this.#copy = db.script(COPY);
    this.#delete = db.script(DELETE);
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const all = await this.#db.run(this.#db.client.hvals(KEY));
    return all.map(toRecord).sort((a, b) => a.activatesAt - b.activatesAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
  }

  async addSigningKey(key: SigningKeyRecord, after: string | null): Promise<boolean> {
    const change = { kind: 'signing-key', ref: key.kid } as const;
    const { channel, message } = this.#db.announce(change);
    const added = await this.#add([KEY], [key.kid, toJson(key), after ?? '', channel, message]).finally(() => this.#db.told(change));
    return added === 1;
  }

  /** A key another store held (`gateway admin migrate`), added whatever the latest; a kid held already stays as it is. */
  async copySigningKey(key: SigningKeyRecord): Promise<void> {
    const change = { kind: 'signing-key', ref: key.kid } as const;
    const { channel, message } = this.#db.announce(change);
    await this.#copy([KEY], [key.kid, toJson(key), channel, message]).finally(() => this.#db.told(change));
  }

  async revokeSigningKey(kid: string, now: number): Promise<boolean> {
    const change = { kind: 'signing-key', ref: kid } as const;
    const { channel, message } = this.#db.announce(change);
    const revoked = await this.#revoke([KEY], [kid, now, channel, message]).finally(() => this.#db.told(change));
    return revoked === 1;
  }

  async deleteSigningKeys(kids: readonly string[]): Promise<void> {
    for (const kid of kids) {
      const change = { kind: 'signing-key', ref: kid } as const;
      const { channel, message } = this.#db.announce(change);
      await this.#delete([KEY], [kid, channel, message]).finally(() => this.#db.told(change));
    }
  }
}
