// Idempotency-Key on the management API's creates (draft-ietf-httpapi-idempotency-key-header): a
// retry of a create whose answer was lost gets that answer again, from whichever instance it
// reaches, instead of registering twice. The key is the client's: two clients' keys never meet.
// What is kept, and replayed, is the answer without the secret it showed (an app's secret, an
// invitation's code): a secret is shown once, to the call that made it, and the store never holds it.
import { sha256 } from '../crypto.ts';
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
  /** Runs the create once per client and key: a retry with the same body gets the first answer (`replayed`), without its secret. */
  around(ctx: RequestContext, key: string, body: unknown, run: () => Promise<Answer>): Promise<{ answer: Answer; replayed: boolean }>;
}

/** How long a key is remembered (the draft's suggestion, as Stripe does). */
const KEEP_MS = 24 * 3_600_000;
/** How long a create may run before a retry may take its key over (its instance stopped mid-way). */
const LOCK_MS = 60_000;

const inUse = () => new GatewayError(409, 'idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed: retry later', { headers: { 'retry-after': '1' } });
/** The members of an answer that are shown once: an app's new secret, an invitation's code and its link. */
const SHOWN_ONCE = ['secret', 'code', 'link'];

const reused = () => new GatewayError(422, 'idempotency_key_reused', 'this Idempotency-Key was used for another request: use a new key for a new request');

export function createIdempotency(services: Pick<Services, 'store' | 'clock'>): Idempotency {
  const { store, clock } = services;
  return {
    async around(ctx, key, body, run) {
      const keyHash = sha256(`${ctx.token!.appId}\n${key}`);
      const fingerprint = sha256(`${ctx.req.method} ${ctx.path}\n${JSON.stringify(body ?? null)}`);
      const now = clock();
      const claim = await store.idempotency.claim(keyHash, fingerprint, now, { lockedUntil: now + LOCK_MS, expiresAt: now + KEEP_MS });
      if (claim.kind === 'busy') throw inUse();
      if (claim.kind === 'mismatch') throw reused();
      if (claim.kind === 'replay') return { answer: JSON.parse(claim.body.toString('utf8'), revive) as Answer, replayed: true };
      let answer: Answer;
      try {
        answer = await run();
      } catch (err) {
        // A refusal made nothing: the retry is judged again (the store may be back, the name free).
        await store.idempotency.release(keyHash);
        throw err;
      }
      const kept = Buffer.from(JSON.stringify({ ...answer, payload: withoutSecrets(answer.payload)?.toString('base64') }));
      await store.idempotency.complete(keyHash, { status: answer.status, body: kept });
      return { answer, replayed: false };
    },
  };
}

function withoutSecrets(payload: Buffer | undefined): Buffer | undefined {
  if (payload === undefined) return undefined;
  const body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
  for (const name of SHOWN_ONCE) delete body[name];
  return Buffer.from(JSON.stringify(body));
}

function revive(this: unknown, name: string, value: unknown): unknown {
  return name === 'payload' && typeof value === 'string' ? Buffer.from(value, 'base64') : value;
}
