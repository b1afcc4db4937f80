// YAML text → a document with environment variables substituted → plain values, and the line of
// any YAML path in it, for messages.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import { ConfigError, type ConfigIssue, type Segments } from './errors.ts';

export interface YamlSource {
  /** The file's contents as plain values. */
  plain: unknown;
  /** The line of the node at a path; for a path the file lacks, that of the nearest node above it. */
  lineAt(segments: Segments): number | undefined;
}

/** Throws a ConfigError for what is not YAML, an environment variable without a value, an alias that expands too far. */
export function readYaml(text: string, file: string, env: Readonly<Record<string, string | undefined>>): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: { range?: [number, number, number] | null | undefined } | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : undefined);

  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0] ?? e.code, line: e.linePos?.[0].line ?? lines.linePos(e.pos[0]).line })),
    );
  }

  const issues: ConfigIssue[] = [];
  substituteEnv(doc, env, (yamlPath, message, node) => issues.push({ path: yamlPath, message, line: lineOf(node) }));
  if (issues.length > 0) throw new ConfigError(file, issues);

  let plain: unknown;
  try {
    plain = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias without its anchor, or aliases that expand too far (a "billion laughs" file).
    throw new ConfigError(file, [{ path: '', message: (err as Error).message.split('\n')[0] ?? 'unreadable YAML', line: undefined }]);
  }
  return { plain, lineAt: (segments) => lineOf(nodeAt(doc, segments)) };
}

// ${VAR} and ${VAR:-default} in any scalar value; $${ is a literal "${". A plain (unquoted) scalar
// that was wholly substituted is re-read as YAML, so `port: ${PORT:-8080}` stays a number.
const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function substituteEnv(doc: Document, env: Readonly<Record<string, string | undefined>>, report: (yamlPath: string, message: string, node: Node) => void): void {
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const original = node.value;
      let missing: string | undefined;
      const replaced = original.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
        if (name === undefined) return '${';
        const value = env[name];
        if (value !== undefined && value !== '') return value;
        if (fallback !== undefined) return fallback;
        missing ??= name;
        return match;
      });
      if (missing !== undefined) {
        report(yamlPathOf(ancestors, node), `environment variable ${missing} is not set and has no default`, node);
        return;
      }
      const whole = /^\$\{[^}]*\}$/.test(original);
      if (whole && node.type === 'PLAIN') {
        const reread = parseDocument(replaced).contents;
        if (isScalar(reread) && reread.value !== null) {
          node.value = reread.value;
          return;
        }
      }
      node.value = replaced;
    },
  });
}

function yamlPathOf(ancestors: readonly unknown[], node: unknown): string {
  const segments: (string | number)[] = [];
  const chain = [...ancestors, node];
  for (let i = 0; i < chain.length; i++) {
    const here = chain[i];
    const next = chain[i + 1];
    if (isPair(here) && isScalar(here.key)) segments.push(String(here.key.value));
    else if (isSeq(here) && next !== undefined) segments.push(here.items.indexOf(next as never));
  }
  return formatPath(segments);
}

/** The node a path points at; for a mapping entry, its key (a block value starts on the next line). */
function nodeAt(doc: Document, segments: (string | number)[]): Node | undefined {
  let node: unknown = doc.contents;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return node as Node;
      if (i === segments.length - 1) return pair.key as Node;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
    } else {
      return node as Node | undefined;
    }
  }
  return node as Node | undefined;
}

export function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}

export function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}
