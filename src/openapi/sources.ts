// The files of an OpenAPI document: each read as YAML with the line of every JSON pointer kept
// for messages, every file a $ref names read in turn (only files: a remote $ref is refused), and
// each $ref checked to point at something. The objects those files hold are turned into operations
// by operations.ts; their schemas are left to ajv, with every file added under its own URL.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { escapeToken, getAt, parsePointer } from '../json/pointer.ts';
import type { DocumentIssue } from './document.ts';

/** One file of a document: its value, and the line of a JSON pointer in it. */
export interface SourceFile {
  url: string;
  value: unknown;
  lineOf(pointer: string): number | undefined;
}

/** One file read and parsed, or undefined with why not in `issues` (at the $ref that named it, `from`, when it is missing). */
export function readSource(url: string, issues: DocumentIssue[], from?: { file: string; line: number | undefined }): SourceFile | undefined {
  const file = fileURLToPath(url);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    issues.push({ file: from?.file ?? file, line: from?.line, message: `cannot read ${file}: ${reason}` });
    return undefined;
  }
  const lines = new LineCounter();
  const parsed = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (parsed.errors.length > 0) {
    for (const e of parsed.errors) issues.push({ file, line: e.linePos?.[0].line, message: e.message.split('\n')[0] ?? e.code });
    return undefined;
  }
  let value: unknown;
  try {
    value = parsed.toJS({ maxAliasCount: 100 });
  } catch (err) {
    issues.push({ file, line: undefined, message: (err as Error).message.split('\n')[0] ?? 'unreadable YAML' });
    return undefined;
  }
  const lineOf = (pointer: string): number | undefined => {
    const node = nodeAtPointer(parsed.contents, pointer);
    return node?.range ? lines.linePos(node.range[0]).line : undefined;
  };
  return { url, value, lineOf };
}

/** The YAML node a JSON pointer names; for a mapping entry, its key (so the line is the entry's). */
function nodeAtPointer(contents: unknown, pointer: string): Node | undefined {
  let node = contents;
  let found: Node | undefined = contents as Node | undefined;
  for (const key of parsePointer(pointer) ?? []) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair === undefined) return found;
      found = pair.key as Node;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(key)];
      if (node === undefined) return found;
      found = node as Node;
    } else {
      return found;
    }
  }
  return found;
}

/** Reads every file a $ref names, transitively; notes refs that are remote or point nowhere. */
export function collectFiles(start: SourceFile, files: Map<string, SourceFile>, issues: DocumentIssue[]): void {
  const pending = [start];
  const refs: { ref: string; url: string; at: SourceFile; pointer: string }[] = [];
  for (let source = pending.pop(); source !== undefined; source = pending.pop()) {
    const at = source;
    walk(at.value, '', (ref, pointer) => {
      const line = at.lineOf(pointer);
      const target = refUrl(ref, at.url);
      if (typeof target !== 'string') {
        issues.push({ file: fileURLToPath(at.url), line, message: `$ref "${ref}": ${target.error}` });
        return;
      }
      const fileUrl = target.split('#')[0]!;
      refs.push({ ref, url: target, at, pointer });
      if (files.has(fileUrl)) return;
      const read = readSource(fileUrl, issues, { file: fileURLToPath(at.url), line });
      if (read === undefined) return;
      files.set(fileUrl, read);
      pending.push(read);
    });
  }
  for (const { ref, url, at, pointer } of refs) {
    const [fileUrl, fragment = ''] = url.split('#') as [string, string?];
    const file = files.get(fileUrl);
    if (file !== undefined && lookup(file.value, fragment) === undefined) {
      issues.push({ file: fileURLToPath(at.url), line: at.lineOf(pointer), message: `$ref "${ref}" points nowhere (${path.basename(fileURLToPath(fileUrl))} has no ${fragment || '/'})` });
    }
  }
}

/** Calls `found` with each $ref string and the pointer of the object holding it. */
function walk(value: unknown, pointer: string, found: (ref: string, pointer: string) => void): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      walk(v, `${pointer}/${i}`, found);
    });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string') found(v, `${pointer}/$ref`);
    // An example or a default is data: a "$ref" key in it is not a reference.
    else if (key !== 'example' && key !== 'examples' && key !== 'default' && key !== 'const' && key !== 'enum') walk(v, `${pointer}/${escapeToken(key)}`, found);
  }
}

/** The absolute URL a $ref names from `base`, or why it cannot be followed. */
export function refUrl(ref: string, base: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return { error: 'is not a valid reference' };
  }
  if (url.protocol !== 'file:') return { error: 'only references to files beside the document are followed, never remote ones' };
  if (url.hash !== '' && !url.hash.startsWith('#/')) return { error: 'its fragment must be a JSON pointer (#/…)' };
  return url.href.replace(/#$/, '');
}

/** What a $ref's fragment (a percent-encoded JSON pointer) names in a file's value. */
export function lookup(value: unknown, fragment: string): unknown {
  const path = parsePointer(decodeURIComponent(fragment));
  return path === undefined ? undefined : getAt(value, path);
}
