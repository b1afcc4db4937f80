// The per-call usage events of telemetry.usage, for billing: a JSON object a line, appended to a
// file rotated by size, or POSTed in batches to an HTTP endpoint that is asked again until it takes
// them. Calls never wait: an event is a line pushed onto a bounded buffer, which a timer empties;
// past the bound, new events are dropped and counted (gateway_usage_events_total). A graceful stop
// writes or sends what is left, for a bounded time.
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
  const write = settings.sink.kind === 'file' ? fileSink(settings.sink) : urlSink(settings.sink);
  const delivered = metrics.usageEvents.labels('delivered');
  const dropped = metrics.usageEvents.labels('dropped');
  let queue: string[] = [];
  let writing: Promise<void> | undefined;
  /** Consecutive failures of the sink, and no try before this time (epoch ms). */
  let failures = 0;
  let notBefore = 0;

  async function drain(): Promise<void> {
    while (queue.length > 0 && Date.now() >= notBefore) {
      const batch = queue.slice(0, batchSize);
      try {
        await write(batch);
      } catch (err) {
        failures++;
        notBefore = Date.now() + Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures);
        logger.warn({ err, waiting: queue.length, attempt: failures }, 'writing usage events failed; trying again');
        return;
      }
      // Events that came meanwhile are behind the batch: it leaves from the front.
      queue = queue.slice(batch.length);
      failures = 0;
      delivered.inc(batch.length);
    }
  }
  function flush(): Promise<void> {
    writing ??= drain().finally(() => {
      writing = undefined;
    });
    return writing;
  }
  const timer = setInterval(() => void flush(), settings.flushIntervalMs);
  timer.unref();

  return {
    record(event) {
      if (queue.length >= bufferSize) {
        dropped.inc();
        return;
      }
      queue.push(JSON.stringify({ ...event, time: new Date(event.time).toISOString(), durationMs: Math.round(event.durationMs * 1000) / 1000 }));
      if (queue.length >= batchSize && writing === undefined && Date.now() >= notBefore) void flush();
    },
    async close(withinMs = CLOSE_WITHIN_MS) {
      clearInterval(timer);
      const deadline = Date.now() + withinMs;
      while (queue.length > 0 && Date.now() < deadline) {
        // A stop does not wait out a long backoff: it tries again within a second.
        notBefore = Math.min(notBefore, Date.now() + 1000);
        await flush();
        if (queue.length > 0) await new Promise((r) => setTimeout(r, Math.max(0, Math.min(notBefore, deadline) - Date.now())));
      }
      await writing;
      if (queue.length === 0) return;
      dropped.inc(queue.length);
      logger.error({ dropped: queue.length }, 'usage events could not be written before the stop; they are lost');
      queue = [];
    },
  };
}

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

/** POSTs a batch as application/x-ndjson; anything but a 2xx is a failure, and the batch is sent again. */
function urlSink(sink: Extract<UsageStreamSettings['sink'], { kind: 'url' }>): Sink {
  const headers = { ...sink.headers, 'content-type': 'application/x-ndjson' };
  return async (lines) => {
    const res = await fetch(sink.url, { method: 'POST', headers, body: `${lines.join('\n')}\n`, signal: AbortSignal.timeout(POST_TIMEOUT_MS) });
    await res.body?.cancel();
    if (res.status < 200 || res.status > 299) throw new Error(`${sink.url} answered ${res.status}`);
  };
}
