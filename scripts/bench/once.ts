// The replay cache of DPoP proofs alone: `store.once.spendOnce`, as the gateway calls it for each
// proof (src/oauth/dpop.ts), on the store a gateway's config names (a SET NX with expiry on Redis,
// an insert on SQLite), timed over `n` calls in this process.
//
//   node --import tsx scripts/bench/once.ts <config-file> <n>
//
// Run in a process of its own, on the core the gateway runs on, against the store of an idle
// gateway of the benchmark; prints {serial_us, cpu_us} as JSON: the time a call takes one at a
// time (a round trip on Redis), and the CPU this process spent per call with 64 in flight (the
// cost on the gateway's core once round trips overlap, as they do under load).
import { randomBytes } from 'node:crypto';
import { loadConfigFile } from '../../src/config/load.ts';
import { sha256 } from '../../src/crypto.ts';
import { openStore } from '../../src/store/open.ts';

const IN_FLIGHT = 64;
const [configFile, countArg] = process.argv.slice(2);
const n = Number(countArg);
const config = loadConfigFile(configFile!, { env: {} });
const store = await openStore(config.store);
/** As the gateway keeps a proof's jti: oauth.dpop.maxAge and the 5 s a client's clock may run ahead. */
const KEPT_MS = config.oauth.dpop.maxAgeMs + 5_000;
const run = randomBytes(9).toString('base64url');
let spent = 0;
const spend = async () => {
  const now = Date.now();
  if (!(await store.once.spendOnce(sha256(`dpop bench ${run} ${spent++}`), now, now + KEPT_MS))) throw new Error('an id never spent was refused');
};

try {
  for (let i = 0; i < 1000; i++) await spend(); // connections, JIT
  const started = performance.now();
  for (let i = 0; i < n; i++) await spend();
  const serial = ((performance.now() - started) * 1000) / n;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = 0; i < n / IN_FLIGHT; i++) await spend();
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const perCall = (cpu.user + cpu.system) / (IN_FLIGHT * Math.ceil(n / IN_FLIGHT));
  process.stdout.write(`${JSON.stringify({ serial_us: Math.round(serial * 10) / 10, cpu_us: Math.round(perCall * 10) / 10 })}\n`);
} finally {
  await store.close();
}
