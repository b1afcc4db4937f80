// The one error a load throws: every problem at once, each with its YAML path and line.
import path from 'node:path';

export interface ConfigIssue {
  path: string;
  message: string;
  line: number | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  constructor(file: string, issues: ConfigIssue[]) {
    const where = path.basename(file);
    super(issues.map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}${i.line === undefined ? '' : ` (${where}:${i.line})`}`).join('\n'));
    this.issues = issues;
  }
}

export type Segments = (string | number)[];

/** Reports a problem at a YAML path. */
export type Report = (segments: Segments, message: string) => void;

/** Why a file could not be read, in words. */
export function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  return { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'a folder, not a file' }[code] ?? code;
}

/** One message per problem, in the order of the file's lines (those without a line last, as found). */
export function inLineOrder(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  const unique = issues.filter((i) => {
    const k = `${i.path}|${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return unique.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}
