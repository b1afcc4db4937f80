// Start-up of the gateway as it ships, on gateway.example.yaml: the time from exec to the first
// 200 on /v1/hello (with a token issued by an earlier run), and the resident set two seconds
// later, split into the pages of the executable's file and the process's own memory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface StartFigures {
  first_ms: number;
  rss_mb: number;
  /** Pages of the executable and the libraries it maps (shared by every process of the same file). */
  file_mb: number;
  /** The process's own memory: V8's heap, malloc, stacks. */
  anon_mb: number;
}

const ROOT = path.join(import.meta.dirname, '../..');

export interface Example {
  env: Record<string, string>;
  url: string;
  token: string;
}

/**
 * The example config in `dir`, with its store and ports there, an app registered through `cli`
 * (the executable), and a token issued by one run of it.
 */
export async function prepareExample(dir: string, cli: string, ports: { gateway: number; portal: number }): Promise<Example> {
  const env = {
    ...(process.env as Record<string, string>),
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(ports.gateway),
    PORTAL_PORT: String(ports.portal),
    GATEWAY_DB: path.join(dir, 'example.db'),
    LOG_LEVEL: 'warn',
  };
  const config = path.join(ROOT, 'gateway.example.yaml');
  const admin = (...argv: string[]) => execFileSync(cli, ['admin', ...argv, '--config', config], { env, encoding: 'utf8' });
  admin('developers', 'create', '--email', 'start@example.com', '--name', 'Start');
  const app = JSON.parse(admin('apps', 'create', '--developer', 'start@example.com', '--name', 'start', '--product', 'hello', '--json')) as { key: string; secret: string };
  const url = `http://127.0.0.1:${ports.gateway}`;
  const child = spawn(cli, ['--config', config], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await firstAnswer(`${url}/.well-known/oauth-authorization-server`, {}, child);
    const answer = await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.key}:${app.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    const { access_token: token } = (await answer.json()) as { access_token: string };
    return { env, url, token };
  } finally {
    await stop(child);
  }
}

/** Starts `command` (with `taskset` in front, if given), measures, and stops it. */
export async function startOnce(command: readonly string[], example: Example): Promise<StartFigures> {
  const started = performance.now();
  const child = spawn(command[0]!, [...command.slice(1), '--config', path.join(ROOT, 'gateway.example.yaml')], { env: example.env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await firstAnswer(`${example.url}/v1/hello`, { authorization: `Bearer ${example.token}` }, child);
    const first_ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    const mb = (n: number) => Math.round(n / 102.4) / 10;
    return { first_ms: Math.round(first_ms), rss_mb: mb(kb('VmRSS')), file_mb: mb(kb('RssFile')), anon_mb: mb(kb('RssAnon')) };
  } finally {
    await stop(child);
  }
}

/** Asks `url` every millisecond until it answers 200 (a refused connection costs next to nothing). */
async function firstAnswer(url: string, headers: Record<string, string>, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.join(' ')} exited with ${child.exitCode}`);
    const status = await new Promise<number>((resolve) => {
      const req = request(url, { headers, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.end();
    });
    if (status === 200) return;
    if (status !== 0) throw new Error(`${url} answered ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`${url} did not answer 200 within 20 s`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
