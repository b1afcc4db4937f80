import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { GatewayError } from '../errors.ts';

// The rest of the body is left unread, so the connection closes after the answer.
export const tooLarge = (limit: number) => new GatewayError(413, 'payload_too_large', `request body exceeds ${limit} bytes`, { headers: { connection: 'close' } });

// The client went away mid-body: its error, and not worth an error-level log line.
const aborted = (cause?: unknown) => new GatewayError(400, 'request_aborted', 'the request body ended early', { cause });

const EMPTY = Buffer.alloc(0);

/**
 * Reads the whole body, refusing more than `limit` bytes (checked against Content-Length first;
 * a longer chunked body stops being read, and is answered 413). Plain stream events: `for await` over the request costs an
 * async iterator, a promise per chunk and a finished() watcher, a tenth of a token request.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  if (req.readableEnded) return Promise.resolve(EMPTY);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => req.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onAbort);
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    }
    function onAbort(err?: Error): void {
      stop();
      reject(aborted(err));
    }
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onAbort);
  });
}

/** What undici sends as a streamed request's body, and the signal that aborts the request when the body is refused. */
export interface StreamedBody {
  body: Readable;
  signal: AbortSignal | null;
}

/**
 * The body to stream to an upstream, held to `limit` bytes. It passes through a counter; the
 * chunk that takes it past `limit` is dropped and the upstream request aborted with tooLarge, so
 * the upstream never reads the end of the body (undici destroys its connection) and the caller
 * answers 413. A declared length was checked when the request arrived, and Node's parser delivers
 * exactly that many bytes, but that body goes through the counter too: every failure must reach
 * undici through the signal, never as an error of the body it streams. undici 8's stream()
 * destroys the body with the request's error and then reports that error a second time, which
 * throws (uncaught: the process exits) once the answer has begun, as when a client leaves mid-body.
 * The request is unpiped, not destroyed: destroying an unfinished request destroys the client's
 * socket, and the 413 with it.
 */
export function upstreamBody(req: IncomingMessage, limit: number): StreamedBody {
  const controller = new AbortController();
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size <= limit) return done(null, chunk);
      req.unpipe(counted);
      done();
      controller.abort(tooLarge(limit));
    },
    destroy: (_err, done) => done(null),
  });
  // pipe() does not pass on a source that closes before its end: a client leaving mid-body
  // would leave the upstream waiting for the rest until its timeout.
  req.once('close', () => {
    if (!req.complete) controller.abort(aborted());
  });
  return { body: req.pipe(counted), signal: controller.signal };
}
