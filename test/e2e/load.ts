// Keep-alive clients calling a gateway as fast as they can, each on its own connection, counting
// what they get: 200s, other statuses, connections refused, and failures (a reset, a hang-up).
import { Agent, request } from 'node:http';

export interface Tally {
  ok: number;
  /** Answers other than 200, as "status body". */
  statuses: string[];
  /** Connections refused, or reset before they were served (the gateway no longer accepts): a client stops at its first. */
  refused: number;
  /** Requests that failed after they were sent: what must never happen. */
  failures: string[];
}

export interface Load {
  tally: Tally;
  /** Resolves once the clients together have had `count` answers. */
  reached(count: number): Promise<void>;
  /** Stops the clients after their current call. */
  stop(): Promise<Tally>;
  /** Resolves once every client has met a refused connection (the gateway stopped). */
  refusedAll(): Promise<Tally>;
}

/** `clients` keep-alive connections, each calling GET `path` with `headers` one call after another. */
export function keepAliveLoad(url: string, path: string, headers: Record<string, string>, clients = 8): Load {
  const tally: Tally = { ok: 0, statuses: [], refused: 0, failures: [] };
  const target = new URL(url);
  let running = true;
  const waiters: { count: number; resolve: () => void }[] = [];
  const answered = () => {
    const total = tally.ok + tally.statuses.length;
    for (const w of [...waiters]) {
      if (total < w.count) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const one = (agent: Agent) =>
    new Promise<'answered' | 'refused'>((resolve) => {
      const req = request({ host: target.hostname, port: target.port, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode === 200) tally.ok++;
          else tally.statuses.push(`${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`);
          answered();
          resolve('answered');
        });
        res.on('error', (err) => {
          tally.failures.push(`response: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
          resolve('answered');
        });
      });
      req.on('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code ?? err.message;
        // A new connection the kernel took into a listener's queue and reset when the listener
        // closed was refused at connect as surely as one it never took: the gateway never read it.
        // (With SO_REUSEPORT each worker's listener has its own queue.) A reset of a connection
        // that had served a call before is a failure.
        if (code === 'ECONNREFUSED' || (code === 'ECONNRESET' && !req.reusedSocket)) {
          tally.refused++;
          resolve('refused');
        } else {
          tally.failures.push(code);
          resolve('answered');
        }
      });
      req.end();
    });
  const loops = Array.from({ length: clients }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (running) if ((await one(agent)) === 'refused') return;
    } finally {
      agent.destroy();
    }
  });
  const all = Promise.all(loops).then(() => tally);
  return {
    tally,
    reached: (count) =>
      new Promise<void>((resolve) => {
        waiters.push({ count, resolve });
        answered();
      }),
    stop: () => {
      running = false;
      return all;
    },
    refusedAll: () => all,
  };
}
