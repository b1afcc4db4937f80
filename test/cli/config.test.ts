// `gateway config …` as a person runs it from a shell.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.join(import.meta.dirname, '..', '..');

test('`gateway config schema | head` ends quietly when the reader stops early (no EPIPE stack trace)', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cmd/gateway.ts', 'config', 'schema'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  // The reader is gone before the first byte: every write meets a closed pipe.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});
