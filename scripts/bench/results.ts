// bench/results.json: every figure the bench prints, under the name it prints it by, so that other
// tools read the figures instead of the text. A line of the form `name  value  (about)` is made by
// ratioLine(), which keeps its figure as it formats it; other figures are kept by keep().
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const FILE = path.join(import.meta.dirname, '..', '..', 'bench', 'results.json');

/** The figures of this run's lines, written with the cases' by writeResults(). */
const printed: Record<string, unknown> = {};

/** `name` and `value` (three decimals) as the bench prints a ratio, kept for results.json. */
export function ratioLine(name: string, value: number, about: string, width = 27): string {
  printed[name] = Number(value.toFixed(3));
  return `${name.padEnd(width)} ${value.toFixed(3)}   (${about})`;
}

/** Keeps figures for results.json under the name their line prints. */
export function keep(name: string, figures: unknown): void {
  printed[name] = figures;
}

/** Writes `figures` and every kept one: a run replaces what it measured and keeps the rest (an `--only` run updates its part). */
export function writeResults(figures: Record<string, unknown> = {}): void {
  mkdirSync(path.dirname(FILE), { recursive: true });
  const kept = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(FILE, `${JSON.stringify({ ...kept, ...figures, ...printed }, null, 2)}\n`);
}
