// "Every gateway admin command and the portal work on a Redis-backed config exactly as on SQLite":
// the suites written for the default store (the admin CLI, the portal, sign-up, the portal in
// Chromium, the authorization code flow, the usage export) run again, in a child test run, with every configuration naming a Redis of this
// test's own (TEST_REDIS_URL, read by test/helpers.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { hasRedis, startRedis, type RedisServer } from '../redis-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SUITES = [
  'test/e2e/cli.test.ts',
  'test/cli/usage-export.test.ts',
  'test/portal/portal.test.ts',
  'test/portal/signup.test.ts',
  'test/browser/portal.test.ts',
  'test/oauth/password-refresh.test.ts',
  'test/authorize/auth-server.test.ts',
  'test/authorize/consent.test.ts',
  'test/oauth/dpop.test.ts',
  'test/oauth/dpop-public.test.ts',
];

let redis: RedisServer;
before(async () => {
  if (hasRedis()) redis = await startRedis();
});
after(() => redis?.close());

test(`${SUITES.join(', ')} pass with the store on Redis`, { skip: hasRedis() ? false : 'no redis-server here (.ci/run installs it)', timeout: 600_000 }, () => {
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_REDIS_URL: redis.url };
  delete env.NODE_TEST_CONTEXT;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=tap', ...SUITES], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  // Each failure with the first lines of its diagnostics (the TAP YAML block after it).
  const lines = run.stdout.split('\n');
  const failures = lines.flatMap((line, i) => (/^\s*not ok /.test(line) && !/# SKIP/.test(line) ? [line, ...lines.slice(i + 1, i + 16)] : []));
  const summary = run.stdout.split('\n').filter((line) => /^# (tests|pass|fail|skipped) /.test(line));
  assert.equal(run.status, 0, `${summary.join('; ')}\n${failures.join('\n')}\n${run.stderr.slice(-4000)}`);
  assert.ok(
    summary.some((line) => /^# pass [1-9]/.test(line)),
    summary.join('; '),
  );
});
