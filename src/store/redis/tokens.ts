// Tokens on Redis. One family (the tokens descending from one grant) is one hash, so that a
// rotation, a reuse and a revocation are each one script on one key, which runs on Cluster:
//   f:{<family>}  field <digest> → the token's record (JSON), <digest>!used → when a refresh
//                 token was rotated, !revoked → when the family was revoked.
//   t:<digest>    the family of a token, so that a token presented finds its family.
//   expiries      a sorted set of "<family> <digest>" by expiry, for purgeExpired.
// and the families of each app and subject (src/store/redis/token-index.ts).
// Every key also expires by TTL (relative to the token's own lifetime), so nothing outlives its
// tokens even if no instance purges. A token is worth what its credential, app and developer are
// worth when it is read (RedisApps.grounds): an app or developer disabled at time T revokes the
// tokens issued up to T.
import type { ActiveToken, RotateRequest, RotateResult, TokenRecord, TokenStore } from '../port/index.ts';
import { sameConfirmation, StoreError, successorRecords } from '../port/index.ts';
import type { Grounds, RedisApps } from './apps.ts';
import { digest, holds } from './catalog.ts';
import type { RedisDb, Script } from './db.ts';
import { deserialise, EXPIRIES, familyKey, lifetime, SCAN_COUNT, serialise, TokenIndex } from './token-index.ts';

const indexKey = (hash: string) => `t:${hash}`;
/** Expired tokens are purged this many at a time. */
const PURGE_BATCH = 1000;
/** Families revoked at once by an operator's revocation of an app's or a subject's tokens. */
const REVOKE_BATCH = 100;

// KEYS[1]: the family. ARGV: TTL ms, then digest/record pairs. Extends the family's TTL, never shortens it.
const SAVE = `
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`;

// KEYS[1]: the family. ARGV: the refresh token's digest, now, the reuse grace, TTL ms, the
// changes channel and the family's revocation announced, then the successors' digest/record
// pairs. Marks the token used and saves its successors, or, if it was used already, revokes the
// family (after the grace) and announces it.
const ROTATE = `
if redis.call('HEXISTS', KEYS[1], '!revoked') == 1 then return 'invalid' end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 'invalid' end
local used = redis.call('HGET', KEYS[1], ARGV[1] .. '!used')
if used then
  if tonumber(ARGV[2]) - tonumber(used) < tonumber(ARGV[3]) then return 'invalid' end
  redis.call('HSET', KEYS[1], '!revoked', ARGV[2])
  redis.call('PUBLISH', ARGV[5], ARGV[6])
  return 'reused'
end
redis.call('HSET', KEYS[1], ARGV[1] .. '!used', ARGV[2])
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 'ok'
`;

// KEYS[1]: the family. ARGV: the token's digest, its app, now, the changes channel and the
// revocation announced. Revokes the family if the token is the app's.
const REVOKE = `
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record or cjson.decode(record).appId ~= ARGV[2] then return 0 end
if redis.call('HEXISTS', KEYS[1], '!revoked') == 0 then redis.call('HSET', KEYS[1], '!revoked', ARGV[3]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`;

// KEYS[1]: the family. ARGV: now, the time up to which its app's tokens were revoked (disabling),
// the field of a record to match ('appId' or 'subject') and its value, the changes channel and
// the family's revocation announced. Revokes the family if it holds a live token matching (unexpired,
// not yet rotated, issued after the disabling), and returns how many it held.
const REVOKE_LIVE = `
if redis.call('HEXISTS', KEYS[1], '!revoked') == 1 then return 0 end
local fields = redis.call('HGETALL', KEYS[1])
local used = {}
for i = 1, #fields, 2 do
  local at = string.find(fields[i], '!used', 1, true)
  if at then used[string.sub(fields[i], 1, at - 1)] = true end
end
local now, upTo, live = tonumber(ARGV[1]), tonumber(ARGV[2]), 0
for i = 1, #fields, 2 do
  if not string.find(fields[i], '!', 1, true) and not used[fields[i]] then
    local r = cjson.decode(fields[i + 1])
    if r[ARGV[3]] == ARGV[4] and r.expiresAt > now and r.issuedAt > upTo then live = live + 1 end
  end
end
if live == 0 then return 0 end
redis.call('HSET', KEYS[1], '!revoked', ARGV[1])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return live
`;

