// Files under src/ over 450 lines and functions over 80 lines (issue 28's bounds); exits 1 when
// any is found. `npx tsx scripts/sizes.ts [folder]`.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_FILE_LINES = 450;
export const MAX_FUNCTION_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** Every file and function of `dir` over the bounds, longest first, as `lines place`. */
export function oversized(dir: string): string[] {
  const found: [number, string][] = [];
  for (const file of sources(dir)) {
    const text = readFileSync(file, 'utf8');
    const name = path.relative(process.cwd(), file);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_FILE_LINES) found.push([lines, `${name} (file)`]);
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const length = lineOf(node.getEnd()) - lineOf(node.getStart()) + 1;
        if (length > MAX_FUNCTION_LINES) found.push([length, `${name}:${lineOf(node.getStart()) + 1} ${functionName(node)}`]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b[0] - a[0]).map(([n, place]) => `${n} ${place}`);
}

function functionName(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named !== undefined) return named.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

if (import.meta.main) {
  const found = oversized(path.resolve(process.argv[2] ?? 'src'));
  for (const line of found) console.log(line);
  process.exitCode = found.length > 0 ? 1 : 0;
}
