// The folders of src/ import one another without a circle: config, policies, http and oauth can
// each be read, and compiled into a runtime, without the others looking back at them. And no file
// or function grows past what a reader takes in at once (issue 28: 450 and 80 lines).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { oversized } from '../scripts/sizes.ts';

const SRC = path.join(import.meta.dirname, '../src');

/** Every .ts file under src/, relative to it. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.relative(SRC, path.join(dir, e.name))] : []));
}

/** The folder of src/ a file belongs to, or the file itself at the top. */
const part = (file: string) => file.split(path.sep)[0]!;

/** Edges between parts, type-only imports included: a circle of types is a circle of ideas. */
function edges(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sources()) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    for (const [, spec] of text.matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)'/gm)) {
      const target = path.relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), spec!));
      if (part(target) === part(file)) continue;
      graph.set(part(file), (graph.get(part(file)) ?? new Set()).add(part(target)));
    }
  }
  return graph;
}

/** One circle of the graph, as the path that closes it, or undefined. */
function findCircle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const found = visit(next);
      if (found !== undefined) return found;
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const found = visit(node);
    if (found !== undefined) return found;
  }
  return undefined;
}

test('no import circle between the parts of src/', () => {
  const graph = edges();
  assert.ok(graph.get('runtime')?.has('oauth') && graph.get('oauth')?.has('http'), 'the graph is read');
  assert.deepEqual(findCircle(graph), undefined);
});

test('the circle finder finds a circle', () => {
  assert.deepEqual(
    findCircle(
      new Map([
        ['a', new Set(['b'])],
        ['b', new Set(['c'])],
        ['c', new Set(['a'])],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
  );
});

test('no file under src/ over 450 lines, no function over 80 (scripts/sizes.ts)', () => {
  assert.deepEqual(oversized(SRC), []);
});
