// npm run bench [-- --quick]: the gateway side by side with baselines measured in the same run.
//
//   upstream    the upstream called directly
//   baseline    a minimal undici pass-through proxy (scripts/bench/baseline.ts)
//   gateway     bearer verification, product check, quota, spike arrest, IP allow list, query
//               validation and forwarding (limits too high to trigger), with request ids and the
//               Prometheus metrics of every call (its admin listener on)
//   token       the token endpoint, client_credentials, every token durable before its 200
//   peer-token  oidc-provider's client_credentials endpoint (in memory: nothing durable)
//   redis       the gateway case with its store on Redis (a redis-server of the bench's own, on
//               core 1): tokens, quota and spike arrest counted in Redis
//   token-redis the token endpoint with its store on Redis
//   3 on redis  three Redis-backed gateways on one Redis, load spread over them, against one
//               of them alone under the same load (none pinned: they share both cores)
//   openapi     a POST with a path parameter, a query parameter and a 303-byte JSON body, its
//               route from an OpenAPI document that validates all three (scripts/bench/openapi.ts)
//   unvalidated the same route written out under `routes`, without validation: the same request
//   dpop-es256  the gateway case with a DPoP-bound token (RFC 9449: a product with senderConstraint
//   dpop-eddsa  dpop) and a new ES256 or EdDSA proof on every request, signed before each
//               measurement (scripts/bench/dpop.ts); chain-bearer: a bearer token on the same process
//   untraced    the gateway case again, beside
//   traced      the same with every call traced (telemetry.traces, sampleRatio 1) to an OTLP/HTTP
//               receiver on core 1 (scripts/bench/otlp-sink.ts), and
//   usage-stream the same with an event per call appended to a file (telemetry.usage)
//   dpop-redis  dpop-es256 and chain-bearer with the store on Redis, where each proof's jti is a
//   bearer-redis SET NX; spendOnce, that replay cache, timed alone too (scripts/bench/once.ts)
//   start       dist/gateway (the single executable), `node dist/gateway.mjs` and the smallest Node
//               HTTP server, each started on gateway.example.yaml: exec to the first 200 on
//               /v1/hello, idle RSS, and the executable's size (scripts/bench/startup.ts)
//
// The process under test runs on core 0 (taskset, where it exists); the upstream and the load
// generator (autocannon, in this process) share core 1. Cases run in groups, the cases of a ratio
// in the same group, each group with only its own processes alive besides the upstream and Redis;
// within a group they alternate over rounds. Medians are reported, with peak RSS of the process
// under test, and written to bench/results.json.
// The gateway runs as it ships: the bundle of scripts/build.ts with its RUNTIME_FLAGS.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freePort } from '../src/http/listener.ts';
import { BUNDLE, DIST, RUNTIME_FLAGS, buildBundles, buildExecutable } from './build.ts';
import { prepareExample, startOnce, type StartFigures } from './bench/startup.ts';
import { checkpointLines } from './bench/checkpoints.ts';
import { signingLines } from './bench/signing.ts';
import { BENCH_REDIRECT_URI, mintCodes } from './bench/codes.ts';
import { checkDpopCase, dpopToken, ProofSigner, ProofSupply, type ProofAlgorithm } from './bench/dpop.ts';
import { LINE_BODY, LINE_DOCUMENT, LINE_REFUSED_BODY, LINE_TARGET, lineRoutes, type LineRoute } from './bench/openapi.ts';
import { keep, ratioLine, writeResults } from './bench/results.ts';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '64' },
    /** Issue this many tokens, then measure RSS and verification again (default: 1e6, none with --quick). */
    million: { type: 'string' },
    /**
     * `--only start`: the start-up figures alone; `--only checkpoints`: the WAL checkpoint figures alone; `--only openapi`: the openapi and unvalidated cases alone;
     * `--only jwt`: the JWT cases beside the opaque ones, and the signing figures; `--only code`: the
     * authorization_code grant beside client_credentials; `--only dpop`: the DPoP cases beside the bearer ones; `--only token`: the token endpoint beside oidc-provider; `--only paced`: the gateway and the baseline at an even rate;
     * `--only telemetry`: the chain with traces, and with the usage event stream, beside the chain with neither.
     */
    only: { type: 'string' },
    /** Every gateway under test writes a V8 CPU profile of its life (start, warm-up, all its cases) to <tmpdir>/gateway-bench-profiles/<gateway>.cpuprofile as it stops. */
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const quick = args.quick === true;
const rounds = Number(args.rounds ?? (quick ? 1 : 5));
const duration = Number(args.duration ?? (quick ? 3 : 10));
const connections = Number(args.connections);
const manyTokens = Number(args.million ?? (quick ? 0 : 1_000_000));

const ROOT = path.join(import.meta.dirname, '..');
/** The single executable, as buildExecutable makes it. */
const EXECUTABLE = path.join(DIST, 'gateway');
const NODE = process.execPath;
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((p) => existsSync(p));
const pinned = TASKSET !== undefined && cpus().length >= 2;
/** The last line of an `--only` run's report. */
const ONLY_FOOTER = `${rounds} round(s) of ${duration} s, ${connections} connections, ${pinned ? 'process under test on core 0, load and upstream on core 1' : 'not pinned (no taskset or one core)'}; Node ${process.version}`;
/** Where `--cpu-prof` puts the profiles: outside the repository, kept after the run. */
const PROFILES = path.join(tmpdir(), 'gateway-bench-profiles');

interface Figures {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  rss_mb: number;
  /** CPU time the process under test spent per request, in µs: unlike req/s, untouched by the time the VM takes the core away. */
  cpu_us: number;
}

