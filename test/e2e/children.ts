// The real `bin/gateway.js` as a child process: a command run to completion, or a gateway served
// until stopped; every child is killed when the test file ends.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD_TIMEOUT_MS = 60_000;

export type Env = Record<string, string | undefined>;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Result extends Exit {
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Our environment with `extra` applied (an undefined value removes the variable). */
function childEnv(extra: Env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function launch(args: readonly string[], env: Env, cwd = ROOT) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/gateway.js'), ...args], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<Exit>((resolve) =>
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, exited, stderr: () => stderr };
}

/** Runs `gateway …args` to completion, in the repository's folder unless `cwd` names another. */
export async function gateway(args: readonly string[], env: Env = {}, cwd?: string): Promise<Result> {
  const { child, exited, stderr } = launch(args, env, cwd);
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
  const exit = await exited;
  clearTimeout(timer);
  return { ...exit, stdout, stderr: stderr() };
}

export interface Served {
  url: string;
  /** The admin listener's address, when the config has one. */
  adminUrl: string | undefined;
  /** The pino lines written to stdout so far. */
  logs: Record<string, unknown>[];
  exited: Promise<Exit>;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
  /** Sends a signal without waiting for anything. */
  signal(signal: NodeJS.Signals): void;
  /** The first log line from now on (or already written, when `since` is given) that `matches`. */
  nextLog(matches: (entry: Record<string, unknown>) => boolean, since?: number): Promise<Record<string, unknown>>;
}

/** Starts `gateway --config f …args` and waits for its "gateway listening" log line. */
export async function serve(config: string, options: { args?: readonly string[]; env?: Env } = {}): Promise<Served> {
  const { child, exited, stderr } = launch(['--config', config, ...(options.args ?? ['--port', '0'])], options.env ?? {});
  const logs: Record<string, unknown>[] = [];
  const waiting = new Set<{ matches: (entry: Record<string, unknown>) => boolean; resolve: (entry: Record<string, unknown>) => void }>();
  let adminUrl: string | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "gateway listening" line in ${CHILD_TIMEOUT_MS} ms; stderr: ${stderr()}`)), CHILD_TIMEOUT_MS);
      createInterface({ input: child.stdout }).on('line', (line) => {
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          entry = { msg: line };
        }
        logs.push(entry);
        for (const w of waiting) {
          if (!w.matches(entry)) continue;
          waiting.delete(w);
          w.resolve(entry);
        }
        if (entry.msg === 'gateway listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          if (typeof entry.admin === 'string') adminUrl = entry.admin;
          resolve(entry.url);
        }
      });
      void exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`the gateway exited (${exit.code ?? exit.signal}) before listening; stderr: ${stderr()}`));
      });
    });
    return {
      url,
      adminUrl,
      logs,
      exited,
      stop(signal = 'SIGTERM') {
        child.kill(signal);
        return exited;
      },
      signal(signal) {
        child.kill(signal);
      },
      nextLog(matches, since) {
        const found = since === undefined ? undefined : logs.slice(since).find(matches);
        if (found !== undefined) return Promise.resolve(found);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no such log line within ${CHILD_TIMEOUT_MS} ms`)), CHILD_TIMEOUT_MS);
          waiting.add({
            matches,
            resolve: (entry) => {
              clearTimeout(timer);
              resolve(entry);
            },
          });
        });
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}
