// Output helpers and the error type every command maps to an exit code.
import { Writable } from 'node:stream';
import { escapeUnsafe } from '../text.ts';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** What standard input holds (`keys import --secret-stdin`); absent: the process's. */
  stdin?: () => string;
}

/** Thrown by commands for a failure the user caused; the message is one line, the exit code non-zero. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Text for the operator's terminal: lines kept, every other control or bidi character escaped (a stored name could hold one). */
export function terminalText(text: string): string {
  return text.split('\n').map(escapeUnsafe).join('\n');
}

export function table(unsafeRows: readonly Record<string, string>[], columns: readonly string[]): string {
  // Escaped before measuring, so the columns line up with what the terminal shows.
  const rows = unsafeRows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, escapeUnsafe(v)])));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => r[c] ?? '')))].join('\n');
}

export function isoDate(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A stream of log lines (the audit lines of `gateway admin`) onto the command's error output, which
 * --json leaves clean. Escaped for the terminal as JSON would escape them, so each line is still
 * the same JSON: JSON itself leaves DEL, C1 controls and bidi marks as they are, and a name stored
 * before names were checked may hold them.
 */
export function logStream(io: CliIo): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      io.err(terminalText(chunk.toString('utf8').trimEnd()));
      done();
    },
  });
}

/**
 * A reader that stops early (`gateway config schema | head`) closes the pipe: what is left of the
 * output is dropped, quietly, rather than the write's EPIPE ending the command with a stack trace.
 */
export function quietOnClosedPipe(stream: NodeJS.WritableStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
}