/** Starts a script (TypeScript through tsx) on a core, with Node's `flags` besides the runtime's, and waits until it is ready. */
async function start(core: number, script: string, argv: string[], ready: (child: ChildProcess) => Promise<void>, flags: string[] = []): Promise<ChildProcess> {
  // Every process under test gets the gateway's runtime flags: the cases differ in their code only.
  // The single executable has them built in.
  const command = script === EXECUTABLE ? [script, ...argv] : [NODE, ...RUNTIME_FLAGS, ...flags, ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script, ...argv];
  const child =
    pinned && core >= 0
      ? spawn(TASKSET!, ['-c', String(core), ...command], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
      : spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await ready(child);
  return child;
}

const onMessage = (child: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited with ${code}`)));
  });

async function untilListening(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${url} did not start`);
}

/** Resident set size of a process (through taskset, its only child), in MB. */
function rssMb(child: ChildProcess): number {
  const pids = [child.pid!];
  try {
    pids.push(...readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {}
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kb = Math.max(kb, Number(m?.[1] ?? 0));
    } catch {}
  }
  return kb / 1024;
}

interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** A body or headers of its own for each request (an authorization code is spent once, a DPoP proof too). */
  next?: () => { body?: string; headers?: Record<string, string> };
  /** Before each measurement of so many seconds, outside it: makes what `next` hands out (DPoP proofs, fresh). */
  prepare?: (seconds: number) => void;
  amount?: number;
  /** Counts every request the load generator sent with this load, warm-ups included. */
  sent?: { total: number };
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU seconds (user and system) a process has used so far; taskset execs the command, so the child is the process. */
function cpuSeconds(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After the command name: field 14 (utime) and 15 (stime) of proc(5) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Drives load with autocannon and samples the process's RSS while it runs. */
async function measure(load: Load, child: ChildProcess, seconds = duration): Promise<Figures & { errors: number }> {
  load.prepare?.(seconds);
  let peak = rssMb(child);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child))), 200);
  const cpuBefore = cpuSeconds(child);
  const result = await autocannon({
    url: load.url,
    method: load.method ?? 'GET',
    headers: load.headers ?? {},
    ...(load.body === undefined ? {} : { body: load.body }),
    ...(load.next === undefined ? {} : { requests: [{ setupRequest: (req: autocannon.Request) => ownRequest(req, load.next!()) }] }),
    connections,
    ...(load.amount === undefined ? { duration: seconds } : { amount: load.amount }),
  });
  clearInterval(sampler);
  if (load.sent !== undefined) load.sent.total += result.requests.total;
  const cpu = cpuSeconds(child) - cpuBefore;
  peak = Math.max(peak, rssMb(child));
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    rss_mb: Math.round(peak * 10) / 10,
    cpu_us: Math.round((cpu * 1e6) / Math.max(1, result.requests.total)),
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** autocannon's request with a load's own body or headers for it. */
function ownRequest(req: autocannon.Request, own: { body?: string; headers?: Record<string, string> }): autocannon.Request {
  return { ...req, ...(own.body === undefined ? {} : { body: own.body }), ...(own.headers === undefined ? {} : { headers: { ...req.headers, ...own.headers } }) };
}

