// An open-loop load at a constant rate, for latency below saturation. autocannon's rate limit
// sends each second's requests at the start of the second and then waits, so its p99 measures a
// burst; here requests leave evenly spaced (as wrk2 does), and each latency counts from when the
// request was due, so a stall in the server is not hidden by the generator waiting for it.
//
//   node --import tsx scripts/bench/paced.ts <url> <rate> <seconds> [header-name header-value]…
//
// Runs in its own process (the benchmark's own garbage collections would show up as latency),
// warms up for a second at the same rate, then prints {sent, errors, p50_ms, p99_ms} as JSON.
import { Pool } from 'undici';

const [url, rateArg, secondsArg, ...headerArgs] = process.argv.slice(2);
const target = new URL(url!);
const rate = Number(rateArg);
const headers: Record<string, string> = {};
for (let i = 0; i + 1 < headerArgs.length; i += 2) headers[headerArgs[i]!] = headerArgs[i + 1]!;
const pool = new Pool(target.origin, { connections: 64 });
const path = target.pathname + target.search;

async function run(seconds: number): Promise<{ sent: number; errors: number; latencies: Float64Array }> {
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let sent = 0;
  let done = 0;
  let errors = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const send = (i: number, due: number) => {
      pool.request({ path, method: 'GET', headers }).then(
        (res) => {
          res.body.resume();
          res.body.once('end', () => {
            if (res.statusCode !== 200) errors++;
            latencies[i] = performance.now() - due;
            if (++done === total) resolve();
          });
        },
        () => {
          errors++;
          latencies[i] = performance.now() - due;
          if (++done === total) resolve();
        },
      );
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      for (; sent < due; sent++) send(sent, start + (sent * 1000) / rate);
      if (sent < total) setImmediate(tick);
    };
    tick();
  });
  return { sent: total, errors, latencies };
}

await run(1);
const { sent, errors, latencies } = await run(Number(secondsArg));
await pool.close();
latencies.sort();
const at = (q: number) => Math.round(latencies[Math.min(sent - 1, Math.floor(q * sent))]! * 100) / 100;
process.stdout.write(`${JSON.stringify({ sent, errors, p50_ms: at(0.5), p99_ms: at(0.99) })}\n`);
