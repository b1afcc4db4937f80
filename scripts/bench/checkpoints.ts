// WAL checkpoints inline (SQLite's default, what `gateway admin` keeps) against the checkpoint
// thread of a serving gateway (src/store/sqlite/checkpoints.ts), in the same run: commits of 10
// tokens one after another through the SQLite driver, with the event loop's delay measured
// meanwhile. `npm run bench -- --only checkpoints` runs it; so does a full `npm run bench`.
import { keep, ratioLine } from './results.ts';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TokenRecord } from '../../src/store/port/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';

interface Run {
  loopP99: number;
  loopP999: number;
  loopMax: number;
  seconds: number;
}

async function run(thread: boolean, commits: number): Promise<Run> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-checkpoints-'));
  const store = openSqliteStore({ path: path.join(dir, 'gateway.db'), ...(thread && { checkpoints: { signal: new SharedArrayBuffer(4), run: true } }) });
  try {
    const developer = await store.accounts.createDeveloper({ email: 'bench@example.com', name: 'Bench', now: Date.now() });
    const app = await store.apps.createApp({ developerId: developer.id, name: 'bench', product: 'bench', key: 'bench', secretHash: randomBytes(32), now: Date.now() });
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const started = performance.now();
    for (let i = 0; i < commits; i++) {
      const records = Array.from({ length: 10 }, (): TokenRecord => {
        const now = Date.now();
        return { hash: randomBytes(48), kind: 'access', appId: app.id, key: 'bench', product: 'bench', scope: '', subject: null, family: `f${i}`, issuedAt: now, expiresAt: now + 3_600_000 };
      });
      await store.tokens.saveTokens(records);
    }
    const seconds = (performance.now() - started) / 1000;
    delay.disable();
    return { loopP99: delay.percentile(99) / 1e6, loopP999: delay.percentile(99.9) / 1e6, loopMax: delay.max / 1e6, seconds };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lines for the benchmark's report: both cases, alternated over `rounds`, medians. */
export async function checkpointLines(commits: number, rounds: number): Promise<string[]> {
  const runs: Record<'inline' | 'thread', Run[]> = { inline: [], thread: [] };
  for (let round = 0; round < rounds; round++) {
    runs.inline.push(await run(false, commits));
    runs.thread.push(await run(true, commits));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const line = (name: 'inline' | 'thread') => {
    const r = runs[name];
    const f = (pick: (x: Run) => number) => median(r.map(pick)).toFixed(1);
    return `${name.padEnd(7)} event-loop delay p99 ${f((x) => x.loopP99)} ms, p99.9 ${f((x) => x.loopP999)} ms, max ${f((x) => x.loopMax)} ms; ${commits} commits in ${f((x) => x.seconds)} s`;
  };
  const p99 = (name: 'inline' | 'thread') => median(runs[name].map((x) => x.loopP99));
  const figures = (name: 'inline' | 'thread') => {
    const r = runs[name];
    const f = (pick: (x: Run) => number) => Number(median(r.map(pick)).toFixed(1));
    return { loop_p99_ms: f((x) => x.loopP99), loop_p999_ms: f((x) => x.loopP999), loop_max_ms: f((x) => x.loopMax), seconds: f((x) => x.seconds), commits };
  };
  keep('WAL checkpoints', { inline: figures('inline'), thread: figures('thread') });
  return [
    `WAL checkpoints, ${commits} commits of 10 tokens through the SQLite driver, ${rounds} round(s):`,
    line('inline'),
    line('thread'),
    ratioLine('event-loop p99, thread / inline', p99('thread') / p99('inline'), 'target ≤ 0.25', 33),
  ];
}