/** Runs a TypeScript script of the bench in its own process on a core, and parses the JSON it prints. */
function runOn<T>(core: number, script: string, argv: string[]): T {
  const command = [NODE, '--import', 'tsx', script, ...argv];
  const out = pinned ? execFileSync(TASKSET!, ['-c', String(core), ...command], { cwd: ROOT, encoding: 'utf8' }) : execFileSync(command[0]!, command.slice(1), { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as T;
}

/** Latency at a constant rate (scripts/bench/paced.ts, in its own process on core 1). */
function paced(load: Load, rate: number, seconds: number): { errors: number; p50_ms: number; p99_ms: number } {
  return runOn(1, 'scripts/bench/paced.ts', [load.url, String(rate), String(seconds), ...Object.entries(load.headers ?? {}).flat()]);
}

/** What one spendOnce costs, as scripts/bench/once.ts measures it. */
interface SpendOnceCost {
  serial_us: number;
  cpu_us: number;
}

/** spendOnce timed alone on the store of a gateway's config, in a process on core 0 (where the gateways run; they idle meanwhile). */
function spendOnceCost(configFile: string): SpendOnceCost {
  return runOn(0, 'scripts/bench/once.ts', [configFile, String(quick ? 5000 : 20_000)]);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Case {
  load: Load;
  child: ChildProcess;
}

/** A warm-up's loads, in seconds each, and how many at most. */
const WARM_SECONDS = 2;
const WARM_AT_MOST = 10;

/**
 * Loads a case until its process is warm: until the CPU it spends per request (what the JIT
 * changes; req/s also moves with the VM) stays within 5% over two loads in a row, for at most
 * WARM_AT_MOST loads. A gateway takes 10 to 15 s of load to get there on this machine (its
 * compiler threads share the pinned core), a bare proxy 5; a fixed short warm-up made the quick
 * run's ratios 30% off the full run's. A load of so many requests runs once.
 */
async function warm(c: Case): Promise<void> {
  let before = Number.POSITIVE_INFINITY;
  for (let i = 0; i < (c.load.amount === undefined ? WARM_AT_MOST : 1); i++) {
    const { cpu_us } = await measure(c.load, c.child, WARM_SECONDS);
    if (Math.abs(cpu_us - before) <= 0.05 * before) return;
    before = cpu_us;
  }
}

/** Warms up every case, then alternates the cases over the rounds; the medians of each, its peak RSS. */
async function alternate(cases: Record<string, Case>): Promise<Record<string, Figures>> {
  for (const c of Object.values(cases)) await warm(c);
  const samples: Record<string, (Figures & { errors: number })[]> = {};
  for (let round = 1; round <= rounds; round++) {
    for (const [name, c] of Object.entries(cases)) {
      const figures = await measure(c.load, c.child);
      const list = samples[name] ?? [];
      samples[name] = list;
      list.push(figures);
      process.stderr.write(`round ${round}/${rounds} ${name.padEnd(11)} ${String(figures.rps).padStart(7)} req/s${figures.errors > 0 ? `  (${figures.errors} errors)` : ''}\n`);
    }
  }
  const results: Record<string, Figures> = {};
  for (const [name, list] of Object.entries(samples)) {
    results[name] = {
      rps: median(list.map((f) => f.rps)),
      p50_ms: median(list.map((f) => f.p50_ms)),
      p99_ms: median(list.map((f) => f.p99_ms)),
      rss_mb: Math.max(...list.map((f) => f.rss_mb)),
      cpu_us: median(list.map((f) => f.cpu_us)),
    };
  }
  return results;
}

/**
 * Latency at half the gateway's saturation rate (`saturated`, its req/s), for the gateway and the
 * baseline alike. This machine's scheduler stalls a process now and then for 5 to 20 ms, which
 * decides a p99 on its own; short alternating runs and their medians keep one stall from deciding it.
 */
function pacedLatency(cases: Record<string, Case>, saturated: number): string {
  const half = Math.floor(saturated / 2);
  const halfRuns: Record<'gateway' | 'baseline', { p50_ms: number; p99_ms: number }[]> = { gateway: [], baseline: [] };
  for (let i = 0; i < (quick ? 1 : 5); i++) {
    for (const name of ['gateway', 'baseline'] as const) {
      const r = paced(cases[name]!.load, half, quick ? 3 : 5);
      if (r.errors > 0) throw new Error(`${name}: ${r.errors} errors at ${half} req/s`);
      halfRuns[name].push(r);
    }
  }
  const halfGateway = { p50_ms: median(halfRuns.gateway.map((r) => r.p50_ms)), p99_ms: median(halfRuns.gateway.map((r) => r.p99_ms)) };
  const halfBaseline = { p50_ms: median(halfRuns.baseline.map((r) => r.p50_ms)), p99_ms: median(halfRuns.baseline.map((r) => r.p99_ms)) };
  keep('evenly paced', { rps: half, gateway: halfGateway, baseline: halfBaseline });
  return `at ${half} req/s, evenly paced: p99 gateway ${halfGateway.p99_ms.toFixed(2)} ms, baseline ${halfBaseline.p99_ms.toFixed(2)} ms (target: at most 1 ms above); p50 ${halfGateway.p50_ms.toFixed(2)} and ${halfBaseline.p50_ms.toFixed(2)} ms`;
}

/** The table of the cases' figures, a header and a row each. */
function table(results: Record<string, Figures>): string[] {
  const row = (name: string, f: Figures) =>
    `${name.padEnd(12)} ${String(f.rps).padStart(9)} ${f.p50_ms.toFixed(2).padStart(8)} ${f.p99_ms.toFixed(2).padStart(8)} ${f.rss_mb.toFixed(1).padStart(8)} ${String(f.cpu_us).padStart(8)}`;
  return [
    `${'case'.padEnd(12)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'RSS MB'.padStart(8)} ${'CPU µs'.padStart(8)}`,
    ...Object.entries(results).map(([name, f]) => row(name, f)),
  ];
}

/** The authorization_code grant against client_credentials, in the same run and process. */
function codeLines(results: Record<string, Figures>): string[] {
  return [
    ratioLine(
      'issue-code / issue-cc',
      results['issue-code']!.rps / results['issue-cc']!.rps,
      `token endpoint: an authorization code with its PKCE verifier redeemed, against client_credentials; by CPU per request ${(results['issue-cc']!.cpu_us / results['issue-code']!.cpu_us).toFixed(3)}`,
    ),
  ];
}

/** The JWT cases against the same cases with opaque tokens, in the same run. */
function jwtLines(results: Record<string, Figures>): string[] {
  return [
    ratioLine('issue-jwt / issue-opaque', results['issue-jwt']!.rps / results['issue-opaque']!.rps, 'token endpoint issuing ES256 JWT access tokens against opaque ones, one process; target ≥ 0.8'),
    ratioLine('chain-jwt / chain-opaque', results['chain-jwt']!.rps / results['chain-opaque']!.rps, 'full chain with a JWT access token against an opaque one, one process; target ≥ 0.95'),
  ];
}

/** The DPoP cases against the bearer chain on the same process, and the replay cache's cost on Redis; `late`: warnings of scripts/bench/dpop.ts. */
function dpopLines(results: Record<string, Figures>, spend: { sqlite: SpendOnceCost; redis: SpendOnceCost | undefined }, late: string[]): string[] {
  const ratio = (name: string, against: string, about: string) =>
    ratioLine(`${name} / ${against}`, results[name]!.rps / results[against]!.rps, `${about}; by CPU per request ${(results[against]!.cpu_us / results[name]!.cpu_us).toFixed(3)}`);
  const redis = spend.redis;
  return [
    ratio('dpop-es256', 'chain-bearer', 'full chain with a DPoP-bound token and a new ES256 proof per request against a bearer token, one process; target ≥ 0.7'),
    ratio('dpop-eddsa', 'chain-bearer', 'the same with EdDSA proofs; target ≥ 0.7'),
    results['dpop-redis'] === undefined || redis === undefined
      ? 'dpop-redis: no redis-server on this machine; the replay cache on Redis was not measured'
      : ratio(
          'dpop-redis',
          'bearer-redis',
          `dpop-es256 and chain-bearer with the store on Redis, one process; the replay cache, spendOnce: ${redis.serial_us} µs a call one at a time on Redis, ${redis.cpu_us} µs of the caller's CPU with 64 in flight; ${spend.sqlite.serial_us} µs on SQLite`,
        ),
    ...late,
  ];
}

/** What the traced case's receiver got: spans, against the calls the load made of it (two spans a call: the call's and the upstream call's; its token is checked from memory). */
interface Exported {
  spans: number;
  calls: number;
}

/** The telemetry group's ratios, by req/s (the targets) and by CPU per request; and whether the traced case exported its spans, or dropped them. */
function telemetryLines(results: Record<string, Figures>, exported: Exported): string[] {
  const untraced = results.untraced!;
  const ratio = (name: string, about: string) =>
    ratioLine(`${name} / untraced`, results[name]!.rps / untraced.rps, `${about}; by CPU per request ${(untraced.cpu_us / results[name]!.cpu_us).toFixed(3)}`);
  return [
    ratio(
      'traced',
      'full chain with every call traced (sampleRatio 1: a server span and the upstream call under it (the token is checked from memory: no span), exported over OTLP/HTTP) against none; target ≥ 0.85',
    ),
    ratio('usage-stream', 'full chain with an event per call written to a file (telemetry.usage) against none; target ≥ 0.95'),
    ratioLine(
      'traced spans exported',
      exported.spans / (2 * exported.calls),
      `${exported.spans} spans received for ${exported.calls} calls, two a call; below 1, the export queue dropped spans under this load`,
    ),
  ];
}

/** The openapi pair's ratios: by req/s (the target), and by CPU per request, which the VM's stalls do not move. */
function openapiLines(results: Record<string, Figures>): string[] {
  const validated = results.openapi!;
  const unvalidated = results.unvalidated!;
  return [
    ratioLine(
      'openapi validated / unvalidated',
      validated.rps / unvalidated.rps,
      `POST: path and query parameters and a ${Buffer.byteLength(LINE_BODY)}-byte JSON body validated from the document; target ≥ 0.8`,
      32,
    ),
    ratioLine('unvalidated / openapi CPU µs', unvalidated.cpu_us / validated.cpu_us, "CPU per request; the same ratio, without the VM's stalls", 32),
  ];
}

function cli(configFile: string, ...argv: string[]): string {
  return execFileSync(NODE, [BUNDLE, ...argv, '--config', configFile], { cwd: ROOT, encoding: 'utf8' });
}

/** Start-up of the executable beside `node dist/gateway.mjs` and a bare Node server, alternated over the rounds; its medians go to results.json as `start`. */
async function startup(dir: string, executable: string): Promise<string[]> {
  const onCore0 = (command: string[]) => (pinned ? [TASKSET!, '-c', '0', ...command] : command);
  const floor = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.GATEWAY_PORT), '127.0.0.1')";
  const commands: Record<string, string[]> = {
    executable: onCore0([executable]),
    'node bundle': onCore0([NODE, ...RUNTIME_FLAGS, BUNDLE]),
    'node server': onCore0([NODE, ...RUNTIME_FLAGS, '-e', floor, '--']),
  };
  const example = await prepareExample(dir, executable, { gateway: await freePort('127.0.0.1'), portal: await freePort('127.0.0.1') });
  const samples: Record<string, StartFigures[]> = {};
  for (let round = 1; round <= Math.max(rounds, 3); round++) {
    for (const [name, command] of Object.entries(commands)) {
      const list = samples[name] ?? [];
      samples[name] = list;
      list.push(await startOnce(command, example));
    }
  }
  const figures = Object.fromEntries(
    Object.entries(samples).map(([name, list]) => [
      name,
      { first_ms: median(list.map((f) => f.first_ms)), rss_mb: median(list.map((f) => f.rss_mb)), file_mb: median(list.map((f) => f.file_mb)), anon_mb: median(list.map((f) => f.anon_mb)) },
    ]),
  ) as Record<string, StartFigures>;
  keep('start', figures);
  writeResults();
  const exe = figures.executable!;
  const bundle = figures['node bundle']!;
  const server = figures['node server']!;
  const row = (name: string, f: StartFigures) =>
    `${name.padEnd(12)} ${String(f.first_ms).padStart(9)} ${f.rss_mb.toFixed(1).padStart(8)} ${f.file_mb.toFixed(1).padStart(8)} ${f.anon_mb.toFixed(1).padStart(8)}`;
  const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
  return [
    `${'start'.padEnd(12)} ${'first ms'.padStart(9)} ${'RSS MB'.padStart(8)} ${'file MB'.padStart(8)} ${'anon MB'.padStart(8)}   (gateway.example.yaml: exec to the first 200 on /v1/hello; RSS 2 s later)`,
    ...Object.entries(figures).map(([name, f]) => row(name, f)),
    `executable / node bundle    ${(exe.first_ms / bundle.first_ms).toFixed(3)} start, ${(exe.rss_mb / bundle.rss_mb).toFixed(3)} RSS   (targets: start < 300 ms, RSS < 80 MB; the bare node server: ${server.first_ms} ms, ${server.rss_mb} MB)`,
    `executable size             ${mb(statSync(executable).size)} MB (node binary ${mb(statSync(NODE).size)} MB, bundle ${mb(statSync(path.join(path.dirname(executable), 'sea', 'gateway.blob')).size)} MB with its worker and code cache)`,
  ];
}

async function main(): Promise<void> {
  if (pinned) execFileSync(TASKSET!, ['-pc', '1', String(process.pid)], { stdio: 'ignore' });
  await buildBundles();
  const executable = await buildExecutable();
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-bench-'));
  const children: ChildProcess[] = [];
  try {
    if (args.only === 'checkpoints') {
      process.stdout.write(`${(await checkpointLines(quick ? 3000 : 10_000, quick ? 1 : 3)).join('\n')}\n`);
      writeResults();
      return;
    }
    // Only the full run and `--only start` print the start-up figures.
    const startLines = args.only === undefined || args.only === 'start' ? await startup(dir, executable) : [];
    if (args.only === 'start') {
      process.stdout.write(`${startLines.join('\n')}\n`);
      return;
    }
    const ports = { upstream: await freePort('127.0.0.1'), baseline: await freePort('127.0.0.1'), peer: await freePort('127.0.0.1') };
    const upstreamUrl = `http://127.0.0.1:${ports.upstream}`;
    const upstream = await start(1, 'scripts/bench/upstream.ts', [String(ports.upstream)], onMessage);
    children.push(upstream);

    /**
     * A gateway (the bundle) on `core` with its own store, an app registered through the CLI, and
     * one token; with `line`, the route of the openapi pair besides the bench route.
     */
    async function startGatewayCase(
      name: string,
      core: number,
      extra = '',
      store = `{ path: ./${name}.db }`,
      line?: LineRoute,
      product = 'routes: [bench]',
      program = BUNDLE,
    ): Promise<{ child: ChildProcess; url: string; basic: string; token: string; file: string }> {
      const port = await freePort('127.0.0.1');
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(
        file,
        `listen: { host: 127.0.0.1, port: ${port} }
admin: { port: 0 }
store: ${store}
log: { level: warn }
upstreams:
  up: { url: ${upstreamUrl}, connections: 128 }
routes:
  bench:
    method: GET
    path: /v1/bench
    upstream: up
    policies:
      - quota: { limit: 1000000000, interval: day }
      - spikeArrest: { rate: 1000000ps, burst: 100000 }
      - ipAccess: { allow: [127.0.0.0/8, '::1'] }
      - validateRequest: { query: { type: object, properties: { q: { type: string, maxLength: 64 } } } }
${line?.routes ?? ''}products:
  bench: { ${line?.product ?? product} }
${line?.openapi ?? ''}${extra}`,
      );
      cli(file, 'admin', 'developers', 'create', '--email', 'bench@example.com', '--name', 'Bench');
      const app = JSON.parse(cli(file, 'admin', 'apps', 'create', '--developer', 'bench@example.com', '--name', 'bench', '--product', 'bench', '--json')) as { key: string; secret: string };
      const url = `http://127.0.0.1:${port}`;
      const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
      const child = await start(core, program, ['--config', file], () => untilListening(`${url}/`), profile);
      children.push(child);
      const basic = `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}`;
      const answer = await fetch(`${url}/oauth2/token`, { method: 'POST', headers: { ...form, authorization: basic }, body: 'grant_type=client_credentials' });
      const { access_token: token } = (await answer.json()) as { access_token: string };
      return { child, url, basic, token, file };
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const verifyLoad = (g: { url: string; token: string }): Load => ({ url: `${g.url}/v1/bench?q=tea`, headers: { authorization: `Bearer ${g.token}` } });
    const tokenLoad = (g: { url: string; basic: string }): Load => ({
      url: `${g.url}/oauth2/token`,
      method: 'POST',
      headers: { ...form, authorization: g.basic },
      body: 'grant_type=client_credentials',
    });

    /** oidc-provider's client_credentials endpoint on core 0, its case checked to answer 200. */
    async function peerCase(): Promise<Case> {
      const secret = randomBytes(32).toString('base64url');
      const child = await start(0, 'scripts/bench/peer-token.ts', [String(ports.peer), secret], onMessage);
      children.push(child);
      const load: Load = {
        url: `http://127.0.0.1:${ports.peer}/token`,
        method: 'POST',
        headers: { ...form, authorization: `Basic ${Buffer.from(`bench:${secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      };
      const probe = await fetch(load.url, { method: 'POST', headers: load.headers!, body: load.body! });
      if (probe.status !== 200) throw new Error(`oidc-provider answered ${probe.status}: ${await probe.text()}`);
      return { load, child };
    }
    const tokenLine = (results: Record<string, Figures>) =>
      ratioLine(
        'token / peer-token',
        results.token!.rps / results['peer-token']!.rps,
        `token endpoint against oidc-provider, every token durable before its 200; by CPU per request ${(results['peer-token']!.cpu_us / results.token!.cpu_us).toFixed(3)}; target ≥ 3`,
      );
    if (args.only === 'token') {
      const g = await startGatewayCase('gateway', 0);
      const results = await alternate({ token: { load: tokenLoad(g), child: g.child }, 'peer-token': await peerCase() });
      process.stdout.write(`${[...table(results), '', tokenLine(results), '', ONLY_FOOTER].join('\n')}\n`);
      writeResults(results);
      return;
    }

    /** The minimal undici proxy on core 0, in front of the upstream. */
    async function baselineCase(): Promise<Case> {
      const child = await start(0, 'scripts/bench/baseline.ts', [String(ports.baseline), upstreamUrl], onMessage);
      children.push(child);
      return { load: { url: `http://127.0.0.1:${ports.baseline}/v1/bench?q=tea` }, child };
    }
    if (args.only === 'paced') {
      const g = await startGatewayCase('gateway', 0);
      const cases = { baseline: await baselineCase(), gateway: { load: verifyLoad(g), child: g.child } };
      const results = await alternate(cases);
      process.stdout.write(`${[...table(results), '', pacedLatency(cases, results.gateway!.rps), '', ONLY_FOOTER].join('\n')}\n`);
      writeResults(results);
      return;
    }

    /**
     * Runs `body` and stops the processes it started: each group of cases is measured with only its
     * own processes, the upstream, Redis and the load generator alive. A gateway measured with nine
     * idle ones pinned beside it spends 59–64 µs per call, alone 52–56 (docs/benchmarks.md).
     */
    async function alone<T>(body: () => Promise<T>): Promise<T> {
      const from = children.length;
      try {
        return await body();
      } finally {
        await stop(children.splice(from));
      }
    }

    const redis = args.only === undefined || args.only === 'dpop' ? await startRedisServer(dir) : undefined;
    if (redis !== undefined) children.push(redis.child);
    const onRedis = (prefix: string) => `{ driver: redis, url: 'redis://127.0.0.1:${redis!.port}', keyPrefix: '${prefix}:' }`;

    /**
     * The bench route of a gateway for bearer tokens (`bench`) and DPoP-bound ones (`bench-dpop`),
     * so that the ratio is DPoP's alone: chain-bearer, and a case per algorithm, each with its own
     * key and token and a new proof per call (checked, before the load, to pass once and only once).
     */
    async function dpopGateway(
      name: string,
      store: string | undefined,
      bearer: string,
      algorithms: Record<string, ProofAlgorithm>,
      supplies: Record<string, ProofSupply>,
    ): Promise<{ file: string; cases: Record<string, Case> }> {
      const g = await startGatewayCase(name, 0, '  bench-dpop: { routes: [bench], senderConstraint: dpop }\n', store);
      const app = JSON.parse(cli(g.file, 'admin', 'apps', 'create', '--developer', 'bench@example.com', '--name', 'bench-dpop', '--product', 'bench-dpop', '--json')) as {
        key: string;
        secret: string;
      };
      const basic = `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}`;
      const cases: Record<string, Case> = { [bearer]: { load: verifyLoad(g), child: g.child } };
      for (const [caseName, alg] of Object.entries(algorithms)) {
        const signer = new ProofSigner(alg);
        const token = await dpopToken(g.url, basic, signer);
        const url = `${g.url}/v1/bench?q=tea`;
        const supply = new ProofSupply(signer, url, token);
        await checkDpopCase(url, supply, token);
        supplies[caseName] = supply;
        cases[caseName] = { load: { url, prepare: (seconds) => supply.prepare(seconds), next: () => ({ headers: supply.next() }) }, child: g.child };
      }
      return { file: g.file, cases };
    }
    /** The DPoP cases on SQLite and on Redis side by side; then spendOnce alone on each gateway's store, and any proofs the load generator had to sign itself. */
    async function dpopGroup(): Promise<{ results: Record<string, Figures>; lines: string[]; spend: Record<string, SpendOnceCost> }> {
      const supplies: Record<string, ProofSupply> = {};
      const sqlite = await dpopGateway('dpop', undefined, 'chain-bearer', { 'dpop-es256': 'ES256', 'dpop-eddsa': 'EdDSA' }, supplies);
      const onRedisStore = redis === undefined ? undefined : await dpopGateway('dpop-redis', onRedis('dpop'), 'bearer-redis', { 'dpop-redis': 'ES256' }, supplies);
      const results = await alternate({ ...sqlite.cases, ...onRedisStore?.cases });
      const spend = { sqlite: spendOnceCost(sqlite.file), redis: onRedisStore === undefined ? undefined : spendOnceCost(onRedisStore.file) };
      const late = Object.entries(supplies)
        .filter(([, supply]) => supply.late > 0)
        .map(([name, supply]) => `${name}: ${supply.late} proofs signed during the measurements, by the load generator (more requests than the margin)`);
      return {
        results,
        lines: dpopLines(results, spend, late),
        spend: { 'spendOnce-sqlite': spend.sqlite, ...(spend.redis && { 'spendOnce-redis': spend.redis }) },
      };
    }
    if (args.only === 'dpop') {
      const dpop = await dpopGroup();
      process.stdout.write(`${[...table(dpop.results), '', ...dpop.lines, '', ONLY_FOOTER].join('\n')}\n`);
      writeResults({ ...dpop.results, ...dpop.spend });
      return;
    }

    /** The openapi pair: one route from a document that validates it, and the same route written out. */
    async function openapiGroup(): Promise<Record<string, Figures>> {
      writeFileSync(path.join(dir, 'lines.openapi.yaml'), LINE_DOCUMENT);
      const lineRoute = lineRoutes('./lines.openapi.yaml');
      const validated = await startGatewayCase('openapi', 0, '', undefined, lineRoute.openapi);
      const unvalidated = await startGatewayCase('unvalidated', 0, '', undefined, lineRoute.unvalidated);
      const lineLoad = (g: { url: string; token: string }, body = LINE_BODY): Load => ({
        url: `${g.url}${LINE_TARGET}`,
        method: 'POST',
        headers: { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' },
        body,
      });
      // The load's request passes both; a body the document refuses is refused by the validating gateway only.
      for (const [g, refused] of [
        [validated, 400],
        [unvalidated, 200],
      ] as const) {
        for (const [body, status] of [
          [LINE_BODY, 200],
          [LINE_REFUSED_BODY, refused],
        ] as const) {
          const { url, ...init } = lineLoad(g, body);
          const answer = await fetch(url, init);
          if (answer.status !== status) throw new Error(`${url}: ${answer.status} where ${status} was expected: ${await answer.text()}`);
          await answer.arrayBuffer();
        }
      }
      return alternate({
        openapi: { load: lineLoad(validated), child: validated.child },
        unvalidated: { load: lineLoad(unvalidated), child: unvalidated.child },
      });
    }
    if (args.only === 'openapi') {
      const results = await openapiGroup();
      process.stdout.write(`${[...table(results), '', ...openapiLines(results), '', ONLY_FOOTER].join('\n')}\n`);
      writeResults(results);
      return;
    }

    /**
     * The token endpoint's authorization_code grant against client_credentials on the same process:
     * a fixed number of requests each, a code of its own for each (minted beforehand for the warm-up
     * and every round), no refresh token (client_credentials issues none).
     */
    async function authorizationCodeCases(): Promise<Record<string, Case>> {
      const product = '  bench-code: { routes: [bench], grants: [authorization_code], login: users, authorizationCodeLifetime: 10m }\n';
      const extra = `${product}oauth: { issuer: 'http://127.0.0.1' }\nauthServers:\n  users: { url: 'http://127.0.0.1:9/authenticate', allowInsecureHttp: true }\n`;
      const codeCase = await startGatewayCase('code', 0, extra);
      const app = JSON.parse(cli(codeCase.file, 'admin', 'apps', 'create', '--developer', 'bench@example.com', '--name', 'bench-code', '--product', 'bench-code', '--json')) as {
        key: string;
        secret: string;
      };
      const amount = quick ? 4000 : 10_000;
      const { codes, verifier } = await mintCodes(codeCase.file, app.key, 'bench-code', amount * (rounds + 1));
      const redirect = encodeURIComponent(BENCH_REDIRECT_URI);
      return {
        'issue-cc': { load: { ...tokenLoad(codeCase), amount }, child: codeCase.child },
        'issue-code': {
          load: {
            url: `${codeCase.url}/oauth2/token`,
            method: 'POST',
            headers: { ...form, authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
            next: () => ({ body: `grant_type=authorization_code&code=${codes.pop()}&redirect_uri=${redirect}&code_verifier=${verifier}` }),
            amount,
          },
          child: codeCase.child,
        },
      };
    }
    if (args.only === 'code') {
      const results = await alternate(await authorizationCodeCases());
      process.stdout.write(`${[...table(results), '', ...codeLines(results)].join('\n')}\n`);
      writeResults(results);
      return;
    }

    /**
     * One gateway, two products on the bench route: `bench` with opaque tokens, `bench-jwt` with
     * JWTs (ES256, the default). The same process serves both, so the ratio is the format's alone.
     */
    async function jwtGroup(): Promise<Record<string, Figures>> {
      const jwtCase = await startGatewayCase('jwt', 0, "  bench-jwt: { routes: [bench], accessTokenFormat: jwt }\noauth: { issuer: 'http://127.0.0.1' }\n");
      const jwtApp = JSON.parse(cli(jwtCase.file, 'admin', 'apps', 'create', '--developer', 'bench@example.com', '--name', 'bench-jwt', '--product', 'bench-jwt', '--json')) as {
        key: string;
        secret: string;
      };
      const jwtBasic = `Basic ${Buffer.from(`${jwtApp.key}:${jwtApp.secret}`).toString('base64')}`;
      const jwtAnswer = await fetch(`${jwtCase.url}/oauth2/token`, { method: 'POST', headers: { ...form, authorization: jwtBasic }, body: 'grant_type=client_credentials' });
      const jwtSigned = { url: jwtCase.url, basic: jwtBasic, token: ((await jwtAnswer.json()) as { access_token: string }).access_token };
      if (!jwtSigned.token.startsWith('eyJ')) throw new Error(`bench-jwt issued ${jwtSigned.token}`);
      return alternate({
        'chain-opaque': { load: verifyLoad(jwtCase), child: jwtCase.child },
        'chain-jwt': { load: verifyLoad(jwtSigned), child: jwtCase.child },
        'issue-opaque': { load: tokenLoad(jwtCase), child: jwtCase.child },
        'issue-jwt': { load: tokenLoad(jwtSigned), child: jwtCase.child },
      });
    }
    if (args.only === 'jwt') {
      const results = await jwtGroup();
      process.stdout.write(`${[...table(results), '', ...jwtLines(results), '', ...(await signingLines())].join('\n')}\n`);
      writeResults(results);
      return;
    }

    /**
     * The full chain with traces exported at sampleRatio 1 (to scripts/bench/otlp-sink.ts on core
     * 1, which decodes them), and with the usage events written to a file, against the chain with
     * neither: three gateways of the bench's config.
     */
    async function telemetryGroup(): Promise<{ results: Record<string, Figures>; exported: Exported }> {
      const sink = await freePort('127.0.0.1');
      children.push(await start(1, 'scripts/bench/otlp-sink.ts', [String(sink)], onMessage));
      const plain = await startGatewayCase('untraced', 0);
      const traced = await startGatewayCase('traced', 0, `telemetry:\n  traces:\n    endpoint: http://127.0.0.1:${sink}\n    sampleRatio: 1\n`);
      const streamed = await startGatewayCase('usage-stream', 0, 'telemetry:\n  usage:\n    file: ./usage-stream.ndjson\n');
      const sent = { total: 0 };
      const results = await alternate({
        untraced: { load: verifyLoad(plain), child: plain.child },
        traced: { load: { ...verifyLoad(traced), sent }, child: traced.child },
        'usage-stream': { load: verifyLoad(streamed), child: streamed.child },
      });
      // The spans of the last second are exported within the next: then they are counted.
      await new Promise((r) => setTimeout(r, 2500));
      const { spans } = (await (await fetch(`http://127.0.0.1:${sink}/`)).json()) as { spans: number };
      return { results, exported: { spans, calls: sent.total } };
    }
    if (args.only === 'telemetry') {
      const { results, exported } = await telemetryGroup();
      process.stdout.write(`${[...table(results), '', ...telemetryLines(results, exported), '', ONLY_FOOTER].join('\n')}\n`);
      writeResults(results);
      return;
    }

    // The full run, a group at a time; the cases of a ratio are always in the same group.
    const results: Record<string, Figures> = {};
    const pacedLine = await alone(async () => {
      const baseline = await baselineCase();
      const one = await startGatewayCase('gateway', 0);
      const peer = await peerCase();
      const redisOne = redis && (await startGatewayCase('redis', 0, '', onRedis('one')));
      const cases: Record<string, Case> = {
        upstream: { load: { url: `${upstreamUrl}/v1/bench?q=tea` }, child: upstream },
        baseline,
        gateway: { load: verifyLoad(one), child: one.child },
        token: { load: tokenLoad(one), child: one.child },
        'peer-token': peer,
        ...(redisOne && { redis: { load: verifyLoad(redisOne), child: redisOne.child }, 'token-redis': { load: tokenLoad(redisOne), child: redisOne.child } }),
      };
      Object.assign(results, await alternate(cases));
      return pacedLatency(cases, results.gateway!.rps);
    });
    Object.assign(results, await alone(jwtGroup));
    // The gateway with two worker threads, on both cores (it shares them with the load).
    Object.assign(
      results,
      await alone(async () => {
        const two = await startGatewayCase('gateway-2w', -1, 'workers: 2\n');
        return alternate({ 'gateway-2w': { load: verifyLoad(two), child: two.child }, 'token-2w': { load: tokenLoad(two), child: two.child } });
      }),
    );
    Object.assign(results, await alone(openapiGroup));
    const telemetry = await alone(telemetryGroup);
    Object.assign(results, telemetry.results);
    const dpop = await alone(dpopGroup);
    Object.assign(results, dpop.results);

    // Three Redis-backed gateways on one Redis against one of them alone, none pinned, the same
    // connections in all; each instance gets its own load generator.
    const scaling =
      redis === undefined
        ? ''
        : await alone(async () => {
            const first = await startGatewayCase('scale', -1, '', onRedis('scale'));
            const others = await Promise.all(
              [0, 1].map(async () => {
                const port = await freePort('127.0.0.1');
                const url = `http://127.0.0.1:${port}`;
                const child = await start(-1, BUNDLE, ['--config', first.file, '--port', String(port)], () => untilListening(`${url}/`));
                children.push(child);
                return { url, token: first.token };
              }),
            );
            const three = [first, ...others];
            const spreadLoad = (n: number) => Promise.all(three.slice(0, n).map((g) => autocannon({ ...verifyLoad(g), connections: Math.round(connections / n), duration })));
            await spreadLoad(3);
            const one: number[] = [];
            const all: number[] = [];
            for (let round = 0; round < rounds; round++) {
              one.push(Math.round((await spreadLoad(1))[0]!.requests.average));
              all.push(Math.round((await spreadLoad(3)).reduce((sum, r) => sum + r.requests.average, 0)));
            }
            return ratioLine(
              '3 on redis / 1 on redis',
              median(all) / median(one),
              `${median(all)} vs ${median(one)} req/s, full chain; 3 instances, Redis and the load share this machine's ${cpus().length} cores`,
            );
          });

    // A million tokens, still valid. RSS: a gateway started for it issues them and is read when
    // idle (proxying first would leave its own high-water mark). Verification: another gateway
    // issues 20,000 tokens, is measured, issues the million, and is measured again, so both
    // figures share one process's history (two processes differ by more than the million).
    let many = '';
    if (manyTokens > 0) {
      // The target is the single executable's (issue 33).
      const { issued, idleRss } = await alone(async () => {
        const rssCase = await startGatewayCase('million-rss', 0, '', undefined, undefined, undefined, EXECUTABLE);
        const issued = await measure({ ...tokenLoad(rssCase), amount: manyTokens }, rssCase.child);
        await new Promise((r) => setTimeout(r, 3000));
        return { issued, idleRss: rssMb(rssCase.child) };
      });
      const { before, after } = await alone(async () => {
        const g = await startGatewayCase('million-verify', 0);
        await measure({ ...tokenLoad(g), amount: 20_000 }, g.child);
        await warm({ load: verifyLoad(g), child: g.child });
        const verify = async () => {
          const list: number[] = [];
          for (let i = 0; i < rounds; i++) list.push((await measure(verifyLoad(g), g.child)).rps);
          return list;
        };
        const before = await verify();
        await measure({ ...tokenLoad(g), amount: manyTokens }, g.child);
        return { before, after: await verify() };
      });
      many = `after ${manyTokens} tokens (issued at ${issued.rps}/s): RSS of the executable ${idleRss.toFixed(1)} MB idle (target ≤ 120); verification ${median(after)} req/s vs ${median(before)} before them, same process (rounds: ${after.join(' ')} vs ${before.join(' ')})`;
      keep(`after ${manyTokens} tokens`, { rss_mb: Number(idleRss.toFixed(1)), issued_rps: issued.rps, verify_rps_before: median(before), verify_rps_after: median(after) });
    }

    const lines = [
      ...table(results),
      '',
      ratioLine('gateway / baseline', results.gateway!.rps / results.baseline!.rps, 'full chain, request ids and metrics on; target ≥ 1.0'),
      ratioLine('baseline / gateway CPU µs', results.baseline!.cpu_us / results.gateway!.cpu_us, "CPU per request; the same ratio, without the VM's stalls; target ≥ 1.0"),
      tokenLine(results),
      pacedLine,
      ...(results.redis === undefined
        ? ['redis: no redis-server on this machine; the Redis cases were not run']
        : [
            ratioLine('redis / gateway', results.redis.rps / results.gateway!.rps, 'full chain, store on Redis: quota and spike arrest counted there; target ≥ 0.7'),
            ratioLine('token-redis / token', results['token-redis']!.rps / results.token!.rps, 'token endpoint, store on Redis; target ≥ 0.5'),
            scaling,
          ]),
      ...(many === '' ? [] : [many]),
      ...jwtLines(results),
      ...(await signingLines()),
      ...openapiLines(results),
      ...telemetryLines(results, telemetry.exported),
      ...dpop.lines,
      '',
      ...startLines,
      '',
      ...(await checkpointLines(quick ? 3000 : 10_000, quick ? 1 : 3)),
      '',
      `${rounds} round(s) of ${duration} s, ${connections} connections, every process run as node ${RUNTIME_FLAGS.join(' ')} (the gateway as dist/gateway.mjs), ${pinned ? 'process under test on core 0, load and upstream on core 1' : 'not pinned (no taskset or one core)'}; ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    // Every case of the table, spendOnce's cost, and every figure of the lines above.
    writeResults({ ...results, ...dpop.spend });
  } finally {
    await stop(children);
    if (args['cpu-prof']) process.stderr.write(`CPU profiles of the gateways: ${PROFILES}\n`);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Stops processes, and waits until they have exited: a gateway writes its CPU profile as it exits. */
async function stop(processes: ChildProcess[]): Promise<void> {
  const exited = processes.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined));
  for (const child of processes) child.kill('SIGTERM');
  await Promise.all(exited);
}

/** A redis-server of the bench's own on a spare port, on core 1 with the load; undefined without redis-server. */
async function startRedisServer(dir: string): Promise<{ child: ChildProcess; port: number } | undefined> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const port = await freePort('127.0.0.1');
  const command = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  const child = pinned ? spawn(TASKSET!, ['-c', '1', ...command], { stdio: 'ignore' }) : spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
      return { child, port };
    } catch {
      if (i > 100) throw new Error(`redis-server did not start on ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

await main();
