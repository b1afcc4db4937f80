// The manual a reader finds their way in: a short README that starts with the two commands and
// links every page of docs/, and links (between pages, to files, to headings) that all lead
// somewhere.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

const ROOT = path.join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every Markdown file under docs/, relative to the root. */
function pages(dir = 'docs'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return pages(file);
    return file.endsWith('.md') ? [file] : [];
  });
}

/** The text outside fenced code blocks, where a bracket is not a link. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** The targets of the Markdown links of a file, but those to other sites. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchors(text: string): Set<string> {
  return new Set(
    [...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- ]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

const MANUAL = ['README.md', 'SECURITY.md', ...pages()];

describe('the manual', () => {
  test('README.md is under 300 lines', () => {
    const lines = read('README.md').split('\n').length;
    assert.ok(lines < 300, `README.md has ${lines} lines`);
  });

  test("README.md starts with the two commands, set up and run, and test, which are npm's scripts and what CI runs", () => {
    const first = /^```sh\n([\s\S]*?)^```$/m.exec(read('README.md'))?.[1] ?? assert.fail('a sh block');
    const commands = first
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.replace(/\s+#.*$/, ''));
    assert.deepEqual(commands, ['npm ci && npm start', 'npm test']);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts.start ?? '', /--config gateway\.example\.yaml$/);
    assert.ok(scripts.test);
    assert.deepEqual(
      read('.ci/run')
        .split('\n')
        .filter((l) => /^npm /.test(l)),
      ['npm ci', 'npm test'],
    );
  });

  test('every page of docs/ is linked from README.md', () => {
    const linked = new Set(links(read('README.md')).map((target) => path.posix.normalize(target.split('#')[0]!)));
    assert.deepEqual(
      pages().filter((page) => !linked.has(page)),
      [],
    );
  });

  test('every relative link of README.md, SECURITY.md and docs/ leads to a file, and to a heading of it when it names one', () => {
    const broken: string[] = [];
    for (const file of MANUAL) {
      for (const target of links(read(file))) {
        const [where, anchor] = target.split('#') as [string, string | undefined];
        const resolved = where === '' ? file : path.posix.join(path.posix.dirname(file), where);
        if (!existsSync(path.join(ROOT, resolved))) {
          broken.push(`${file}: ${target} (no such file)`);
        } else if (anchor !== undefined && !(statSync(path.join(ROOT, resolved)).isFile() && anchors(read(resolved)).has(anchor))) {
          broken.push(`${file}: ${target} (no such heading)`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
