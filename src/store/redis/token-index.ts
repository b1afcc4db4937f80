// Where the Redis driver keeps tokens, and how it finds the families of an app or of a subject (a
// user) for an operator's revocation of all their tokens (RedisTokens.revokeAppTokens and
// revokeSubjectTokens). Each key stands alone: a script touches one, so each runs on a Cluster.
//   f:{<family>}              one family's tokens (see src/store/redis/tokens.ts)
//   expiries                  "<family> <digest>" of every token by its expiry
//   app-families:<app>        the app's families by the latest expiry of their tokens
//   subject-families:<sub>    the same for a subject, each member "<app> <family>"
//   token-indexes             how long tokens saved before the two indexes existed may live (legacyUntil)
// An index takes a family no later than the family takes its tokens (before a rotation's
// successors; with a save, whose caller hands the token out only once both are written): a save
// or rotation that fails leaves an entry leading to nothing live, which a revocation passes over.
// Families whose tokens have all expired leave it as tokens are saved (by the earliest issue time
// among them), and the index expires after its last family.
import type { TokenRecord } from '../port/index.ts';
import { ttlMs } from './catalog.ts';
import type { RedisDb, Script } from './db.ts';

export const familyKey = (family: string): string => `f:{${family}}`;
export const EXPIRIES = 'expiries';
const appIndex = (appId: string): string => `app-families:${appId}`;
const subjectIndex = (subject: string): string => `subject-families:${subject}`;
const LEGACY = 'token-indexes';
/** The expiries are scanned this many entries at a time. */
export const SCAN_COUNT = 1000;

// KEYS[1]: an index. ARGV: its TTL ms, the time by which a family's tokens must outlive it to
// stay, then score/member pairs. Raises a member's score, never lowers it; extends the TTL, never shortens it.
const INDEX = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
for i = 3, #ARGV, 2 do redis.call('ZADD', KEYS[1], 'GT', ARGV[i], ARGV[i + 1]) end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`;

interface StoredToken extends Omit<TokenRecord, 'hash'> {
  hash: string;
}

export function serialise(r: TokenRecord): string {
  const stored: StoredToken = { ...r, hash: r.hash.toString('base64url') };
  return JSON.stringify(stored);
}

export function deserialise(json: string): TokenRecord {
  const s = JSON.parse(json) as StoredToken;
  return { ...s, hash: Buffer.from(s.hash, 'base64url') };
}

/** How long the token's keys live: its lifetime, measured from its issue (never from the caller's clock, which a test may set in the past). */
export function lifetime(r: TokenRecord): number {
  return ttlMs(r.expiresAt, r.issuedAt);
}

/** One index's new entries: member → the latest expiry, and the TTL it needs. */
interface IndexEntries {
  members: Map<string, number>;
  ttl: number;
}

export class TokenIndex {
  readonly #db: RedisDb;
  readonly #index: Script;
  #legacy: Promise<number> | undefined;

  constructor(db: RedisDb) {
    this.#db = db;
    this.#index = db.script(INDEX);
  }

  /** Adds the families of `records` to their app's and subject's index; families all expired by `since` leave them. */
  async add(records: readonly TokenRecord[], since: number): Promise<void> {
    const indexes = new Map<string, IndexEntries>();
    const put = (key: string, member: string, r: TokenRecord) => {
      const entries = indexes.get(key) ?? { members: new Map<string, number>(), ttl: 0 };
      entries.members.set(member, Math.max(entries.members.get(member) ?? -Infinity, r.expiresAt));
      entries.ttl = Math.max(entries.ttl, lifetime(r));
      indexes.set(key, entries);
    };
    for (const r of records) {
      put(appIndex(r.appId), r.family, r);
      if (r.subject !== null) put(subjectIndex(r.subject), `${r.appId} ${r.family}`, r);
    }
    await Promise.all([...indexes].map(([key, { members, ttl }]) => this.#index([key], [ttl, since, ...[...members].flatMap(([member, score]) => [score, member])])));
  }

  /** The families of the app that hold a token unexpired at `now`, perhaps more. */
  async ofApp(appId: string, now: number): Promise<string[]> {
    const families = new Set(await this.#db.run(this.#db.client.zrangebyscore(appIndex(appId), `(${now}`, '+inf')));
    if (now < (await this.legacyUntil())) for (const r of await this.#scan(now, (t) => t.appId === appId)) families.add(r.family);
    return [...families];
  }

  /** The families of the subject that hold a token unexpired at `now`, perhaps more, by app. */
  async ofSubject(subject: string, now: number): Promise<Map<string, Set<string>>> {
    const byApp = new Map<string, Set<string>>();
    const put = (appId: string, family: string) => byApp.set(appId, (byApp.get(appId) ?? new Set()).add(family));
    for (const member of await this.#db.run(this.#db.client.zrangebyscore(subjectIndex(subject), `(${now}`, '+inf'))) {
      const at = member.indexOf(' ');
      put(member.slice(0, at), member.slice(at + 1));
    }
    if (now < (await this.legacyUntil())) for (const r of await this.#scan(now, (t) => t.subject === subject)) put(r.appId, r.family);
    return byApp;
  }

  /**
   * Until when tokens saved before the indexes were kept (by an earlier version of the gateway)
   * may live: the latest expiry among the tokens of the store when an instance first needed the
   * answer, which every instance then reads. Until then a revocation also scans the expiries.
   * Tokens an earlier version saves after that (a rolling upgrade) are not found.
   */
  legacyUntil(): Promise<number> {
    this.#legacy ??= this.#readLegacy().catch((err: unknown) => {
      this.#legacy = undefined;
      throw err;
    });
    return this.#legacy;
  }

  async #readLegacy(): Promise<number> {
    const db = this.#db;
    const known = await db.run(db.client.get(LEGACY));
    if (known !== null) return Number(known);
    const latest = await db.run(db.client.zrange(EXPIRIES, '-1', '-1', 'WITHSCORES'));
    const until = latest[1] === undefined ? 0 : Number(latest[1]);
    const first = await db.run(db.client.set(LEGACY, String(until), 'NX', 'GET'));
    return first === null ? until : Number(first);
  }

  /** One token of each family that holds one unexpired at `now` matching `match`, found through the expiries (ZSCAN). */
  async #scan(now: number, match: (r: TokenRecord) => boolean): Promise<TokenRecord[]> {
    const db = this.#db;
    const read = new Set<string>();
    const found: TokenRecord[] = [];
    let cursor = '0';
    do {
      const [next, entries] = await db.run(db.client.zscan(EXPIRIES, cursor, 'COUNT', SCAN_COUNT));
      cursor = next;
      const asked = new Map<string, string>();
      for (let i = 0; i < entries.length; i += 2) {
        if (Number(entries[i + 1]) <= now) continue;
        const [family, id] = entries[i]!.split(' ') as [string, string];
        if (!read.has(family) && !asked.has(family)) asked.set(family, id);
      }
      await Promise.all(
        [...asked].map(async ([family, id]) => {
          const json = await db.run(db.client.hget(familyKey(family), id));
          // Its tokens share app and subject: one tells. A token purged meanwhile lets another entry tell.
          if (json === null) return;
          read.add(family);
          const record = deserialise(json);
          if (match(record)) found.push(record);
        }),
      );
    } while (cursor !== '0');
    return found;
  }
}
