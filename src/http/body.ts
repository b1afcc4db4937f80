import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';

export const tooLarge = (limit: number) => new GatewayError(413, 'payload_too_large', `request body exceeds ${limit} bytes`);

/** Reads the whole body, refusing more than `limit` bytes (checked against Content-Length first). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // The client went away mid-body: its error, and not worth an error-level log line.
    throw new GatewayError(400, 'request_aborted', 'the request body ended early', { cause: err });
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
