// Portal passwords, which people choose: scrypt (RFC 7914), stored as
// "scrypt$N$r$p$salt$hash" (base64url) so the cost can rise without breaking stored hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { GatewayError } from '../errors.ts';

const COST = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// scrypt needs 128 · N · r bytes; the default limit (32 MiB) is exactly that, and too tight.
const MAX_MEMORY = 64 * 1024 * 1024;

// Checked against when the account has no password, so that an unknown email takes as long as a wrong password.
const DUMMY = `scrypt$${COST.N}$${COST.r}$${COST.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LENGTH).toString('base64url')}`;

const busy = () => new GatewayError(503, 'busy', 'The portal is busy checking passwords; nothing was changed. Try again in a moment.', { headers: { 'retry-after': '1' } });

export interface Passwords {
  hash(password: string): Promise<string>;
  /** Whether `password` matches `stored`; a missing or unreadable hash costs the same time and never matches. */
  verify(password: string, stored: string | null | undefined): Promise<boolean>;
}

/**
 * The hasher of a process. At most `running` derivations at once (each takes 32 MiB and a thread
 * of libuv's pool, which DNS lookups share), and a bounded queue beyond which it answers 503:
 * logins spread over many accounts, which the per-account throttle does not slow, cannot pile up work.
 */
export function createPasswords(options: { running: number; queue: number } = { running: 2, queue: 64 }): Passwords {
  let running = 0;
  const queue: (() => void)[] = [];

  async function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
    if (running >= options.running) {
      if (queue.length >= options.queue) throw busy();
      // The finishing derivation hands its slot over: `running` stays as it is.
      await new Promise<void>((resolve) => queue.push(resolve));
    } else {
      running++;
    }
    try {
      const scryptOptions: ScryptOptions = { ...cost, maxmem: MAX_MEMORY };
      return await new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_LENGTH, scryptOptions, (err, key) => (err ? reject(err) : resolve(key))));
    } finally {
      const next = queue.shift();
      if (next === undefined) running--;
      else next();
    }
  }

  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await derive(password, salt, COST);
      return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
    },
    async verify(password, stored) {
      const parts = (stored ?? DUMMY).split('$');
      const [kind, n, r, p, salt, key] = parts;
      const cost = { N: Number(n), r: Number(r), p: Number(p) };
      const valid = parts.length === 6 && kind === 'scrypt' && Number.isInteger(cost.N) && Number.isInteger(cost.r) && Number.isInteger(cost.p);
      const expected = Buffer.from(valid ? key! : '', 'base64url');
      const derived = await derive(password, Buffer.from(valid ? salt! : '', 'base64url'), valid ? cost : COST);
      return stored !== undefined && stored !== null && valid && expected.length === KEY_LENGTH && timingSafeEqual(derived, expected);
    },
  };
}

/** What a chosen password must be: long enough to resist guessing; no composition rules (NIST SP 800-63B §5.1.1). */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 10) return 'the password must have at least 10 characters';
  if (password.length > 200) return 'the password must have at most 200 characters';
  return undefined;
}
