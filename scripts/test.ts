// Runs the tests, or one part of them: `unit` is every test that runs the gateway inside the test's
// own process (real HTTP on port 0, real SQLite and Redis); `e2e` is every test that starts the
// gateway as a process (test/e2e/) or drives Chromium (test/browser/). Both come from one list of
// every *.test.ts under test/, so a new folder cannot fall between the parts.
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';

const PARTS = { unit: (file: string) => !isEndToEnd(file), e2e: isEndToEnd, all: () => true } as const;

function isEndToEnd(file: string): boolean {
  return file.startsWith('test/e2e/') || file.startsWith('test/browser/');
}

const part = process.argv[2] ?? 'all';
if (!(part in PARTS)) {
  console.error(`usage: scripts/test.ts [${Object.keys(PARTS).join('|')}] [node --test options…]`);
  process.exit(2);
}
const files = globSync('test/**/*.test.ts')
  .sort()
  .filter(PARTS[part as keyof typeof PARTS]);
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...process.argv.slice(3), ...files], { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
