// Idempotency-Key on the management API's creates (draft-ietf-httpapi-idempotency-key-header): a
// retry of a create whose answer was lost gets that answer again, from whichever instance it
// reaches, instead of registering twice. The key is the client's: two clients' keys never meet.
// A stored answer may hold a new secret, so it is sealed with a key derived from the secret key.
import { seal, sealingKey, sha256, unseal } from '../crypto.ts';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Services } from '../services.ts';

/** An answer as written: its status, headers and JSON bytes. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  payload: Buffer | undefined;
}

export interface Idempotency {
  /** Runs the create once per client and key: a retry with the same body gets the first answer (`replayed`). */
  around(ctx: RequestContext, key: string, body: unknown, run: () => Promise<Answer>): Promise<{ answer: Answer; replayed: boolean }>;
}

/** How long a key is remembered (the draft's suggestion, as Stripe does). */
const KEEP_MS = 24 * 3_600_000;
/** How long a create may run before a retry may take its key over (its instance stopped mid-way). */
const LOCK_MS = 60_000;

const inUse = () => new GatewayError(409, 'idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed: retry later', { headers: { 'retry-after': '1' } });
const reused = () => new GatewayError(422, 'idempotency_key_reused', 'this Idempotency-Key was used for another request: use a new key for a new request');

export function createIdempotency(services: Pick<Services, 'store' | 'secretKey' | 'clock'>): Idempotency {
  const { store, clock } = services;
  const sealing = sealingKey(services.secretKey, 'idempotency');
  return {
    async around(ctx, key, body, run) {
      const keyHash = sha256(`${ctx.token!.appId}\n${key}`);
      const fingerprint = sha256(`${ctx.req.method} ${ctx.path}\n${JSON.stringify(body ?? null)}`);
      const now = clock();
      const claim = await store.idempotency.claim(keyHash, fingerprint, now, { lockedUntil: now + LOCK_MS, expiresAt: now + KEEP_MS });
      if (claim.kind === 'busy') throw inUse();
      if (claim.kind === 'mismatch') throw reused();
      if (claim.kind === 'replay') return { answer: JSON.parse(unseal(sealing, claim.body).toString('utf8'), revive) as Answer, replayed: true };
      let answer: Answer;
      try {
        answer = await run();
      } catch (err) {
        // A refusal made nothing: the retry is judged again (the store may be back, the name free).
        await store.idempotency.release(keyHash);
        throw err;
      }
      const stored = Buffer.from(JSON.stringify({ ...answer, payload: answer.payload?.toString('base64') }));
      await store.idempotency.complete(keyHash, { status: answer.status, body: seal(sealing, stored) });
      return { answer, replayed: false };
    },
  };
}

function revive(this: unknown, name: string, value: unknown): unknown {
  return name === 'payload' && typeof value === 'string' ? Buffer.from(value, 'base64') : value;
}
