// Output helpers and the error type every command maps to an exit code.
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
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

export function table(rows: readonly Record<string, string>[], columns: readonly string[]): string {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => r[c] ?? '')))].join('\n');
}

export function isoDate(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
