// A real redis-server for a test, on a port no one else uses and with a folder of its own, so
// tests never touch the machine's shared Redis; it can be stopped and started again on the same
// port (Redis down, then back). And a local Redis Cluster of three such servers, made with
// `redis-cli --cluster create`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../src/http/listener.ts';
import { tempDir } from './helpers.ts';

/** How long a server may take to accept connections. */
const START_TIMEOUT_MS = 10_000;

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGTERM, waiting for its exit); its port stays reserved for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** Whether this machine has redis-server (CI installs it: .ci/run). */
export function hasRedis(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `durable`: every write is on disk before it is answered, so a stop and a start lose nothing
 * (Redis down, then back). `password`: the default user's. `tls`: TLS only, with this certificate
 * and key (PEM files); `url` is then rediss://localhost.
 */
export async function startRedis(options: { cluster?: boolean; durable?: boolean; password?: string; tls?: { cert: string; key: string } } = {}): Promise<RedisServer> {
  const port = await freePort('127.0.0.1');
  const temp = tempDir();
  let child: ChildProcess | undefined;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    temp.dir,
    '--save',
    '',
    '--protected-mode',
    'no',
    ...(options.durable ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(options.password === undefined ? [] : ['--requirepass', options.password]),
    ...(options.tls === undefined ? [] : ['--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.cert, '--tls-key-file', options.tls.key, '--tls-auth-clients', 'no']),
    ...(options.cluster ? ['--cluster-enabled', 'yes', '--cluster-config-file', path.join(temp.dir, 'nodes.conf'), '--cluster-node-timeout', '2000'] : []),
  ];
  async function start(): Promise<void> {
    const started = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child = started;
    const exited = new Promise<never>((_, reject) => started.once('exit', (code) => reject(new Error(`redis-server on ${port} exited with ${code}`))));
    await Promise.race([accepting(port), exited]);
  }
  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGTERM');
    });
  }
  await start();
  return {
    port,
    url: options.tls === undefined ? `redis://127.0.0.1:${port}` : `rediss://localhost:${port}`,
    stop,
    start,
    async close() {
      await stop();
      temp.remove();
    },
  };
}

export interface RedisCluster {
  nodes: RedisServer[];
  /** Seed addresses, as ioredis' Cluster takes them. */
  seeds: { host: string; port: number }[];
  close(): Promise<void>;
}

/** Three masters, no replicas, every slot assigned; resolves once the cluster says it is ok. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const nodes = await Promise.all([0, 1, 2].map(() => startRedis({ cluster: true })));
  const close = () => Promise.all(nodes.map((n) => n.close())).then(() => undefined);
  try {
    execFileSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'ignore' });
    for (let waited = 0; ; waited += 100) {
      const info = execFileSync('redis-cli', ['-p', String(nodes[0]!.port), 'cluster', 'info'], { encoding: 'utf8' });
      if (/cluster_state:ok/.test(info)) break;
      if (waited > START_TIMEOUT_MS) throw new Error(`the cluster did not become ok:\n${info}`);
      await sleep(100);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { nodes, seeds: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), close };
}

/** Resolves once something accepts connections on the port. */
async function accepting(port: number): Promise<void> {
  for (let waited = 0; ; waited += 50) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (waited > START_TIMEOUT_MS) throw new Error(`nothing accepted connections on ${port} within ${START_TIMEOUT_MS} ms`);
    await sleep(50);
  }
}
