// The shared counters table itself: exact counts, reuse of spent slots, a full table, saving.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { CounterTable as Counters } from '../../src/store/counter-table.ts';
import type { WindowOf } from '../../src/store/port/index.ts';

const MINUTE = 60_000;
const minute: WindowOf = (now) => ({ start: now - (now % MINUTE), end: now - (now % MINUTE) + MINUTE });
const T0 = 1_800_000_000_000;

test('counts per key, refuses at the limit, and opens a new window when it ends', () => {
  const c = new Counters({ slots: 64 });
  assert.deepEqual(
    [1, 2, 3].map(() => c.consumeQuota('a', 2, minute, T0).allowed),
    [true, true, false],
  );
  assert.equal(c.consumeQuota('b', 2, minute, T0).remaining, 1, 'another key');
  assert.equal(c.consumeQuota('a', 2, minute, T0 + MINUTE).remaining, 1);
});

test('a slot whose counts are spent is used again; a table full of live keys lets calls through', () => {
  const c = new Counters({ slots: 64 });
  for (let i = 0; i < 64; i++) assert.equal(c.consumeQuota(`k${i}`, 1, minute, T0).allowed, true);
  c.takeDirty();
  // Every slot holds a live window: a new key finds none and is let through, uncounted.
  assert.deepEqual(c.consumeQuota('late', 1, minute, T0), { allowed: true, limit: 1, remaining: 1, resetAt: T0, retryAt: T0 });
  assert.equal(c.takeFull(), true, 'the miss is reported once');
  assert.equal(c.takeFull(), false);
  // Two minutes on, the windows (and the ones a rolling quota would read) are spent.
  const later = T0 + 2 * MINUTE + 1;
  assert.equal(c.consumeQuota('late', 1, minute, later).allowed, true);
  assert.equal(c.consumeQuota('late', 1, minute, later).allowed, false, 'counted now');
});

test('saved windows come back under the same keys', () => {
  const a = new Counters({ slots: 64 });
  a.consumeQuota('q', 5, minute, T0);
  a.consumeQuota('q', 5, minute, T0);
  const saved = a.takeDirty();
  assert.equal(saved.length, 1);
  assert.match(saved[0]!.key, /^[0-9a-f]{16}$/);
  assert.deepEqual(a.takeDirty(), [], 'nothing new since');
  const b = new Counters({ slots: 64 });
  b.load(saved);
  assert.equal(b.consumeQuota('q', 5, minute, T0).remaining, 2);
});

test('two threads counting on one table at the same time lose no count', async () => {
  const c = new Counters({ slots: 1024 });
  const LIMIT = 2_000_000;
  // Both threads start on one Atomics signal (a message would give one a head start of a
  // millisecond or more) and count until the limit refuses them: without the lock, the counts
  // they overwrite let more than the limit through.
  const start = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     import(${JSON.stringify(new URL('../../src/store/counter-table.ts', import.meta.url).href)}).then(({ CounterTable: Counters }) => {
       const c = new Counters({ buffer: workerData.counters });
       parentPort.postMessage('ready');
       Atomics.wait(workerData.start, 0, 0);
       let passed = 0;
       while (c.consumeQuota('shared', ${LIMIT}, () => ({ start: 0, end: 4e12 }), 1).allowed) passed++;
       parentPort.postMessage(passed);
     });`,
    { eval: true, workerData: { counters: c.buffer, start }, execArgv: ['--import', 'tsx'] },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  const theirs = new Promise<number>((resolve) => worker.once('message', resolve));
  Atomics.store(start, 0, 1);
  Atomics.notify(start, 0);
  let ours = 0;
  while (c.consumeQuota('shared', LIMIT, () => ({ start: 0, end: 4e12 }), 1).allowed) ours++;
  const passed = ours + (await theirs);
  await worker.terminate();
  assert.equal(passed, LIMIT, `of the calls from two threads, exactly the limit passed (${ours} here, ${passed - ours} there)`);
});
