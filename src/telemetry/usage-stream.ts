// The per-call usage events of telemetry.usage, for billing: a JSON object a line, appended to a
// file rotated by size, or POSTed in batches to an HTTP endpoint that is asked again until it takes
// them (at least once: each event has an id to remove duplicates by). Calls never wait: an event
// is a line pushed onto a bounded buffer, which a timer empties; past the bound, new events are
// dropped and counted (gateway_usage_events_total). A graceful stop writes or sends what is left,
// for a bounded time.
import { randomBytes } from 'node:crypto';
import { appendFile, rename, stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { UsageStreamSettings } from '../config/types.ts';
import type { Metrics } from '../metrics.ts';

/** One call made with an app's token. */
export interface UsageEvent {
  /** Epoch ms of the answer. */
  time: number;
  requestId: string;
  app: string;
  developer: string;
  product: string;
  route: string;
  method: string;
  status: number;
  durationMs: number;
}

export interface UsageStream {
  /** Queues the event; never waits, never throws. */
  record(event: UsageEvent): void;
  /** Writes or sends what is queued (for at most `withinMs` when the endpoint does not take it), then stops. */
  close(withinMs?: number): Promise<void>;
}

/** How long a POST may take, and the longest wait between two tries. */
const POST_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;
const CLOSE_WITHIN_MS = 10_000;

export function startUsageStream(settings: UsageStreamSettings, logger: Logger, metrics: Metrics): UsageStream {
  const { batchSize, bufferSize } = settings;
  // Aborted when a stop gives up: a POST under way ends then, not at its own timeout.
  const stopping = new AbortController();
  const write = settings.sink.kind === 'file' ? fileSink(settings.sink) : urlSink(settings.sink, stopping.signal);
  const delivered = metrics.usageEvents.labels('delivered');
  const dropped = metrics.usageEvents.labels('dropped');
  // Each event's id: this stream's, then a number. A batch sent again after a failure whose
  // answer was lost (a timeout) arrives twice: the id is what a receiver removes duplicates by.
  const stream = randomBytes(6).toString('base64url');
  let sequence = 0;
  const queue = new Lines();
  let writing: Promise<void> | undefined;
  let closed = false;
  /** Consecutive failures of the sink, and no try before this time (epoch ms). */
  let failures = 0;
  let notBefore = 0;
  async function drain(until: number): Promise<void> {
    while (queue.size > 0 && Date.now() >= notBefore && Date.now() < until) {
      const batch = queue.front(batchSize);
      try {
        await write(batch);
      } catch (err) {
        failures++;
        notBefore = Date.now() + Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures);
        logger.warn({ err: { message: (err as Error).message }, waiting: queue.size, attempt: failures }, 'writing usage events failed; trying again');
        return;
      }
      queue.drop(batch.length);
      failures = 0;
      delivered.inc(batch.length);
    }
  }
  function flush(until = Number.POSITIVE_INFINITY): Promise<void> {
    writing ??= drain(until).finally(() => {
      writing = undefined;
    });
    return writing;
  }
  const timer = setInterval(() => void flush(), settings.flushIntervalMs);
  timer.unref();

  return {
    record(event) {
      if (closed || queue.size >= bufferSize) {
        dropped.inc();
        return;
      }
      queue.push(JSON.stringify({ id: `${stream}.${++sequence}`, ...event, time: new Date(event.time).toISOString(), durationMs: Math.round(event.durationMs * 1000) / 1000 }));
      if (queue.size >= batchSize && writing === undefined && Date.now() >= notBefore) void flush();
    },
    async close(withinMs = CLOSE_WITHIN_MS) {
      closed = true;
      clearInterval(timer);
      const deadline = Date.now() + withinMs;
      const left = () => Math.max(0, deadline - Date.now());
      while (queue.size > 0 && left() > 0) {
        // A stop does not wait out a long backoff: it tries again within a second.
        notBefore = Math.min(notBefore, Date.now() + 1000);
        await Promise.race([flush(deadline), sleep(left())]);
        if (queue.size > 0) await sleep(Math.min(left(), Math.max(0, notBefore - Date.now())));
      }
      stopping.abort();
      // A write that hangs (a file on a stuck disk) is not waited for past the deadline.
      await Promise.race([writing, sleep(left())]);
      const lost = queue.size;
      if (lost === 0) return;
      dropped.inc(lost);
      logger.error({ dropped: lost }, 'usage events could not be written before the stop; they are lost');
      queue.drop(lost);
    },
  };
}

/** The lines waiting, taken from the front; those taken are cut off now and then, not per batch. */
class Lines {
  #lines: string[] = [];
  #head = 0;

  get size(): number {
    return this.#lines.length - this.#head;
  }

  push(line: string): void {
    this.#lines.push(line);
  }

  front(n: number): string[] {
    return this.#lines.slice(this.#head, this.#head + n);
  }

  drop(n: number): void {
    this.#head += n;
    if (this.#head === this.#lines.length || this.#head >= 4096) {
      this.#lines = this.#lines.slice(this.#head);
      this.#head = 0;
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Sink = (lines: readonly string[]) => Promise<void>;

/** Appends to the file, which is renamed <file>.1 once it reaches maxFileSize (<file>.1 to .2, and so on; the oldest goes). */
function fileSink(sink: Extract<UsageStreamSettings['sink'], { kind: 'file' }>): Sink {
  let size: number | undefined;
  async function rotate(): Promise<void> {
    for (let i = sink.keepFiles - 1; i >= 1; i--) await renamed(`${sink.path}.${i}`, `${sink.path}.${i + 1}`);
    await renamed(sink.path, `${sink.path}.1`);
    size = 0;
  }
  return async (lines) => {
    size ??= await stat(sink.path).then(
      (s) => s.size,
      () => 0,
    );
    if (size >= sink.maxFileSize) await rotate();
    const text = `${lines.join('\n')}\n`;
    // Owner only: the events name apps and developers.
    await appendFile(sink.path, text, { mode: 0o600 });
    size += Buffer.byteLength(text);
  };
}

/** A rename whose source may not exist (fewer rotated files than kept). */
async function renamed(from: string, to: string): Promise<void> {
  await rename(from, to).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/**
 * POSTs a batch as application/x-ndjson; anything but a 2xx is a failure, and the batch is sent
 * again. A redirect is one too: followed, it would turn the POST into a GET without the events,
 * and take the endpoint's headers (its API key) to another origin.
 */
function urlSink(sink: Extract<UsageStreamSettings['sink'], { kind: 'url' }>, stopping: AbortSignal): Sink {
  const headers = { ...sink.headers, 'content-type': 'application/x-ndjson' };
  // Where the events go, for the log: never its query, which may hold a key.
  const where = new URL(sink.url);
  const named = `${where.origin}${where.pathname}`;
  return async (lines) => {
    const signal = AbortSignal.any([AbortSignal.timeout(POST_TIMEOUT_MS), stopping]);
    const res = await fetch(sink.url, { method: 'POST', headers, body: `${lines.join('\n')}\n`, redirect: 'manual', signal }).catch((err: unknown) => {
      throw new Error(`${named}: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name}`);
    });
    await res.body?.cancel();
    if (res.status < 200 || res.status > 299) throw new Error(`${named} answered ${res.status}`);
  };
}