// KEYS[1]: the expiries. ARGV: now, the batch size. Takes the expired entries out and returns them.
const EXPIRED = `
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
`;

export class RedisTokens implements TokenStore {
  readonly #db: RedisDb;
  readonly #apps: RedisApps;
  readonly #save: Script;
  readonly #rotate: Script;
  readonly #revoke: Script;
  readonly #expired: Script;
  readonly #revokeLive: Script;
  readonly #index: TokenIndex;

  constructor(db: RedisDb, apps: RedisApps) {
    this.#db = db;
    this.#apps = apps;
    this.#index = new TokenIndex(db);
    this.#revokeLive = db.script(REVOKE_LIVE);
    this.#save = db.script(SAVE);
    this.#rotate = db.script(ROTATE);
    this.#revoke = db.script(REVOKE);
    this.#expired = db.script(EXPIRED);
  }

  async saveTokens(records: readonly TokenRecord[]): Promise<void> {
    const families = new Map<string, TokenRecord[]>();
    for (const r of records) families.set(r.family, [...(families.get(r.family) ?? []), r]);
    // Known once per process: from then on, the indexes by app and subject hold every token saved.
    await this.#index.legacyUntil();
    // The index first, and only for new digests: until the family holds the record, the index
    // leads nowhere; a digest already in use refuses the whole call.
    await this.#indexAll(records);
    await Promise.all([
      ...[...families].map(([family, members]) => this.#save([familyKey(family)], [Math.max(...members.map(lifetime)), ...members.flatMap((r) => [digest(r.hash), serialise(r)])])),
      this.#index.add(records, Math.min(...records.map((r) => r.issuedAt))),
    ]);
    await this.#db.run(this.#db.client.zadd(EXPIRIES, ...records.flatMap((r) => [r.expiresAt, `${r.family} ${digest(r.hash)}`])));
  }

  async #indexAll(records: readonly TokenRecord[]): Promise<void> {
    const set = await Promise.all(records.map((r) => this.#db.run(this.#db.client.set(indexKey(digest(r.hash)), r.family, 'PX', lifetime(r), 'NX'))));
    if (set.every((ok) => ok === 'OK')) return;
    await Promise.all(records.map((r, i) => (set[i] === 'OK' ? this.#db.run(this.#db.client.del(indexKey(digest(r.hash)))) : undefined)));
    throw new StoreError('conflict', 'a token with this digest exists');
  }

  /** The token's record and its family's state, found through the index. */
  async #read(hash: Buffer): Promise<{ record: TokenRecord; used: boolean; revoked: boolean } | undefined> {
    const id = digest(hash);
    const family = await this.#db.run(this.#db.client.get(indexKey(id)));
    if (family === null) return undefined;
    const [json, used, revoked] = await this.#db.run(this.#db.client.hmget(familyKey(family), id, `${id}!used`, '!revoked'));
    if (json === null || json === undefined) return undefined;
    return { record: deserialise(json as string), used: used !== null, revoked: revoked !== null };
  }

  async findAccessToken(hash: Buffer, now: number): Promise<ActiveToken | undefined> {
    const found = await this.#read(hash);
    if (found === undefined || found.revoked) return undefined;
    const { record } = found;
    if (record.kind !== 'access' || record.expiresAt <= now) return undefined;
    const grounds = await this.#apps.grounds(record.key);
    if (!worth(grounds, record, now) || grounds.app.status !== 'active' || grounds.app.approval !== 'approved' || grounds.developerStatus !== 'active') {
      return undefined;
    }
    const token: ActiveToken = { ...record, appName: grounds.app.name, developerEmail: grounds.app.developerEmail };
    // A rotated key's tokens end with the key's overlap, if that comes first.
    const keyExpires = grounds.credential.expiresAt;
    if (keyExpires !== null && keyExpires < token.expiresAt) token.expiresAt = keyExpires;
    return token;
  }

  async revokeToken(hash: Buffer, appId: string, now: number): Promise<boolean> {
    const id = digest(hash);
    const family = await this.#db.run(this.#db.client.get(indexKey(id)));
    if (family === null) return false;
    const change = { kind: 'family', ref: family } as const;
    const { channel, message } = this.#db.announce(change);
    const revoked = await this.#revoke([familyKey(family)], [id, appId, now, channel, message]).finally(() => this.#db.told(change));
    return revoked === 1;
  }

  async rotateRefreshToken(req: RotateRequest): Promise<RotateResult> {
    const found = await this.#read(req.hash);
    if (found === undefined || found.revoked) return { ok: false, reason: 'invalid' };
    const previous = found.record;
    if (previous.kind !== 'refresh' || previous.appId !== req.appId) return { ok: false, reason: 'invalid' };
    // RFC 9449 §5: a bound refresh token is the key holder's alone; another key spends nothing.
    if (previous.cnf !== undefined && !sameConfirmation(previous.cnf, req.cnf)) return { ok: false, reason: 'invalid' };
    const grounds = await this.#apps.grounds(previous.key);
    // A rotated key's refresh tokens end with its overlap, as its access tokens do.
    if (!worth(grounds, previous, req.now)) return { ok: false, reason: 'invalid' };
    // The checks of what never changes come first; a spent or expired token is the script's and the expiry's to say.
    if (!found.used && previous.expiresAt <= req.now) return { ok: false, reason: 'invalid' };
    const granted = previous.scope === '' ? [] : previous.scope.split(' ');
    if (!found.used && req.scope !== undefined && !req.scope.every((s) => granted.includes(s))) return { ok: false, reason: 'scope' };
    const scope = req.scope === undefined ? previous.scope : req.scope.join(' ');
    const successors = successorRecords(previous, req, scope);
    // The family's indexes first, with its successors' expiries: a failure there leaves the refresh token unspent.
    await Promise.all([this.#indexAll(successors), this.#index.add(successors, req.now)]);
    const change = { kind: 'family', ref: previous.family } as const;
    const { channel, message } = this.#db.announce(change);
    let outcome: unknown;
    try {
      outcome = await this.#rotate(
        [familyKey(previous.family)],
        [digest(req.hash), req.now, req.reuseGraceMs ?? 0, Math.max(...successors.map(lifetime)), channel, message, ...successors.flatMap((r) => [digest(r.hash), serialise(r)])],
      );
    } catch (err) {
      // The family may have been revoked without an answer: this process forgets what it knows of it.
      this.#db.told(change);
      throw err;
    }
    if (outcome !== 'ok') {
      // The successors were never saved: their index goes (it would lead nowhere until it expired).
      await Promise.all(successors.map((r) => this.#db.run(this.#db.client.del(indexKey(digest(r.hash))))));
      if (outcome !== 'reused') return { ok: false, reason: 'invalid' };
      // RFC 9700 §4.14.2: a rotated refresh token presented again means it leaked; the family is revoked.
      this.#db.told(change);
      return { ok: false, reason: 'reused' };
    }
    // The purge's index only: were it lost, the family's TTL still removes the tokens, and the
    // client, whose refresh token is spent, must get its new ones.
    // The spent token is kept as long as its successors (its index and its place in the purge's):
    // presented again while they live, it still revokes them (an authorization code outlives its own minute).
    const spent = digest(req.hash);
    const keepUntil = Math.max(...successors.map((r) => r.expiresAt));
    await Promise.all([
      // GT: a score or a TTL only grows (new members are added as ever).
      this.#db.run(this.#db.client.zadd(EXPIRIES, 'GT', ...successors.flatMap((r) => [r.expiresAt, `${r.family} ${digest(r.hash)}`]), keepUntil, `${previous.family} ${spent}`)),
      this.#db.run(this.#db.client.pexpire(indexKey(spent), Math.max(...successors.map(lifetime)), 'GT')),
    ]).catch(() => undefined);
    return { ok: true, previous, scope };
  }

  async revokeAppTokens(appId: string, now: number): Promise<number> {
    // A deleted app's tokens are gone, as on SQLite: they count for nothing.
    const upTo = (await this.#apps.revokedUpTo([appId])).get(appId);
    if (upTo === undefined) return 0;
    const families = await this.#index.ofApp(appId, now);
    return this.#revokeFamilies(
      families.map((family) => ({ family, upTo })),
      ['appId', appId],
      now,
    );
  }

  async revokeSubjectTokens(subject: string, now: number): Promise<number> {
    const byApp = await this.#index.ofSubject(subject, now);
    const upTo = await this.#apps.revokedUpTo([...byApp.keys()]);
    const families = [...byApp].flatMap(([appId, ids]) => {
      const appUpTo = upTo.get(appId);
      return appUpTo === undefined ? [] : [...ids].map((family) => ({ family, upTo: appUpTo }));
    });
    return this.#revokeFamilies(families, ['subject', subject], now);
  }

  /** Revokes each family holding a live token whose `match` field has its value; resolves to the number of live tokens they held. */
  async #revokeFamilies(families: readonly { family: string; upTo: number }[], match: readonly [string, string], now: number): Promise<number> {
    let revoked = 0;
    for (let at = 0; at < families.length; at += REVOKE_BATCH) {
      const counts = await Promise.all(
        families.slice(at, at + REVOKE_BATCH).map(({ family, upTo }) => {
          const change = { kind: 'family', ref: family } as const;
          const { channel, message } = this.#db.announce(change);
          // Never revoked before disabling: -1 is before any issue.
          const args = [now, Number.isFinite(upTo) ? upTo : -1, ...match, channel, message];
          return this.#revokeLive([familyKey(family)], args).finally(() => this.#db.told(change));
        }),
      );
      for (const n of counts) revoked += n as number;
    }
    return revoked;
  }

  /**
   * The tokens unexpired at `now`, of no revoked family, refresh tokens only if not rotated yet;
   * what their credential, app and developer make of them is the caller's to judge. Found through
   * the expiries with ZSCAN, which returns every entry present from start to end at least once.
   */
  async unspent(now: number): Promise<TokenRecord[]> {
    const found = new Map<string, TokenRecord>();
    let cursor = '0';
    do {
      const [next, entries] = await this.#db.run(this.#db.client.zscan(EXPIRIES, cursor, 'COUNT', SCAN_COUNT));
      cursor = next;
      const families = new Map<string, string[]>();
      for (let i = 0; i < entries.length; i += 2) {
        if (Number(entries[i + 1]) <= now) continue;
        const [family, id] = entries[i]!.split(' ') as [string, string];
        if (!found.has(id)) families.set(family, [...(families.get(family) ?? []), id]);
      }
      await Promise.all(
        [...families].map(async ([family, ids]) => {
          const fields = await this.#db.run(this.#db.client.hmget(familyKey(family), '!revoked', ...ids.flatMap((id) => [id, `${id}!used`])));
          if (fields[0] !== null) return;
          ids.forEach((id, i) => {
            const [json, used] = [fields[1 + 2 * i], fields[2 + 2 * i]];
            if (json === null || json === undefined || used !== null) return;
            const record = deserialise(json);
            if (record.expiresAt > now) found.set(id, record);
          });
        }),
      );
    } while (cursor !== '0');
    return [...found.values()];
  }

  /** Removes the tokens expired at `now` (their families' other tokens stay); resolves to how many. */
  async purgeExpired(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const due = (await this.#expired([EXPIRIES], [now, PURGE_BATCH])) as string[];
      await Promise.all(
        due.map((entry) => {
          const [family, id] = entry.split(' ') as [string, string];
          return Promise.all([this.#db.run(this.#db.client.hdel(familyKey(family), id, `${id}!used`)), this.#db.run(this.#db.client.del(indexKey(id)))]);
        }),
      );
      total += due.length;
      if (due.length < PURGE_BATCH) return total;
    }
  }
}

/** Whether the token's credential still takes it: live at `now`, and neither its app nor its developer disabled since it was issued. */
function worth(grounds: Grounds | undefined, record: TokenRecord, now: number): grounds is Grounds {
  return grounds !== undefined && holds(grounds.credential, grounds.revokedUpTo, record, now);
}
